"""Accumulates one stream's events into its `StreamResult` and docs/wire-contract.md §7 metrics."""

from __future__ import annotations

import itertools

from anoman_tui.streaming.events import (
    AnomanMetadata,
    ReasoningDelta,
    ResultStatus,
    StreamEvent,
    StreamFailed,
    StreamFinished,
    StreamMetrics,
    StreamOpened,
    StreamResult,
    TextDelta,
)
from anoman_tui.streaming.vocabulary import StreamFailure
from anoman_tui.wire import AnomanBlock, Usage


class ResultRecorder:
    """Fed every event in order; `result()` builds the final, immutable result."""

    def __init__(self, sent_at: float) -> None:
        self.sent_at = sent_at
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._token_times: list[float] = []  # arrival of every text or reasoning chunk
        self.first_text_at: float | None = None
        self.first_reasoning_at: float | None = None
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.anoman: AnomanBlock | None = None
        self.anoman_raw: dict[str, object] | None = None
        self.failure: StreamFailure | None = None
        self.request_id: str | None = None
        self.http_status: int | None = None

    @property
    def text_chunks(self) -> int:
        return len(self._token_times)

    def record(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
            self._token_times.append(event.at)
            if self.first_text_at is None:
                self.first_text_at = event.at
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
            self._token_times.append(event.at)
            if self.first_reasoning_at is None:
                self.first_reasoning_at = event.at
        elif isinstance(event, StreamFinished):
            if event.finish_reason is not None:
                self.finish_reason = event.finish_reason
            if event.usage is not None:
                self.usage = event.usage
        elif isinstance(event, AnomanMetadata):
            self.anoman = event.block
            self.anoman_raw = event.raw
        elif isinstance(event, StreamFailed):
            if self.failure is None:
                self.failure = event.failure
        elif isinstance(event, StreamOpened):
            self.request_id = event.request_id
            self.http_status = event.status

    def result(self, ended_at: float, completed: bool) -> StreamResult:
        status: ResultStatus = "completed"
        if self.failure is not None:
            status = "cancelled" if self.failure.kind == "cancelled" else "failed"
        elif not completed:
            raise ValueError("a stream that did not complete must carry a failure")
        return StreamResult(
            status=status,
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            failure=self.failure,
            usage=self.usage,
            anoman=self.anoman,
            anoman_raw=self.anoman_raw,
            metrics=self._metrics(ended_at),
            finish_reason=self.finish_reason,
            request_id=self.request_id,
            http_status=self.http_status,
            cache_hit=bool(self.anoman and self.anoman.cache_hit),
            provider_cost=self.usage.provider_cost_usd if self.usage is not None else None,
        )

    def completion_tokens(self) -> int:
        """Usage when the gateway gave it, else the error frame's count, else chunks seen."""
        if self.usage is not None:
            return self.usage.completion_tokens
        if self.failure is not None and self.failure.completion_tokens is not None:
            return self.failure.completion_tokens
        return self.text_chunks

    def _metrics(self, ended_at: float) -> StreamMetrics:
        times = self._token_times
        rate = None
        # The error frame's count may include tokens we never received; rate only what we timed.
        tokens = self.usage.completion_tokens if self.usage is not None else len(times)
        if len(times) >= 2 and tokens > 1 and times[-1] > times[0]:
            rate = (tokens - 1) / (times[-1] - times[0])
        return StreamMetrics(
            ttft_s=None if self.first_text_at is None else self.first_text_at - self.sent_at,
            e2e_s=ended_at - self.sent_at,
            output_tokens_per_s=rate,
            itl_s=tuple(b - a for a, b in itertools.pairwise(times)),
            chunks=len(times),
            first_reasoning_s=(
                None if self.first_reasoning_at is None else self.first_reasoning_at - self.sent_at
            ),
        )
