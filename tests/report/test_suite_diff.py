"""`runs diff`: pass -> fail and fail -> pass matched on (case, repeat) per model, the
TTFT and cost changes with their intervals, models of one run only, and the JSON keys."""

from __future__ import annotations

import io
import json
import statistics
from decimal import Decimal

import pytest
from rich.console import Console

from anoman_tui.report.suite_diff import diff_json, diff_runs
from anoman_tui.report.suite_terminal import print_diff
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import CellResult
from anoman_tui.suites.stats import paired_bootstrap_ci


def cell(case: str, model: str, repeat: int, passed: bool | None, ttft: float | None = 0.5,
         usd: str | None = "0.001", status: str = "completed", source: str = "gateway",
         cache_hit: bool = False) -> CellResult:
    cost = Cost(Decimal(usd), source) if usd is not None else Cost()  # type: ignore[arg-type]
    return CellResult(case, model, repeat, status, passed, ttft_s=ttft, cost=cost,
                      cache_hit=cache_hit)


def _runs() -> tuple[list[CellResult], list[CellResult]]:
    old = [cell("c1", "a", 1, True, 0.5, "0.0010"), cell("c1", "a", 2, True, 0.6, "0.0010"),
           cell("c2", "a", 1, False, 0.4, "0.0020"), cell("c3", "a", 1, None, 0.3, None),
           cell("c4", "a", 1, True, 0.7, "0.0010"),  # missing from the new run
           cell("c1", "gone", 1, True)]
    new = [cell("c1", "a", 1, False, 0.4, "0.0012"),  # regression
           cell("c1", "a", 2, True, 0.3, "0.0011", cache_hit=True),  # not timed
           cell("c2", "a", 1, True, 0.6, "0.0015", source="estimate"),  # improvement
           cell("c3", "a", 1, None, 0.2, "0.0009"),  # unjudged; old cost unknown
           cell("c5", "a", 1, False, 0.2),  # new case, unmatched
           cell("c1", "fresh", 1, True)]
    return old, new


def test_regressions_improvements_and_the_changes() -> None:
    old, new = _runs()
    diff = diff_runs(old, new, ["a", "gone", "fresh"])
    assert diff.regressed
    assert [(c.case, c.model, c.repeat) for c in diff.regressions] == [("c1", "a", 1)]
    assert [(c.case, c.model, c.repeat) for c in diff.improvements] == [("c2", "a", 1)]
    assert diff.only_in_old == ("gone",) and diff.only_in_new == ("fresh",)
    (a,) = diff.models
    assert a.matched == 4 and a.judged == 3
    ttft = [0.4 - 0.5, 0.6 - 0.4, 0.2 - 0.3]  # c1#2 left out: a cache hit
    assert a.ttft_pairs == 3 and a.ttft_diff_s == statistics.median(ttft)
    assert a.ttft_diff_ci == paired_bootstrap_ci(ttft, "median")
    costs = [0.0012 - 0.0010, 0.0011 - 0.0010, 0.0015 - 0.0020]
    assert a.cost_pairs == 3
    assert a.cost_diff_usd is not None and abs(a.cost_diff_usd - statistics.fmean(costs)) < 1e-12
    expected = paired_bootstrap_ci(costs, "mean")
    assert a.cost_diff_ci is not None and expected is not None
    assert a.cost_diff_ci == pytest.approx(expected, abs=1e-15)
    assert a.cost_old_usd == Decimal("0.0040") and a.cost_new_usd == Decimal("0.0038")
    assert a.cost_estimated


def test_json_keys() -> None:
    old, new = _runs()
    doc = diff_json(diff_runs(old, new, ["a"]))
    assert json.loads(json.dumps(doc)) == doc
    assert doc["regressed"] is True
    assert doc["regressions"] == [{"case": "c1", "model": "a", "repeat": 1}]
    assert doc["improvements"] == [{"case": "c2", "model": "a", "repeat": 1}]
    assert list(doc["models"]) == ["a"]
    figures = doc["models"]["a"]
    for key in ("ttft_diff_s", "ttft_diff_ci", "cost_diff_usd", "cost_diff_ci", "matched"):
        assert key in figures, key
    assert figures["matched"] == 4 and len(figures["ttft_diff_ci"]) == 2
    assert doc["only_in_old"] == ["gone"] and doc["only_in_new"] == ["fresh"]


def test_no_regression_and_a_failed_stream_is_a_fail() -> None:
    old = [cell("c1", "a", 1, False, None, None, status="stream_error"),
           cell("c2", "a", 1, True)]
    new = [cell("c1", "a", 1, True), cell("c2", "a", 1, False, None, None,
                                          status="http_error")]
    diff = diff_runs(old, new, ["a"])
    assert diff.regressed and len(diff.improvements) == 1
    (a,) = diff.models
    assert a.ttft_pairs == 0 and a.ttft_diff_s is None and a.ttft_diff_ci is None
    same = diff_runs(new, new, ["a"])
    assert not same.regressed and not same.improvements
    assert same.models[0].ttft_diff_s == 0.0 and same.models[0].cost_diff_usd == 0.0


def test_print_diff() -> None:
    old, new = _runs()
    out = io.StringIO()
    print_diff(Console(file=out, width=220, color_system=None), diff_runs(old, new, ["a"]))
    text = out.getvalue()
    row = next(line for line in text.splitlines() if line.startswith("│ a "))
    assert "-0.100 s" in row and "~$0.004000 (est.) → ~$0.003800 (est.)" in row
    assert "Regressions (pass → fail): 1" in text and "  c1  a  #1" in text
    assert "Improvements (fail → pass): 1" in text
    assert "only in the old run: gone" in text and "only in the new run: fresh" in text
    assert "regressed: 1 case(s) went pass → fail" in text
    quiet = io.StringIO()
    print_diff(Console(file=quiet, width=200), diff_runs(new, new, ["a"]))
    assert "no regression" in quiet.getvalue()


def test_cases_are_matched_by_id_and_what_they_ask_and_check() -> None:
    from anoman_tui.report.suite_diff import match_cases
    from anoman_tui.suites.model import Assertion, Case, Suite

    old = (Case("c1", "Say hi", asserts=(Assertion("icontains", "hi"),)),
           Case("c2", "Say bye", asserts=(Assertion("icontains", "bye"),)),
           Case("c3", "Count", asserts=(Assertion("regex", "[0-9]"),), threshold=0.5),
           Case("c4", "Gone"))
    new = (Case("c1", "Say hi", asserts=(Assertion("icontains", "hi"),)),
           Case("c2", "Say goodbye", asserts=(Assertion("icontains", "bye"),)),
           Case("c3", "Count", asserts=(Assertion("regex", "[0-9]", weight=2.0),),
                threshold=0.5),
           Case("c5", "New"))
    cases = match_cases(old, new)
    assert cases.same == {"c1"}
    assert [(c.case, c.what) for c in cases.changed] == [("c2", ("prompt",)),
                                                        ("c3", ("assertions",))]
    assert cases.only_in_old == ("c4",) and cases.only_in_new == ("c5",)
    # A run saved long ago keeps its suite as it was then: read back, it matches alike.
    stored = {"name": "s", "models": ["a"], "cases": [
        {"id": "c1", "prompt": "Say hi", "assert": [{"type": "icontains", "value": "hi"}]}]}
    assert match_cases(Suite.from_json(stored).cases, new).same == {"c1"}

    # Cells of changed cases count neither way: c2 went pass -> fail, c3 fail -> pass.
    old_cells = [cell("c1", "a", 1, True), cell("c2", "a", 1, True), cell("c3", "a", 1, False)]
    new_cells = [cell("c1", "a", 1, True), cell("c2", "a", 1, False), cell("c3", "a", 1, True)]
    diff = diff_runs(old_cells, new_cells, ["a"], cases)
    assert not diff.regressed and not diff.improvements
    assert diff.models[0].matched == 1 and diff.models[0].ttft_pairs == 1
    doc = diff_json(diff)
    assert doc["changed"] == [{"case": "c2", "changed": ["prompt"]},
                              {"case": "c3", "changed": ["assertions"]}]
    assert doc["compared_cases"] == 1
    assert doc["cases_only_in_old"] == ["c4"] and doc["cases_only_in_new"] == ["c5"]
    # Without the suites (as before), the same cells are a regression and an improvement.
    assert diff_runs(old_cells, new_cells, ["a"]).regressed


@pytest.mark.parametrize("width", [80, 100, 120])
def test_print_diff_fits_the_width(width: int) -> None:
    old, new = _runs()
    out = io.StringIO()
    print_diff(Console(file=out, width=width, color_system=None, soft_wrap=True),
               diff_runs(old, new, ["a"]))
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines()), text
    assert "…" not in text
    for figure in ("-0.100 s", "~$0.004000 (est.) → ~$0.003800 (est.)", "matched 4"):
        assert figure in text, (figure, text)
