"""The typed events a stream produces, whatever the endpoint format, and its final result.

`StreamFailure` (what a failed stream carries) lives in `vocabulary.py` with its words.

Every event carries `at`: the `time.monotonic()` instant its bytes came off
the socket, taken in the reading loop before any parsing. Metrics are computed
from these instants, never from when something was drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from anoman_tui.streaming.vocabulary import StreamFailure

if TYPE_CHECKING:
    from anoman_tui.streaming.recording import StreamRecording

    # Types only: the wire models import pydantic, which a reader of the history
    # (`runs show`, `history`) does not need.
    from anoman_tui.wire import AnomanBlock, Usage

ResultStatus = Literal["completed", "failed", "cancelled"]


@dataclass(slots=True, frozen=True)
class StreamOpened:
    """Response headers arrived with a 2xx status."""

    at: float
    status: int
    headers: dict[str, str]
    request_id: str | None
    content_type: str


@dataclass(slots=True, frozen=True)
class RoleStarted:
    at: float
    role: str


@dataclass(slots=True, frozen=True)
class TextDelta:
    at: float
    text: str


@dataclass(slots=True, frozen=True)
class ReasoningDelta:
    at: float
    text: str


@dataclass(slots=True, frozen=True)
class StreamFinished:
    """The model stopped: finish reason and (for OpenAI, final; for Anthropic, cumulative) usage."""

    at: float
    finish_reason: str | None
    usage: Usage | None


@dataclass(slots=True, frozen=True)
class AnomanMetadata:
    """The `_anoman` block: `block` parsed, `raw` exactly as sent (for exports)."""

    at: float
    block: AnomanBlock
    raw: dict[str, Any]


@dataclass(slots=True, frozen=True)
class StreamFailed:
    at: float
    failure: StreamFailure


@dataclass(slots=True, frozen=True)
class StreamMetrics:
    """The metrics of docs/wire-contract.md §7, in seconds from `time.monotonic()` instants.

    Every instant is a byte arrival.

    ttft_s: request sent → first chunk with non-empty text (the role chunk does not count).
    output_tokens_per_s: (completion_tokens − 1) / (last token − first token).
    e2e_s: request sent → terminator (or → the end, for a failed stream).
    itl_s: gaps between consecutive text chunks.
    chunks: frames that carried text or reasoning.
    """

    ttft_s: float | None = None
    e2e_s: float | None = None
    output_tokens_per_s: float | None = None
    itl_s: tuple[float, ...] = ()
    chunks: int = 0
    first_reasoning_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            # Microseconds: a figure shown to 2 places is rounded once, from this (kept
            # to 4 places, 0.01503 s became 0.015 and showed as 0.01 where live said 0.02).
            "ttft_s": _round(self.ttft_s, 6),
            "e2e_s": _round(self.e2e_s, 6),
            "output_tokens_per_s": _round(self.output_tokens_per_s, 2),
            "chunks": self.chunks,
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


@dataclass(slots=True, frozen=True)
class StreamResult:
    """How one stream ended. Only a `completed` result is `committed` (docs/wire-contract.md §3)."""

    status: ResultStatus
    text: str
    reasoning: str
    failure: StreamFailure | None
    usage: Usage | None
    anoman: AnomanBlock | None
    anoman_raw: dict[str, Any] | None
    metrics: StreamMetrics
    finish_reason: str | None = None
    request_id: str | None = None
    http_status: int | None = None
    cache_hit: bool = False
    # What the server itself says the call cost, in US dollars (`usage.cost` of LiteLLM
    # and OpenRouter); None when it did not say. Not the Anoman block's `cost_usd`.
    provider_cost: Decimal | None = None
    # The stream as it came off the socket, when the request asked for it (`record`).
    recording: StreamRecording | None = field(default=None, compare=False, repr=False)

    @property
    def committed(self) -> bool:
        return self.status == "completed"

    @property
    def cut_at_max_tokens(self) -> bool:
        """The model stopped at the token limit: OpenAI's "length", Anthropic's "max_tokens"."""
        return self.finish_reason in ("length", "max_tokens")


@dataclass(slots=True, frozen=True)
class StreamDone:
    """Always the last event of a stream, whatever happened."""

    at: float
    result: StreamResult = field(repr=False)


StreamEvent = (
    StreamOpened
    | RoleStarted
    | TextDelta
    | ReasoningDelta
    | StreamFinished
    | AnomanMetadata
    | StreamFailed
    | StreamDone
)
