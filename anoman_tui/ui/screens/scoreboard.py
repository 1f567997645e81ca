"""The scoreboard screen: what `anoman-tui scoreboard` prints, as a table in the app.

Read in a thread (`report.scoreboard.build` over the history's votes and numbers); `s`
switches between blind votes only and blind and sighted ones; Esc goes back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Label

from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import SIMULATED_STYLE

if TYPE_CHECKING:
    from anoman_tui.history import HistoryStore
    from anoman_tui.report.scoreboard import ScoreRow

def row_cells(row: ScoreRow) -> tuple[Text | str, ...]:
    """The shared cells (`report.scoreboard.cells`), the model bold and marked when its
    place is not stable yet."""
    from anoman_tui.report.scoreboard import cells

    model, *rest = cells(row)
    name = Text(row.model, style="bold")
    if model != row.model:  # "(simulated)": its answers were not a real model's
        name.append(model[len(row.model):], style=SIMULATED_STYLE)
    if row.unstable:
        name.append(" (few rounds)", style="dim italic")
    return (name, *rest)


class ScoreboardScreen(Screen[None]):
    """Per model, best rating first: the votes' verdict beside the history's numbers."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="scoreboard.back"),
        Binding("s", "toggle_sighted", "Blind / all votes", id="scoreboard.sighted"),
    ]

    def __init__(self, store: HistoryStore) -> None:
        super().__init__(id="scoreboard")
        self.store = store
        self.include_sighted = False
        self.rows: list[ScoreRow] = []

    def compose(self) -> ComposeResult:
        yield Label("Scoreboard", classes="screen-title")
        yield Label("reading the votes…", id="scoreboard-status", classes="usage-status")
        yield DataTable(zebra_stripes=True, cursor_type="row")
        yield KeyBar(shed=())

    def on_mount(self) -> None:
        from anoman_tui.report.scoreboard import COLUMNS

        table = self.query_one(DataTable)
        for column, _ in COLUMNS:
            table.add_column(column, key=column)
        self._load()

    def action_toggle_sighted(self) -> None:
        self.include_sighted = not self.include_sighted
        self._load()

    def _load(self) -> None:
        self.run_worker(self._read(), exclusive=True, group="scoreboard", exit_on_error=False)

    async def _read(self) -> None:
        from anoman_tui.history import HistoryUnavailable
        from anoman_tui.report.scoreboard import build

        status = self.query_one("#scoreboard-status", Label)

        def read() -> list[ScoreRow]:
            return build(self.store.voted_rounds(include_sighted=self.include_sighted),
                         self.store.model_numbers())

        try:
            self.rows = await asyncio.to_thread(read)
        except HistoryUnavailable as exc:
            status.update(Text(f"Could not read the history: {exc.reason}", style="bold"))
            return
        table = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            table.add_row(*row_cells(row))
        votes = "blind and sighted votes" if self.include_sighted else "blind votes only"
        if self.rows:
            status.update(f"{len(self.rows)} models, best rating first · {votes} · "
                          "s: switch · rating: Bradley–Terry, Elo scale, 95% bootstrap "
                          "interval · ← → more columns")
        else:
            status.update(f"No {votes} yet: play a round in the arena (Ctrl+P → Arena "
                          "mode) or run `anoman-tui compare --blind`.")
