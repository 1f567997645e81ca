"""Bytes on the wire: SSE frames and JSON bodies of both formats.

``OpenAIFrames`` writes `chat.completion.chunk` frames (also used by the
playground endpoint), ``AnthropicFrames`` writes Messages events; both add the
Anoman block second to last and the terminator last (docs/wire-contract.md §2),
and the generic mid-stream error frame (§3). Per-token frames are built from
pre-encoded prefixes so the hot path is one `json.dumps` of the token text.
Also here: the non-streaming bodies and the pre-call error bodies.

Imports only the standard library.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol

TokenKind = Literal["reasoning", "text"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame: optional `event:` line, one `data:` line, one blank line."""
    payload = data if isinstance(data, str) else _dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def stream_error(completion_tokens: int, failure_class: str = "upstream_error") -> dict[str, Any]:
    """The generic error object of docs/wire-contract.md §3.2; raw causes stay in the log."""
    return {
        "type": "provider_error",
        "code": "stream_interrupted",
        "message": "upstream stream interrupted",
        "_anoman": {"failure_class": failure_class, "completion_tokens": completion_tokens},
    }


class StreamFrames(Protocol):
    """What the generation loop needs from a wire format."""

    error_has_terminator: bool

    def opening(self) -> bytes: ...
    def delta(self, kind: TokenKind, token: str) -> bytes: ...
    def closing(self, finish: str, prompt_tokens: int, completion_tokens: int,
                reasoning_tokens: int) -> bytes: ...
    def anoman(self, block: dict[str, Any]) -> bytes: ...
    def terminator(self) -> bytes: ...
    def error(self, completion_tokens: int, failure_class: str) -> bytes: ...
    def malformed(self) -> bytes: ...


class OpenAIFrames:
    """`chat.completion.chunk` frames for one response."""

    error_has_terminator = True

    def __init__(self, request_id: str, model: str, created: int) -> None:
        self._head = (
            f'{{"id":"chatcmpl-{request_id}","object":"chat.completion.chunk",'
            f'"created":{created},"model":{_dumps(model)},"choices":[{{"index":0,'
        )
        self._text_prefix = f'data: {self._head}"delta":{{"content":'.encode()
        self._reasoning_prefix = f'data: {self._head}"delta":{{"reasoning_content":'.encode()
        self._suffix = b'},"finish_reason":null}]}\n\n'

    def opening(self) -> bytes:
        return (f'data: {self._head}"delta":{{"role":"assistant","content":""}},'
                f'"finish_reason":null}}]}}\n\n').encode()

    def delta(self, kind: TokenKind, token: str) -> bytes:
        prefix = self._text_prefix if kind == "text" else self._reasoning_prefix
        return prefix + _dumps(token).encode() + self._suffix

    def closing(self, finish: str, prompt_tokens: int, completion_tokens: int,
                reasoning_tokens: int) -> bytes:
        usage = openai_usage(prompt_tokens, completion_tokens, reasoning_tokens)
        return (f'data: {self._head}"delta":{{}},"finish_reason":{_dumps(finish)}}}],'
                f'"usage":{_dumps(usage)}}}\n\n').encode()

    def anoman(self, block: dict[str, Any]) -> bytes:
        return sse({"_anoman": block})

    def terminator(self) -> bytes:
        return b"data: [DONE]\n\n"

    def error(self, completion_tokens: int, failure_class: str) -> bytes:
        return sse({"error": stream_error(completion_tokens, failure_class)})

    def malformed(self) -> bytes:
        # A frame cut mid-object: what a broken proxy or upstream might emit.
        return f'data: {self._head}"delta":{{"content":"\n\n'.encode()


class AnthropicFrames:
    """Messages events for one response; tracks which content block is open."""

    error_has_terminator = False

    def __init__(self, request_id: str, model: str, prompt_tokens: int) -> None:
        self._id = f"msg_{request_id}"
        self._model = model
        self._prompt_tokens = prompt_tokens
        self._open: TokenKind | None = None
        self._index = -1
        self._text_prefix = b""
        self._thinking_prefix = b""

    def opening(self) -> bytes:
        message: dict[str, Any] = {
            "id": self._id, "type": "message", "role": "assistant", "model": self._model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self._prompt_tokens, "output_tokens": 0},
        }
        return sse({"type": "message_start", "message": message}, "message_start") + sse(
            {"type": "ping"}, "ping"
        )

    def _switch(self, kind: TokenKind) -> bytes:
        out = self._close_block()
        self._index += 1
        self._open = kind
        block: dict[str, Any] = (
            {"type": "thinking", "thinking": "", "signature": ""} if kind == "reasoning"
            else {"type": "text", "text": ""}
        )
        out += sse({"type": "content_block_start", "index": self._index,
                    "content_block": block}, "content_block_start")
        delta_type, field = ("thinking_delta", "thinking") if kind == "reasoning" else (
            "text_delta", "text")
        prefix = (f'event: content_block_delta\ndata: {{"type":"content_block_delta",'
                  f'"index":{self._index},"delta":{{"type":"{delta_type}","{field}":').encode()
        if kind == "reasoning":
            self._thinking_prefix = prefix
        else:
            self._text_prefix = prefix
        return out

    def _close_block(self) -> bytes:
        if self._open is None:
            return b""
        out = b""
        if self._open == "reasoning":
            # Real thinking blocks end with a signature the client passes back.
            out += sse({"type": "content_block_delta", "index": self._index,
                        "delta": {"type": "signature_delta",
                                  "signature": f"sim-{self._id}-{self._index}"}},
                       "content_block_delta")
        out += sse({"type": "content_block_stop", "index": self._index}, "content_block_stop")
        self._open = None
        return out

    def delta(self, kind: TokenKind, token: str) -> bytes:
        head = self._switch(kind) if kind != self._open else b""
        prefix = self._text_prefix if kind == "text" else self._thinking_prefix
        return head + prefix + _dumps(token).encode() + b"}}\n\n"

    def closing(self, finish: str, prompt_tokens: int, completion_tokens: int,
                reasoning_tokens: int) -> bytes:
        head = self._switch("text") if self._index < 0 else b""  # always one content block
        stop_reason = "max_tokens" if finish == "length" else "end_turn"
        return head + self._close_block() + sse(
            {"type": "message_delta",
             "delta": {"stop_reason": stop_reason, "stop_sequence": None},
             "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens}},
            "message_delta",
        )

    def anoman(self, block: dict[str, Any]) -> bytes:
        return sse({"type": "anoman", "_anoman": block}, "anoman")

    def terminator(self) -> bytes:
        return sse({"type": "message_stop"}, "message_stop")

    def error(self, completion_tokens: int, failure_class: str) -> bytes:
        return sse({"type": "error", "error": stream_error(completion_tokens, failure_class)},
                   "error")

    def malformed(self) -> bytes:
        return (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
                + str(max(self._index, 0)).encode() + b',"delta":{"type":"text_delta","text":"\n\n')


def openai_usage(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int
                 ) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reasoning_tokens:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return usage


def openai_completion(request_id: str, model: str, created: int, text: str, reasoning: str,
                      finish: str, prompt_tokens: int, completion_tokens: int,
                      reasoning_tokens: int, anoman: dict[str, Any]) -> dict[str, Any]:
    """A `chat.completion` object (non-streaming answers and cache hits)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "id": f"chatcmpl-{request_id}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": openai_usage(prompt_tokens, completion_tokens, reasoning_tokens),
        "_anoman": anoman,
    }


def anthropic_message(request_id: str, model: str, text: str, reasoning: str, finish: str,
                      prompt_tokens: int, completion_tokens: int,
                      anoman: dict[str, Any]) -> dict[str, Any]:
    """A Messages `message` object (non-streaming answers)."""
    content: list[dict[str, Any]] = []
    if reasoning:
        content.append({"type": "thinking", "thinking": reasoning,
                        "signature": f"sim-msg_{request_id}-0"})
    if text or not reasoning:
        # A budget spent on thinking leaves no text block, as in the stream; otherwise
        # there is always one.
        content.append({"type": "text", "text": text})
    return {
        "id": f"msg_{request_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "max_tokens" if finish == "length" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
        "_anoman": anoman,
    }


def error_body(wire: Literal["openai", "anthropic"], error_type: str, message: str, *,
               code: str | None = None, param: str | None = None,
               anoman: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pre-call error body; the Anthropic endpoint uses Anthropic's envelope."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if wire == "openai":
        error["param"] = param
        error["code"] = code
    elif code is not None:
        error["code"] = code
    body: dict[str, Any] = {"type": "error", "error": error} if wire == "anthropic" else {
        "error": error}
    if anoman is not None:
        body["_anoman"] = anoman
    return body
