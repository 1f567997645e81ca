"""A judged run in every report: the JSON's `judge`, `ratings` and `pairwise` keys, JUnit
read back by a real parser (a verdict per property, an undecided case an `<error>`), the
HTML page's ratings chart (hostile model names escaped, one HTML parser), the terminal
summary's judge lines, and `runs diff --json`'s judges."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest
from junitparser import Error, JUnitXml
from rich.console import Console

from anoman_tui.report.suite_diff import diff_json, diff_runs
from anoman_tui.report.suite_html import suite_html
from anoman_tui.report.suite_json import run_json
from anoman_tui.report.suite_junit import junit_xml
from anoman_tui.report.suite_terminal import print_summary
from anoman_tui.suites.model import Assertion, AssertionResult, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize
from tests.report.page import Page

HOSTILE = '<img src=x onerror=alert(1)>"m&'
MODELS = ("m-a", HOSTILE)
SUITE = Suite(name="judged", models=MODELS, judge="judge-m", pairwise=True,
              cases=(Case("c1", "Say hi", asserts=(Assertion("llm-rubric", "greets"),)),
                     Case("c2", "Say bye", asserts=(Assertion("llm-rubric", "waves"),))))


def _rubric(passed: bool | None, error: str | None = None) -> AssertionResult:
    if error is not None:
        return AssertionResult("llm-rubric", None, f"judge error: {error}", judge_error=error)
    return AssertionResult("llm-rubric", passed, "judge: pass true, score 0.9 ≥ 0.5",
                           judge_pass=passed, judge_score=0.9 if passed else 0.2,
                           judge_reason=f"because {HOSTILE}")


def _cells() -> list[CellResult]:
    return [
        CellResult("c1", "m-a", 1, "completed", True, (_rubric(True),), ttft_s=0.1,
                   judge_calls=1, judge_cost_usd=Decimal("0.0001")),
        CellResult("c1", HOSTILE, 1, "completed", False, (_rubric(False),), ttft_s=0.2,
                   judge_calls=1, judge_cost_usd=Decimal("0.0001")),
        CellResult("c2", "m-a", 1, "completed", True, (_rubric(True),), ttft_s=0.1,
                   judge_calls=1, judge_cost_usd=Decimal("0.0001")),
        CellResult("c2", HOSTILE, 1, "completed", None,
                   (_rubric(None, "the judge's reply has no JSON object"),), ttft_s=0.2,
                   judge_calls=1, judge_errors=1),
    ]


PAIRS = [
    {"case": "c1", "repeat": 1, "a": "m-a", "b": HOSTILE, "ab": "A", "ba": "B",
     "len_a": 30, "len_b": 10, "errors": [], "calls": 2, "cost_usd": "0.0002"},
    {"case": "c2", "repeat": 1, "a": "m-a", "b": HOSTILE, "ab": "A", "ba": "A",
     "len_a": 30, "len_b": 10, "errors": [], "calls": 2, "cost_usd": "0.0002"},
]


def test_the_json_carries_the_judge_its_ratings_and_every_verdict() -> None:
    cells = _cells()
    summary = summarize(MODELS, cells, judge="judge-m", pairwise=PAIRS)
    document = run_json(run_id="run-j", suite=SUITE, results=cells, summary=summary,
                        finished=True, stopped=None)
    judge = document["judge"]
    assert judge["model"] == "judge-m" and judge["self_judge"] is False
    assert (judge["calls"], judge["errors"]) == (4 + 4, 1)
    assert abs(judge["cost_usd"] - 0.0007) < 1e-12
    # c1: a won in both orders; c2: each order picked the answer shown first (a tie).
    assert judge["position_consistency"] == 0.5
    assert judge["first_position_wins"] == 0.75
    assert judge["longer_wins"] == 1.0  # m-a's answers are the longer ones
    ratings = document["ratings"]
    assert list(ratings) == list(MODELS)
    assert ratings["m-a"]["wins"] == 1 and ratings["m-a"]["ties"] == 1
    assert ratings["m-a"]["rating"] > ratings[HOSTILE]["rating"]
    assert [p["winner"] for p in document["pairwise"]] == ["a", "tie"]
    assert document["pairwise"][0]["cost_usd"] == 0.0002
    undecided = document["results"][3]
    assert undecided["pass"] is None
    assert undecided["assertions"][0]["judge_error"] == "the judge's reply has no JSON object"
    assert document["results"][0]["assertions"][0]["judge_score"] == 0.9


def test_junit_gives_each_verdict_and_an_undecided_case_as_an_error() -> None:
    data = junit_xml(suite=SUITE, results=_cells(), run_id="run-j")
    ET.fromstring(data)
    parsed = JUnitXml.fromstring(data.decode())
    cases = [case for suite in parsed for case in suite]
    assert len(cases) == 4
    errors = [case for case in cases if any(isinstance(r, Error) for r in case.result)]
    assert len(errors) == 1
    (error,) = [r for r in errors[0].result if isinstance(r, Error)]
    assert error.type == "judge_error" and "no JSON object" in (error.message or "")
    verdicts = [p.get("value") or "" for p in ET.fromstring(data).iter("property")
                if p.get("name") == "judge 1 llm-rubric"]
    assert len(verdicts) == 4
    assert verdicts[0] == f"pass true, score 0.9: because {HOSTILE}"  # text, escaped
    assert verdicts[3] == "judge error: the judge's reply has no JSON object"


def test_the_html_page_charts_the_ratings_and_escapes_every_name() -> None:
    cells = _cells()
    summary = summarize(MODELS, cells, judge="judge-m", pairwise=PAIRS)
    page = suite_html(suite=SUITE, results=cells, summary=summary, run_id="run-j",
                      created_at=1_765_000_000.0, finished=True, stopped=None)
    assert "<img src=x" not in page
    parsed = Page(page)
    text = "".join(parsed.text)
    assert "Judge ratings" in text and "position consistency: 50%" in text
    assert "first-position wins: 75%" in text
    assert "judge judge-m: 8 calls, 1 error" in text
    assert HOSTILE in text  # shown as text, never as a tag
    assert not parsed.named("img") and not parsed.named("script")
    labels = [attrs.get("aria-label") or "" for attrs in parsed.named("svg")]
    assert any("Judge ratings" in label for label in labels), labels


def test_the_summary_prints_the_judge_its_bias_and_a_self_judged_warning() -> None:
    cells = _cells()
    summary = summarize(MODELS, cells, judge="m-a", self_judge=True, pairwise=PAIRS)
    out = io.StringIO()
    print_summary(Console(file=out, width=200, highlight=False), suite=SUITE, results=cells,
                  summary=summary, run_id="run-j", finished=True, stopped=None)
    text = out.getvalue()
    assert "judge m-a: 8 calls, 1 error" in text
    assert "1 result undecided by its errors" in text
    assert "self-judged" in text
    assert "judge bias: position consistency 50%, first-position wins 75%" in text
    assert "Judge ratings" in text


def test_runs_diff_gives_each_runs_judge() -> None:
    cells = _cells()
    old = summarize(MODELS, cells, judge="judge-m", pairwise=PAIRS[:1])
    new = summarize(MODELS, cells, judge="judge-m", pairwise=PAIRS)
    document = diff_json(diff_runs(cells, cells, MODELS), (old, new))
    assert document["judge"]["old"]["calls"] == 6 and document["judge"]["new"]["calls"] == 8
    assert set(document["judge"]["new"]["ratings"]) == set(MODELS)
    plain = diff_json(diff_runs(cells, cells, MODELS))
    assert plain["judge"] is None


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_judged_summary_fits_the_width(width: int) -> None:
    cells = _cells()
    summary = summarize(MODELS, cells, judge="m-a", self_judge=True, pairwise=PAIRS)
    out = io.StringIO()
    print_summary(Console(file=out, width=width, highlight=False, soft_wrap=True),
                  suite=SUITE, results=cells, summary=summary, run_id="run-j",
                  finished=True, stopped=None)
    text = out.getvalue()
    assert all(len(line) <= width for line in text.splitlines()), text
    assert "…" not in text.split("Failed (")[0]
    for r in summary.ratings:  # each rating and its interval whole, on one line
        assert f"{r.rating:.0f}" in text
        assert f"{r.ci[0]:.0f} to {r.ci[1]:.0f}" in text, text
