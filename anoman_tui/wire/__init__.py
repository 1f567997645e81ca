"""Pydantic models of everything that crosses the wire to and from an Anoman gateway.

OpenAI chat completion chunks and bodies, the `_anoman` metadata block, the
mid-stream error frame, HTTP error bodies and every Anthropic Messages stream
event. Pure data: no I/O, imports nothing from the rest of the package.
Every model ignores or keeps unknown fields so a gateway that grows a field
never breaks a client.
"""

from anoman_tui.wire.anoman import (
    AnomanBlock,
    AnomanFailureInfo,
    CacheInfo,
    GuardrailVerdict,
    PlaygroundEcho,
    RoutingInfo,
)
from anoman_tui.wire.anthropic import (
    AnomanEvent,
    AnthropicEvent,
    AnthropicMessage,
    AnthropicUsage,
    ContentBlock,
    ContentBlockDeltaEvent,
    ContentBlockStartEvent,
    ContentBlockStopEvent,
    ErrorEvent,
    MessageDelta,
    MessageDeltaEvent,
    MessageDeltaUsage,
    MessageStartEvent,
    MessageStopEvent,
    PingEvent,
    TextDeltaPayload,
    ThinkingDeltaPayload,
    UnknownAnthropicEvent,
    UnknownDeltaPayload,
    parse_anthropic_event,
)
from anoman_tui.wire.errors import ErrorBody, ErrorDetail, StreamErrorDetail, StreamErrorFrame
from anoman_tui.wire.openai import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatMessage,
    ChoiceDelta,
    ChunkChoice,
    CompletionChoice,
    Usage,
)

__all__ = [
    "AnomanBlock",
    "AnomanEvent",
    "AnomanFailureInfo",
    "AnthropicEvent",
    "AnthropicMessage",
    "AnthropicUsage",
    "CacheInfo",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatMessage",
    "ChoiceDelta",
    "ChunkChoice",
    "CompletionChoice",
    "ContentBlock",
    "ContentBlockDeltaEvent",
    "ContentBlockStartEvent",
    "ContentBlockStopEvent",
    "ErrorBody",
    "ErrorDetail",
    "ErrorEvent",
    "GuardrailVerdict",
    "MessageDelta",
    "MessageDeltaEvent",
    "MessageDeltaUsage",
    "MessageStartEvent",
    "MessageStopEvent",
    "PingEvent",
    "PlaygroundEcho",
    "RoutingInfo",
    "StreamErrorDetail",
    "StreamErrorFrame",
    "TextDeltaPayload",
    "ThinkingDeltaPayload",
    "UnknownAnthropicEvent",
    "UnknownDeltaPayload",
    "Usage",
    "parse_anthropic_event",
]
