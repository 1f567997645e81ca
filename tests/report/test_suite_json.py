"""`eval --json` and `runs --json`: the documents' keys as docs/suites.md names them, and values
taken from the run unchanged (hostile text included: JSON escapes it, nothing rewrites it)."""

from __future__ import annotations

import json
from decimal import Decimal

from anoman_tui.history.runs import RunListing
from anoman_tui.report.suite_json import run_json, runs_json
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

HOSTILE = '<script>alert(1)</script> "q" \\ \u2028 [red]x[/red]'
SUITE = Suite(name=HOSTILE, models=("m-a", "sim-b"), repeat=2, skipped=("python assert in t1",),
              cases=(Case("c1", "Say refund", asserts=(Assertion("icontains", "refund"),)),
                     Case("c2", "Anything")))


def _cells() -> list[CellResult]:
    ok = AssertionResult("icontains", True, "found 'refund'")
    bad = AssertionResult("icontains", False, "no 'refund' in the answer")
    return [
        CellResult("c1", "m-a", 1, "completed", True, (ok,), ttft_s=0.25, e2e_s=1.5,
                   output_tokens_per_s=80.0, cost=Cost(Decimal("0.000412"), "gateway"),
                   comparison_id=7, answer=HOSTILE),
        CellResult("c1", "m-a", 2, "stream_error", False, failure="STREAM INTERRUPTED",
                   comparison_id=8),
        CellResult("c1", "sim-b", 1, "completed", False, (bad,), ttft_s=0.5, e2e_s=2.0,
                   cost=Cost(Decimal("0.0001"), "estimate"), simulated=True, comparison_id=7),
        CellResult("c1", "sim-b", 2, "not_run"),
        CellResult("c2", "m-a", 1, "completed", None, ttft_s=0.3, comparison_id=9),
    ]


def _summary() -> RunSummary:
    a = ModelSummary("m-a", 3, 2, 1, 0.5, (0.09, 0.91), 0.25, 0.3, 80.0, 1.5, 1.5,
                     Decimal("0.000412"), False, Decimal("0.000412"), {"stream_error": 1}, 0,
                     0, False)
    b = ModelSummary("sim-b", 2, 1, 0, 0.0, (0.0, 0.79), 0.5, 0.5, None, 2.0, 2.0,
                     Decimal("0.0001"), True, None, {}, 1, 0, True)
    pair = PairSummary("m-a", "sim-b", 1, 1, 0, 1.0, 1.0, 1, -0.25, (-0.25, -0.25))
    return RunSummary((a, b), (pair,))


def test_the_document_has_every_key_issue_27_names() -> None:
    cells = _cells()
    doc = run_json(run_id="r1", suite=SUITE, results=cells, summary=_summary(),
                   finished=False, stopped="cost_limit", skipped=("transform in t2",))
    for key in ("run_id", "suite", "models", "repeat", "results", "summary", "pairs",
                "finished", "stopped", "skipped", "cases", "simulated"):
        assert key in doc, key
    assert doc["run_id"] == "r1" and doc["suite"] == HOSTILE
    assert doc["models"] == ["m-a", "sim-b"] and doc["repeat"] == 2 and doc["cases"] == 2
    assert doc["finished"] is False and doc["stopped"] == "cost_limit"
    assert doc["skipped"] == ["python assert in t1", "transform in t2"]
    assert doc["simulated"] == ["sim-b"]
    assert doc["user"] == ""  # not given: not known
    assert run_json(run_id="r1", suite=SUITE, results=cells, summary=_summary(),
                    finished=True, stopped=None, user="ann")["user"] == "ann"
    assert len(doc["results"]) == len(cells)
    for result in doc["results"]:
        for key in ("case", "model", "repeat", "status", "pass", "assertions", "metrics",
                    "cost_usd", "comparison_id"):
            assert key in result, key
        assert set(result["metrics"]) >= {"ttft_s", "e2e_s", "output_tokens_per_s"}
    first, failed, judged_fail, not_run, unjudged = doc["results"]
    assert first["pass"] is True and first["cost_usd"] == 0.000412
    assert first["assertions"] == [{"type": "icontains", "pass": True,
                                    "reason": "found 'refund'", "weight": 1.0}]
    assert failed["status"] == "stream_error" and failed["pass"] is False
    assert judged_fail["assertions"][0]["pass"] is False
    assert not_run["status"] == "not_run" and not_run["pass"] is None
    assert unjudged["pass"] is None and unjudged["comparison_id"] == 9
    summary = doc["summary"]
    assert list(summary) == ["m-a", "sim-b"]
    for figures in summary.values():
        for key in ("passed", "judged", "pass_rate", "pass_rate_ci", "ttft_p50_s",
                    "ttft_p95_s", "cost_usd", "failures"):
            assert key in figures, key
    assert summary["m-a"]["pass_rate_ci"] == [0.09, 0.91]
    assert summary["m-a"]["failures"] == {"stream_error": 1}
    (pair,) = doc["pairs"]
    assert {k: pair[k] for k in ("a", "b", "a_only", "b_only", "p_value", "p_value_holm",
                                 "ttft_diff_s", "ttft_diff_ci")} == {
        "a": "m-a", "b": "sim-b", "a_only": 1, "b_only": 0, "p_value": 1.0,
        "p_value_holm": 1.0, "ttft_diff_s": -0.25, "ttft_diff_ci": [-0.25, -0.25]}


def test_the_document_survives_json_unchanged() -> None:
    doc = run_json(run_id="r1", suite=SUITE, results=_cells(), summary=_summary(),
                   finished=True, stopped=None)
    text = json.dumps(doc, ensure_ascii=False)
    again = json.loads(text)
    assert again == doc
    assert again["suite"] == HOSTILE  # kept as written; escaping is JSON's own
    assert again["skipped"] == ["python assert in t1"]  # the suite's own, no duplicate
    # Each result carries its answer's text, hostile text kept as written.
    assert again["results"][0]["answer"] == HOSTILE
    assert [r["answer"] for r in again["results"]] == [c.answer for c in _cells()]


def test_runs_json_lists_each_run_with_its_keys() -> None:
    runs = [RunListing("r2", "support", 1_764_554_726.0, ["m-a", "sim-b"], 12, 10, 7, 2, 9,
                    False, "interrupted", user="ann"),
            RunListing("r1", HOSTILE, 0.0, ["m-a"], 3, 3, 3, 0, 3, True, None)]
    doc = runs_json(runs)
    assert json.loads(json.dumps(doc)) == doc
    assert [d["run_id"] for d in doc] == ["r2", "r1"]
    first = doc[0]
    assert first["suite"] == "support" and first["created_at"] == "2025-12-01T02:05:26Z"
    assert first["models"] == ["m-a", "sim-b"] and first["results"] == 10
    assert first["passed"] == 7 and first["finished"] is False
    assert first["stopped"] == "interrupted"
    assert first["user"] == "ann" and doc[1]["user"] == ""
    assert doc[1]["suite"] == HOSTILE and doc[1]["finished"] is True
    assert runs_json([]) == []
