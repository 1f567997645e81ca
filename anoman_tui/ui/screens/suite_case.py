"""One case of a running suite in a deck of panes (Enter on the suite screen's matrix): a
cell still streaming is followed live from the suite's own run (its
text so far at once, then as it comes), a finished one is shown as saved. F1–F3 abort
a pane's stream, which becomes that cell's `cancelled` result; Esc goes back to the
matrix, where the run has gone on meanwhile.

A live pane reads `LiveStream` (through a `LiveSource` that catches up), a
`ThreadedStream` fed by the suite's `ModelStream`'s watchers: it keeps its events
(`suite.suite_client`), and a watcher added on the run's loop gets every event so far
and then each batch as it is emitted. The run's loop is the app's own (`SuiteRunner`);
the hand-over works across loops as well, and batches a stream's events per wake-up.

May import: Textual, Rich, the history, the stream core's events and the suites.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.streaming import StreamDone, StreamEvent
from anoman_tui.ui.messages import PaneStatusChanged
from anoman_tui.ui.network import ThreadedStream
from anoman_tui.ui.palette import ScreenCommands
from anoman_tui.ui.render.pane_state import answered_pairs, simulated_field
from anoman_tui.ui.screens.deck_keys import (
    ABORT_KEYS,
    COPY_KEY,
    DIFF_KEY,
    EXPORT_KEY,
    NEXT_PANE_KEY,
    SCROLL_KEYS,
    ZOOM_KEY,
    DeckKeys,
)
from anoman_tui.ui.screens.record import reopened_commands, saved_panes
from anoman_tui.ui.textual_internals import KeepStylesOnResume, draw_dirty_lines_only
from anoman_tui.ui.widgets.deck import LiveSource, PaneDeck, PaneSource, SavedSource
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import ComparePane
from anoman_tui.ui.widgets.status_line import APP_BADGE, StatusLine

if TYPE_CHECKING:
    from anoman_tui.streaming import ModelStream
    from anoman_tui.ui.screens.compare import CompareScreen


class _RunLoop:
    """The suite run's event loop (the app's), where `ThreadedStream` looks for its
    network's."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop


class LiveStream(ThreadedStream):
    """A suite's running `ModelStream` (on the run's loop), followed by a pane as a pane
    follows any stream of the network thread (`ThreadedStream`); only its
    events come from the stream's watchers instead of its iterator, which the run owns:
    every event so far, then each batch as it is emitted."""

    def __init__(self, stream: ModelStream, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(_RunLoop(loop), stream)  # type: ignore[arg-type]
        self._run_loop = loop
        self._detached = False
        self._ended: asyncio.Event | None = None  # on the run's loop: stop watching
        # The events so far, taken here on the UI's thread (the run's loop only ever
        # extends the list), so the pane can draw them before its screen is shown;
        # `_pump` hands over the rest, from where this copy ends.
        backlog = list(stream.events or ())
        self._pending.extend(backlog)
        self._received = self._backlog = len(backlog)

    def cancel(self) -> None:
        """Abort the cell (F1-F3), unless this view of it has been let go."""
        if not self._detached:
            super().cancel()

    def _consumer_gone(self) -> None:
        # The pane stopped following (its screen closed, or shows another case): the
        # cell itself goes on; only an abort key closes it.
        self.detach()

    def detach(self) -> None:
        """Stop following the cell, leaving it running: no more events are delivered,
        and the iteration ends."""
        if self._detached:
            return
        self._detached = True
        self._finished = True
        self._ready.clear()
        if self._wake is not None:
            self._wake.set()
        ended = self._ended
        if ended is not None:
            with contextlib.suppress(RuntimeError):  # the run's loop has ended
                self._run_loop.call_soon_threadsafe(ended.set)

    def _deliver(self, events: Sequence[StreamEvent]) -> None:
        if not self._detached:
            super()._deliver(events)

    async def _pump(self) -> None:
        inner = self._inner
        ended = self._ended = asyncio.Event()

        def watch(events: list[StreamEvent]) -> None:
            self._deliver(events)
            if any(type(e) is StreamDone for e in events):
                ended.set()

        # What came after the copy taken on the UI's thread, then the watcher: on the
        # run's loop, so no event comes between.
        watch((inner.events or [])[self._backlog:])
        if not ended.is_set() and not self._detached:
            inner.watchers.append(watch)
            try:
                await ended.wait()
            finally:
                with contextlib.suppress(ValueError):
                    inner.watchers.remove(watch)


class CaseScreen(KeepStylesOnResume, DeckKeys, Screen[None]):
    """A suite case's (up to three) models: live panes for the cells streaming, saved
    ones for those that ended. `record`: the case's saved comparison so far, or one
    made of the models' names only (nothing saved yet)."""

    # Live panes stream and abort; nothing is sent, re-run or continued from here.
    BINDINGS = [
        *ABORT_KEYS,
        Binding("escape", "back", "Back to the matrix", id="case.back", priority=True),
        NEXT_PANE_KEY,
        DIFF_KEY,
        ZOOM_KEY,
        COPY_KEY,
        EXPORT_KEY,
        *SCROLL_KEYS,
    ]
    # Its palette entries (`palette_commands`), beside the app's theme, keys and quit.
    COMMANDS = {ScreenCommands}

    def __init__(self, record: ComparisonRecord, live: CompareScreen,
                 streams: dict[int, LiveStream], title: str, *,
                 slots: list[int] | None = None) -> None:
        """`slots`: which of the suite's models (their indexes) the panes show."""
        super().__init__(id="suite-case")
        # Its panes redraw side by side many times a second: composite only what changed
        # (see textual_internals._render_dirty_lines).
        draw_dirty_lines_only(self)
        self.deck = PaneDeck(saved_panes(record, live), model_info=live.model_info,
                             simulated_from_list=False)
        self.record = record
        self.live = live
        self.streams = streams
        self.title_text = title
        self.slots = slots or []

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield self.deck
        yield KeyBar(shed=("scroll_pane", "export", "diff", "copy_answer", "usage", "zoom",
                           "diff_original", "next_pane"))

    def on_mount(self) -> None:
        if not self.set_up_deck():
            return
        self.show_turn()

    def on_resize(self) -> None:
        self.deck_resized()

    @on(PaneDeck.PaneEnded)
    @on(PaneStatusChanged)
    def _pane_moved(self) -> None:
        # The suite saves its cells itself: a turn's end here changes only the line.
        self.update_status()

    def export_record(self) -> ComparisonRecord | None:
        return self.record

    def export_title(self) -> str:
        return f"comparison #{self.record.id}"

    def palette_commands(self) -> Iterator[SystemCommand]:
        yield from reopened_commands(self, self.action_back)

    def load(self, record: ComparisonRecord, streams: dict[int, LiveStream],
             title: str) -> None:
        """Show another case of the same models. The suite screen keeps one case screen
        and loads each case into it: building the compare screen's panes anew took most
        of the time between Enter and the case's text (benchmarks/suite_screen.py)."""
        self.release()
        self.record, self.streams, self.title_text = record, streams, title
        if self.query(ComparePane):
            self.show_turn()
            self.update_status()

    def release(self) -> None:
        """Stop following the cells shown (they go on running) and empty the panes, so a
        case screen out of sight does no work."""
        for stream in self.streams.values():
            stream.detach()
        self.streams = {}
        for pane in self.deck.widgets:
            if pane.status != "idle" or pane.answer.text:  # (emptying one redraws it)
                pane.clear()
        for state in self.panes:
            state.history.clear()  # each case is a conversation of its own

    def show_turn(self) -> None:
        record = self.record
        sources: dict[int, PaneSource] = {}
        for index, saved in enumerate(record.panes, start=1):
            stream = self.streams.get(index)
            if stream is not None:
                sources[index] = LiveSource(stream, catch_up=True)
            elif saved.status != "waiting":
                sources[index] = SavedSource.of(saved, answered_pairs(record.conversation))
            else:
                self.pane(index).show_hint(
                    Text("waiting: this cell has not started yet", style="dim"))
        self.deck.play(record.prompt, sources)
        for index in range(1, len(record.panes) + 1):
            if index not in self.streams:  # (a followed pane drew its chrome once)
                self.pane(index).refresh_chrome()

    def update_status(self, running: int | None = None) -> None:
        """`running`: as if that many cells streamed (the screen made ready unseen, with
        the status line it will have when a running case is opened)."""
        if running is None:
            running = sum(p.running for p in self.panes)
        fields = [("", APP_BADGE, True),
                  ("", f"SUITE run {self.record.suite_run} · {self.title_text}", True),
                  ("", f"{running} streaming (F1–F3 abort)" if running
                   else "every cell shown has ended", True)]
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.append(simulated)
        self.show_status(fields)

    def action_back(self) -> None:
        if self.deck.zoomed:
            self.deck.zoom()
            return
        self.release()
        self.dismiss()


def waiting_pane(index: int, model: str, base_url: str, endpoint: str,
                 simulated: bool) -> PaneRecord:
    """A pane whose cell has no saved answer (streaming or not started): its model only."""
    return PaneRecord(pane=index, model=model, base_url=base_url, endpoint=endpoint,
                      status="waiting", committed=False, simulated=simulated)
