"""A suite run as `eval --json` (and `runs show --json`) gives it, and the list of runs
`runs --json` gives: plain dicts for `json.dumps`, keys as docs/suites.md names them.

The results, per-model summary and pairs are the model's own `to_json`
(anoman_tui/suites/model.py); this module adds the run around them.

May import: the standard library, `anoman_tui.suites.model` and the report's own
`suite_text` (the run listing's shape, dates as every report writes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anoman_tui.report.suite_text import RunListingLike, created_iso
from anoman_tui.suites.model import CellResult, RunSummary, Suite

PAIRWISE_KEYS = ("case", "repeat", "a", "b", "ab", "ba", "winner", "len_a", "len_b", "errors",
                 "calls", "cost_usd")
"""A pairwise verdict as `--json` gives it (docs/judges.md)."""


def _pair_json(row: dict[str, Any]) -> dict[str, Any]:
    data = {k: row.get(k) for k in PAIRWISE_KEYS}
    cost = data["cost_usd"]
    data["cost_usd"] = None if cost is None else float(cost)
    return data


def simulated_models(suite: Suite, results: Sequence[CellResult],
                     summary: RunSummary) -> list[str]:
    """The suite's models whose answers were simulated (the local gateway's), in the
    suite's order; a model a result or the summary says is simulated counts."""
    flagged = {m.model for m in summary.models if m.simulated}
    flagged |= {c.model for c in results if c.simulated}
    ordered = [m for m in suite.models if m in flagged]
    return ordered + sorted(flagged - set(ordered))


def run_json(*, run_id: str, suite: Suite, results: Sequence[CellResult],
             summary: RunSummary, finished: bool, stopped: str | None,
             skipped: Sequence[str] = (), user: str = "") -> dict[str, Any]:
    """The `eval --json` document: the run, who started it (`user`), one result per
    (case, model, repeat) with its `answer` text, the per-model `summary` and the
    `pairs`."""
    figures = summary.to_json()
    return {
        "run_id": run_id,
        "user": user,
        "suite": suite.name,
        "path": suite.path,
        "models": list(suite.models),
        "repeat": suite.repeat,
        "cases": len(suite.cases),
        "finished": finished,
        "stopped": stopped,
        "skipped": list(dict.fromkeys([*suite.skipped, *skipped])),
        "simulated": simulated_models(suite, results, summary),
        "results": [{**cell.to_json(), "answer": cell.answer} for cell in results],
        "summary": figures["summary"],
        "pairs": figures["pairs"],
        "judge": None if summary.judge is None else summary.judge.to_json(),
        "ratings": {r.model: r.to_json() for r in summary.ratings},
        "pairwise": [_pair_json(row) for row in summary.pairwise],
    }


def runs_json(listings: Sequence[RunListingLike]) -> list[dict[str, Any]]:
    """`runs --json`: one object per stored suite run, in the order given."""
    return [
        {
            "run_id": run.run_id,
            "suite": run.name,
            "created_at": created_iso(run.created_at),
            "models": list(run.models),
            "results": run.results,
            "passed": run.passed,
            "judged": run.judged,
            "finished": run.finished,
            "stopped": run.stopped,
            "user": run.user,
        }
        for run in listings
    ]
