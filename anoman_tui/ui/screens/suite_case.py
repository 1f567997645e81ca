"""One case of a running suite on the compare screen's panes (Enter on the suite
screen's matrix): a cell still streaming is followed live from the suite's own run (its
text so far at once, then as it comes), a finished one is shown as saved. F1–F3 abort
a pane's stream, which becomes that cell's `cancelled` result; Esc goes back to the
matrix, where the run has gone on meanwhile.

A live pane reads `LiveStream`: the suite's `ModelStream` keeps its events
(`RunOptions.keep_events`), and a watcher added on the run's loop gets every event so
far and then each batch as it is emitted; the UI's loop is woken for them.

May import: Textual, Rich, the history, the stream core's events and the suites.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.streaming import StreamDone, StreamEvent, StreamResult
from anoman_tui.ui.screens.compare import (
    APP_BADGE,
    CompareScreen,
    _pairs,
    simulated_field,
)
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.widgets.pane import ComparePane

if TYPE_CHECKING:
    from anoman_tui.streaming import ModelStream

# Live panes stream and abort; nothing is sent, re-run or continued from here.
_OFF = frozenset({"retry", "new_comparison", "history", "rerun", "continue", "open_replay"})


class LiveStream:
    """A suite's running `ModelStream` (on the run's loop), iterated from the UI's loop:
    what a pane needs (`sent_at`, `cancel()`, `async for`)."""

    def __init__(self, stream: ModelStream, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = stream
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: list[StreamEvent] = []
        self._ready: deque[StreamEvent] = deque()
        self._wake: asyncio.Event | None = None
        self._ui_loop: asyncio.AbstractEventLoop | None = None
        self._finished = False
        self.result: StreamResult | None = None

    @property
    def sent_at(self) -> float | None:
        return self._inner.sent_at

    def start(self) -> None:
        if self._wake is not None:
            return
        self._ui_loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        try:
            self._loop.call_soon_threadsafe(self._attach)
        except RuntimeError:  # the run's loop has ended: nothing more will come
            self._finished = True

    def _attach(self) -> None:
        """On the run's loop: everything so far, then each batch (no event between)."""
        inner = self._inner
        self._push(list(inner.events or ()))
        inner.watchers.append(self._push)

    def _push(self, events: list[StreamEvent]) -> None:
        if not events:
            return
        with self._lock:
            self._pending += events
        ui, wake = self._ui_loop, self._wake
        if ui is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the app has gone
                ui.call_soon_threadsafe(wake.set)

    def cancel(self) -> None:
        """Abort the stream on the run's loop: the cell ends as cancelled."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._inner.cancel)

    def __aiter__(self) -> LiveStream:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._ready:
            if self._finished:
                raise StopAsyncIteration
            self.start()
            if self._finished:
                raise StopAsyncIteration
            assert self._wake is not None
            await self._wake.wait()
            with self._lock:
                self._ready.extend(self._pending)
                self._pending = []
                self._wake.clear()
        event = self._ready.popleft()
        if type(event) is StreamDone:
            self._finished = True
            self.result = event.result
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._detach)
        return event

    def _detach(self) -> None:
        with contextlib.suppress(ValueError):
            self._inner.watchers.remove(self._push)


class CaseScreen(RecordScreen):
    """A suite case's (up to three) models: live panes for the cells streaming, saved
    ones for those that ended. `record`: the case's saved comparison so far, or one
    made of the models' names only (nothing saved yet)."""

    BINDINGS = [Binding("escape", "back", "Back to the matrix", id="case.back",
                        priority=True)]

    def __init__(self, record: ComparisonRecord, live: CompareScreen,
                 streams: dict[int, LiveStream], title: str) -> None:
        super().__init__(record, live, id="suite-case")
        self.streams = streams
        self.title_text = title

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action not in _OFF and CompareScreen.check_action(self, action, parameters)

    def show_turn(self) -> None:
        from anoman_tui.history import result_from_record

        record = self.record
        for state, saved in zip(self.panes, record.panes, strict=True):
            pane = self.pane(state.index)
            stream = self.streams.get(state.index)
            if stream is not None:
                pane.start(stream, record.prompt)
            elif saved.status != "waiting":
                pane.show_ended(record.prompt, result_from_record(saved),
                                rate_series=saved.rate_series,
                                earlier=_pairs(record.conversation), cost=saved.cost)
            else:
                pane.show_hint(Text("waiting: this cell has not started yet", style="dim"))
        for pane_widget in self.query(ComparePane):
            pane_widget.refresh_chrome()

    def update_status(self) -> None:
        running = sum(p.running for p in self.panes)
        fields = [("", APP_BADGE, True),
                  ("", f"SUITE run {self.record.suite_run} · {self.title_text}", True),
                  ("", f"{running} streaming (F1–F3 abort)" if running
                   else "every cell shown has ended", True)]
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.append(simulated)
        self.show_status(fields)

    def _save_turn(self, prompt: str) -> None:
        """The suite saves its cells itself."""

    def action_back(self) -> None:
        if self._zoomed:
            self.action_zoom()
            return
        self.dismiss()


def waiting_pane(index: int, model: str, base_url: str, endpoint: str,
                 simulated: bool) -> PaneRecord:
    """A pane whose cell has no saved answer (streaming or not started): its model only."""
    return PaneRecord(pane=index, model=model, base_url=base_url, endpoint=endpoint,
                      status="waiting", committed=False, simulated=simulated)
