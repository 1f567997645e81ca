"""The scoreboard screen: what `anoman-tui scoreboard` prints, as a table in the app.

Read in a thread (`report.scoreboard.build` over the history's votes and numbers); `s`
switches between blind votes only and blind and sighted ones, `r` between people's votes,
the arena judge's verdicts and both; under the table, how far people and the judge agree
on the rounds both rated. Esc goes back.
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
    from anoman_tui.judges import Agreement
    from anoman_tui.report.scoreboard import Rater, ScoreRow

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
        Binding("r", "next_rater", "People / judge / both", id="scoreboard.rater"),
    ]

    def __init__(self, store: HistoryStore) -> None:
        super().__init__(id="scoreboard")
        self.store = store
        self.include_sighted = False
        self.rater: Rater = "human"
        self.rows: list[ScoreRow] = []
        self.agreement: Agreement | None = None

    def compose(self) -> ComposeResult:
        yield Label("Scoreboard", classes="screen-title")
        yield Label("reading the votes…", id="scoreboard-status", classes="usage-status")
        yield DataTable(zebra_stripes=True, cursor_type="row")
        yield Label("", id="scoreboard-agreement", classes="usage-status")
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

    def action_next_rater(self) -> None:
        from anoman_tui.report.scoreboard import RATERS

        self.rater = RATERS[(RATERS.index(self.rater) + 1) % len(RATERS)]
        self._load()

    def _load(self) -> None:
        self.run_worker(self._read(), exclusive=True, group="scoreboard", exit_on_error=False)

    async def _read(self) -> None:
        from anoman_tui.history import HistoryUnavailable
        from anoman_tui.report.scoreboard import (
            RATER_WORDS,
            agreement_line,
            agreement_of,
            build,
        )

        status = self.query_one("#scoreboard-status", Label)
        rater = self.rater

        def read() -> tuple[list[ScoreRow], Agreement]:
            rounds = self.store.voted_rounds(include_sighted=self.include_sighted)
            return (build(rounds, self.store.model_numbers(), rater=rater),
                    agreement_of(rounds))

        try:
            self.rows, agreement = await asyncio.to_thread(read)
        except HistoryUnavailable as exc:
            status.update(Text(f"Could not read the history: {exc.reason}", style="bold"))
            return
        table = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            table.add_row(*row_cells(row))
        votes = RATER_WORDS[rater]
        if self.include_sighted and rater != "judge":
            votes = votes.replace("blind votes", "blind and sighted votes")
        if self.rows:
            status.update(f"{len(self.rows)} models, best rating first · rated by {votes} "
                          "· s: blind / sighted · r: people / judge / both · rating: "
                          "Bradley–Terry, Elo scale, 95% bootstrap interval · ← → more "
                          "columns")
        elif rater == "judge":
            status.update("No judge verdicts yet: set [arena] judge in the config file; "
                          "the judge gives its verdict on each blind round after its "
                          "vote · r: people / judge / both")
        else:
            status.update(f"No {votes} yet: play a round in the arena (Ctrl+P → Arena "
                          "mode) or run `anoman-tui compare --blind`.")
        self.agreement = agreement
        self.query_one("#scoreboard-agreement", Label).update(agreement_line(agreement))
