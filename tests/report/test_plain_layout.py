"""The plain text a report is laid out in without a terminal renderer
(`report.text_layout`) is what Rich prints off a terminal, to the character: wrapped
lines, tables at their natural width, and so a suite run's whole summary, list of runs
and diff at every width (`PlainSink` beside `RichSink` on a plain console)."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from anoman_tui.report.suite_diff import diff_runs
from anoman_tui.report.suite_print import write_diff, write_runs, write_summary
from anoman_tui.report.suite_terminal import RichSink
from anoman_tui.report.text_layout import Column, Grid, PlainSink, Sink, Span, rows, wrap
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import Assertion, AssertionResult, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize

WORDS = st.text(alphabet=st.sampled_from("ab xyz—→×é漢字  \n9.%[]"), max_size=120)


def _console(width: int) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, force_terminal=False, color_system=None,
                   highlight=False), out


@settings(max_examples=120, deadline=None)
@given(text=WORDS, width=st.integers(1, 50), indent=st.integers(0, 6))
def test_a_line_wraps_as_rich_wraps_it(text: str, width: int, indent: int) -> None:
    console, out = _console(width + indent)
    RichSink(console).line(Span(text), indent)
    assert "".join(" " * indent + line + "\n" for line in wrap(text, width)) == out.getvalue()


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.lists(st.text(alphabet="ab c—漢→.9", max_size=14), min_size=3,
                               max_size=3), max_size=4),
       title=st.text(alphabet="Tt le—漢", max_size=60))
def test_a_table_is_drawn_as_rich_draws_it(cells: list[list[str]], title: str) -> None:
    grid = Grid(title, (Column("model"), Column("passed", "right"), Column("x", "right")),
                rows(*cells))
    console, out = _console(400)
    rich = RichSink(console)
    plain_out = io.StringIO()
    plain = PlainSink(plain_out, 400)
    assert rich.fits(grid) and plain.fits(grid)
    for width in range(10, 80, 17):  # where the natural width ends, both agree
        assert RichSink(_console(width)[0]).fits(grid) == PlainSink(io.StringIO(), width).fits(
            grid), width
    rich.grid(grid)
    plain.grid(grid)
    assert plain_out.getvalue() == out.getvalue()


def _run() -> tuple[Suite, list[CellResult]]:
    suite = Suite(name="support [bold]x[/bold] 漢字 " + "long " * 12, models=(
        "anoman-lite", "claude-sonnet-4-6-with-a-very-long-name-indeed"), repeat=2,
        cases=(Case("refund", "p", asserts=(Assertion("icontains", "refund"),)),
               Case("漢字-case", "p", asserts=(Assertion("icontains", "x"),))))
    bad = AssertionResult("icontains", False, "no 'refund' in the answer " * 6)
    cells = []
    for model in suite.models:
        for repeat in (1, 2):
            cells.append(CellResult("refund", model, repeat, "completed", repeat == 1,
                                    (bad,) if repeat == 2 else (), ttft_s=0.1 * repeat,
                                    e2e_s=0.5, output_tokens_per_s=80.0,
                                    cost=Cost(Decimal("0.00012"), "gateway"),
                                    simulated=model == "anoman-lite"))
            cells.append(CellResult("漢字-case", model, repeat, "stream_error", False,
                                    failure="STREAM INTERRUPTED after 7 tokens"))
    return suite, cells


def _both(width: int, write: object) -> tuple[str, str]:
    console, out = _console(width)
    plain = io.StringIO()
    sinks: tuple[Sink, Sink] = (RichSink(console), PlainSink(plain, width))
    for sink in sinks:
        write(sink)  # type: ignore[operator]
    return plain.getvalue(), out.getvalue()


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120, 160, 240])
def test_the_summary_runs_and_diff_read_the_same_with_or_without_rich(width: int) -> None:
    suite, cells = _run()
    summary = summarize(suite.models, cells)
    older = [CellResult(c.case, c.model, c.repeat, c.status, True, ttft_s=0.2,
                        cost=Cost(Decimal("0.0001"), "gateway")) for c in cells]
    diff = diff_runs(older, cells, [*suite.models, "only-old"])

    class Listing:
        run_id, name, created_at = "run-1", suite.name, 0.0
        models, results, passed, judged = suite.models, 8, 2, 8
        finished, stopped, user = False, "interrupted", "someone"

    for write in (
            lambda sink: write_summary(sink, suite=suite, results=cells, summary=summary,
                                       run_id="r1", finished=False, stopped="cost_limit",
                                       skipped=("a promptfoo option",), user="me"),
            lambda sink: write_runs(sink, [Listing(), Listing()]),
            lambda sink: write_diff(sink, diff)):
        plain, rich = _both(width, write)
        assert plain == rich, width
