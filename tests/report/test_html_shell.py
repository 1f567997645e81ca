"""Every HTML report has one shell (`report.html_page`) and every chart one tick rule
(`report.axes`): the comparison page and a suite run's page share their head, palette
and escaping; the SVG charts and the terminal's pictures take their ticks from one
function. Each checked on a report built in-process, and by a scan of the sources so a
second shell or a second rule cannot come back unnoticed."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from anoman_tui.history import ComparisonRecord
from anoman_tui.report.axes import nice_step, nice_ticks
from anoman_tui.report.html import to_html
from anoman_tui.report.html_page import CSP, escape, html_page
from anoman_tui.report.suite_html import suite_html
from anoman_tui.suites.model import Case, CellResult, Suite
from anoman_tui.suites.summary import summarize
from tests.report.records import HOSTILE, pane

PACKAGE = Path(__file__).resolve().parents[2] / "anoman_tui"


def _head(page: str) -> str:
    """The page's head, its title taken out (each page names itself)."""
    head = page.split("</head>")[0]
    return re.sub(r"<title>.*?</title>", "<title></title>", head, flags=re.S)


def test_both_reports_wear_the_one_shell() -> None:
    record = ComparisonRecord(prompt=HOSTILE, panes=(pane(1, HOSTILE),), id=3, created_at=0.0)
    comparison = to_html(record)
    suite = Suite(name=HOSTILE, models=("m",), repeat=1, cases=(Case("c", "p"),))
    cells = [CellResult("c", "m", 1, "completed", None, ttft_s=0.2)]
    run = suite_html(suite=suite, results=cells, summary=summarize(suite.models, cells),
                     run_id="r1", created_at=0.0, finished=True, stopped=None)
    shell = html_page(title="", css="", body="")
    for page in (comparison, run):
        assert page.startswith(shell.split("<title>")[0]), page[:300]
        assert f'content="{CSP}"' in page and page.endswith("</body></html>\n")
        # The shared rules first, then the page's own.
        assert page.split("<style>")[1].startswith(shell.split("<style>")[1].split("</style>")[0])
    assert _head(comparison).split("<style>")[0] == _head(run).split("<style>")[0]
    assert escape(HOSTILE) in comparison and escape(HOSTILE) in run
    assert "<script>" not in comparison and "<script>" not in run


def test_no_other_module_writes_a_page_shell_or_escapes_html_itself() -> None:
    for path in sorted((PACKAGE / "report").glob("*.py")):
        if path.name == "html_page.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert "<!DOCTYPE" not in source and "html.escape(" not in source, path.name
        assert "http-equiv" not in source and "<style>" not in source, path.name


def test_no_other_module_has_a_tick_rule() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "axes.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert "def _nice_step" not in source and "def nice_step" not in source, path


@pytest.mark.parametrize(("span", "intervals", "step"), [
    (1.0, 4, 0.25), (1.0, 5, 0.2), (10.0, 4, 2.5), (7.0, 5, 2.0), (0.3, 3, 0.1),
    (900.0, 2, 500.0), (11.0, 1, 20.0)])
def test_a_step_is_one_two_two_and_a_half_or_five_times_a_power_of_ten(
        span: float, intervals: int, step: float) -> None:
    assert math.isclose(nice_step(span, intervals), step)


def test_ticks_span_the_figures_at_round_values_without_float_noise() -> None:
    ticks = nice_ticks(0.0, 0.63, 5)
    assert ticks.values == (0.0, 0.2, 0.4, 0.6, 0.8) and ticks.high == pytest.approx(0.8)
    around = nice_ticks(-0.033, 0.033, 5)
    assert around.values[0] <= -0.033 and around.values[-1] >= 0.033
    assert 0.0 in around.values and all(str(v) == repr(round(v, 6)) for v in around.values)
    fixed = nice_ticks(0.0, 100.0, 4, fix_low=True, fix_high=True)
    assert (fixed.low, fixed.high, fixed.values) == (0.0, 100.0, (0.0, 25.0, 50.0, 75.0, 100.0))
