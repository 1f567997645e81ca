"""The comparison as the `anoman-tui compare --json` document, plus its history id and time.

The keys are those of `compare --json` (`prompt`, `endpoint`, `panels` with `panel`,
`model`, `status`, `text`, `committed`, `finish_reason`, `failure`, `usage`, `anoman`,
`metrics`): a script that reads one reads the other.
"""

from __future__ import annotations

from typing import Any

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.report import facts


def _metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    out = dict(metrics)
    rate = out.get("output_tokens_per_s")
    if isinstance(rate, float):
        out["output_tokens_per_s"] = round(rate, 2)  # as `compare --json` gives it
    return out


def pane_json(pane: PaneRecord) -> dict[str, Any]:
    return {
        "panel": pane.pane,
        "model": pane.model,
        "status": pane.status,
        "text": pane.text,
        "committed": pane.committed,
        "finish_reason": pane.finish_reason,
        # As `compare --json` has it: the history also keeps the failure's raw `detail`.
        "failure": {k: v for k, v in pane.failure.items() if k != "detail"}
        if isinstance(pane.failure, dict) else pane.failure,
        "usage": pane.usage,
        "anoman": pane.anoman,
        "metrics": _metrics(pane.metrics),
    }


def to_json(record: ComparisonRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "created_at": facts.created_iso(record),
        "prompt": record.prompt,
        # One endpoint format per comparison: every pane was sent the same way.
        "endpoint": record.panes[0].endpoint if record.panes else None,
        "panels": [pane_json(p) for p in record.panes],
    }
