"""The stream core: one typed event stream for every Anoman endpoint format.

Use `StreamClient().stream(StreamRequest(...))` and iterate the events, or
`await stream.wait()` for the `StreamResult`. Shared by the TUI and the
headless `anoman-tui compare`. Imports httpx and pydantic, never Textual.
"""

from anoman_tui.streaming.client import ModelStream, StreamClient
from anoman_tui.streaming.cost import COST_SOURCES, Cost, CostSource, cost_of
from anoman_tui.streaming.events import (
    AnomanMetadata,
    ReasoningDelta,
    ResultStatus,
    RoleStarted,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamFinished,
    StreamMetrics,
    StreamOpened,
    StreamResult,
    TextDelta,
)
from anoman_tui.streaming.gateway_api import GatewayRequestError, ModelInfo
from anoman_tui.streaming.prices import estimate_from_price_library, preload_price_library
from anoman_tui.streaming.request import (
    ENDPOINT_FORMATS,
    ChatTurn,
    EndpointFormat,
    StreamRequest,
    mask_key,
    normalize_base_url,
)
from anoman_tui.streaming.sse import SSEDecoder, SSEEvent
from anoman_tui.streaming.vocabulary import (
    FailureDescription,
    FailureKind,
    StreamFailure,
    describe_failure,
)

__all__ = [
    "COST_SOURCES",
    "ENDPOINT_FORMATS",
    "AnomanMetadata",
    "ChatTurn",
    "Cost",
    "CostSource",
    "EndpointFormat",
    "FailureDescription",
    "FailureKind",
    "GatewayRequestError",
    "ModelInfo",
    "ModelStream",
    "ReasoningDelta",
    "ResultStatus",
    "RoleStarted",
    "SSEDecoder",
    "SSEEvent",
    "StreamClient",
    "StreamDone",
    "StreamEvent",
    "StreamFailed",
    "StreamFailure",
    "StreamFinished",
    "StreamMetrics",
    "StreamOpened",
    "StreamRequest",
    "StreamResult",
    "TextDelta",
    "cost_of",
    "describe_failure",
    "estimate_from_price_library",
    "mask_key",
    "normalize_base_url",
    "preload_price_library",
]
