"""The terminal summary of a suite run, the per-cell line and the list of runs: the
figures as the summary has them, estimates marked `~`, simulated models said, and model
or suite text never read as Rich markup nor passed to the terminal as control codes."""

from __future__ import annotations

import io
from dataclasses import dataclass
from decimal import Decimal

import pytest
from rich.console import Console

from anoman_tui.report.suite_terminal import print_runs, print_summary
from anoman_tui.report.suite_text import cell_line
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import (
    Assertion,
    AssertionResult,
    Case,
    CellResult,
    ModelSummary,
    PairSummary,
    RunSummary,
    Suite,
)

MARKUP = "[bold red]boom[/bold red]"
ESCAPE = "\x1b]52;c;cGF5bG9hZA==\x07\x1b[31m"
SUITE = Suite(name=f"support {MARKUP}", models=("m-a", "sim-b"), repeat=2,
              cases=(Case("refund", "Say refund", asserts=(Assertion("icontains", "refund"),)),
                     Case(f"c{MARKUP}", "Anything", asserts=(Assertion("contains", "x"),))))


def _cells() -> list[CellResult]:
    bad = AssertionResult("icontains", False, f"no 'refund' in {MARKUP}{ESCAPE}")
    return [
        CellResult("refund", "m-a", 1, "completed", True, ttft_s=0.41, e2e_s=1.2,
                   cost=Cost(Decimal("0.0012"), "gateway")),
        CellResult("refund", "m-a", 2, "completed", False, (bad,), ttft_s=0.5,
                   cost=Cost(Decimal("0.000038"), "estimate")),
        CellResult("refund", "sim-b", 1, "stream_error", False, simulated=True,
                   failure="STREAM INTERRUPTED after 7 tokens: partial answer not committed"),
        CellResult("refund", "sim-b", 2, "not_run", simulated=True),
        CellResult(f"c{MARKUP}", "m-a", 1, "completed", None, ttft_s=0.3, cache_hit=True),
    ] + [CellResult(f"f{i}", "m-a", 1, "completed", False, (bad,)) for i in range(25)]


def _summary() -> RunSummary:
    a = ModelSummary("m-a", 4, 2, 1, 0.5, (0.0945, 0.9055), 0.41, 0.5, 80.0, 1.2, 1.2,
                     Decimal("0.001238"), True, Decimal("0.001238"), {}, 0, 1, False)
    b = ModelSummary("sim-b", 2, 1, 0, 0.0, (0.0, 0.7935), None, None, None, None, None,
                     None, False, None, {"stream_error": 1}, 1, 0, True)
    pair = PairSummary("m-a", "sim-b", 1, 1, 0, 1.0, 1.0, 0, None, None)
    return RunSummary((a, b), (pair,))


def _printed(**overrides: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=220, force_terminal=False, color_system=None)
    args: dict[str, object] = dict(suite=SUITE, results=_cells(), summary=_summary(),
                                   run_id="r7", finished=True, stopped=None)
    args.update(overrides)
    print_summary(console, **args)  # type: ignore[arg-type]
    return out.getvalue()


def test_the_summary_shows_the_figures_of_the_summary() -> None:
    text = _printed()
    a_row = next(line for line in text.splitlines() if line.startswith("│ m-a"))
    for figure in ("1/2 50.0% [9.4–90.5%]", "0.41 s", "0.50 s", "80.0", "1.20 s",
                   "~$0.001238 (est.)"):
        assert figure in a_row, figure
    b_row = next(line for line in text.splitlines() if "sim-b (simulated)" in line)
    assert "0/1 0.0% [0.0–79.3%]" in b_row and "stream_error 1, not run 1" in b_row
    assert "simulated: sim-b answered from the local gateway's simulated models" in text
    pair_row = next(line for line in text.splitlines() if "m-a vs sim-b (simulated)" in line)
    cells = [c.strip() for c in pair_row.strip("│ ").split("│")]
    assert cells == ["m-a vs sim-b (simulated)", "1", "1", "0", "1 (Holm 1)", "—", "—"]
    assert "run r7: finished" in text


def test_failed_cells_are_listed_first_twenty_with_why() -> None:
    text = _printed()
    assert "Failed (27, first 20 shown):" in text
    assert "refund  m-a  #2  icontains: no 'refund' in [bold red]boom[/bold red]" in text
    assert "refund  sim-b (simulated)  #1  stream_error: STREAM INTERRUPTED after 7 tokens" in text
    assert "  f17  " in text and "  f18  " not in text  # 2 + 18 shown, then cut


def test_untrusted_text_is_neither_markup_nor_terminal_codes() -> None:
    text = _printed(skipped=(f"python assert {MARKUP}",))
    assert f"support {MARKUP}" in text
    assert f"skipped (unsupported): python assert {MARKUP}" in text
    assert "\x1b" not in text and "\x07" not in text


def test_a_stopped_run_says_how_to_continue() -> None:
    text = _printed(finished=False, stopped="cost limit reached")
    assert "run r7: stopped (cost limit reached). Continue it with `anoman-tui eval " \
           "--resume r7`." in text


def test_the_last_line_names_who_started_the_run() -> None:
    assert "run r7 by ann: finished. Reopen it with `anoman-tui runs show r7`." in \
        _printed(user="ann")
    assert f"run r7 by {MARKUP}: stopped (interrupted)." in _printed(
        user=MARKUP, finished=False, stopped="interrupted")


def test_cell_line_for_each_outcome() -> None:
    cells = _cells()
    assert cell_line(cells[0]) == "PASS   refund  m-a  #1  ttft 0.41 s  $0.0012"
    assert cell_line(cells[1]) == ("FAIL   refund  m-a  #2  ttft 0.50 s  ~$0.000038 (est.)  "
                                   f"icontains: no 'refund' in {MARKUP}")
    assert cell_line(cells[2]) == ("ERROR  refund  sim-b (simulated)  #1  —  stream_error: "
                                   "STREAM INTERRUPTED after 7 tokens: partial answer not "
                                   "committed")
    assert cell_line(cells[3]).startswith("SKIP   refund  sim-b (simulated)  #2  not run")
    assert cell_line(cells[4]) == f"DONE   c{MARKUP}  m-a  #1  ttft 0.30 s (cache hit)  —  " \
                                  "not judged"
    multiline = CellResult("a\nb", "m", 3, "completed", False,
                           (AssertionResult("regex", False, "no\nmatch"),), retries=2)
    assert cell_line(multiline) == "FAIL   a b  m  #3  ttft —  —  regex: no match  retried 2×"


@dataclass(frozen=True)
class Listing:
    run_id: str
    name: str
    created_at: float
    models: tuple[str, ...]
    results: int
    passed: int
    judged: int
    finished: bool
    stopped: str | None
    user: str = ""


def test_print_runs_lists_each_run() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_runs(console, [Listing("r2", MARKUP, 1_764_554_726.0, ("m-a", "sim-b"), 10, 7, 9,
                                 False, "interrupted", f"ann{MARKUP}"),
                         Listing("r1", "plain", 0.0, ("m-a",), 3, 0, 0, True, None)])
    text = out.getvalue()
    lines = text.splitlines()
    assert [cell.strip() for cell in lines[2].split("┃")][1:4] == ["run", "created (UTC)",
                                                                   "by"]
    row = next(line for line in lines if "r2" in line)
    for part in ("2025-12-01 02:05:26", f"ann{MARKUP}", MARKUP, "m-a, sim-b", "10", "7/9",
                 "stopped (interrupted)"):
        assert part in row, part
    old = next(line for line in lines if "r1" in line)
    assert "not judged" in old
    assert [cell.strip() for cell in old.split("│")][3] == "—"  # no author kept
    empty = io.StringIO()
    print_runs(Console(file=empty, width=100), [])
    assert "No suite runs yet" in empty.getvalue()


# --- laid out for the width there is ----------------------------------------------------

LONG = "openrouter:anthropic/claude-3.5-sonnet-20241022-with-a-very-long-deployment-name"
"""A model name longer than an 80-column line: folded, never cut."""


def _wide_summary() -> tuple[Suite, RunSummary]:
    suite = Suite(name="widths", models=("m-a", LONG), cases=SUITE.cases, repeat=2)
    a = ModelSummary("m-a", 40, 39, 37, 37 / 39, (0.8312, 0.9859), 0.412, 1.234, 87.6,
                     3.456, 12.345, Decimal("0.123456"), True, Decimal("0.003337"),
                     {"stream_error": 1}, 0, 0, False)
    b = ModelSummary(LONG, 40, 40, 12, 0.3, (0.1806, 0.4541), 10.25, 99.5, 1234.5, 100.125,
                     250.5, Decimal("12.5"), False, Decimal("1.041667"), {}, 0, 0, True)
    pair = PairSummary("m-a", LONG, 39, 25, 0, 5.96e-08, 5.96e-08, 38, -9.876,
                       (-12.5, -7.25))
    return suite, RunSummary((a, b), (pair,))


FIGURES = ("37/39", "94.9%", "[83.1–98.6%]", "0.41 s", "1.23 s", "87.6", "3.46 s",
           "12.35 s", "~$0.123456 (est.)", "~$0.003337 (est.)", "stream_error 1",
           "12/40", "30.0%", "[18.1–45.4%]", "10.25 s", "99.50 s", "1234.5", "100.12 s",
           "250.50 s", "$12.500000", "$1.041667", "5.96e-08 (Holm 5.96e-08)", "-9.876 s",
           "[-12.500, -7.250] s")


def _laid_out(width: int | None) -> str:
    """The summary at `width` columns, or as `output_console` lays it out piped."""
    out = io.StringIO()
    if width is None:
        import os
        from unittest import mock

        from anoman_tui.report.suite_terminal import output_console
        with mock.patch.dict(os.environ, clear=False) as env:
            env.pop("COLUMNS", None)
            console = output_console(out, soft_wrap=True)  # as eval makes it
    else:
        console = Console(file=out, width=width, color_system=None, soft_wrap=True)
    suite, summary = _wide_summary()
    print_summary(console, suite=suite, results=_cells()[:3], summary=summary, run_id="r9",
                  finished=True, stopped=None)
    return out.getvalue()


def _whole(text: str, figure: str) -> bool:
    """`figure` is in `text` on one line, not part of a longer number."""
    import re

    pattern = r"(?<![\w.])" + re.escape(figure) + r"(?![\w])"
    return any(re.search(pattern, line) for line in text.splitlines())


@pytest.mark.parametrize("width", [80, 100, 120, None])
def test_the_summary_fits_the_width_and_never_cuts_a_figure(width: int | None) -> None:
    text = _laid_out(width)
    limit = width or 80  # piped: a fixed 80 columns
    assert all(len(line) <= limit for line in text.splitlines()), text
    for figure in FIGURES:
        assert _whole(text, figure), (figure, text)
    # Nothing squeezed into an ellipsis; a long name folded over lines, whole.
    assert "…" not in text.split("Failed (")[0]
    assert LONG in "".join(line.strip() for line in text.splitlines())
    assert "m-a vs" in text


def test_a_wide_terminal_still_gets_the_tables() -> None:
    text = _laid_out(260)
    assert "┃ model" in text and "passed/judged [95% CI]" in text
    row = next(line for line in text.splitlines() if line.startswith("│ m-a "))
    assert "37/39 94.9% [83.1–98.6%]" in row


def test_piped_is_a_fixed_layout_whatever_the_terminal_size() -> None:
    assert _laid_out(None) == _laid_out(None)
    assert _laid_out(None) == _laid_out(80)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_runs_list_fits_the_width(width: int) -> None:
    out = io.StringIO()
    print_runs(Console(file=out, width=width, color_system=None),
               [Listing("run-20261207-025226-b203", "support answers", 1_764_554_726.0,
                        ("anoman-lite", "claude-sonnet-4-6", LONG), 1234, 1000, 1200,
                        False, "cost_limit", "ann")])
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines()), text
    for figure in ("run-20261207-025226-b203", "2025-12-01 02:05:26Z", "1234", "1000/1200",
                   "stopped (cost_limit)", "ann", "support answers"):
        assert _whole(text, figure), (figure, text)
    assert "…" not in text
