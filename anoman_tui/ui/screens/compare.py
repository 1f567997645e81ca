"""The compare screen: a deck of panes side by side, one prompt box, per-pane abort.

The screen composes a `PaneDeck` (the panes, their layout, marks, zoom and diff) and
turns a submitted prompt into one concurrent stream per pane (`LiveSource`s played by
the deck). The deck says when a pane's stream ends (`PaneDeck.PaneEnded`) and when the
turn is over (`PaneDeck.TurnEnded`): then the screen hands the turn to the history. It
keeps the status line honest, and owns the connection, the prompt, reruns and the
palette's per-pane settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input

from anoman_tui.streaming import (
    ENDPOINT_FORMATS,
    GatewayRequestError,
    ModelInfo,
    normalize_base_url,
    preload_price_library,
)
from anoman_tui.streaming.safe_text import Secret
from anoman_tui.targets import Target
from anoman_tui.ui.messages import (
    GatewayConnecting,
    GatewayReady,
    GatewayUnavailable,
    PaneStatusChanged,
    PromptSubmitted,
)
from anoman_tui.ui.palette import ScreenCommands
from anoman_tui.ui.render.pane_state import (
    PaneParams,
    PaneState,
    answered_pairs,
    scenario_choices,
    simulated_field,
)
from anoman_tui.ui.screens.deck_keys import (
    ABORT_ALL_KEY,
    ABORT_KEYS,
    COPY_KEY,
    DIFF_KEY,
    DIFF_ORIGINAL_KEY,
    EXPORT_KEY,
    NEXT_PANE_KEY,
    SCROLL_KEYS,
    ZOOM_KEY,
    DeckKeys,
)
from anoman_tui.ui.screens.prompting import TypedPrompts, live_sources, pane_list, prompt_area
from anoman_tui.ui.services import AppServices, app_services
from anoman_tui.ui.textual_internals import (
    KeepStylesOnResume,
    draw_dirty_lines_only,
    no_composite_while_batching,
)
from anoman_tui.ui.widgets.deck import PaneDeck, SavedSource
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.prompt_box import PromptBox
from anoman_tui.ui.widgets.status_line import APP_BADGE, StatusLine

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, PaneRecord

class CompareScreen(KeepStylesOnResume, DeckKeys, TypedPrompts, Screen[None]):
    """The live comparison: the app's first screen, under every other."""

    # Pushed at start-up just after it mounted (and was styled): not styled again then.
    keep_styles_always = False

    BINDINGS = [
        *ABORT_KEYS,
        ABORT_ALL_KEY,
        Binding("ctrl+r", "retry", "Retry", id="retry", priority=True),
        Binding("ctrl+n", "new_comparison", "New", id="new_comparison", priority=True),
        NEXT_PANE_KEY,
        DIFF_KEY,
        DIFF_ORIGINAL_KEY,
        ZOOM_KEY,
        COPY_KEY,
        EXPORT_KEY,
        # Priority: the prompt box (a TextArea) binds F6 to "select line".
        Binding("f6", "app.history", "History", id="history", priority=True),
        *SCROLL_KEYS,
    ]
    # Its palette entries (`palette_commands`), beside the app's theme, keys and quit.
    COMMANDS = {ScreenCommands}

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
        self, panes: list[PaneState], *, frozen_clock: bool = False, system_prompt: str = "",
        id: str = "compare",
    ) -> None:
        super().__init__(id=id)
        # Three answers redraw side by side many times a second: composite only what
        # changed (see textual_internals._render_dirty_lines).
        draw_dirty_lines_only(self)
        no_composite_while_batching(self, first_frame=self._first_frame_drawn)
        self.deck = PaneDeck(panes, frozen_clock=frozen_clock, model_info=self.model_info)
        self.system_prompt = system_prompt  # from the settings: prefills the system box
        self._frozen = frozen_clock
        self.base_url: str | None = None
        self.target_label = "starting the local gateway…"
        self.models: list[ModelInfo] = []
        self._pending_prompt: str | None = None
        # The panes say what to do first until the first prompt is sent (`first_hint`).
        self._hinting = True
        self._retry_at: float | None = None  # monotonic: when the app tries to connect again
        self._told_unavailable = ""  # the reason last notified: a retry does not repeat it
        # The latest turn saved, by prompt, with its history id (exports name the file by it).
        self._saved: dict[str, ComparisonRecord] = {}
        self.turns_ended = 0
        """Turns over since the screen opened, each handed to the history (its save may
        still be on its way)."""
        # A rerun from the history: the comparison it repeats (the deck's `original`),
        # until the next prompt.
        self._rerun_of: int | None = None

    def _first_frame_drawn(self) -> None:
        # What no pane shows before F7, made once the screen is there to see.
        self.deck.build_hidden()

    def build_hidden_later(self) -> None:
        # At start-up the app mounts in a batch, and a callback after the next refresh
        # ran before the first frame: `_first_frame_drawn` does it instead.
        pass

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield self.deck
        yield prompt_area(self.system_prompt, frozen=self._frozen)
        # In a narrow terminal keys go in this order (the hidden ones still work, and the
        # palette lists them); History, Quit and the palette always stay. Keys hidden
        # first come back first where room is left.
        yield KeyBar(shed=("scroll_pane", "export", "diff", "copy_answer", "usage",
                           "new_comparison", "zoom", "abort", "retry", "diff_original",
                           "next_pane", "abort_all"), labels=self.key_labels)

    def key_labels(self) -> dict[str, str]:
        """Key bar labels that name what they act on (the rerun's original)."""
        return {"diff_original": f"Diff vs #{self._rerun_of}"} if self._rerun_of else {}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "diff_original":
            return self.deck.original is not None
        return True

    def on_mount(self) -> None:
        if not self.set_up_deck():
            return
        self.show_hints()

    def on_resize(self) -> None:
        self.deck_resized()

    # -- layout ---------------------------------------------------------------

    def lay_out(self) -> None:
        if self.deck.apply_layout(self.size.width):
            self.show_hints()  # one pane shown: it holds the whole hint

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
        services = self.services
        default = services.connector.default_target.name
        names = list(dict.fromkeys(p.target.name for p in self.panes if p.model))
        if names and names != [default]:
            # Panes on different targets: each header names its own; this line lists them.
            labels = []
            for name in names:
                known = services.connector.targets.get(name)
                connection = services.connector.connection(known) if known else None
                labels.append(connection.label() if connection else name)
            where = ("targets:", " · ".join(labels), True)
        else:
            where = ("requests go to:", target, True)
        fields = [
            ("", APP_BADGE, True),
            where,
            ("cache:", "bypassed (no-cache)" if self.bypass_cache else "on", False),
            ("params:", "synced" if self.sync_params else "per pane", False),
            # Room is kept while nothing streams: the line never grows when streams start.
            ("", f"{running} streaming" if running else " " * len(streaming), True),
        ]
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.insert(2, simulated)
        if self._rerun_of is not None:  # beside where requests go, on the first line
            fields.insert(2, ("", f"rerun of #{self._rerun_of}", True))
        # Below 100 columns the line is full: the shared store is named only when
        # something is wrong with it (unavailable, saves waiting).
        history = self.services.history_status(narrow=self.size.width < 100)
        if history:
            fields.append(("history:", history, False))
        self.show_status(fields)

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
        for state, pane in zip(self.panes, self.deck.widgets, strict=True):
            if not state.model and known:
                state.model = known[(state.index - 1) % len(known)]
            pane.refresh_chrome()
        self.update_status()
        self.show_hints()  # (whether the panes' models are simulated is known now)
        self.app.refresh_bindings()  # Reconnect leaves the footer
        if self._pending_prompt is not None:
            prompt, self._pending_prompt = self._pending_prompt, None
            self.send(prompt, self.panes)
        if self.services.start_in_arena:
            self.services.start_in_arena = False
            self.services.action_arena()

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

    # -- the first meeting ----------------------------------------------------------

    def show_hints(self) -> None:
        """Show what to do first in the panes (split over the three side by side, whole
        in the one shown in a narrow terminal), until the first prompt is sent."""
        if not self._hinting:
            return
        keymap = self.services.settings.keymap

        # Each binding's first key (Ctrl+J for a new line: Shift+Enter is Enter in many
        # terminals), as rebound by the keymap.
        keys = {name: readable_key(keymap.get(name, default).split(",")[0])
                for name, default in (
                    ("send", "enter"), ("newline", "ctrl+j"), ("abort_pane_1", "f1"),
                    ("abort_pane_3", "f3"), ("abort_all", "escape"), ("history", "f6"))}
        keys["palette"] = readable_key(self.app.COMMAND_PALETTE_BINDING)
        default = self.services.connector.default_target
        local = any(p.target.is_local for p in self.panes if p.model) or (
            not any(p.model for p in self.panes) and default.is_local)
        simulated = any(p.simulated for p in self.panes) or local
        self.deck.show_hints(first_hint(keys, simulated=simulated, compact=self.deck.shows_one))

    def end_hints(self) -> None:
        """The first prompt is on its way: the hint is gone for good."""
        if self._hinting:
            self._hinting = False
            self.deck.hide_hints()

    @on(PromptSubmitted)
    def _submitted(self, event: PromptSubmitted) -> None:
        self.end_hints()
        if self.base_url is None:
            if self.target_label.startswith("unavailable"):
                self.notify("No gateway to send to: see the status line.",
                            title="Not connected", severity="error")
                return
            # Typed before the local gateway finished starting: send it once it is up.
            self._forget_rerun()
            self._pending_prompt = event.prompt
            self.query_one(PromptBox).clear()
            self.notify("The gateway is starting; your prompt goes out as soon as it is up.",
                        timeout=3)
            return
        running = self.deck.running
        if running:
            if self.confirm_busy(event.prompt, running):
                self._forget_rerun()
            return
        self._confirm_send = None
        self._forget_rerun()
        self.query_one(PromptBox).clear()
        self.send(event.prompt, self.panes)

    def send(self, prompt: str, panes: list[PaneState], delays: dict[int, float] | None = None
             ) -> None:
        self.end_hints()
        # A rerun measures the models again: a cached answer would measure nothing.
        self.deck.play(prompt, live_sources(
            self.deck, panes, prompt, system=self._system_text(), delays=delays,
            bypass_cache=self.bypass_cache or self._rerun_of is not None))
        self.update_status()

    def model_info(self, state: PaneState) -> ModelInfo | None:
        """What the pane's target lists about its model (prices for an estimate)."""
        listed = self.services.connector.target_models.get(state.target.name)
        if listed is None and state.target.name == self.services.connector.default_target.name:
            listed = self.models
        return next((m for m in listed or () if m.id == state.model), None)

    @on(PaneDeck.PaneEnded)
    def _pane_ended(self) -> None:
        self.update_status()

    @on(PaneDeck.TurnEnded)
    def _turn_ended(self, event: PaneDeck.TurnEnded) -> None:
        if self.deck.running:
            return  # a prompt waiting for the aborted panes already went out
        self.turns_ended += 1
        self._save_turn(event.prompt)  # before a queued prompt starts the next turn
        if self.deck.original is not None:
            self.deck.show_rerun_deltas(self.turn_record(event.prompt))
        self.send_if_settled()

    def turn_record(self, prompt: str | None = None) -> ComparisonRecord | None:
        """The turn of `prompt` (default: the latest) as the history keeps it; None if no
        pane has ended one."""
        return turn_record(self.deck, self.services, prompt, blind=False,
                           system_prompt=self._system_text(), rerun_of=self._rerun_of,
                           saved=self._saved, base_url=self.base_url)

    def _system_text(self) -> str:
        boxes = self.query("#system")
        return boxes.first(Input).value if boxes else self.system_prompt

    def _save_turn(self, prompt: str) -> None:
        """Keep the turn that just ended in the history; saved off the UI thread."""
        record = self.turn_record(prompt)
        if record is not None:
            save_turn(self, record, self._keep_saved)

    def _keep_saved(self, prompt: str, record: ComparisonRecord) -> None:
        self._saved = {prompt: record}

    @on(PaneStatusChanged)
    def _pane_status(self, event: PaneStatusChanged) -> None:
        self.update_status()
        self.send_if_settled()  # (a pane that failed while drawing posts no PaneStreamFinished)

    # -- actions --------------------------------------------------------------

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

    def sighted_vote(self, index: int) -> None:
        """Mark pane `index`'s answer of the latest turn as the best: a sighted vote (the
        names were on screen), kept apart from the blind arena's."""
        saved = next(iter(self._saved.values()), None)
        store = self.services.history
        saving = [w for w in self.app.workers
                  if w.node is self and w.name == SAVE_WORKER and not w.is_finished]
        if saving:
            # The latest turn is being written (a thread, a few ms): the vote follows it,
            # rather than being refused, or going to the turn before.
            async def after_the_save() -> None:
                for worker in saving:
                    with contextlib.suppress(Exception):
                        await worker.wait()
                self.sighted_vote(index)

            self.run_worker(after_the_save(), group="vote", exit_on_error=False)
            return
        if saved is None or (saved.id is None and not saved.uid) or store is None:
            self.notify("Only a saved comparison can be voted on (history on, turn ended).",
                        timeout=4)
            return
        pane = next((p for p in saved.panes if p.pane == index), None)
        if pane is None or not pane.committed:
            self.notify(f"Pane {index} did not complete: a failed pane cannot win.",
                        severity="warning", timeout=4)
            return

        async def cast() -> None:
            from anoman_tui.history import HistoryUnavailable, VoteRefused

            assert store is not None
            try:
                queued = await asyncio.to_thread(
                    write_vote, self.services, saved, "win", index, blind=False)
            except (VoteRefused, HistoryUnavailable) as exc:
                self.notify(f"Not recorded: {exc.reason}.", severity="warning", timeout=5)
                return
            self.services.refresh_history_status()
            kept = (" It is kept until the history's server is back." if queued else "")
            self.notify(f"Pane {index} ({pane.model}) marked as the best answer: a sighted "
                        f"vote, counted apart from blind ones.{kept}", timeout=5)

        self.run_worker(cast(), group="vote", exit_on_error=False)

    # -- the palette: this screen's entries, and the dialogs they open ----------

    def palette_commands(self) -> Iterator[SystemCommand]:
        connector = self.services.connector
        for pane in self.panes:
            n = pane.index
            yield SystemCommand(f"Model for pane {n}",
                                f"now: {pane.model or 'none'} on {pane.target.name}",
                                partial(self.pick_model, n))
            yield SystemCommand(f"Target for pane {n}",
                                f"now: {pane.target.name}; the server this pane streams from",
                                partial(self.pick_target, n))
            yield SystemCommand(f"Endpoint format for pane {n}", f"now: {pane.endpoint}",
                                partial(self.pick_endpoint, n))
            yield SystemCommand(f"Parameters for pane {n}", pane.params.describe(),
                                partial(self.edit_params, n))
            if connector.is_local_gateway:
                now = pane.scenario_note(running=False) or "none"
                yield SystemCommand(f"Scenario for pane {n}",
                                    f"simulate a failure on purpose; now: {now}",
                                    partial(self.pick_scenario, n))
            yield SystemCommand(f"Copy answer from pane {n}",
                                "its latest answer, to the clipboard (through the terminal)",
                                partial(self.copy_answer, n))
            yield SystemCommand(f"Copy code block from pane {n}",
                                "pick one code block of its latest answer to copy",
                                partial(self.copy_code_block, n))
        yield SystemCommand("Diff two panes",
                            "show one pane's answer as a word diff against another's",
                            self.action_diff)
        # A toggle's description says its state now, then what choosing it does.
        yield SystemCommand(
            "Sync parameters across panes",
            "now on: choose to let each pane keep its own"
            if self.sync_params
            else "now off: choose so that editing one pane's parameters sets all three",
            self.toggle_sync,
        )
        yield SystemCommand(
            "Toggle cache bypass",
            "now bypassing the cache: choose to use it again"
            if self.bypass_cache
            else "now using the cache: choose to send Cache-Control: no-cache",
            self.toggle_cache_bypass,
        )
        yield SystemCommand("Arena mode", "blind rounds: three models drawn at random, "
                            "shown as A, B, C until you vote", self.services.action_arena)
        yield SystemCommand("Scoreboard", "per model: the blind votes' rating, wins, speed, "
                            "cost and failures", self.services.action_scoreboard)
        for pane in self.panes:
            if pane.last_result is not None and pane.last_result.committed:
                yield SystemCommand(f"Mark pane {pane.index} as the best answer",
                                    "a sighted vote (names on screen), kept apart from "
                                    "blind ones", partial(self.sighted_vote, pane.index))
        yield SystemCommand("History", "every saved comparison: reopen, re-run, continue, "
                            "export", self.services.action_history)
        yield SystemCommand("Run a suite…", "a suite file (.toml) or a promptfoo config, "
                            "on the suite screen",
                            lambda: self.run_action("app.run_suite"))
        yield SystemCommand("Export this comparison",
                            "Markdown, HTML, JSON, or an SVG screenshot of the screen",
                            self.action_export)
        yield SystemCommand("Usage ledger", "what the gateway metered, newest first",
                            self.services.action_usage)
        yield SystemCommand("New comparison", "clear every pane's conversation",
                            self.action_new_comparison)
        yield SystemCommand("Reconnect now",
                            f"{connector.target_now()}; read its model list again",
                            connector.reconnect)
        yield SystemCommand("Change gateway URL", f"now: {connector.target_now()}",
                            self.change_gateway_url)
        yield SystemCommand(
            "Change API key",
            f"now: {connector.masked_key()}"
            + (" (used once a gateway URL is set)" if connector.is_local_gateway else ""),
            self.change_api_key,
        )

    def change_gateway_url(self) -> None:
        from anoman_tui.ui.screens.text_input import TextInputScreen

        connector = self.services.connector

        def check(text: str) -> str | None:
            if text and not text.lower().startswith(("http://", "https://")):
                return "The URL must start with http:// or https://."
            return None

        def chosen(url: str | None) -> None:
            if url is None:
                return
            connector.settings.base_url = url or None
            connector.targets_changed()
            self.base_url = None  # nothing goes out until the new one answered
            connector.reconnect()

        self.app.push_screen(
            TextInputScreen(
                "Gateway URL", value=connector.settings.base_url or "",
                placeholder="https://api.anoman.io (empty: the local gateway)",
                help="Enter connect · Esc cancel · empty: start the local gateway",
                check=check,
            ),
            chosen,
        )

    def change_api_key(self) -> None:
        from anoman_tui.ui.screens.text_input import TextInputScreen

        connector = self.services.connector
        masked = connector.masked_key()

        def chosen(text: str | None) -> None:
            if text is None:
                return
            # Kept for this session only: a key is never written to the config file.
            connector.settings.api_key = Secret(text) if text else None
            connector.targets_changed()
            if connector.is_local_gateway:
                self.notify("Key set: the local gateway uses its own; this one goes to the "
                            "gateway URL you set.", timeout=4)
                return
            self.base_url = None
            connector.reconnect()

        self.app.push_screen(
            TextInputScreen(
                "API key", password=True, placeholder=f"now: {masked}",
                help="Enter connect (empty: no key) · Esc cancel · the key is never shown",
            ),
            chosen,
        )

    def pick_model(self, n: int) -> None:
        """The pane's target's models to choose from (read from it first if need be)."""
        state = self.panes[n - 1]
        self.run_worker(self._pick_model(n, state.target), group="pick", exclusive=True,
                        exit_on_error=False)

    async def _pick_model(self, n: int, target: Target, *, retarget: bool = False) -> None:
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        state = self.panes[n - 1]
        if target.kind != "anoman":
            # Its first import (~150 ms) off the UI thread, as the app's warm-up does.
            await asyncio.to_thread(preload_price_library)
        try:
            listed = await self.services.connector.models_of(target)
        except GatewayRequestError as exc:
            self.notify(f"{target.name}: {exc}", title="No model list", severity="error",
                        timeout=8)
            return
        options: list[tuple[str, Text | str]] = []
        for m in listed:
            label = Text(m.id, style="bold")
            facts = []
            if m.input_usd_per_mtok is not None and m.output_usd_per_mtok is not None:
                facts.append(f"${m.input_usd_per_mtok}/${m.output_usd_per_mtok} per Mtok")
            if m.weight is not None:
                facts.append(f"weight {m.weight}")
            if m.description:
                facts.append(m.description)
            if facts:
                label.append("  " + " · ".join(facts), style="dim")
            options.append((m.id, label))
        if not options:
            self.notify(f"{target.name} lists no models.", severity="warning")
            return

        def chosen(model: str | None) -> None:
            if not model:
                return
            changed = model != state.model or (retarget and target != state.target)
            state.model = model
            if retarget:
                state.target = target
                state.endpoint = target.default_endpoint(state.endpoint)
            pane = self.pane(n)
            if changed and state.history:
                # The turns on screen are the conversation the new model continues (Ctrl+N
                # starts afresh): sent with its next request, and said so.
                fresh = self.services.settings.keymap.get("new_comparison", "ctrl+n")
                pane.show_carried_over(len(state.history) // 2,
                                       readable_key(fresh.split(",")[0]))
            pane.refresh_chrome()
            self.update_status()

        title = f"Model for pane {n} on {target.name}"
        self.app.push_screen(ChoiceScreen(title, options, state.model), chosen)

    def pick_target(self, n: int) -> None:
        """Choose where pane `n` streams from, then one of that target's models."""
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        state = self.panes[n - 1]
        connector = self.services.connector
        options: list[tuple[str, Text | str]] = []
        for target in connector.targets.values():
            label = Text(target.name, style="bold")
            where = "the embedded local gateway" if target.is_local else target.base_url or ""
            label.append(f"  {target.kind} · {where}", style="dim")
            if target.api_key_env and not target.key():
                label.append(f" · ${target.api_key_env} is not set", style="dim italic")
            options.append((target.name, label))

        def chosen(name: str | None) -> None:
            if name:
                self.run_worker(self._pick_model(n, connector.targets[name], retarget=True),
                                group="pick", exclusive=True, exit_on_error=False)

        self.app.push_screen(
            ChoiceScreen(f"Target for pane {n}", options, state.target.name), chosen)

    def pick_endpoint(self, n: int) -> None:
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        state = self.panes[n - 1]
        target = state.target
        what = {"openai": "chat.completion.chunk frames", "anthropic": "Messages events",
                "playground": "chunks + compare id"}
        # Only the formats the pane's target serves, at its paths.
        labels = {e: f"{e}: {target.path_for(e)} ({what[e]})" for e in target.endpoints}

        def chosen(endpoint: str | None) -> None:
            if endpoint:
                state.endpoint = endpoint  # type: ignore[assignment]
                self.pane(n).refresh_chrome()

        self.app.push_screen(
            ChoiceScreen(f"Endpoint format for pane {n} on {target.name}",
                         [(e, labels[e]) for e in ENDPOINT_FORMATS if e in labels],
                         state.endpoint),
            chosen,
        )

    def pick_scenario(self, n: int) -> None:
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        state = self.panes[n - 1]

        def chosen(choice: str | None) -> None:
            if choice:
                state.set_scenario(choice)
                self.pane(n).refresh_chrome()

        self.app.push_screen(
            ChoiceScreen(f"Scenario for pane {n} (local gateway simulates it)",
                         list(scenario_choices()), state.scenario_choice),
            chosen,
        )

    def edit_params(self, n: int) -> None:
        from anoman_tui.ui.screens.pickers import ParamsScreen

        state = self.panes[n - 1]

        def chosen(result: tuple[PaneParams, bool] | None) -> None:
            if result is None:
                return
            params, sync = result
            self.sync_params = sync
            targets = self.panes if sync else [state]
            for target in targets:
                target.params = PaneParams(params.temperature, params.max_tokens)
            self.notify(f"{'All panes' if sync else f'Pane {n}'}: {params.describe()}", timeout=3)

        self.app.push_screen(ParamsScreen(n, state.params, self.sync_params), chosen)

    def toggle_sync(self) -> None:
        self.sync_params = not self.sync_params
        if self.sync_params:
            first = self.panes[0].params
            for pane in self.panes[1:]:
                pane.params = PaneParams(first.temperature, first.max_tokens)
            self.notify(f"Parameters synced to pane 1's: {first.describe()}", timeout=3)

    def toggle_cache_bypass(self) -> None:
        self.bypass_cache = not self.bypass_cache

    def export_record(self) -> ComparisonRecord | None:
        """What Export writes: the latest turn on screen."""
        return self.turn_record()

    def export_title(self) -> str:
        return "comparison"

    def take_record(self, record: ComparisonRecord, *, answers: bool,
                    models: list[str] | None = None) -> bool:
        """Set the panes up as a saved comparison had them: model, format, parameters,
        each pane's own conversation and the system prompt.

        `answers`: continue it (the saved answers are shown and join each pane's
        conversation); else re-run it (the same prompt is sent again, to `models` if
        given). Refused (False, with a notice) while a pane streams.
        """
        running = [p.index for p in self.panes if p.running]
        if running:
            self.notify(f"{pane_list(running).capitalize()} still "
                        f"{'streams' if len(running) == 1 else 'stream'} here: abort "
                        "(Esc) or wait, then try again.", title="Busy", severity="warning")
            return False
        self._confirm_send = self._send_after_abort = None
        self.deck.diff_off()  # the answers it compared are gone
        used = []
        shown: dict[int, SavedSource] = {}
        for state, saved in zip(self.panes, record.panes, strict=False):
            pane = self.pane(state.index)
            pane.clear()
            state.reset()
            state.scenario, state.scenario_pinned = "none", False
            state.model = models[state.index - 1] if models else saved.model
            state.target = self.saved_target(saved)
            if saved.endpoint in ENDPOINT_FORMATS:
                state.endpoint = saved.endpoint
            state.params = PaneParams(saved.temperature, saved.max_tokens)
            turns = saved.conversation if saved.conversation is not None \
                else record.conversation
            from anoman_tui.streaming import ChatTurn  # pydantic: not before the first paint

            state.history = [ChatTurn(role=r, content=c) for r, c in turns
                             if r in ("user", "assistant")]
            if answers:
                shown[state.index] = source = SavedSource.of(saved, answered_pairs(turns))
                state.record(record.prompt, source.result)
            used.append(state)
        for state in self.panes[len(record.panes):]:
            # A comparison of fewer models: the spare pane starts afresh.
            self.pane(state.index).clear()
            state.reset()
        self.deck.play(record.prompt, shown)
        for box in self.query("#system"):
            if isinstance(box, Input):
                box.value = record.system_prompt
        self._saved = {record.prompt: record} if answers else {}
        self._forget_rerun()
        if not answers and record.id is not None:
            self._rerun_of, self.deck.original = record.id, record
            self.refresh_bindings()
        self.deck.refresh_chrome()
        self.deck.mark_verdict()
        self.update_status()
        self.deck.focus_home()
        if len(record.panes) > len(self.panes):
            self.notify(f"This comparison had {len(record.panes)} models; the first "
                        f"{len(self.panes)} are here.", timeout=5)
        if not answers:
            self._send_to(record.prompt, used)
        return True

    def saved_target(self, saved: PaneRecord) -> Target:
        """The target a saved pane streamed from: by name, else by URL, else the default."""
        services = self.services
        if saved.target in services.connector.targets:
            return services.connector.targets[saved.target]
        for target in services.connector.targets.values():
            if target.base_url and normalize_base_url(target.base_url) == saved.base_url:
                return target
        return services.connector.default_target

    def _send_to(self, prompt: str, panes: list[PaneState]) -> None:
        """Send now, or as soon as the gateway is up."""
        if self.base_url is None:
            if self.unavailable:
                self.notify("No gateway to send to: see the status line.",
                            title="Not connected", severity="error")
                return
            self._pending_prompt = prompt
            return
        self.send(prompt, panes)
    def _forget_rerun(self) -> None:
        """A new prompt, comparison or conversation: no longer a rerun of the original."""
        if self._rerun_of is None:
            return
        self.deck.forget_original()
        self._rerun_of = None
        self.update_status()
        self.refresh_bindings()

    def action_new_comparison(self) -> None:
        self._confirm_send = self._send_after_abort = None
        self._forget_rerun()
        self.deck.diff_off()  # nothing left to compare
        self.deck.clear()
        self.query_one(PromptBox).focus()
        self.update_status()
        self.notify("New comparison: every pane's conversation was cleared.", timeout=3)


_KEY_NAMES = {"escape": "Esc", "enter": "Enter", "ctrl": "Ctrl", "shift": "Shift",
              "alt": "Alt", "pageup": "PgUp", "pagedown": "PgDn"}


def readable_key(key: str) -> str:
    """`ctrl+p` -> `Ctrl+P`, `f1` -> `F1`, `escape` -> `Esc`: a key as the hint names it."""
    return "+".join(_KEY_NAMES.get(part, part.upper() if len(part) <= 3 else part.title())
                    for part in key.split("+"))


def first_hint(keys: dict[str, str], *, simulated: bool, compact: bool = False
               ) -> list[Text]:
    """The empty screen's hint in three parts, one a pane: what to type; the keys that
    matter most (`keys`: binding id -> key as named); and, when the models are simulated
    (the local gateway's), that they are and how to reach real ones. Plain text.
    `compact`: for one pane alone in a small terminal (the keys on one line)."""
    ask = Text()
    ask.append("Type a prompt below", style="bold")
    ask.append(" and press ")
    ask.append(keys["send"], style="bold")
    ask.append(": it goes to all three models at once" + (
        "." if compact else " and their answers stream side by side. "
                            f"{keys['newline']} starts a new line."))
    rows = [(keys["send"], "send" if compact else "send the prompt"),
            (f"{keys['abort_pane_1']}–{keys['abort_pane_3']}", "abort pane 1–3"),
            (keys["abort_all"], "abort all"),
            (keys["palette"], "commands" if compact else "commands: models, targets"),
            (keys["history"], "history")]
    width = 0 if compact else max(len(name) for name, _ in rows)
    keys_part = Text()
    for index, (name, what) in enumerate(rows):
        if index:  # (compact: two lines, broken between keys, not inside one)
            keys_part.append(("\n" if index == 3 else " · ") if compact else "\n")
        keys_part.append(name.ljust(width), style="bold")
        keys_part.append(f" {what}" if compact else f"  {what}")
    where = Text()
    if simulated:
        where.append("These models are simulated", style="bold")
        where.append(" by the local gateway: not real answers. For real ones: ")
        where.append("--base-url URL", style="bold")
        where.append(" (or ANOMAN_BASE_URL) with ANOMAN_API_KEY, or ")
        where.append("--model TARGET:MODEL", style="bold")
        where.append(" (e.g. openai:gpt-4o), or [targets.NAME] in the config file.")
    else:
        where.append("Each header names its pane's model and where it streams from; ")
        where.append(keys["palette"], style="bold")
        where.append(" changes them.")
    return [ask, keys_part, where]


def write_vote(services: AppServices, saved: ComparisonRecord, outcome: str,
               winner: int | None, *, blind: bool) -> bool:
    """(a thread) Cast a vote on `saved` through the waiting saves (its round may itself
    still wait for the server: it is named by its uid then); whether the vote waits.
    Raises `VoteRefused` and a lasting `HistoryUnavailable`."""
    from anoman_tui.history.pending import vote_write

    store, pending = services.history, services.pending_saves
    assert store is not None
    if pending is None:
        assert saved.id is not None
        store.cast_vote(saved.id, outcome, winner, blind=blind)
        return False
    marker = object()
    result = pending.write(vote_write(saved.id, saved.uid, outcome, winner, blind=blind,
                                      user=store.user), "A vote", queued=marker)
    return result is marker


def turn_record(deck: PaneDeck, services: AppServices, prompt: str | None, *, blind: bool,
                system_prompt: str, rerun_of: int | None,
                saved: dict[str, ComparisonRecord], base_url: str | None
                ) -> ComparisonRecord | None:
    """The deck's turn of `prompt` (default: the latest) as the history keeps it; None if
    no pane has ended one. `blind`: saved under the panes' labels until the vote;
    `saved`: the turns already saved, by prompt (the same turn is returned with its id);
    `base_url`: where a pane whose target is gone sent its request."""
    panes_ = deck.panes
    if prompt is None:
        prompt = next((s.last_prompt for s in panes_ if s.last_result is not None), None)
    turn = [s for s in panes_ if s.last_result is not None and s.last_prompt == prompt]
    if prompt is None or not turn:
        return None
    # Imported here: SQLite stays off the path to the first paint.
    from anoman_tui.history.builder import PaneTurn, comparison_record

    def earlier(state: PaneState) -> tuple[tuple[str, str], ...]:
        # A committed answer has joined the pane's conversation: leave it out.
        result = state.last_result
        turns = state.history[:-2] if result is not None and result.committed \
            else state.history
        return tuple((t.role, t.content) for t in turns)

    panes = []
    for state in turn:
        pane, result = deck.pane(state.index), state.last_result
        assert result is not None
        connection = services.connector.connection(state.target)
        panes.append(PaneTurn(
            state.index, state.model, result,
            base_url=connection.base_url if connection else (base_url or ""),
            endpoint=state.endpoint, target=state.target.name,
            temperature=state.params.temperature, max_tokens=state.params.max_tokens,
            scenario=state.applied_scenario, simulated=state.simulated,
            # What the footer shows: its sparkline (the last cell is partial) and cost.
            rate_series=pane.rate_series,
            cost=pane.cost(),  # the record masks it itself in a blind round
            conversation=earlier(state),
            label=state.label,  # a blind round's A, B, C
        ))
    record = comparison_record(prompt, panes, source="app", blind=blind,
                               system_prompt=system_prompt, rerun_of=rerun_of)
    before = saved.get(prompt)
    if before is not None and before.panes == record.panes:
        return before  # the same turn, with its history id
    return record


SAVE_WORKER = "save-turn"  # (a vote waits for the turn it names: sighted_vote)


def save_turn(screen: Screen[Any], record: ComparisonRecord,
              saved: Callable[[str, ComparisonRecord], None]) -> None:
    """Keep `record` (a turn that just ended on `screen`) in the history, off the UI
    thread; `saved(prompt, record)` is told the record as kept (with its id, or its uid
    while it waits for the history's server)."""
    services = app_services(screen.app)
    store = services.history
    if store is None:
        return  # history off, unavailable (the app said why once), or still opening
    from anoman_tui.history.builder import for_history

    prompt = record.prompt
    kept = for_history(record, services.settings.recording_limit())
    record = kept.record
    if kept.dropped is not None:
        screen.notify(f"This comparison was saved without its recording: {kept.dropped}.",
                      title="History", severity="warning", timeout=8)

    pending = services.pending_saves
    if pending is not None:
        from anoman_tui.history.pending import with_uid

        record = with_uid(record)  # a vote on it can name it before it is written

    async def save() -> None:
        from anoman_tui.history import HistoryUnavailable

        saved_id: int | None
        try:
            if pending is None:
                saved_id = await asyncio.to_thread(store.save, record)
            else:
                saved_id = await asyncio.to_thread(pending.save, record, "A comparison")
        except HistoryUnavailable as exc:
            screen.notify(f"This comparison was not saved: {exc.reason}.",
                          title="History", severity="warning", timeout=6)
            return
        if saved_id is None:  # kept until the shared history's server is back
            assert pending is not None
            saved(prompt, record)  # (its uid names it meanwhile)
            screen.notify(f"The history cannot be reached ({pending.last_problem}): this "
                          "comparison is kept and saved when it is back.",
                          title="History", severity="warning", timeout=8)
            services.refresh_history_status()
            return
        saved(prompt, dataclasses.replace(record, id=saved_id))

    screen.run_worker(save(), name=SAVE_WORKER, group="history", exit_on_error=False)
