"""The compare screen: three panes side by side, one prompt box, per-pane abort.

The screen owns the three `PaneState`s and turns a submitted prompt into
three concurrent streams (one request per pane). Panes post
`PaneStreamFinished` when a stream ends; the screen keeps the status line
honest. Below about 120 columns the panes become tabs, one shown at a time.
"""

from __future__ import annotations

import asyncio
import time
import uuid

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, Tab, Tabs, TextArea

from anoman_tui.streaming import ModelInfo, cost_text
from anoman_tui.ui.code_blocks import code_blocks
from anoman_tui.ui.messages import (
    GatewayConnecting,
    GatewayReady,
    GatewayUnavailable,
    PaneStatusChanged,
    PaneStreamFinished,
    PromptSubmitted,
)
from anoman_tui.ui.pane_state import PaneState
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.services import AppServices, app_services
from anoman_tui.ui.verdict import verdict
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import ComparePane, pack_fields
from anoman_tui.ui.widgets.prompt_box import PromptBox

NARROW_BELOW = 120
APP_BADGE = " anoman-tui "


class StatusLine(Static):
    pass


_ABORT = Binding.Group("Abort pane")
_SCROLL = Binding.Group("Scroll")
# A second Enter within this many seconds of the "still streaming" notice aborts the
# running panes and sends.
CONFIRM_SEND_S = 5.0


class CompareScreen(Screen[None]):
    BINDINGS = [
        # One footer entry for the three ("f1 f2 f3 Abort pane"), so that F5 Usage and the
        # rest still fit in a 100-column terminal.
        Binding("f1", "abort(1)", "Abort 1", id="abort_pane_1", priority=True, group=_ABORT),
        Binding("f2", "abort(2)", "Abort 2", id="abort_pane_2", priority=True, group=_ABORT),
        Binding("f3", "abort(3)", "Abort 3", id="abort_pane_3", priority=True, group=_ABORT),
        Binding("escape", "abort_all", "Abort all", id="abort_all", priority=True),
        Binding("ctrl+r", "retry", "Retry", id="retry", priority=True),
        Binding("ctrl+n", "new_comparison", "New", id="new_comparison", priority=True),
        Binding("f4", "next_pane", "Next pane", id="next_pane"),
        # The current pane alone over the whole screen, and back; it keeps streaming.
        Binding("f8", "zoom", "Zoom", id="zoom"),
        # To the clipboard through the terminal (OSC 52): over SSH and in tmux too.
        Binding("f9", "copy_answer", "Copy", id="copy_answer"),
        # Scroll the current pane (marked in its header) from anywhere, the prompt box
        # included. Alt+Up/Down for terminals that keep Shift+PgUp for their scrollback.
        Binding("shift+pageup,alt+up", "scroll_pane('page_up')", "Scroll up",
                id="scroll_pane_up", group=_SCROLL, key_display="⇧PgUp"),
        Binding("shift+pagedown,alt+down", "scroll_pane('page_down')", "Scroll down",
                id="scroll_pane_down", group=_SCROLL, key_display="⇧PgDn"),
        Binding("ctrl+home", "scroll_pane('scroll_home')", "Pane top", id="scroll_pane_top",
                show=False),
        Binding("ctrl+end", "scroll_pane('scroll_end')", "Pane end", id="scroll_pane_end",
                show=False),
    ]

    # Per-screen toggles, shown on the status line (their watchers redraw it). `var`s:
    # a change redraws that one line (`update_status`), never the screen or its layout.
    bypass_cache: var[bool] = var(False, init=False)
    """Send `Cache-Control: no-cache` with every request."""
    sync_params: var[bool] = var(False, init=False)
    """Editing one pane's parameters sets all three."""

    @property
    def services(self) -> AppServices:
        """The app, typed by what this screen uses of it."""
        return app_services(self.app)

    def __init__(
        self, panes: list[PaneState], *, frozen_clock: bool = False, system_prompt: str = ""
    ) -> None:
        super().__init__(id="compare")
        self.panes = panes
        self.system_prompt = system_prompt  # from the settings: prefills the system box
        self._frozen = frozen_clock
        self.base_url: str | None = None
        self.target_label = "starting the local gateway…"
        self.models: list[ModelInfo] = []
        self._narrow: bool | None = None
        self._pending_prompt: str | None = None
        self._active_pane = 1
        self._retry_at: float | None = None  # monotonic: when the app tries to connect again
        self._told_unavailable = ""  # the reason last notified: a retry does not repeat it
        self._status_lines = 1
        # Busy: (prompt, when) of the notice that a second Enter aborts and sends; and
        # the prompt to send once the aborted panes have stopped.
        self._confirm_send: tuple[str, float] | None = None
        self._send_after_abort: str | None = None
        self._zoomed = False
        self._focus_before_zoom: Widget | None = None
        self._saved_results: list[object] = []  # the results of the turn saved last

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield Tabs(*(Tab(f"{p.index}", id=f"tab-{p.index}") for p in self.panes), id="pane-tabs")
        with Horizontal(id="panes"):
            for state in self.panes:
                yield ComparePane(state, frozen_clock=self._frozen, model_info=self.model_info)
        with Vertical(id="prompt-area"):
            system = Input(
                self.system_prompt,
                placeholder="System prompt (optional, sent to all panes) · Tab: prompt box",
                id="system",
            )
            prompt = PromptBox(
                id="prompt",
                placeholder="Type a prompt · Enter send · Ctrl+J newline · ↑ previous",
            )
            if self._frozen:
                # Frozen time (snapshots): a blinking cursor would make the picture depend
                # on the instant it is taken.
                system.cursor_blink = prompt.cursor_blink = False
            yield system
            yield prompt
        # In a narrow terminal the per-pane aborts go first (Esc aborts all), then the rest
        # in this order; Quit, Usage and the palette always stay.
        # (Copy and Zoom give way to the aborts, but come back where room is left.)
        yield KeyBar(shed=("scroll_pane", "copy_answer", "zoom", "abort", "new_comparison",
                           "retry", "next_pane", "abort_all"))

    def on_mount(self) -> None:
        self.query_one(PromptBox).focus()
        self.update_status()
        self._apply_layout(self.size.width)
        self._mark_current()

    # -- focus ----------------------------------------------------------------

    @property
    def focus_chain(self) -> list[Widget]:
        # Tab and Shift+Tab move between the two boxes one types in. A pane's answer
        # (a scroll view) or the tab strip showed no sign of focus, so Tab seemed to lose
        # it; they stay reachable by mouse.
        return [w for w in super().focus_chain if isinstance(w, (Input, PromptBox))]

    def on_key(self, event: events.Key) -> None:
        # A key nothing handled, typed while focus is outside both boxes (a clicked
        # pane): it belongs in the prompt, not nowhere. A key bound there still runs
        # its binding (the app checks those after this handler).
        # Typing while zoomed is for the prompt box, hidden by the zoom: bring it back.
        if (
            event.is_printable
            and event.character
            and (self._zoomed or not isinstance(self.focused, (Input, TextArea)))
            and event.key not in self.active_bindings
        ):
            if self._zoomed:
                self.action_zoom()
            event.stop()
            prompt = self.query_one(PromptBox)
            prompt.focus()
            prompt.insert(event.character)

    # -- layout ---------------------------------------------------------------

    def on_resize(self) -> None:
        self._apply_layout(self.size.width)
        self.update_status()  # its fields are packed to the screen's width

    def _apply_layout(self, width: int) -> None:
        narrow = width < NARROW_BELOW
        if narrow == self._narrow:
            return
        self._narrow = narrow
        self.set_class(narrow, "-narrow")
        self.query_one(Tabs).display = narrow and not self._zoomed
        self._show_active()

    def _show_active(self) -> None:
        one = self._narrow or self._zoomed
        for pane in self.query(ComparePane):
            pane.display = (not one) or pane.state.index == self._active_pane
        self._mark_current()

    def action_zoom(self) -> None:
        """Show the current pane alone over the screen, or every pane again.

        The other panes are hidden, never removed: they keep streaming, and each answer
        keeps its scroll position (re-anchored to the same block when its width changes).
        """
        self._zoomed = not self._zoomed
        self.set_class(self._zoomed, "-zoomed")
        self.query_one(Tabs).display = bool(self._narrow) and not self._zoomed
        self._show_active()
        if self._zoomed:
            # The boxes are hidden: arrows and PgUp/PgDn now scroll the zoomed answer.
            self._focus_before_zoom = self.focused
            self.pane(self._active_pane).answer.focus()
        else:
            before, self._focus_before_zoom = self._focus_before_zoom, None
            (before if before is not None and before.is_mounted
             else self.query_one(PromptBox)).focus()

    def _mark_current(self) -> None:
        # The scroll keys' pane, marked in its header.
        for pane in self.query(ComparePane):
            pane.set_class(pane.state.index == self._active_pane, "-current")

    @on(Tabs.TabActivated)
    def _tab_changed(self, event: Tabs.TabActivated) -> None:
        if event.tab.id:
            self._active_pane = int(event.tab.id.split("-")[1])
            self._show_active()

    def action_next_pane(self) -> None:
        self._active_pane = self._active_pane % len(self.panes) + 1
        self.query_one(Tabs).active = f"tab-{self._active_pane}"
        self._show_active()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # Focusing a pane's text (Tab, a click) makes it the current pane.
        pane = next((a for a in event.widget.ancestors if isinstance(a, ComparePane)), None)
        if pane is not None and pane.state.index != self._active_pane:
            self._active_pane = pane.state.index
            if self._narrow:
                self.query_one(Tabs).active = f"tab-{self._active_pane}"
            self._mark_current()

    def action_scroll_pane(self, how: str) -> None:
        """Scroll the current pane's answer: page_up, page_down, scroll_home, scroll_end."""
        answer = self.pane(self._active_pane).answer
        if how == "page_up":
            answer.scroll_page_up(animate=False)
        elif how == "page_down":
            answer.scroll_page_down(animate=False)
        elif how == "scroll_home":
            answer.scroll_home(animate=False)
        elif how == "scroll_end":
            answer.scroll_end(animate=False)

    def _update_tabs(self) -> None:
        tabs = self.query_one(Tabs)
        for pane in self.panes:
            tab = tabs.query_one(f"#tab-{pane.index}", Tab)
            tab.label = Text(f"{pane.index} {pane.model or '—'} · {pane.status}")

    # -- status ---------------------------------------------------------------

    def watch_bypass_cache(self) -> None:
        self._toggled()

    def watch_sync_params(self) -> None:
        self._toggled()

    def _toggled(self) -> None:
        if self.is_mounted:  # set before the screen is shown: on_mount draws the line
            self.update_status()

    def update_status(self) -> None:
        target = self.target_label
        if self._retry_at is not None:
            wait = max(0, round(self._retry_at - time.monotonic()))
            key = self.services.settings.keymap.get("reconnect", "ctrl+g").split(",")[0]
            target = (f"unavailable, retrying in {wait} s "
                      f"({self.app.get_key_display(Binding(key, ''))} now): "
                      + self.target_label.removeprefix("unavailable: "))
        running = sum(p.running for p in self.panes)
        streaming = f"{len(self.panes)} streaming"
        fields = [
            ("", APP_BADGE, True),
            ("requests go to:", target, True),
            ("cache:", "bypassed (no-cache)" if self.bypass_cache else "on", False),
            ("params:", "synced" if self.sync_params else "per pane", False),
            # Room is kept while nothing streams: the line never grows when streams start.
            ("", f"{running} streaming" if running else " " * len(streaming), True),
        ]
        line = pack_fields(fields, max(20, self.size.width))
        line.stylize("reverse", 0, len(APP_BADGE))
        lines = line.plain.count("\n") + 1
        # Fields wrap whole onto a second line in narrow terminals (pinned by
        # tests/ui/test_fit.py); the screen is laid out again only when the height changes.
        self.query_one(StatusLine).update(line, layout=lines != self._status_lines)
        self._status_lines = lines
        if self._narrow:
            self._update_tabs()

    @on(GatewayConnecting)
    def _gateway_connecting(self, event: GatewayConnecting) -> None:
        self.base_url = None
        self._retry_at = None
        self.target_label = event.label
        self.update_status()

    @on(GatewayReady)
    def _gateway_ready(self, event: GatewayReady) -> None:
        self.base_url = event.base_url
        self.target_label = event.label
        self.models = event.models
        self._retry_at = None
        if self._told_unavailable:
            self._told_unavailable = ""
            self.notify(f"Connected to {event.label}.", timeout=3)
        known = [m.id for m in event.models]
        for state, pane in zip(self.panes, self.query(ComparePane), strict=True):
            if not state.model and known:
                state.model = known[(state.index - 1) % len(known)]
            pane.refresh_chrome()
        self.update_status()
        self.app.refresh_bindings()  # Reconnect leaves the footer
        if self._pending_prompt is not None:
            prompt, self._pending_prompt = self._pending_prompt, None
            self.send(prompt, self.panes)

    @on(GatewayUnavailable)
    def _gateway_unavailable(self, event: GatewayUnavailable) -> None:
        self.base_url = None
        self.target_label = f"unavailable: {event.reason}"
        if event.retry_in_s is not None:
            self._retry_at = time.monotonic() + event.retry_in_s
            self.set_timer(1.0, self._count_down, name="retry-countdown")
        else:
            self._retry_at = None
        self.update_status()
        self.app.refresh_bindings()  # Reconnect joins the footer
        if event.reason != self._told_unavailable:
            self._told_unavailable = event.reason
            self.notify(event.reason, title="Gateway unavailable", severity="error", timeout=10)

    @property
    def unavailable(self) -> bool:
        """No gateway answered the last attempt to connect."""
        return self.base_url is None and self.target_label.startswith("unavailable")

    def _count_down(self) -> None:
        if self._retry_at is None:
            return
        self.update_status()
        if self._retry_at - time.monotonic() > 0.5:
            self.set_timer(1.0, self._count_down, name="retry-countdown")

    # -- sending --------------------------------------------------------------

    @on(PromptSubmitted)
    def _submitted(self, event: PromptSubmitted) -> None:
        if self.base_url is None:
            if self.target_label.startswith("unavailable"):
                self.notify("No gateway to send to: see the status line.",
                            title="Not connected", severity="error")
                return
            # Typed before the local gateway finished starting: send it once it is up.
            self._pending_prompt = event.prompt
            self.query_one(PromptBox).clear()
            self.notify("The gateway is starting; your prompt goes out as soon as it is up.",
                        timeout=3)
            return
        running = [p.index for p in self.panes if p.running]
        if running:
            self._busy(event.prompt, running)
            return
        self._confirm_send = None
        self.query_one(PromptBox).clear()
        self.send(event.prompt, self.panes)

    def _busy(self, prompt: str, running: list[int]) -> None:
        """A prompt sent while panes stream: a second Enter aborts them and sends it."""
        confirm = self._confirm_send
        if confirm is not None and confirm[0] == prompt and (
            time.monotonic() - confirm[1] <= CONFIRM_SEND_S
        ):
            self._confirm_send = None
            self._send_after_abort = prompt
            self.query_one(PromptBox).clear()
            for index in running:
                self.pane(index).abort()
            self.notify(f"Aborting {_pane_list(running)}; the prompt goes to every pane "
                        "as soon as they stop.", timeout=3)
            return
        self._confirm_send = (prompt, time.monotonic())
        streaming = "still streams" if len(running) == 1 else "still stream"
        self.notify(f"{_pane_list(running).capitalize()} {streaming}: press Enter again "
                    f"within {CONFIRM_SEND_S:g} s to abort and send to all, or wait.",
                    title="Busy", severity="warning", timeout=CONFIRM_SEND_S)

    def _send_if_settled(self) -> None:
        prompt = self._send_after_abort
        if prompt is not None and not any(p.running for p in self.panes):
            self._send_after_abort = None
            self.send(prompt, self.panes)

    def send(self, prompt: str, panes: list[PaneState], delays: dict[int, float] | None = None
             ) -> None:
        app = self.services
        system = self.query_one("#system", Input).value
        compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
        for state in panes:
            if not state.model:
                continue
            request = state.build_request(
                prompt,
                base_url=self.base_url or "",
                api_key=app.api_key,
                system=system,
                idle_timeout=app.settings.idle_timeout,
                bypass_cache=self.bypass_cache,
                compare_id=compare_id,
                local_gateway=app.is_local_gateway,
            )
            stream = app.network.stream(request)
            self.pane(state.index).start(stream, prompt,
                                         delay_s=(delays or {}).get(state.index, 0.0))
        for pane in self.query(ComparePane):
            pane.show_marks([])  # a new turn: the last one's verdict no longer holds
        self.update_status()

    def model_info(self, model: str) -> ModelInfo | None:
        return next((m for m in self.models if m.id == model), None)

    def pane(self, index: int) -> ComparePane:
        return self.query_one(f"#pane-{index}", ComparePane)

    @on(PaneStreamFinished)
    def _pane_finished(self, event: PaneStreamFinished) -> None:
        self.update_status()
        if not any(p.running for p in self.panes):
            self._save_turn(event.prompt)  # before a queued prompt starts the next turn
        self._mark_verdict()
        self._send_if_settled()

    def _save_turn(self, prompt: str) -> None:
        """Keep the turn that just ended in the history; saved off the UI thread."""
        store = self.services.history
        turn = [s for s in self.panes if s.last_result is not None and s.last_prompt == prompt]
        if store is None or not turn:
            return  # history off, unavailable (the app said why once), or still opening
        # Panes that end together post their finish messages before the first is handled:
        # each then finds no pane running. The turn is saved once.
        results: list[object] = [state.last_result for state in turn]
        if len(results) == len(self._saved_results) and all(
                a is b for a, b in zip(results, self._saved_results, strict=True)):
            return
        self._saved_results = results
        # Imported here: SQLite stays off the path to the first paint.
        from anoman_tui.history import ComparisonRecord, pane_record

        panes = []
        for state in turn:
            pane, result = self.pane(state.index), state.last_result
            assert result is not None
            panes.append(pane_record(
                state.index, state.model, base_url=self.base_url or "",
                endpoint=state.endpoint, result=result,
                temperature=state.params.temperature, max_tokens=state.params.max_tokens,
                scenario=state.applied_scenario,
                # What the footer shows: its sparkline (the last cell is partial) and cost.
                rate_series=tuple(pane._buckets[:-1]),
                cost_text=cost_text(pane._anoman, pane._usage, self.model_info(state.model)),
            ))
        first = turn[0]
        committed = first.last_result is not None and first.last_result.committed
        before = first.history[:-2] if committed else first.history
        record = ComparisonRecord(
            prompt=prompt, panes=tuple(panes),
            system_prompt=self.query_one("#system", Input).value,
            conversation=tuple((t.role, t.content) for t in before),
            created_at=time.time(), source="app",
        )

        async def save() -> None:
            from anoman_tui.history import HistoryUnavailable

            try:
                await asyncio.to_thread(store.save, record)
            except HistoryUnavailable as exc:
                self.notify(f"This comparison was not saved: {exc.reason}.",
                            title="History", severity="warning", timeout=6)

        self.run_worker(save(), name="save-turn", group="history", exit_on_error=False)

    def _mark_verdict(self) -> None:
        """Once no pane runs: mark the fastest first token, highest rate and cheapest."""
        if any(p.running for p in self.panes):
            return
        panes = list(self.query(ComparePane))
        marks = verdict([pane.figures() for pane in panes])
        for pane in panes:
            pane.show_marks(marks.get(pane.state.index, []))

    @on(PaneStatusChanged)
    def _pane_status(self, event: PaneStatusChanged) -> None:
        self.update_status()
        self._send_if_settled()  # (a pane that failed while drawing posts no PaneStreamFinished)

    # -- actions --------------------------------------------------------------

    def action_abort(self, index: int) -> None:
        if not self.pane(index).abort():
            self.notify(f"Pane {index} is not streaming.", timeout=2)

    def action_abort_all(self) -> None:
        aborted = [p.state.index for p in self.query(ComparePane) if p.abort()]
        if not aborted:
            self.notify("Nothing is streaming.", timeout=2)

    def action_retry(self) -> None:
        retry = [p for p in self.panes if p.retryable]
        if not retry:
            self.notify("No failed or cancelled pane to retry.", timeout=3)
            return
        delays: dict[int, float] = {}
        for pane in retry:
            failure = pane.last_result.failure if pane.last_result else None
            if failure is not None and failure.retry_after_s:
                delays[pane.index] = failure.retry_after_s
        prompt = retry[0].last_prompt or ""
        by_prompt: dict[str, list[PaneState]] = {}
        for pane in retry:
            by_prompt.setdefault(pane.last_prompt or prompt, []).append(pane)
        for text, panes in by_prompt.items():
            self.send(text, panes, delays)

    def action_copy_answer(self) -> None:
        """Copy the current pane's latest answer to the clipboard."""
        self.copy_answer(self._active_pane)

    def copy_answer(self, index: int) -> None:
        """Copy pane `index`'s latest answer, its text only, to the clipboard."""
        pane = self.pane(index)
        text = pane.answer.text
        if not text:
            self.notify(f"Pane {index} has no answer to copy.", timeout=3)
            return
        self.app.copy_to_clipboard(text)
        partial = " so far: it is still streaming" if pane.state.running else ""
        self.notify(f"Copied pane {index}'s answer ({len(text):,} characters){partial}.",
                    timeout=3)

    def copy_code_block(self, index: int) -> None:
        """Pick one fenced code block of pane `index`'s latest answer and copy its code."""
        blocks = code_blocks(self.pane(index).answer.text)
        if not blocks:
            self.notify(f"Pane {index}'s answer has no code block.", timeout=3)
            return
        options: list[tuple[str, Text | str]] = [
            (str(n), Text(f"{block.language or 'code'} · {block.first_line or '(empty)'}",
                          no_wrap=True, overflow="ellipsis"))
            for n, block in enumerate(blocks)
        ]

        def chosen(choice: str | None) -> None:
            if choice is None:
                return
            block = blocks[int(choice)]
            self.app.copy_to_clipboard(block.code)
            self.notify(f"Copied a {block.language or 'code'} block from pane {index} "
                        f"({len(block.code):,} characters).", timeout=3)

        self.app.push_screen(ChoiceScreen(f"Copy code block from pane {index}", options, "0"),
                             chosen)

    def action_new_comparison(self) -> None:
        self._confirm_send = self._send_after_abort = None
        for pane in self.query(ComparePane):
            pane.abort()
            pane.state.reset()
            pane.clear()
        self.query_one(PromptBox).focus()
        self.update_status()
        self.notify("New comparison: every pane's conversation was cleared.", timeout=3)


def _pane_list(indexes: list[int]) -> str:
    """"pane 2" or "panes 2, 3"."""
    names = ", ".join(str(i) for i in indexes)
    return f"pane {names}" if len(indexes) == 1 else f"panes {names}"
