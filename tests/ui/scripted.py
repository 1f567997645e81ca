"""Deterministic streams for UI snapshots: fixed events at fixed instants, no network."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from anoman_tui.streaming import (
    AnomanMetadata,
    ReasoningDelta,
    RoleStarted,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamFailure,
    StreamFinished,
    StreamOpened,
    TextDelta,
)
from anoman_tui.streaming.recorder import ResultRecorder
from anoman_tui.wire import AnomanBlock, Usage

T0 = 100.0


def anoman_block(cost: str, weighted: int, hit: bool = False) -> tuple[AnomanBlock, dict]:
    raw = {
        "guardrails": {"injection": {"status": "pass", "score": 0.02},
                       "pii": {"status": "pass", "score": 0.0}},
        "routing": {"mode": "realtime", "region": "id"},
        "cache": {"hit": hit},
        "cost_usd": cost,
        "weighted_tokens": weighted,
    }
    return AnomanBlock.model_validate(raw), raw


def text_events(text: str, *, ttft: float, rate: float, reasoning: str = "") -> list[StreamEvent]:
    """Role, optional reasoning, then the text in word-sized deltas at `rate` per second."""
    at = T0 + 0.05
    events: list[StreamEvent] = [
        StreamOpened(at, 200, {"content-type": "text/event-stream"}, "req-1",
                     "text/event-stream"),
        RoleStarted(at, "assistant"),
    ]
    at = T0 + ttft
    for word in reasoning.split(" ") if reasoning else []:
        events.append(ReasoningDelta(at, word + " "))
        at += 1 / rate
    words = text.split(" ")
    for i, word in enumerate(words):
        events.append(TextDelta(at, word if i == len(words) - 1 else word + " "))
        at += 1 / rate
    return events


def completed(events: list[StreamEvent], *, prompt_tokens: int, cost: str, weight: int,
              hit: bool = False) -> list[StreamEvent]:
    chunks = sum(isinstance(e, TextDelta | ReasoningDelta) for e in events)
    end = events[-1].at + 0.01
    block, raw = anoman_block(cost, (prompt_tokens + chunks) * weight, hit)
    usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=chunks,
                  total_tokens=prompt_tokens + chunks)
    return [*events, StreamFinished(end, "stop", usage), AnomanMetadata(end, block, raw)]


def failed(events: list[StreamEvent], failure: StreamFailure) -> list[StreamEvent]:
    end = (events[-1].at if events else T0) + 0.01
    return [*events, StreamFailed(end, failure)]


class ScriptedStream:
    """Quacks like `ModelStream` for a pane: iterate, `cancel()`, `sent_at`, `result`.

    With `hold=True` it stops after its events (a stream caught mid-flight) until
    cancelled.
    """

    def __init__(self, events: list[StreamEvent], *, hold: bool = False) -> None:
        self.sent_at = T0
        self._events = events
        self._hold = hold
        self._cancelled = asyncio.Event()
        self.result = None

    @property
    def running(self) -> bool:
        return self.result is None

    def cancel(self) -> None:
        self._cancelled.set()

    async def _iterate(self) -> AsyncIterator[StreamEvent]:
        recorder = ResultRecorder(self.sent_at)
        for event in self._events:
            recorder.record(event)
            yield event
        completed_ok = not any(isinstance(e, StreamFailed) for e in self._events)
        end = self._events[-1].at if self._events else T0
        if self._hold:
            await self._cancelled.wait()
            failure = StreamFailure(kind="cancelled",
                                    completion_tokens=recorder.text_chunks)
            recorder.record(StreamFailed(end, failure))
            completed_ok = False
            yield StreamFailed(end, failure)
        result = recorder.result(end + 0.01, completed_ok)
        self.result = result
        yield StreamDone(end + 0.01, result)

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._iterate()
