"""Parsing and validating request bodies of the three generation endpoints.

``parse_chat_request`` turns a decoded JSON body (OpenAI chat completions,
Anoman playground, or Anthropic Messages) into one ``ChatRequest``: the
normalized conversation, the prompt the answer is about, the parameters that
matter for the cache key, and the playground echo fields. Anything malformed
raises ``InvalidRequest`` with a message fit for a 400 body.

Imports only the standard library and the tokenizer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from anoman_tui.gateway.tokenizer import count_prompt_tokens

WireFormat = Literal["openai", "anthropic"]

_OPENAI_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_ANTHROPIC_ROLES = frozenset({"user", "assistant"})
MAX_TOKENS_LIMIT = 1_000_000


class InvalidRequest(ValueError):
    """The body is not a valid request; ``param`` names the offending field."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(slots=True)
class ChatRequest:
    wire: WireFormat
    model: str
    messages: list[tuple[str, str]]  # (role, text), system first when given
    prompt: str  # what the simulated answer is about: the last user turn
    stream: bool
    max_tokens: int | None
    seed: int | None  # as sent; None when the request names none
    temperature: float | None = None  # as sent; None: the API's default (1.0)
    params: dict[str, Any] = field(default_factory=dict)  # cache-relevant parameters
    compare_id: str | None = None
    panel: int | None = None

    @property
    def varies(self) -> bool:
        """Whether the answer is drawn afresh for this request: at a temperature above 0,
        unset included (the OpenAI and Anthropic APIs default to 1.0), unless a seed is
        given; at temperature 0 or with a seed, the same request gets the same answer."""
        return self.seed is None and self.temperature != 0.0

    @property
    def prompt_tokens(self) -> int:
        return count_prompt_tokens(self.messages)

    @property
    def caller_text(self) -> str:
        """What the guardrails inspect: the system and user turns, not the assistant's.

        Assistant turns are the model's own earlier output; scoring them would flag a
        follow-up for the model's words ("stable" in an answer about clusters).
        """
        return "\n".join(text for role, text in self.messages if role != "assistant")


def clean_text(text: str) -> str:
    """Drop lone surrogates JSON may smuggle in; they cannot be encoded as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _text_of(content: Any, where: str) -> str:
    """Text of a message's content: a string or a list of text parts/blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return clean_text(content)
    if isinstance(content, list):
        texts: list[str] = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(clean_text(part))
                continue
            if not isinstance(part, dict):
                raise InvalidRequest(f"{where}[{i}] must be an object", where)
            kind = part.get("type")
            if kind in ("text", "input_text"):
                text = part.get("text")
                if not isinstance(text, str):
                    raise InvalidRequest(f"{where}[{i}].text must be a string", where)
                texts.append(clean_text(text))
            elif kind == "tool_result":
                texts.append(_text_of(part.get("content"), f"{where}[{i}].content"))
            elif kind in ("tool_use", "thinking", "redacted_thinking"):
                continue
            else:
                raise InvalidRequest(
                    f"{where}[{i}]: content type {kind!r} is not supported by simulated models",
                    where,
                )
        return "\n".join(texts)
    raise InvalidRequest(f"{where} must be a string or a list of content parts", where)


def _opt_number(body: dict[str, Any], name: str, low: float, high: float) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidRequest(f"{name} must be a number", name)
    if not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low} and {high}", name)
    return float(value)


def _opt_int(body: dict[str, Any], name: str, low: int, high: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"{name} must be an integer", name)
    if not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low} and {high}", name)
    return value


def _common(body: Any) -> tuple[str, list[Any], bool]:
    if not isinstance(body, dict):
        raise InvalidRequest("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise InvalidRequest("model is required and must be a non-empty string", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages is required and must be a non-empty list", "messages")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise InvalidRequest("stream must be a boolean", "stream")
    return clean_text(model), messages, stream


def _stop(body: dict[str, Any], name: str) -> list[str] | None:
    stop = body.get(name)
    if stop is None:
        return None
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        return list(stop)
    raise InvalidRequest(f"{name} must be a string or a list of strings", name)


def _prompt(messages: list[tuple[str, str]]) -> str:
    for role, text in reversed(messages):
        if role == "user":
            return text
    return messages[-1][1]


def parse_chat_request(body: Any, wire: WireFormat, *, playground: bool = False) -> ChatRequest:
    """Validate ``body`` for ``wire``; raise ``InvalidRequest`` when it is not acceptable."""
    model, raw_messages, stream = _common(body)
    assert isinstance(body, dict)  # _common checked it; this narrows the type
    messages: list[tuple[str, str]] = []

    if wire == "anthropic":
        system = body.get("system")
        if system is not None:
            messages.append(("system", _text_of(system, "system")))
        roles = _ANTHROPIC_ROLES
    else:
        roles = _OPENAI_ROLES
    for i, msg in enumerate(raw_messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise InvalidRequest(f"{where} must be an object", "messages")
        role = msg.get("role")
        if role not in roles:
            raise InvalidRequest(f"{where}.role must be one of {sorted(roles)}", "messages")
        messages.append((role, _text_of(msg.get("content"), f"{where}.content")))

    if wire == "anthropic":
        max_tokens = _opt_int(body, "max_tokens", 1, MAX_TOKENS_LIMIT)
    else:
        max_tokens = _opt_int(body, "max_completion_tokens", 1, MAX_TOKENS_LIMIT)
        if max_tokens is None:
            max_tokens = _opt_int(body, "max_tokens", 1, MAX_TOKENS_LIMIT)
        n = _opt_int(body, "n", 1, 1)
        del n  # only n=1 is meaningful for a streamed comparison
    seed = _opt_int(body, "seed", -(2**63), 2**63 - 1)
    temperature = _opt_number(body, "temperature", 0.0, 2.0)

    params: dict[str, Any] = {
        "max_tokens": max_tokens,
        "seed": seed,
        "temperature": temperature,
        "top_p": _opt_number(body, "top_p", 0.0, 1.0),
        "stop": _stop(body, "stop" if wire == "openai" else "stop_sequences"),
    }
    if wire == "openai":
        params["presence_penalty"] = _opt_number(body, "presence_penalty", -2.0, 2.0)
        params["frequency_penalty"] = _opt_number(body, "frequency_penalty", -2.0, 2.0)
    else:
        params["top_k"] = _opt_int(body, "top_k", 0, 1_000_000)

    compare_id: str | None = None
    panel: int | None = None
    if playground:
        raw_compare = body.get("compare_id")
        if raw_compare is not None and not isinstance(raw_compare, str):
            raise InvalidRequest("compare_id must be a string", "compare_id")
        compare_id = clean_text(raw_compare) if raw_compare is not None else None
        panel = _opt_int(body, "panel", 0, 1_000)

    return ChatRequest(
        wire=wire,
        model=model,
        messages=messages,
        prompt=_prompt(messages),
        stream=stream,
        max_tokens=max_tokens,
        seed=seed,
        temperature=temperature,
        params=params,
        compare_id=compare_id,
        panel=panel,
    )
