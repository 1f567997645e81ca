"""Anthropic Messages stream events, plus the `anoman` event of docs/wire-contract.md §2.

`parse_anthropic_event` maps an event's `type` to its model; a type we do not
know becomes `UnknownAnthropicEvent` instead of an error, as Anthropic's own
versioning policy asks of clients.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from anoman_tui.wire.anoman import AnomanBlock
from anoman_tui.wire.base import WireModel
from anoman_tui.wire.errors import StreamErrorDetail


class AnthropicUsage(WireModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class ContentBlock(WireModel):
    """A content block as opened by `content_block_start` (text, thinking, tool_use, ...)."""

    type: str = "text"
    text: str | None = None
    thinking: str | None = None


class AnthropicMessage(WireModel):
    id: str | None = None
    type: str = "message"
    role: str = "assistant"
    model: str | None = None
    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: AnthropicUsage = Field(default_factory=AnthropicUsage)
    anoman: AnomanBlock | None = Field(default=None, alias="_anoman")


class MessageStartEvent(WireModel):
    type: Literal["message_start"] = "message_start"
    message: AnthropicMessage = Field(default_factory=AnthropicMessage)


class ContentBlockStartEvent(WireModel):
    type: Literal["content_block_start"] = "content_block_start"
    index: int = 0
    content_block: ContentBlock = Field(default_factory=ContentBlock)


class TextDeltaPayload(WireModel):
    type: Literal["text_delta"] = "text_delta"
    text: str = ""


class ThinkingDeltaPayload(WireModel):
    type: Literal["thinking_delta"] = "thinking_delta"
    thinking: str = ""


class UnknownDeltaPayload(WireModel):
    """`signature_delta`, `input_json_delta` and anything newer: kept, not rendered."""

    type: str = "unknown"


DeltaPayload = TextDeltaPayload | ThinkingDeltaPayload | UnknownDeltaPayload


class ContentBlockDeltaEvent(WireModel):
    type: Literal["content_block_delta"] = "content_block_delta"
    index: int = 0
    delta: DeltaPayload = Field(default_factory=UnknownDeltaPayload)

    @field_validator("delta", mode="before")
    @classmethod
    def _pick_delta(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return UnknownDeltaPayload()
        kind = value.get("type")
        if kind == "text_delta":
            return TextDeltaPayload.model_validate(value)
        if kind == "thinking_delta":
            return ThinkingDeltaPayload.model_validate(value)
        return UnknownDeltaPayload.model_validate(value)


class ContentBlockStopEvent(WireModel):
    type: Literal["content_block_stop"] = "content_block_stop"
    index: int = 0


class MessageDelta(WireModel):
    stop_reason: str | None = None
    stop_sequence: str | None = None


class MessageDeltaUsage(WireModel):
    """Cumulative counts: each `message_delta` restates the totals so far."""

    output_tokens: int = 0
    input_tokens: int | None = None


class MessageDeltaEvent(WireModel):
    type: Literal["message_delta"] = "message_delta"
    delta: MessageDelta = Field(default_factory=MessageDelta)
    usage: MessageDeltaUsage = Field(default_factory=MessageDeltaUsage)


class MessageStopEvent(WireModel):
    type: Literal["message_stop"] = "message_stop"


class PingEvent(WireModel):
    type: Literal["ping"] = "ping"


class ErrorEvent(WireModel):
    type: Literal["error"] = "error"
    error: StreamErrorDetail = Field(default_factory=StreamErrorDetail)

    @field_validator("error", mode="before")
    @classmethod
    def _error_as_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"message": value}
        return value


class AnomanEvent(WireModel):
    """`event: anoman`, sent just before `message_stop` (docs/wire-contract.md §2, decision)."""

    type: Literal["anoman"] = "anoman"
    anoman: AnomanBlock = Field(default_factory=AnomanBlock, alias="_anoman")


class UnknownAnthropicEvent(WireModel):
    type: str = "unknown"


AnthropicEvent = (
    MessageStartEvent
    | ContentBlockStartEvent
    | ContentBlockDeltaEvent
    | ContentBlockStopEvent
    | MessageDeltaEvent
    | MessageStopEvent
    | PingEvent
    | ErrorEvent
    | AnomanEvent
    | UnknownAnthropicEvent
)

_EVENT_MODELS: dict[str, type[AnthropicEvent]] = {
    "message_start": MessageStartEvent,
    "content_block_start": ContentBlockStartEvent,
    "content_block_delta": ContentBlockDeltaEvent,
    "content_block_stop": ContentBlockStopEvent,
    "message_delta": MessageDeltaEvent,
    "message_stop": MessageStopEvent,
    "ping": PingEvent,
    "error": ErrorEvent,
    "anoman": AnomanEvent,
}


def parse_anthropic_event(payload: dict[str, Any], event_name: str | None = None) -> AnthropicEvent:
    """Validate one decoded event body; the SSE `event:` name is the fallback for `type`.

    Raises `pydantic.ValidationError` only when a known event has fields of the
    wrong type; unknown events never raise.
    """
    kind = payload.get("type")
    if not isinstance(kind, str):
        kind = event_name or "unknown"
    model = _EVENT_MODELS.get(kind)
    if model is None:
        return UnknownAnthropicEvent.model_validate({**payload, "type": kind})
    if payload.get("type") != kind:
        payload = {**payload, "type": kind}
    return model.model_validate(payload)
