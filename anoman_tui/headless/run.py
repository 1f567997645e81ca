"""The run of `compare`: every pane's request streamed at once through the stream core,
each pane's progress kept for whichever view shows it, and the finished run saved.

Imports the stream core, httpx and the history; never Rich or Textual.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx
from pydantic import SecretStr

from anoman_tui.headless.spec import BLIND_LABELS, REPLAY_BASE_URL, CompareSpec
from anoman_tui.history import ComparisonRecord, HistoryStore, HistoryUnavailable
from anoman_tui.history.builder import for_history
from anoman_tui.history.pending import PendingSaves, comparison_write
from anoman_tui.streaming import (
    ChatTurn,
    ModelInfo,
    ModelStream,
    ReasoningDelta,
    StreamClient,
    StreamDone,
    StreamFailed,
    StreamFailure,
    StreamOpened,
    StreamRequest,
    StreamResult,
    TextDelta,
)
from anoman_tui.streaming.cost import Cost, cost_of
from anoman_tui.streaming.replay import ReplayTransport
from anoman_tui.targets import Connection, gateway_target, stream_request


@dataclass
class PaneProgress:
    pane: int
    model: str
    target: str = ""
    endpoint: str = ""
    label: str = ""
    """A blind round's name for it (`A`, `B`, `C`): all that is shown of it."""
    state: str = "waiting"
    chunks: int = 0
    reasoning_chunks: int = 0
    tail: str = ""
    result: StreamResult | None = None

    @property
    def shown(self) -> str:
        """What the output calls it: its label in a blind round, else its model."""
        return self.label or self.model


ProgressListener = Callable[[PaneProgress, str], None]
"""Told of a pane's milestone: "thinking", "first_token" or "done"."""


def blind_failure(pane: PaneProgress) -> StreamFailure:
    """The pane's failure, its model's name replaced by its label in a blind round."""
    assert pane.result is not None and pane.result.failure is not None
    failure = pane.result.failure
    if not pane.label:
        return failure
    return replace(failure, detail=failure.detail.replace(pane.model, pane.label))


def _requests(spec: CompareSpec) -> list[StreamRequest]:
    compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
    # A pane without a target streams from the comparison's gateway, with its key.
    gateway = Connection(target=gateway_target(spec.base_url, SecretStr(spec.api_key)),
                         base_url=spec.base_url, api_key=SecretStr(spec.api_key))
    requests = []
    for i, pane in enumerate(spec.panes, start=1):
        connection = pane.connection or gateway
        headers = spec.headers
        path = None
        if spec.replay is not None and i in spec.replay:
            # The recorded path: the replay answers only the request it recorded.
            connection = Connection(target=gateway_target(REPLAY_BASE_URL, None),
                                    base_url=REPLAY_BASE_URL)
            headers, path = (), spec.replay[i].path
        requests.append(stream_request(
            connection, pane.endpoint, pane.model,
            (*(ChatTurn(role=role, content=content)
               for role, content in pane.conversation or ()
               if role in ("user", "assistant")),
             ChatTurn(role="user", content=spec.prompt)),
            system=spec.system, temperature=pane.temperature, max_tokens=pane.max_tokens,
            headers=headers, idle_timeout=spec.idle_timeout,
            record=spec.record_limit is not None and spec.replay is None,
            compare_id=compare_id, pane=i, path=path))
    return requests


class CompareRun:
    """Drives the streams and keeps per-pane progress for whichever view is showing it."""

    def __init__(self, spec: CompareSpec, on_change: ProgressListener | None = None) -> None:
        self.spec = spec
        self.panes = [PaneProgress(i, p.model, p.target_name, p.endpoint,
                                   BLIND_LABELS[i - 1] if spec.blind else "")
                      for i, p in enumerate(spec.panes, start=1)]
        if spec.replay is not None and spec.original is not None:
            # A replay streams from no target: each pane keeps the one it was recorded from.
            for pane, was in zip(self.panes, spec.original.panes, strict=False):
                pane.target = was.target
        self._on_change: ProgressListener = on_change or (lambda pane, what: None)
        self._streams: list[ModelStream] = []
        # What each target lists about its models: prices for an estimated cost.
        self.model_info: dict[str, ModelInfo] = {}
        self.target_info: dict[tuple[str, str], ModelInfo] = {}

    def cost(self, pane: PaneProgress) -> Cost:
        """Its cost: reported, else estimated, else unknown."""
        r = pane.result
        assert r is not None
        connection = self.spec.panes[pane.pane - 1].connection
        cost = cost_of(r.anoman, r.usage, self.info(pane), r.provider_cost, model=pane.model,
                       provider=connection.target.price_provider if connection else None)
        original = self.spec.original
        if self.spec.replay is not None and original is not None and not cost.known:
            # A replay has no model list to price from: the cost saved when it was recorded.
            was = next((p for p in original.panes if p.pane == pane.pane), None)
            return was.cost if was is not None else cost
        return cost

    def simulated(self, pane: PaneProgress) -> bool:
        """Its server said the model is simulated (the local gateway's); a replay keeps
        what was saved when it was recorded (no model list is read to replay)."""
        info = self.info(pane)
        if info is not None:
            return info.simulated
        original = self.spec.original
        if self.spec.replay is not None and original is not None:
            was = next((p for p in original.panes if p.pane == pane.pane), None)
            return was is not None and was.simulated
        return False

    def info(self, pane: PaneProgress) -> ModelInfo | None:
        """What pane's target listed about its model (prices), if anything."""
        return self.target_info.get((pane.target, pane.model)) or (
            None if pane.target else self.model_info.get(pane.model))

    @property
    def ended(self) -> bool:
        """Every model has ended (completed, failed or cancelled)."""
        return all(p.result is not None for p in self.panes)

    def cancel(self) -> None:
        for stream in self._streams:
            stream.cancel()

    async def run(self) -> list[StreamResult]:
        http = None
        if self.spec.replay is not None:
            http = httpx.AsyncClient(transport=ReplayTransport(self.spec.replay,
                                                               self.spec.speed))
        async with StreamClient(http) as client:
            self._streams = [client.stream(r) for r in _requests(self.spec)]
            await asyncio.gather(
                *(self._follow(p, s) for p, s in zip(self.panes, self._streams, strict=True))
            )
        return [p.result for p in self.panes if p.result is not None]

    async def _follow(self, pane: PaneProgress, stream: ModelStream) -> None:
        async for event in stream:
            if isinstance(event, TextDelta):
                if pane.chunks == 0:
                    pane.state = "streaming"
                    self._on_change(pane, "first_token")
                pane.chunks += 1
                pane.tail = (pane.tail + event.text)[-200:]
            elif isinstance(event, ReasoningDelta):
                if pane.reasoning_chunks == 0 and pane.chunks == 0:
                    pane.state = "thinking"
                    self._on_change(pane, "thinking")
                pane.reasoning_chunks += 1
            elif isinstance(event, StreamOpened):
                pane.state = "opened"
            elif isinstance(event, StreamFailed):
                pane.state = event.failure.kind
            elif isinstance(event, StreamDone):
                pane.result = event.result
                pane.state = event.result.status
                self._on_change(pane, "done")


def save_to_history(history: HistoryStore | PendingSaves, full: ComparisonRecord,
                    record_limit: int | None) -> int | None:
    """Save a finished run's record (`comparison_record`), its recordings dropped when
    over `record_limit`; its id, or None when it could not be saved. Through waiting
    saves, a server that went away is waited for (`PendingSaves.patience`); None when
    it did not come back (the record still waits, for the spool)."""
    kept = for_history(full, record_limit)
    if kept.dropped is not None:
        print(f"anoman-tui compare: saved without its recording: {kept.dropped}",
              file=sys.stderr)
    try:
        if isinstance(history, PendingSaves):
            written, new_id = history.write_and_wait(
                comparison_write(kept.record), "the comparison", history.patience)
            return new_id if written else None
        return history.save(kept.record)
    except HistoryUnavailable as exc:
        print(f"anoman-tui compare: not saved to history: {exc.reason}", file=sys.stderr)
        return None
