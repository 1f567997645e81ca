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

if TYPE_CHECKING:
    from anoman_tui.history import HistoryStore
    from anoman_tui.report.scoreboard import ScoreRow

COLUMNS = ("model", "rating (95% CI)", "rounds", "W/T/L", "win rate", "TTFT p50/p95",
           "tok/s p50", "cost/answer", "cost/win", "failures")


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:.6f}"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def row_cells(row: ScoreRow) -> tuple[Text | str, ...]:
    from anoman_tui.report.scoreboard import FAILURE_WORDS

    failures = ", ".join(f"{FAILURE_WORDS[k]} {v:.0%}" for k, v in row.failure_rates.items()
                         if v) or "none"
    name = Text(row.model, style="bold")
    if row.unstable:
        name.append(" (few rounds)", style="dim italic")
    return (name, f"{row.rating:.0f} ({row.ci_low:.0f}–{row.ci_high:.0f})", str(row.rounds),
            f"{row.wins}/{row.ties}/{row.losses}", f"{row.win_rate:.0%}",
            f"{_seconds(row.ttft_p50)} / {_seconds(row.ttft_p95)}",
            "—" if row.rate_p50 is None else f"{row.rate_p50:.1f}", _money(row.mean_cost),
            _money(row.cost_per_win), failures)


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
        table = self.query_one(DataTable)
        for column in COLUMNS:
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
