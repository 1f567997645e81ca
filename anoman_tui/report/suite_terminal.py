"""A suite run on a terminal, with Rich: `print_summary` (what `eval` prints at its end,
and `runs show` again), `print_runs` (`anoman-tui runs`) and `print_diff` (`runs diff`)
write `report.suite_print`'s lines and tables onto a Rich console: in colour on a
terminal (`RichSink`), as plain text elsewhere (`text_layout.PlainSink`, the same
characters Rich would print there). Only the terminal's view imports this module:
`eval --json` never loads it.

May import: the standard library, Rich and the report's own modules. Never Textual.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from anoman_tui.report.suite_diff import RunDiff
from anoman_tui.report.suite_print import write_diff, write_runs, write_summary
from anoman_tui.report.suite_text import RunListingLike
from anoman_tui.report.text_layout import Grid, PlainSink, Sink, Span
from anoman_tui.suites.model import CellResult, RunSummary, Suite

PIPED_WIDTH = 80
"""The width a summary is laid out for off a terminal with no `COLUMNS` (a CI log)."""


def output_console(file: IO[str] | None = None, *, soft_wrap: bool = False) -> Console:
    """The console a summary is printed on: a terminal's width, else `COLUMNS` when set,
    else (piped, a CI log) a fixed `PIPED_WIDTH`, whatever terminal stdin or stderr is."""
    console = Console(file=file, highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console.width = PIPED_WIDTH
    return console


def rich_table(grid: Grid) -> Table:
    """The grid as a Rich table (the suite screen shows the summary's tables)."""
    table = Table(title=grid.title, title_justify="left", expand=False)
    for column in grid.columns:
        table.add_column(column.header, justify=column.justify,
                         no_wrap=column.overflow == "no_wrap",
                         overflow="fold" if column.overflow == "fold" else "ellipsis")
    for row in grid.rows:
        table.add_row(*(Text(span.text, style=span.style) for span in row))
    return table


class RichSink:
    """Lines and tables on a Rich console, in their styles."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @property
    def width(self) -> int:
        return self.console.width

    def line(self, span: Span | str, indent: int = 0) -> None:
        """Wrapped at the console's width whatever its `soft_wrap`: between words (a word
        longer than a line folded, never cut), indented, no trailing spaces."""
        text = Text(span) if isinstance(span, str) else Text(span.text, style=span.style)
        for line in text.wrap(self.console, max(1, self.console.width - indent),
                              overflow="fold"):
            line.rstrip()
            self.console.print(Text(" " * indent) + line, soft_wrap=True)

    def grid(self, grid: Grid) -> None:
        self.console.print(rich_table(grid), soft_wrap=False)

    def fits(self, grid: Grid) -> bool:
        natural = self.console.measure(
            rich_table(grid), options=self.console.options.update_width(100_000))
        return natural.maximum <= self.console.width


def sink_for(console: Console) -> Sink:
    """Colour on a terminal; plain text, Rich's characters without Rich, elsewhere."""
    if console.is_terminal:
        return RichSink(console)
    return PlainSink(console.file, console.width)


def print_summary(console: Console, *, suite: Suite, results: Sequence[CellResult],
                  summary: RunSummary, run_id: str, finished: bool, stopped: str | None,
                  skipped: Sequence[str] = (), user: str = "", saved: bool = True) -> None:
    """`suite_print.write_summary` on `console`."""
    write_summary(sink_for(console), suite=suite, results=results, summary=summary,
                  run_id=run_id, finished=finished, stopped=stopped, skipped=skipped,
                  user=user, saved=saved)


def print_runs(console: Console, listings: Sequence[RunListingLike]) -> None:
    """`suite_print.write_runs` on `console`."""
    write_runs(sink_for(console), listings)


def print_diff(console: Console, diff: RunDiff,
               judges: tuple[RunSummary | None, RunSummary | None] = (None, None)) -> None:
    """`suite_print.write_diff` on `console`."""
    write_diff(sink_for(console), diff, judges)
