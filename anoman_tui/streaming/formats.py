"""Per-format frame readers: one dispatched SSE event in, normalized stream events out.

A reader is pure (no I/O, no clock): the reading loop hands it the event and
the instant its bytes arrived. `done` turns true at the terminator (`[DONE]`
for the OpenAI and playground formats, `message_stop` for Anthropic).

Hot path: a plain text chunk is recognised from the decoded dict and turned
into a `TextDelta` without a pydantic round trip; at 100,000 chunks per stream
validation would cost more than the network read. Every other frame (role,
finish, usage, the Anoman block, errors) goes through the wire models.
"""

from __future__ import annotations

import json
from json.decoder import scanstring  # type: ignore[attr-defined]  # (not in typeshed)
from typing import Any, Protocol

from pydantic import ValidationError

from anoman_tui.streaming.events import (
    AnomanMetadata,
    ReasoningDelta,
    RoleStarted,
    StreamEvent,
    StreamFailed,
    StreamFinished,
    TextDelta,
)
from anoman_tui.streaming.failures import (
    ProtocolViolation,
    describe_payload,
    stream_error_failure,
)
from anoman_tui.streaming.request import EndpointFormat
from anoman_tui.streaming.sse import SSEEvent
from anoman_tui.wire import (
    AnomanBlock,
    AnomanEvent,
    AnthropicMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ContentBlockDeltaEvent,
    ContentBlockStartEvent,
    ErrorEvent,
    MessageDeltaEvent,
    MessageStartEvent,
    MessageStopEvent,
    StreamErrorDetail,
    StreamErrorFrame,
    TextDeltaPayload,
    ThinkingDeltaPayload,
    Usage,
    parse_anthropic_event,
)

_TEXT_ONLY = frozenset({"content"})


class FrameReader(Protocol):
    done: bool

    def read(self, event: SSEEvent, at: float) -> list[StreamEvent]: ...


_raw_decode = json.JSONDecoder().raw_decode


def _decode(data: str) -> dict[str, Any]:
    # `raw_decode` skips `json.loads`'s wrapper and its two whitespace scans. Anything it
    # does not take whole (surrounding whitespace, extra data, bad JSON) goes through
    # `json.loads`, so what is accepted and what is refused stay exactly the same.
    payload: Any = None
    try:
        payload, end = _raw_decode(data)
    except ValueError:
        end = -1
    if end != len(data):
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise ProtocolViolation(f"frame is not valid JSON: {describe_payload(data)}") from exc
    if not isinstance(payload, dict):
        raise ProtocolViolation(f"frame is not a JSON object: {describe_payload(data)}")
    return payload


class _TextTemplate:
    """A stream's text frames as one text around its token: each frame of a stream is
    usually the same JSON with only the token's string changed (same id, model, index).
    Learnt from a frame that was decoded whole and took the text fast path, a later
    frame that is exactly `prefix + one JSON string literal + suffix` is then that same
    object with this text, so only the literal is decoded (`json.decoder.scanstring`,
    strict as `json.loads` is), not the whole object: at 32 streams the decode of every
    token's frame was most of the frame readers' time (benchmarks/eval_load.py).

    `learn` places the literal and proves the place: the frame rebuilt with a sentinel
    there must decode to the same object with only the text changed. A frame that does
    not fit is read the slow way as before, which may learn again (a few times per
    stream: a server whose frames differ every time is not worth the proof's cost)."""

    __slots__ = ("_learnt", "_prefix", "_suffix")

    _SENTINEL = "\x00anoman template\x00"
    _MAX_LEARNT = 4

    def __init__(self) -> None:
        self._prefix: str | None = None
        self._suffix = ""
        self._learnt = 0

    def text(self, data: str) -> str | None:
        """The frame's text, if the frame is the template around one string literal."""
        prefix = self._prefix
        if prefix is None or not data.startswith(prefix):
            return None
        start = len(prefix)
        end = len(data) - len(self._suffix)
        if end - start < 2 or data[start] != '"' or not data.endswith(self._suffix):
            return None
        try:
            text, stop = scanstring(data, start + 1, True)
        except ValueError:
            return None  # not a valid literal: the slow way says what is wrong
        return text if stop == end else None

    def learn(self, data: str, payload: dict[str, Any], key: str, text: str,
              with_text: Any) -> None:
        """From `data`, decoded to `payload` whose text `text` sits under `key` (the last
        `"key":` of the frame); `with_text(payload, t)` is the payload with text t."""
        if self._learnt >= self._MAX_LEARNT:
            return
        self._learnt += 1
        self._prefix = None
        at = data.rfind(f'"{key}"')
        if at < 0:
            return
        pos = at + len(key) + 2
        while pos < len(data) and data[pos] in " \t\r\n:":
            pos += 1
        if pos >= len(data) or data[pos] != '"':
            return
        try:
            value, end = scanstring(data, pos + 1, True)
        except ValueError:
            return
        if value != text:
            return
        prefix, suffix = data[:pos], data[end:]
        try:
            probe = json.loads(prefix + json.dumps(self._SENTINEL) + suffix)
        except ValueError:
            return
        if probe == with_text(payload, self._SENTINEL):
            self._prefix, self._suffix = prefix, suffix


def _with_content(payload: dict[str, Any], text: str) -> dict[str, Any]:
    """An OpenAI text frame's payload with `text` as its content."""
    choice = payload["choices"][0]
    return {**payload, "choices": [{**choice, "delta": {**choice["delta"], "content": text}}]}


def _with_delta_text(payload: dict[str, Any], text: str) -> dict[str, Any]:
    """An Anthropic `content_block_delta` text event's payload with `text` as its text."""
    return {**payload, "delta": {**payload["delta"], "text": text}}


def _anoman_event(payload: dict[str, Any], at: float) -> AnomanMetadata:
    raw = payload.get("_anoman")
    if not isinstance(raw, dict):
        raise ProtocolViolation("the _anoman block is not an object")
    return AnomanMetadata(at, AnomanBlock.model_validate(raw), raw)


class OpenAIFrameReader:
    """`chat.completion.chunk` frames, the Anoman frame, error frames, `[DONE]`."""

    __slots__ = ("_template", "done")

    def __init__(self) -> None:
        self.done = False
        self._template = _TextTemplate()

    def read(self, event: SSEEvent, at: float) -> list[StreamEvent]:
        data = event.data
        text = self._template.text(data)
        if text is not None:
            return [TextDelta(at, text)] if text else []
        if data == "[DONE]":
            self.done = True
            return []
        if not data or data.isspace():
            return []
        payload = _decode(data)
        choices = payload.get("choices")
        if (
            type(choices) is list
            and len(choices) == 1
            and payload.get("usage") is None
            and "_anoman" not in payload
            and "error" not in payload
        ):
            choice = choices[0]
            if type(choice) is dict and choice.get("finish_reason") is None:
                delta = choice.get("delta")
                if type(delta) is dict and delta.keys() <= _TEXT_ONLY:
                    content = delta.get("content")
                    if type(content) is str:
                        if content:
                            self._template.learn(data, payload, "content", content,
                                                 _with_content)
                        return [TextDelta(at, content)] if content else []
                    if content is None:
                        return []
        try:
            return self._read_slow(payload, at)
        except ValidationError as exc:
            raise ProtocolViolation(
                f"frame has an unexpected shape: {exc.errors()[0]['msg']}"
            ) from exc

    def _read_slow(self, payload: dict[str, Any], at: float) -> list[StreamEvent]:
        if payload.get("error") is not None:
            # Anoman's error frame, OpenAI's, and OpenRouter's chunk that carries an
            # `error` object beside `finish_reason: "error"`.
            frame = StreamErrorFrame.model_validate(payload)
            return [StreamFailed(at, stream_error_failure(frame.error))]
        if payload.get("object") == "error":
            # vLLM's mid-stream error: the fields at the top level.
            detail = StreamErrorDetail.model_validate(
                {k: payload.get(k) for k in ("message", "type", "code")})
            return [StreamFailed(at, stream_error_failure(detail))]
        out: list[StreamEvent] = []
        chunk = ChatCompletionChunk.model_validate(payload)
        for choice in chunk.choices or ():
            if choice.index != 0:
                continue  # n > 1 is not something a compare pane shows
            delta = choice.delta
            if delta.role:
                out.append(RoleStarted(at, delta.role))
            reasoning = delta.reasoning_text
            if reasoning:
                out.append(ReasoningDelta(at, reasoning))
            if delta.content:
                out.append(TextDelta(at, delta.content))
            if choice.finish_reason == "error":
                # OpenRouter ends a failed generation so; the answer is not whole.
                detail = StreamErrorDetail(message="the server ended the answer with an error")
                out.append(StreamFailed(at, stream_error_failure(detail)))
                return out
            if choice.finish_reason is not None:
                out.append(StreamFinished(at, choice.finish_reason, chunk.usage))
        if chunk.usage is not None and not any(isinstance(e, StreamFinished) for e in out):
            out.append(StreamFinished(at, None, chunk.usage))
        if chunk.anoman is not None:
            out.append(AnomanMetadata(at, chunk.anoman, payload["_anoman"]))
        return out


class AnthropicFrameReader:
    """Anthropic Messages events plus the `anoman` event; `message_stop` terminates."""

    __slots__ = ("_input_tokens", "_template", "done")

    def __init__(self) -> None:
        self.done = False
        self._input_tokens = 0
        self._template = _TextTemplate()

    def read(self, event: SSEEvent, at: float) -> list[StreamEvent]:
        data = event.data
        text = self._template.text(data)
        if text is not None:
            return [TextDelta(at, text)] if text else []
        if not data or data.isspace():
            return []
        payload = _decode(data)
        # Hot path: a text delta.
        if payload.get("type") == "content_block_delta":
            delta = payload.get("delta")
            if type(delta) is dict and delta.get("type") == "text_delta":
                text = delta.get("text")
                if type(text) is str:
                    if text:
                        self._template.learn(data, payload, "text", text, _with_delta_text)
                    return [TextDelta(at, text)] if text else []
        try:
            return self._read_slow(payload, event.event, at)
        except ValidationError as exc:
            raise ProtocolViolation(
                f"event has an unexpected shape: {exc.errors()[0]['msg']}"
            ) from exc

    def _read_slow(self, payload: dict[str, Any], name: str, at: float) -> list[StreamEvent]:
        if "error" in payload and payload.get("type") in (None, "error"):
            payload = {**payload, "type": "error"}
        parsed = parse_anthropic_event(payload, name if name != "message" else None)
        if isinstance(parsed, ContentBlockDeltaEvent):
            if isinstance(parsed.delta, TextDeltaPayload) and parsed.delta.text:
                return [TextDelta(at, parsed.delta.text)]
            if isinstance(parsed.delta, ThinkingDeltaPayload) and parsed.delta.thinking:
                return [ReasoningDelta(at, parsed.delta.thinking)]
            return []
        if isinstance(parsed, MessageStartEvent):
            self._input_tokens = parsed.message.usage.input_tokens
            return [RoleStarted(at, parsed.message.role)]
        if isinstance(parsed, ContentBlockStartEvent):
            block = parsed.content_block
            if block.type == "text" and block.text:
                return [TextDelta(at, block.text)]
            if block.type == "thinking" and block.thinking:
                return [ReasoningDelta(at, block.thinking)]
            return []
        if isinstance(parsed, MessageDeltaEvent):
            if parsed.usage.input_tokens is not None:
                self._input_tokens = parsed.usage.input_tokens
            out_tokens = parsed.usage.output_tokens
            usage = Usage(
                prompt_tokens=self._input_tokens,
                completion_tokens=out_tokens,
                total_tokens=self._input_tokens + out_tokens,
            )
            return [StreamFinished(at, parsed.delta.stop_reason, usage)]
        if isinstance(parsed, MessageStopEvent):
            self.done = True
            return []
        if isinstance(parsed, ErrorEvent):
            return [StreamFailed(at, stream_error_failure(parsed.error))]
        if isinstance(parsed, AnomanEvent):
            return [_anoman_event(payload, at)]
        return []  # ping, content_block_stop, and event types newer than this client


def frame_reader(endpoint: EndpointFormat) -> FrameReader:
    return AnthropicFrameReader() if endpoint == "anthropic" else OpenAIFrameReader()


def whole_body_events(body: bytes, at: float) -> list[StreamEvent]:
    """A JSON answer to a streaming request (docs/wire-contract.md §6).

    From an Anoman gateway it is valid only as a cache hit. A server that sends no
    `_anoman` block at all (LiteLLM's mock models on `/v1/messages`, servers that do not
    stream some models) may answer with the whole message: that is a complete answer
    when it carries text. Accepts a `chat.completion` or an Anthropic message object,
    since the Anthropic endpoint may answer in its own shape.
    """
    try:
        payload = _decode(body.decode("utf-8", "replace"))
        if "choices" in payload:
            completion = ChatCompletion.model_validate(payload)
            anoman = completion.anoman
            message = completion.choices[0].message if completion.choices else None
            text = message.content or "" if message else ""
            reasoning = message.reasoning_content or "" if message else ""
            finish = completion.choices[0].finish_reason if completion.choices else None
            usage = completion.usage
        else:
            anthropic = AnthropicMessage.model_validate(payload)
            anoman = anthropic.anoman
            text = "".join(b.text or "" for b in anthropic.content if b.type == "text")
            reasoning = "".join(b.thinking or "" for b in anthropic.content if b.type == "thinking")
            finish = anthropic.stop_reason
            u = anthropic.usage
            usage = Usage(
                prompt_tokens=u.input_tokens,
                completion_tokens=u.output_tokens,
                total_tokens=u.input_tokens + u.output_tokens,
            )
    except ValidationError as exc:
        raise ProtocolViolation("JSON answer has an unexpected shape") from exc
    whole_answer = "_anoman" not in payload and bool(text or reasoning)
    if not whole_answer and (anoman is None or not anoman.cache_hit):
        raise ProtocolViolation(
            "the gateway answered a streaming request with JSON that is not a cache hit"
        )
    out: list[StreamEvent] = [RoleStarted(at, "assistant")]
    if reasoning:
        out.append(ReasoningDelta(at, reasoning))
    if text:
        out.append(TextDelta(at, text))
    out.append(StreamFinished(at, finish, usage))
    if anoman is not None:
        out.append(AnomanMetadata(at, anoman, payload["_anoman"]))
    return out
