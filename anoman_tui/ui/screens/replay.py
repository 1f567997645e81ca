"""A recorded comparison, replayed: the panes stream again at the recorded pace.

The screen composes a `PaneDeck` as a reopened comparison does (its panes, earlier
turns, zoom, diff, copy, export), whose latest turn streams (a `LiveSource`) instead of
being shown ended (a `SavedSource`, for a pane saved without its recording). Each
pane's recording is answered by a `ReplayTransport` and read by the same stream core,
network thread and pane as a live stream, so text, footers (the recorded gateway
metadata) and failures come out as they did: an interrupted stream stops at the same
token, and a recorded stall sends nothing until the read timeout ends it. Nothing
goes out on the network, no key is used and nothing is saved to the history.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from anoman_tui.streaming import ChatTurn, StreamClient, StreamRequest
from anoman_tui.streaming.recording import RecordingError, StreamRecording
from anoman_tui.streaming.replay import ReplayTransport
from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.targets import Connection, stream_request
from anoman_tui.ui.messages import PaneStatusChanged
from anoman_tui.ui.palette import ScreenCommands
from anoman_tui.ui.render.pane_state import (
    SCENARIO_IDLE_TIMEOUT,
    answered_pairs,
    simulated_field,
)
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
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import reopened_commands, saved_panes, when
from anoman_tui.ui.services import AppServices, app_services
from anoman_tui.ui.textual_internals import draw_dirty_lines_only
from anoman_tui.ui.widgets.deck import LiveSource, PaneDeck, PaneSource, SavedSource
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.status_line import APP_BADGE, StatusLine

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, PaneRecord
    from anoman_tui.ui.screens.compare import CompareScreen

# Where a request would have gone when the recording does not say (the transport
# answers it in memory: nothing is resolved or connected).
_NOWHERE = "http://replay.invalid"


def speed_text(speed: float) -> str:
    """`1×`, `2×`, `0.5×`."""
    return f"{speed:g}×"


class ReplayScreen(DeckKeys, Screen[None]):
    """Comparison `record` replayed from `recordings` (pane number -> stream) at `speed`.

    `back`: Esc (once nothing streams) returns to the screen it was opened from;
    False when the replay is the app's first screen (`anoman-tui replay ID`).
    """

    BINDINGS = [
        # A replay streams and can be aborted; it never sends a prompt of its own.
        *ABORT_KEYS,
        # Esc stops every pane while they stream (as on the live screen), then goes back.
        Binding("escape", "back", "Stop/Back", id="replay.back", priority=True),
        Binding("ctrl+r", "replay", "Replay again", id="replay.again", priority=True),
        NEXT_PANE_KEY,
        DIFF_KEY,
        ZOOM_KEY,
        COPY_KEY,
        EXPORT_KEY,
        *SCROLL_KEYS,
    ]
    # Its palette entries (`palette_commands`), beside the app's theme, keys and quit.
    COMMANDS = {ScreenCommands}

    def __init__(self, record: ComparisonRecord, recordings: dict[int, StreamRecording],
                 live: CompareScreen, *, speed: float = 1.0, back: bool = True,
                 frozen_clock: bool = False) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError("speed must be a positive number")
        super().__init__(id=f"replay-{record.id}")
        # Its panes redraw side by side many times a second: composite only what changed
        # (see textual_internals._render_dirty_lines).
        draw_dirty_lines_only(self)
        self.deck = PaneDeck(saved_panes(record, live), frozen_clock=frozen_clock,
                             model_info=live.model_info, simulated_from_list=False)
        self.record = record
        self.live = live
        self.recordings = recordings
        self.speed = speed
        self._back = back
        self._was_running = False  # the key bar is redrawn when this changes (Esc)

    @property
    def services(self) -> AppServices:
        return app_services(self.app)

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield self.deck
        yield KeyBar(shed=("scroll_pane", "export", "diff", "copy_answer", "usage", "zoom",
                           "next_pane", "abort"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # as the first screen, Esc only stops panes or leaves the zoom
            return self._back or self.deck.zoomed or bool(self.deck.running)
        return True

    def on_mount(self) -> None:
        if not self.set_up_deck():
            return
        self.action_replay()  # the turn streams again instead of being shown ended

    def on_resize(self) -> None:
        self.deck_resized()

    @on(PaneDeck.PaneEnded)
    @on(PaneStatusChanged)
    def _pane_moved(self) -> None:
        self.update_status()

    def export_record(self) -> ComparisonRecord | None:
        return self.record

    def export_title(self) -> str:
        return f"comparison #{self.record.id}"

    def update_status(self) -> None:
        record = self.record
        running = sum(p.running for p in self.panes)
        if bool(running) != self._was_running:
            self._was_running = bool(running)
            self.refresh_bindings()
        fields = [
            ("", APP_BADGE, True),
            ("", f"REPLAY of #{record.id} · recorded {when(record.created_at)} · "
                 f"{speed_text(self.speed)}", True),
            ("", "not live: no network", True),
            ("", f"{running} replaying" if running else "replay ended", True),
        ]
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.insert(3, simulated)
        earlier = len(answered_pairs(record.conversation))
        if earlier:
            fields.append(("", f"turn {earlier + 1} of a conversation", False))
        self.show_status(fields)

    def palette_commands(self) -> Iterator[SystemCommand]:
        yield SystemCommand("Replay again", "stream every recorded pane again from the "
                            "start", self.action_replay)
        yield from reopened_commands(self, self.action_back)

    # -- actions ----------------------------------------------------------------

    def action_replay(self) -> None:
        """Stream every recorded pane again from the start; an unrecorded one is shown
        as it ended."""
        if any(p.running for p in self.panes):
            self.notify("The replay is still running: Esc stops it.", timeout=3)
            return
        import httpx

        record = self.record
        by_pane: dict[str | int, StreamRecording] = {
            state.index: self.recordings[saved.pane]
            for state, saved in zip(self.panes, record.panes, strict=True)
            if saved.pane in self.recordings}
        # One client for the replay; its transport holds no connection to close.
        client = StreamClient(httpx.AsyncClient(
            transport=ReplayTransport(by_pane, self.speed), trust_env=False))
        self.deck.diff_off()
        for pane_widget in self.deck.widgets:
            pane_widget.show_marks([])
        sources: dict[int, PaneSource] = {}
        for state, saved in zip(self.panes, record.panes, strict=True):
            turns = saved.conversation if saved.conversation is not None \
                else record.conversation
            state.reset()
            if saved.scenario in SCENARIO_HEADERS:
                state.applied_scenario = saved.scenario  # the header says it was simulated
            state.history = [ChatTurn(role=r, content=c) for r, c in turns
                             if r in ("user", "assistant")]
            recording = by_pane.get(state.index)
            if recording is None:
                sources[state.index] = SavedSource.of(saved, answered_pairs(turns))
                continue
            request = self._request(state.index, saved, recording, tuple(state.history))
            sources[state.index] = LiveSource(
                self.services.connector.network.stream(request, client),
                earlier=answered_pairs(turns))
        self.deck.play(record.prompt, sources)
        self.update_status()

    def _request(self, index: int, saved: PaneRecord, recording: StreamRecording,
                 history: tuple[ChatTurn, ...]) -> StreamRequest:
        """The request pane `index` made, as the recording answers it: its path, its
        model and the same idle timeout (a demo stall's shorter one too)."""
        settings = self.services.settings
        idle = min([settings.idle_timeout, *(
            timeout for scenario, timeout in SCENARIO_IDLE_TIMEOUT.items()
            if scenario == saved.scenario)])
        state = self.panes[index - 1]
        # Where it went and how, from its target as a live pane's request is built; the
        # recording answers it, so nothing leaves the machine.
        return stream_request(
            Connection(target=state.target, base_url=saved.base_url or _NOWHERE),
            recording.endpoint, recording.model,
            (*history, ChatTurn(role="user", content=self.record.prompt)),
            system=self.record.system_prompt or None, temperature=saved.temperature,
            max_tokens=saved.max_tokens, idle_timeout=idle, pane=index,
            path=recording.path)

    def action_zoom(self) -> None:
        self.deck.zoom()
        self.refresh_bindings()  # Esc leaves the zoom

    def action_back(self) -> None:
        if self.deck.zoomed:
            self.action_zoom()  # Esc leaves the zoom first, as elsewhere
            return
        if any(p.running for p in self.panes):
            self.action_abort_all()
            return
        if self._back:
            self.dismiss()


SPEEDS = (0.5, 1.0, 2.0, 4.0)


def choose_replay(screen: Screen[Any], record: ComparisonRecord, live: CompareScreen
                  ) -> None:
    """From the history (list or reopened comparison): pick a speed, then replay `record`.

    Refused with a notice when it cannot be: a blind round before its vote (the bytes
    name the models), no recording, or one that cannot be read back.
    """
    if record.hidden:
        screen.notify("A blind round not voted on yet cannot be replayed: its recording "
                      "names the models. Vote first (anoman-tui vote ID).",
                      title="Blind round", severity="warning", timeout=6)
        return
    if not record.recorded or record.id is None:
        screen.notify("This comparison was saved without its recording: nothing to replay.",
                      timeout=4)
        return
    comparison_id = record.id
    options: list[tuple[str, Text | str]] = [
        (f"{speed:g}", f"{speed_text(speed)}" + ("  as recorded" if speed == 1 else ""))
        for speed in SPEEDS]

    async def open_at(speed: float) -> None:
        from anoman_tui.history import HistoryUnavailable

        store = app_services(screen.app).history
        if store is None:
            screen.notify("The history is not available.", severity="error", timeout=4)
            return
        try:
            recordings = await asyncio.to_thread(store.recordings, comparison_id)
        except (HistoryUnavailable, RecordingError) as exc:
            screen.notify(f"Cannot replay #{comparison_id}: {exc.reason}", title="Replay",
                          severity="error", timeout=8)
            return
        if not recordings:
            screen.notify("This comparison was saved without its recording: nothing to "
                          "replay.", timeout=4)
            return
        screen.app.push_screen(ReplayScreen(record, recordings, live, speed=speed))

    def chosen(choice: str | None) -> None:
        if choice is not None:
            screen.run_worker(open_at(float(choice)), group="replay", exit_on_error=False)

    screen.app.push_screen(ChoiceScreen(f"Replay comparison #{comparison_id} at", options, "1"),
                           chosen)
