"""A pane record as JSON: the one form, for every file that keeps a pane whole.

The portable file (`anoman-tui export ID --format recording`, read back by `anoman-tui
import`) and the pending-writes spool both write a pane with `pane_json`, so a pane has
one set of keys wherever it is kept (docs/recording-format.md describes them). The
server's own price of an answer is `provider_cost_usd`, as in every JSON document the
commands print; spools written before there was one form called it `provider_cost`, and
`provider_cost_raw` still reads that spelling (reading accepts both, writing makes one).

The `compare --json` / `export --format json` panel (`anoman_tui.report.json_report`) is
a different document, a view of a pane for people and scripts; it uses the same name
for the same figure.

May import: the standard library, `anoman_tui.streaming`, `anoman_tui.streaming.safe_text`, the
rest of `anoman_tui.history`.
"""

from __future__ import annotations

from typing import Any

from anoman_tui.history.model import PaneRecord
from anoman_tui.streaming.recording import StreamRecording
from anoman_tui.streaming.safe_text import redact_url

PROVIDER_COST_KEY = "provider_cost_usd"
"""The key of the server's own price of an answer, in every JSON form of a pane."""
_OLD_PROVIDER_COST_KEY = "provider_cost"


def pane_json(p: PaneRecord, *, recording: StreamRecording | None) -> dict[str, Any]:
    """The pane as JSON, with `recording` as its recording (the pane's own, or a copy
    with keys masked for a file someone else will read)."""
    return {
        "pane": p.pane,
        "model": p.model,
        "target": p.target,
        "base_url": redact_url(p.base_url),  # never a URL's password
        "endpoint": p.endpoint,
        "temperature": p.temperature,
        "max_tokens": p.max_tokens,
        "scenario": p.scenario,
        "status": p.status,
        "committed": p.committed,
        "text": p.text,
        "reasoning": p.reasoning,
        "finish_reason": p.finish_reason,
        "failure": p.failure,
        "usage": p.usage,
        "anoman": p.anoman,
        "metrics": p.metrics,
        "rate_series": list(p.rate_series),
        # The value, and as shown for readers of files written before it (ignored on read
        # when `cost` is there).
        "cost": p.cost.to_json(),
        "cost_text": p.cost.shown(),
        PROVIDER_COST_KEY: None if p.provider_cost is None else str(p.provider_cost),
        "simulated": p.simulated,
        "conversation": None if p.conversation is None else [list(t) for t in p.conversation],
        "label": p.label,
        "recording": None if recording is None else recording.to_json(),
    }


def provider_cost_raw(d: dict[str, Any]) -> Any:
    """The pane's provider cost as written (a decimal string or None), under its key or
    the spelling older spools used."""
    if PROVIDER_COST_KEY in d:
        return d[PROVIDER_COST_KEY]
    return d.get(_OLD_PROVIDER_COST_KEY)
