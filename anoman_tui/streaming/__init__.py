"""The stream core: one typed event stream for every Anoman endpoint format.

Use `StreamClient().stream(StreamRequest(...))` and iterate the events, or
`await stream.wait()` for the `StreamResult`. Shared by the TUI and the
headless `anoman-tui compare`. Imports httpx and pydantic, never Textual.

The names below are re-exported lazily, so that a command that reads only
the history (`runs show`, `history`) does not import the HTTP stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anoman_tui.streaming.client import ModelStream as ModelStream
    from anoman_tui.streaming.client import StreamClient as StreamClient
    from anoman_tui.streaming.cost import COST_SOURCES as COST_SOURCES
    from anoman_tui.streaming.cost import Cost as Cost
    from anoman_tui.streaming.cost import CostSource as CostSource
    from anoman_tui.streaming.cost import cost_of as cost_of
    from anoman_tui.streaming.endpoints import ENDPOINT_FORMATS as ENDPOINT_FORMATS
    from anoman_tui.streaming.endpoints import EndpointFormat as EndpointFormat
    from anoman_tui.streaming.endpoints import normalize_base_url as normalize_base_url
    from anoman_tui.streaming.events import AnomanMetadata as AnomanMetadata
    from anoman_tui.streaming.events import ReasoningDelta as ReasoningDelta
    from anoman_tui.streaming.events import ResultStatus as ResultStatus
    from anoman_tui.streaming.events import RoleStarted as RoleStarted
    from anoman_tui.streaming.events import StreamDone as StreamDone
    from anoman_tui.streaming.events import StreamEvent as StreamEvent
    from anoman_tui.streaming.events import StreamFailed as StreamFailed
    from anoman_tui.streaming.events import StreamFinished as StreamFinished
    from anoman_tui.streaming.events import StreamMetrics as StreamMetrics
    from anoman_tui.streaming.events import StreamOpened as StreamOpened
    from anoman_tui.streaming.events import StreamResult as StreamResult
    from anoman_tui.streaming.events import TextDelta as TextDelta
    from anoman_tui.streaming.gateway_answers import GatewayRequestError as GatewayRequestError
    from anoman_tui.streaming.gateway_answers import ModelInfo as ModelInfo
    from anoman_tui.streaming.prices import (
        estimate_from_price_library as estimate_from_price_library,
    )
    from anoman_tui.streaming.prices import preload_price_library as preload_price_library
    from anoman_tui.streaming.request import ChatTurn as ChatTurn
    from anoman_tui.streaming.request import StreamRequest as StreamRequest
    from anoman_tui.streaming.safe_text import mask_key as mask_key
    from anoman_tui.streaming.sse import SSEDecoder as SSEDecoder
    from anoman_tui.streaming.sse import SSEEvent as SSEEvent
    from anoman_tui.streaming.vocabulary import FailureDescription as FailureDescription
    from anoman_tui.streaming.vocabulary import FailureKind as FailureKind
    from anoman_tui.streaming.vocabulary import StreamFailure as StreamFailure
    from anoman_tui.streaming.vocabulary import describe_failure as describe_failure

_EXPORTS = {
    "ModelStream": "anoman_tui.streaming.client",
    "StreamClient": "anoman_tui.streaming.client",
    "COST_SOURCES": "anoman_tui.streaming.cost",
    "Cost": "anoman_tui.streaming.cost",
    "CostSource": "anoman_tui.streaming.cost",
    "cost_of": "anoman_tui.streaming.cost",
    "AnomanMetadata": "anoman_tui.streaming.events",
    "ReasoningDelta": "anoman_tui.streaming.events",
    "ResultStatus": "anoman_tui.streaming.events",
    "RoleStarted": "anoman_tui.streaming.events",
    "StreamDone": "anoman_tui.streaming.events",
    "StreamEvent": "anoman_tui.streaming.events",
    "StreamFailed": "anoman_tui.streaming.events",
    "StreamFinished": "anoman_tui.streaming.events",
    "StreamMetrics": "anoman_tui.streaming.events",
    "StreamOpened": "anoman_tui.streaming.events",
    "StreamResult": "anoman_tui.streaming.events",
    "TextDelta": "anoman_tui.streaming.events",
    "GatewayRequestError": "anoman_tui.streaming.gateway_answers",
    "ModelInfo": "anoman_tui.streaming.gateway_answers",
    "estimate_from_price_library": "anoman_tui.streaming.prices",
    "preload_price_library": "anoman_tui.streaming.prices",
    "ChatTurn": "anoman_tui.streaming.request",
    "ENDPOINT_FORMATS": "anoman_tui.streaming.endpoints",
    "EndpointFormat": "anoman_tui.streaming.endpoints",
    "StreamRequest": "anoman_tui.streaming.request",
    "mask_key": "anoman_tui.streaming.safe_text",
    "normalize_base_url": "anoman_tui.streaming.endpoints",
    "SSEDecoder": "anoman_tui.streaming.sse",
    "SSEEvent": "anoman_tui.streaming.sse",
    "FailureDescription": "anoman_tui.streaming.vocabulary",
    "FailureKind": "anoman_tui.streaming.vocabulary",
    "StreamFailure": "anoman_tui.streaming.vocabulary",
    "describe_failure": "anoman_tui.streaming.vocabulary",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
