"""A saved comparison, reopened: the panes exactly as it ended, read-only.

The screen composes a `PaneDeck` as the compare screen does, without a prompt: the
same panes (answers, reasoning, badges, footers, sparklines, marks), tabs in a narrow
terminal, zoom, copy, diff and export; each pane's turn is a `SavedSource`. Nothing
streams here; two actions take the comparison back to the live compare screen: re-run
its prompt (with the same or other models) and continue its conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from anoman_tui.streaming import ENDPOINT_FORMATS
from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.ui.palette import ScreenCommands
from anoman_tui.ui.render.pane_state import (
    PaneParams,
    PaneState,
    answered_pairs,
    simulated_field,
)
from anoman_tui.ui.screens.deck_keys import (
    COPY_KEY,
    DIFF_KEY,
    DIFF_ORIGINAL_KEY,
    EXPORT_KEY,
    NEXT_PANE_KEY,
    SCROLL_KEYS,
    ZOOM_KEY,
    DeckKeys,
)
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.services import AppServices, app_services
from anoman_tui.ui.textual_internals import draw_dirty_lines_only
from anoman_tui.ui.widgets.deck import PaneDeck, PaneSource, SavedSource
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.status_line import APP_BADGE, StatusLine

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord
    from anoman_tui.ui.screens.compare import CompareScreen


def when(created_at: float) -> str:
    """A turn's local time, as the history list shows it."""
    return datetime.fromtimestamp(created_at).strftime("%Y-%m-%d %H:%M")


def saved_panes(record: ComparisonRecord, live: CompareScreen) -> list[PaneState]:
    """One pane state a saved pane of `record`: its model, target (as the live screen
    knows it), format, parameters, and whether it was simulated."""
    panes = []
    # A blind round not voted on: "simulated" on some panes only would tell them apart.
    every = all(saved.simulated for saved in record.panes)
    for index, saved in enumerate(record.panes, start=1):
        state = PaneState(index=index, model=saved.model, target=live.saved_target(saved),
                          params=PaneParams(saved.temperature, saved.max_tokens))
        if saved.endpoint in ENDPOINT_FORMATS:
            state.endpoint = saved.endpoint
        if saved.scenario in SCENARIO_HEADERS:
            # The header says the outcome was simulated.
            state.applied_scenario = saved.scenario
        state.simulated = saved.simulated and (every or not record.hidden)
        panes.append(state)
    return panes


def saved_sources(record: ComparisonRecord) -> dict[int, PaneSource]:
    """Each pane of `record` shown as it ended, below its earlier turns."""
    sources: dict[int, PaneSource] = {}
    for index, saved in enumerate(record.panes, start=1):
        turns = saved.conversation if saved.conversation is not None \
            else record.conversation
        sources[index] = SavedSource.of(saved, answered_pairs(turns))
    return sources


class RecordScreen(DeckKeys, Screen[None]):
    """One saved comparison turn; Esc goes back to where it was opened from."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="record.back", priority=True),
        NEXT_PANE_KEY,
        DIFF_KEY,
        DIFF_ORIGINAL_KEY,
        ZOOM_KEY,
        COPY_KEY,
        EXPORT_KEY,
        *SCROLL_KEYS,
        Binding("r", "rerun", "Re-run", id="record.rerun"),
        Binding("c", "continue", "Continue", id="record.continue"),
        # Shown only for a recorded comparison (check_action).
        Binding("p", "open_replay", "Replay", id="record.replay"),
    ]
    # Its palette entries (`palette_commands`), beside the app's theme, keys and quit.
    COMMANDS = {ScreenCommands}

    def __init__(self, record: ComparisonRecord, live: CompareScreen, *,
                 frozen_clock: bool = False, id: str | None = None) -> None:
        super().__init__(id=id or f"record-{record.id}")
        # Its panes redraw side by side many times a second: composite only what changed
        # (see textual_internals._render_dirty_lines).
        draw_dirty_lines_only(self)
        # Each pane says what its saved answer was (not what its target lists today).
        self.deck = PaneDeck(saved_panes(record, live), frozen_clock=frozen_clock,
                             model_info=live.model_info, simulated_from_list=False)
        self.record = record
        self.live = live
        """The app's compare screen, where re-run and continue take the comparison."""
        self._rerun_of: int | None = None
        self._original_note = ""  # why a rerun's original cannot be shown beside it

    @property
    def services(self) -> AppServices:
        return app_services(self.app)

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield self.deck
        yield KeyBar(shed=("scroll_pane", "export", "diff", "copy_answer", "usage", "zoom",
                           "diff_original", "next_pane"), labels=self.key_labels)

    def key_labels(self) -> dict[str, str]:
        """Key bar labels that name what they act on (the rerun's original)."""
        return {"diff_original": f"Diff vs #{self._rerun_of}"} if self._rerun_of else {}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_replay":
            return self.record.recorded and not self.record.hidden
        if action == "diff_original":
            return self.deck.original is not None
        return True

    def on_mount(self) -> None:
        if not self.set_up_deck():
            return
        self.show_turn()

    def on_resize(self) -> None:
        self.deck_resized()

    def show_turn(self) -> None:
        """Show the saved turn in the panes, as it ended."""
        record = self.record
        self.deck.play(record.prompt, saved_sources(record))
        self.deck.refresh_chrome()
        self.deck.mark_verdict()
        if record.rerun_of is not None:
            self._rerun_of = record.rerun_of
            self.run_worker(self._load_original(record.rerun_of), group="original",
                            exit_on_error=False)
        self.update_status()

    async def _load_original(self, comparison_id: int) -> None:
        """Read the comparison this one reran, to show each pane against it."""
        from anoman_tui.history import HistoryUnavailable

        store = self.services.history
        found = None
        if store is not None:
            try:
                found = await asyncio.to_thread(store.get, comparison_id)
            except HistoryUnavailable as exc:
                self._original_note = f"original #{comparison_id} unreadable: {exc.reason}"
        if found is None:
            self._original_note = self._original_note or \
                f"original #{comparison_id} not in history"
        else:
            self.deck.original = found
            self.deck.show_rerun_deltas(self.record)
        self.update_status()
        self.refresh_bindings()

    def update_status(self) -> None:
        record = self.record
        targets = sorted({p.base_url for p in record.panes if p.base_url})
        earlier = len(answered_pairs(record.conversation))
        fields = [
            ("", APP_BADGE, True),
            ("comparison", f"#{record.id} · {when(record.created_at)}", True),
            ("", "read-only", True),
            ("sent to:", ", ".join(targets) or "—", False),
        ]
        if self._rerun_of is not None:
            fields.insert(3, ("", f"rerun of #{self._rerun_of}"
                              + (f" ({self._original_note})" if self._original_note else ""),
                              True))
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.insert(3, simulated)
        if earlier:
            fields.append(("", f"turn {earlier + 1} of a conversation", False))
        if record.system_prompt:
            fields.append(("system:", record.system_prompt.replace("\n", " ")[:60], False))
        self.show_status(fields)

    def export_record(self) -> ComparisonRecord | None:
        return self.record

    def export_title(self) -> str:
        return f"comparison #{self.record.id}"

    # -- the palette ----------------------------------------------------------------

    def palette_commands(self) -> Iterator[SystemCommand]:
        """What a reopened comparison can do read-only, and its own actions."""
        yield SystemCommand("Re-run this prompt", "with the same models, or others",
                            self.action_rerun)
        yield SystemCommand("Continue this conversation",
                            "on the compare screen, each pane with its own conversation",
                            self.action_continue)
        yield from reopened_commands(self, self.action_back)

    # -- actions ------------------------------------------------------------------

    def action_back(self) -> None:
        if self.deck.zoomed:
            self.action_zoom()  # Esc leaves the zoom first, as elsewhere
            return
        self.dismiss()

    def _blind_refusal(self) -> bool:
        if self.record.hidden:
            self.notify("A blind round not voted on yet: vote on it first "
                        "(anoman-tui vote ID), then its models can be re-run or continued.",
                        title="Blind round", severity="warning", timeout=6)
            return True
        return False

    def action_open_replay(self) -> None:
        """Stream it again from its recording, at a speed picked first."""
        self.services.open_replay(self.record)

    def action_continue(self) -> None:
        """Back to the compare screen with this comparison on it, to type what follows."""
        if self._blind_refusal():
            return
        if self._to_live(answers=True):
            self.live.notify(
                f"Continuing comparison #{self.record.id}: your next prompt goes to each "
                "pane with its own conversation so far.", timeout=5)

    def action_rerun(self) -> None:
        """Send the same prompt again: to the same models, the live screen's, or others."""
        if self._blind_refusal():
            return
        saved = [p.model for p in self.record.panes][: len(self.live.panes)]
        now = [p.model for p in self.live.panes][: len(saved)]
        options: list[tuple[str, Text | str]] = [
            ("same", f"with the same models: {' · '.join(saved)}"),
        ]
        if now != saved and all(now):
            options.append(("live", f"with the compare screen's models: {' · '.join(now)}"))
        if self.live.models:
            options.append(("pick", "choose a model for each pane…"))

        def chosen(choice: str | None) -> None:
            if choice == "same":
                self._to_live(answers=False)
            elif choice == "live":
                self._to_live(answers=False, models=now)
            elif choice == "pick":
                self._pick_models(list(saved), 0, lambda models: self._to_live(
                    answers=False, models=models))

        self.app.push_screen(ChoiceScreen("Re-run this prompt", options, "same"), chosen)

    def _pick_models(self, models: list[str], index: int,
                     done: Callable[[list[str]], object]) -> None:
        """One model picker per pane, each starting at the saved model; Esc stops."""
        if index >= len(models):
            done(models)
            return
        options: list[tuple[str, Text | str]] = [
            (m.id, Text(f"{m.id}  {m.description}".rstrip(), no_wrap=True, overflow="ellipsis"))
            for m in self.live.models
        ]

        def chosen(model: str | None) -> None:
            if model is None:
                return
            models[index] = model
            self._pick_models(models, index + 1, done)

        self.app.push_screen(
            ChoiceScreen(f"Re-run: model for pane {index + 1} (was {models[index]})",
                         options, models[index]), chosen)

    def _to_live(self, *, answers: bool, models: list[str] | None = None) -> bool:
        """Hand the comparison to the live screen and show it (closing the history)."""
        live = self.live
        if not live.take_record(self.record, answers=answers, models=models):
            return False
        while len(self.app.screen_stack) > 1 and self.app.screen is not live:
            self.app.pop_screen()
        return True


def reopened_commands(screen: DeckKeys, back: Callable[[], None]) -> Iterator[SystemCommand]:
    """The palette of a comparison shown read-only (reopened, replayed, a suite's case):
    export, copy, diff and back."""
    yield SystemCommand("Export this comparison",
                        "Markdown, HTML, JSON, or an SVG screenshot of the screen",
                        screen.action_export)
    for pane in screen.panes:
        n = pane.index
        yield SystemCommand(f"Copy answer from pane {n}", "to the clipboard",
                            partial(screen.copy_answer, n))
        yield SystemCommand(f"Copy code block from pane {n}",
                            "pick one code block of its answer to copy",
                            partial(screen.copy_code_block, n))
    yield SystemCommand("Diff two panes",
                        "show one pane's answer as a word diff against another's",
                        screen.action_diff)
    yield SystemCommand("Back", "to the history", back)
