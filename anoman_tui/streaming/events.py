"""The typed events a stream produces, whatever the endpoint format, and its final result.

Every event carries `at`: the `time.monotonic()` instant its bytes came off
the socket, taken in the reading loop before any parsing. Metrics are computed
from these instants, never from when something was drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from anoman_tui.wire import AnomanBlock, GuardrailVerdict, Usage

FailureKind = Literal[
    "http_error",
    "stream_error",
    "truncated",
    "stalled",
    "protocol_error",
    "transport_error",
    "cancelled",
]
ResultStatus = Literal["completed", "failed", "cancelled"]


@dataclass(slots=True, frozen=True)
class StreamFailure:
    """Why a stream did not complete, with every detail the gateway gave.

    `detail` is what the server or the transport said, cleaned and key-free (the
    gateway's message, "connection refused", the protocol problem); `message` is the
    one sentence every view shows, made from all the fields by `describe_failure`.
    """

    kind: FailureKind
    detail: str = ""
    status: int | None = None
    type: str | None = None
    code: str | None = None
    failure_class: str | None = None
    completion_tokens: int | None = None
    retry_after_s: float | None = None
    guardrails: dict[str, GuardrailVerdict] | None = None

    @property
    def message(self) -> str:
        """The failure in one line, the same words on the badge, in `compare` and the log."""
        from anoman_tui.streaming.failure_text import describe_failure

        return describe_failure(self).text

    @property
    def blocking_guardrail(self) -> tuple[str, GuardrailVerdict] | None:
        """The check that blocked a 403 (first with status `block`), if the body said."""
        for name, verdict in (self.guardrails or {}).items():
            if verdict.status == "block":
                return name, verdict
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": self.status,
            "type": self.type,
            "code": self.code,
            "message": self.message,
            "failure_class": self.failure_class,
            "completion_tokens": self.completion_tokens,
            "retry_after_s": self.retry_after_s,
            "guardrails": (
                {k: v.model_dump(mode="json") for k, v in self.guardrails.items()}
                if self.guardrails
                else None
            ),
        }


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
    """SPEC §7 figures, all in seconds from `time.monotonic()` instants of byte arrival.

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
            "ttft_s": _round(self.ttft_s),
            "e2e_s": _round(self.e2e_s),
            "output_tokens_per_s": _round(self.output_tokens_per_s, 2),
            "chunks": self.chunks,
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


@dataclass(slots=True, frozen=True)
class StreamResult:
    """How one stream ended. Only a `completed` result is `committed` (SPEC §3)."""

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

    @property
    def committed(self) -> bool:
        return self.status == "completed"


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
