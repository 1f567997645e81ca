"""A comparison as JSON: the one serializer of a panel, for every document that has one.

`anoman-tui compare --json`, `anoman-tui export ID --format json` and
`anoman-tui compare --replay ID --json` all write their panels with `panel_json`, so
the same pane gives the same keys in each (`PANEL_KEYS`): `panel`, `model`, `target`,
`endpoint`, `simulated`, `status`, `conversation` (the pane's own earlier turns), `text`,
`committed`, `finish_reason`, `failure`, `usage`, `anoman`, `provider_cost_usd`,
`metrics`. A replay adds only `recorded` (what was measured live), a rerun only
`vs_original`. A blind round not voted on yet leaves out all that names or prices a
model (`BLIND_HIDDEN`) and is named by its label.

May import: the history's records and the report's own modules; never Rich or Textual.
"""

from __future__ import annotations

from typing import Any

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.report import facts
from anoman_tui.report.rerun import rerun_deltas

PANEL_KEYS = ("panel", "model", "target", "endpoint", "simulated", "status", "conversation",
              "text", "committed", "finish_reason", "failure", "usage", "anoman",
              "provider_cost_usd", "metrics")
BLIND_HIDDEN = ("model", "target", "endpoint", "anoman", "provider_cost_usd")
"""What a blind round's panel leaves out: all that names or prices a model."""
# Where a failure says how to reach a server (a route, a key's variable): it can name one.
_BLIND_FAILURE_HIDDEN = ("route", "key_env", "detail")


def metrics_json(metrics: dict[str, Any]) -> dict[str, Any]:
    """A pane's metrics as every JSON document gives them."""
    out = dict(metrics)
    rate = out.get("output_tokens_per_s")
    if isinstance(rate, float):
        out["output_tokens_per_s"] = round(rate, 2)  # the history keeps 4 places
    return out


def panel_json(pane: PaneRecord, *, blind: bool = False,
               conversation: tuple[tuple[str, str], ...] | None = None) -> dict[str, Any]:
    """One pane as every JSON document gives it. `blind`: a blind round's, before its
    vote (pass the record's `masked()` pane: its failure already names the label).
    `conversation`: the turns it sent before the prompt, when the pane does not hold
    its own (`facts.conversation`)."""
    if conversation is None:
        conversation = pane.conversation or ()
    failure = pane.failure if isinstance(pane.failure, dict) else None
    hidden_in_failure = _BLIND_FAILURE_HIDDEN if blind else ("detail",)
    panel: dict[str, Any] = {
        "panel": pane.label if blind else pane.pane,
        "model": pane.model,
        "target": pane.target,
        "endpoint": pane.endpoint,  # each pane's own (a [[panes]] table may set it)
        # The server said the model is simulated (the local gateway's): not the real one.
        "simulated": pane.simulated,
        "status": pane.status,
        # This pane's own earlier turns: each model answered them its own way.
        "conversation": [{"role": role, "content": content} for role, content in conversation],
        "text": pane.text,
        "committed": pane.committed,
        "finish_reason": pane.finish_reason,  # "length" / "max_tokens": cut by the limit
        "failure": None if failure is None
        else {k: v for k, v in failure.items() if k not in hidden_in_failure},
        "usage": pane.usage,
        "anoman": pane.anoman,
        # What the server said the answer cost, when it says (LiteLLM, OpenRouter).
        "provider_cost_usd": None if pane.provider_cost is None else str(pane.provider_cost),
        "metrics": metrics_json(pane.metrics),
    }
    if blind:
        for key in BLIND_HIDDEN:
            del panel[key]
    return panel


def panels_json(record: ComparisonRecord) -> list[dict[str, Any]]:
    """The record's panels; a blind round's masked until its vote."""
    if record.hidden:
        masked = record.masked()
        return [panel_json(p, blind=True, conversation=facts.conversation(masked, p))
                for p in masked.panes]
    return [panel_json(p, conversation=facts.conversation(record, p)) for p in record.panes]


def compare_json(record: ComparisonRecord, *, history_id: int | None, endpoint: str,
                 replay_of: ComparisonRecord | None = None, speed: float | None = None,
                 rerun_of: ComparisonRecord | None = None) -> dict[str, Any]:
    """The `compare --json` document of a run, built from its record (`history_id`: the
    history's id, None when not saved; `endpoint`: the run's format). A replay of
    `replay_of` adds each panel's `recorded` figures; a rerun of `rerun_of` each panel's
    `vs_original`. A blind round's before its vote has its masked panels only."""
    if record.hidden:
        return {"id": history_id, "blind": True, "prompt": record.prompt,
                "endpoint": endpoint, "panels": panels_json(record)}
    document: dict[str, Any] = {"id": history_id, "prompt": record.prompt,
                                "endpoint": endpoint, "panels": panels_json(record)}
    if replay_of is not None:
        document["replay_of"] = replay_of.id
        document["speed"] = speed
        saved = {p.pane: p for p in replay_of.panes}
        for panel in document["panels"]:
            was = saved.get(panel["panel"])
            if was is not None:  # what was measured live, beside what the replay measured
                panel["recorded"] = {"status": was.status, "metrics": metrics_json(was.metrics)}
    elif rerun_of is not None:
        document["rerun_of"] = rerun_of.id
        deltas = rerun_deltas(record.panes, rerun_of.panes, rerun_of.id or 0)
        for panel in document["panels"]:
            delta = deltas.get(panel["panel"])
            panel["vs_original"] = delta.to_json() if delta is not None else None
    return document


def to_json(record: ComparisonRecord) -> dict[str, Any]:
    """The `export --format json` document: `compare --json`'s keys, with the history's
    id and the time it was saved."""
    document: dict[str, Any] = {
        "id": record.id,
        "created_at": facts.created_iso(record),
        "prompt": record.prompt,
        # One endpoint format per comparison: every pane was sent the same way.
        "endpoint": record.panes[0].endpoint if record.panes else None,
        "panels": panels_json(record),
    }
    if record.hidden:
        document["blind"] = True
    return document
