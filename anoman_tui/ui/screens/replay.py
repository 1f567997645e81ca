"""A recorded comparison, replayed: the panes stream again at the recorded pace.

The screen is a reopened comparison (`RecordScreen`: its panes, earlier turns, zoom,
diff, copy, export) whose latest turn streams instead of being shown ended. Each
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
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from anoman_tui.streaming import ChatTurn, StreamClient, StreamRequest
from anoman_tui.streaming.recording import RecordingError, StreamRecording
from anoman_tui.streaming.replay import ReplayTransport
from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.ui.render.pane_state import SCENARIO_IDLE_TIMEOUT
from anoman_tui.ui.screens.compare import (
    APP_BADGE,
    CompareScreen,
    _pairs,
    simulated_field,
)
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen, when
from anoman_tui.ui.services import app_services
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import ComparePane

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, PaneRecord

# A replay streams and can be aborted; it never sends a prompt of its own.
_OFF = frozenset({"retry", "new_comparison", "history", "rerun", "continue", "open_replay"})
# Where a request would have gone when the recording does not say (the transport
# answers it in memory: nothing is resolved or connected).
_NOWHERE = "http://replay.invalid"


def speed_text(speed: float) -> str:
    """`1×`, `2×`, `0.5×`."""
    return f"{speed:g}×"


class ReplayScreen(RecordScreen):
    """Comparison `record` replayed from `recordings` (pane number -> stream) at `speed`.

    `back`: Esc (once nothing streams) returns to the screen it was opened from;
    False when the replay is the app's first screen (`anoman-tui replay ID`).
    """

    BINDINGS = [
        Binding("ctrl+r", "replay", "Replay again", id="replay.again", priority=True),
        # Esc stops every pane while they stream (as on the live screen), then goes back.
        Binding("escape", "back", "Stop/Back", id="replay.back", priority=True),
    ]

    def __init__(self, record: ComparisonRecord, recordings: dict[int, StreamRecording],
                 live: CompareScreen, *, speed: float = 1.0, back: bool = True,
                 frozen_clock: bool = False) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError("speed must be a positive number")
        super().__init__(record, live, frozen_clock=frozen_clock, id=f"replay-{record.id}")
        self.recordings = recordings
        self.speed = speed
        self._back = back
        self._was_running = False  # the key bar is redrawn when this changes (Esc)

    def key_bar(self) -> KeyBar:
        return KeyBar(shed=("scroll_pane", "export", "diff", "copy_answer", "usage", "zoom",
                            "next_pane", "abort"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # as the first screen, Esc only stops panes or leaves the zoom
            return self._back or self._zoomed or any(p.running for p in self.panes)
        # (the live screen's rules, not the record screen's: a replay streams and aborts)
        return action not in _OFF and CompareScreen.check_action(self, action, parameters)

    def show_turn(self) -> None:
        self.action_replay()  # the turn streams again instead of being shown ended

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
        earlier = len(_pairs(record.conversation))
        if earlier:
            fields.append(("", f"turn {earlier + 1} of a conversation", False))
        self.show_status(fields)

    def _save_turn(self, prompt: str) -> None:
        """A replay is not a new comparison: nothing is saved."""

    def record_commands(self) -> Iterator[SystemCommand]:
        yield SystemCommand("Replay again", "stream every recorded pane again from the "
                            "start", self.action_replay)

    # -- actions ----------------------------------------------------------------

    def action_replay(self) -> None:
        """Stream every recorded pane again from the start; an unrecorded one is shown
        as it ended."""
        if any(p.running for p in self.panes):
            self.notify("The replay is still running: Esc stops it.", timeout=3)
            return
        import httpx

        from anoman_tui.history import result_from_record

        record = self.record
        by_pane: dict[str | int, StreamRecording] = {
            state.index: self.recordings[saved.pane]
            for state, saved in zip(self.panes, record.panes, strict=True)
            if saved.pane in self.recordings}
        # One client for the replay; its transport holds no connection to close.
        client = StreamClient(httpx.AsyncClient(
            transport=ReplayTransport(by_pane, self.speed), trust_env=False))
        self.diff_off()
        for pane_widget in self.query(ComparePane):
            pane_widget.show_marks([])
        for state, saved in zip(self.panes, record.panes, strict=True):
            pane = self.pane(state.index)
            turns = saved.conversation if saved.conversation is not None \
                else record.conversation
            state.reset()
            if saved.scenario in SCENARIO_HEADERS:
                state.applied_scenario = saved.scenario  # the header says it was simulated
            state.history = [ChatTurn(role=r, content=c) for r, c in turns
                             if r in ("user", "assistant")]
            recording = by_pane.get(state.index)
            if recording is None:
                pane.show_ended(record.prompt, result_from_record(saved),
                                rate_series=saved.rate_series, earlier=_pairs(turns),
                                cost=saved.cost)
                continue
            pane.show_earlier(_pairs(turns))
            request = self._request(state.index, saved, recording, tuple(state.history))
            pane.start(self.services.connector.network.stream(request, client), record.prompt)
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
        return StreamRequest(
            base_url=saved.base_url or _NOWHERE,
            endpoint=recording.endpoint,
            path=recording.path,
            model=recording.model,
            messages=(*history, ChatTurn(role="user", content=self.record.prompt)),
            system=self.record.system_prompt or None,
            temperature=saved.temperature,
            max_tokens=saved.max_tokens,
            idle_timeout=idle,
            pane=index,
            key_env=state.target.key_source,
        )

    def action_zoom(self) -> None:
        super().action_zoom()
        self.refresh_bindings()  # Esc leaves the zoom

    def action_back(self) -> None:
        if self._zoomed:
            self.action_zoom()  # Esc leaves the zoom first, as elsewhere
            return
        if any(p.running for p in self.panes):
            self.action_abort_all()
            return
        if self._back:
            self.dismiss()


SPEEDS = (0.5, 1.0, 2.0, 4.0)


def choose_replay(screen: Screen[Any], record: ComparisonRecord, live: CompareScreen) -> None:
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
