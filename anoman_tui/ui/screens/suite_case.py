"""One case of a running suite on the compare screen's panes (Enter on the suite
screen's matrix): a cell still streaming is followed live from the suite's own run (its
text so far at once, then as it comes), a finished one is shown as saved. F1–F3 abort
a pane's stream, which becomes that cell's `cancelled` result; Esc goes back to the
matrix, where the run has gone on meanwhile.

A live pane reads `LiveStream`, a `ThreadedStream` fed by the suite's `ModelStream`'s
watchers: it keeps its events (`RunOptions.keep_events`), and a watcher added on the
run's loop gets every event so far and then each batch as it is emitted.

May import: Textual, Rich, the history, the stream core's events and the suites.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.streaming import StreamDone, StreamEvent
from anoman_tui.ui.network import ThreadedStream
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


class _RunLoop:
    """The suite run's event loop, where `ThreadedStream` looks for its network's."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop


class LiveStream(ThreadedStream):
    """A suite's running `ModelStream` (on the run's loop), followed from the UI's loop
    as a pane follows any stream of the network thread (`ThreadedStream`); only its
    events come from the stream's watchers instead of its iterator, which the run owns:
    every event so far, then each batch as it is emitted."""

    def __init__(self, stream: ModelStream, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(_RunLoop(loop), stream)  # type: ignore[arg-type]

    async def _pump(self) -> None:
        inner = self._inner
        ended = asyncio.Event()

        def watch(events: list[StreamEvent]) -> None:
            self._deliver(events)
            if any(type(e) is StreamDone for e in events):
                ended.set()

        watch(list(inner.events or ()))  # the backlog and the watcher: no event between
        if not ended.is_set():
            inner.watchers.append(watch)
            try:
                await ended.wait()
            finally:
                with contextlib.suppress(ValueError):
                    inner.watchers.remove(watch)


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
