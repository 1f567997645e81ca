"""The scoreboard screen: what `anoman-tui scoreboard` prints, as a table in the app.

Read in a thread (`report.scoreboard.build` over the history's votes and numbers); `s`
switches between blind votes only and blind and sighted ones, `r` between people's votes,
the arena judge's verdicts and both. Under the table, the ratings as a picture: each
model's rating (●) and its 95% interval (├──┤) on one axis, with the figures in words
beside them (`RatingChart`, `anoman_tui.ui.render.charts.interval_chart`, drawn again at
the widget's width on every resize and whenever the rows change); then how far people
and the judge agree on the rounds both rated; then what was left out of the figures and
why (answers under a demo scenario, refused for their request, cache hits). Esc goes back.

Every line of words is plain text, never markup: `[arena] judge` is shown as written.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Label

from anoman_tui.ui.render.charts import ChartStyle, IntervalRow, interval_chart
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


def _rating(value: float) -> str:
    return f"{value:.0f}"  # as the table's "rating (95% CI)" column writes it


class RatingChart(Widget):
    """Each model's rating and its 95% bootstrap interval on one shared axis, best first,
    with `1043 [1012–1071]` beside each; hidden while there are no rows. The theme's
    colours come in through the component classes (the point in `$accent`, the interval
    in `$primary`, the axis in `$text-muted`); "(simulated)" is written out, in
    `SIMULATED_STYLE` as in the table."""

    COMPONENT_CLASSES = {"rating-chart--point", "rating-chart--interval",
                         "rating-chart--axis", "rating-chart--muted"}
    DEFAULT_CSS = """
    RatingChart {
        height: auto;
        padding: 0 1;
        display: none;
    }
    RatingChart > .rating-chart--point { color: $accent; text-style: bold; }
    RatingChart > .rating-chart--interval { color: $primary; }
    RatingChart > .rating-chart--axis { color: $text-muted; }
    RatingChart > .rating-chart--muted { color: $text-muted; }
    """

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.rows: list[IntervalRow] = []

    def show(self, rows: list[ScoreRow]) -> None:
        self.rows = [IntervalRow(r.model, r.rating, r.ci_low, r.ci_high, r.simulated)
                     for r in rows]
        self.display = bool(self.rows)
        self.refresh(layout=True)  # as many lines as rows (more when narrow)

    def chart(self, width: int) -> Text:
        style = ChartStyle(
            point=self.get_component_rich_style("rating-chart--point"),
            interval=self.get_component_rich_style("rating-chart--interval"),
            axis=self.get_component_rich_style("rating-chart--axis"),
            label="",
            muted=self.get_component_rich_style("rating-chart--muted"),
            simulated=SIMULATED_STYLE,
        )
        return interval_chart(self.rows, max(1, width), fmt=_rating, style=style)

    def render(self) -> Text:
        return self.chart(self.content_size.width) if self.rows else Text()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # The line count depends on the width the chart is drawn at: a narrow one puts
        # each row's picture under its label.
        return len(self.chart(width).plain.split("\n")) if self.rows else 0

    def plain(self) -> str:
        """The picture as shown, plain (tests)."""
        return self.chart(self.content_size.width).plain if self.rows else ""


class ScoreboardScreen(Screen[None]):
    """Per model, best rating first: the votes' verdict beside the history's numbers."""

    DEFAULT_CSS = """
    ScoreboardScreen #scoreboard-chart-box {
        height: auto;
        max-height: 50%;
    }
    """

    # Short labels: with the app's keys they fit 80 columns whole (the status line says
    # what s and r switch between); narrower, r and then s give way, never a cut word.
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="scoreboard.back"),
        Binding("s", "toggle_sighted", "Blind/all", id="scoreboard.sighted"),
        Binding("r", "next_rater", "Rated by", id="scoreboard.rater"),
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
        # At most half the screen: with many models the picture scrolls, the table stays.
        with VerticalScroll(id="scoreboard-chart-box", can_focus=False):
            yield RatingChart(id="scoreboard-chart")
        yield Label("", id="scoreboard-agreement", classes="usage-status")
        yield Label("", id="scoreboard-left-out", classes="usage-status")
        yield KeyBar(shed=("next_rater", "toggle_sighted"))

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
            left_out_lines,
            votes_left_out,
        )

        status = self.query_one("#scoreboard-status", Label)
        rater = self.rater

        def read() -> tuple[list[ScoreRow], Agreement, list[str]]:
            rounds = self.store.voted_rounds(include_sighted=self.include_sighted)
            return (build(rounds, self.store.model_numbers(), rater=rater),
                    agreement_of(rounds),
                    left_out_lines(self.store.left_out(), votes_left_out(rounds, rater)))

        try:
            self.rows, agreement, left_out = await asyncio.to_thread(read)
        except HistoryUnavailable as exc:
            status.update(Text(f"Could not read the history: {exc.reason}", style="bold"))
            return
        table = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            table.add_row(*row_cells(row))
        self.query_one(RatingChart).show(self.rows)
        votes = RATER_WORDS[rater]
        if self.include_sighted and rater != "judge":
            votes = votes.replace("blind votes", "blind and sighted votes")
        if self.rows:
            said = (f"{len(self.rows)} models, best rating first · rated by {votes} "
                    "· s: blind / sighted · r: people / judge / both · rating: "
                    "Bradley–Terry, Elo scale, 95% bootstrap interval · ← → more columns")
        elif rater == "judge":
            said = ("No judge verdicts yet: set [arena] judge in the config file; the judge "
                    "gives its verdict on each blind round after its vote · r: people / "
                    "judge / both")
        else:
            said = (f"No {votes} yet: play a round in the arena (Ctrl+P → Arena mode) or "
                    "run `anoman-tui compare --blind`.")
        status.update(Text(said))  # (a str would be read as markup: "[arena]" eaten)
        self.agreement = agreement
        self.query_one("#scoreboard-agreement", Label).update(Text(agreement_line(agreement)))
        left = self.query_one("#scoreboard-left-out", Label)
        left.update(Text(" ".join(left_out)))
        left.display = bool(left_out)
