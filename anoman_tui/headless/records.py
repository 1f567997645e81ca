"""What a finished `compare` run leaves behind: the `--json` document (each panel's
object, a blind round's, the whole document) and the history's record of the run.

Kept together, and apart from the terminal output, because they are one truth with
the exports (the JSON report, the saved record). Imports the history and the report's
rerun figures; never Rich or Textual.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from anoman_tui.headless.run import CompareRun, PaneProgress, blind_failure
from anoman_tui.headless.spec import BLIND_LABELS, CompareSpec
from anoman_tui.history import ComparisonRecord, pane_record
from anoman_tui.report.rerun import rerun_deltas


def pane_json(pane: PaneProgress) -> dict[str, Any]:
    result = pane.result
    assert result is not None
    return {
        "panel": pane.pane,  # the --json document's names ("panels", "panel") are public
        "model": pane.model,
        "target": pane.target,
        "endpoint": pane.endpoint,  # each model's own (a [[panes]] table may set it)
        "status": result.status,
        "text": result.text,
        "committed": result.committed,
        "finish_reason": result.finish_reason,  # "length" / "max_tokens": cut by the limit
        "failure": result.failure.to_json() if result.failure else None,
        "usage": result.usage.model_dump(include={"prompt_tokens", "completion_tokens",
                                                  "total_tokens"}) if result.usage else None,
        "anoman": result.anoman_raw,
        # What the server said the answer cost, when it says (LiteLLM, OpenRouter).
        "provider_cost_usd": str(result.provider_cost)
        if result.provider_cost is not None else None,
        "metrics": result.metrics.to_json(),
    }


# What a blind round's pane leaves out of `pane_json`: all that names or prices a model.
_IDENTIFYING = ("model", "target", "endpoint", "anoman", "provider_cost_usd")


def blind_pane_json(pane: PaneProgress) -> dict[str, Any]:
    """A blind round's pane: its label, never its model, target, Anoman block or cost
    (a price can be unique to one model); its text, status and measured numbers."""
    shown = {k: v for k, v in pane_json(pane).items() if k not in _IDENTIFYING}
    shown["panel"] = pane.label
    if pane.result is not None and pane.result.failure is not None:
        shown["failure"] = {k: v for k, v in blind_failure(pane).to_json().items()
                            if k not in ("route", "key_env")}
    return shown


def compare_json(spec: CompareSpec, run: CompareRun,
                 history_id: int | None = None) -> dict[str, Any]:
    if spec.blind:
        return {"id": history_id, "blind": True, "prompt": spec.prompt,
                "endpoint": spec.endpoint, "panels": [blind_pane_json(p) for p in run.panes]}
    document: dict[str, Any] = {
        "id": history_id,  # the history's id; null when not saved
        "prompt": spec.prompt,
        "endpoint": spec.endpoint,
        "panels": [pane_json(p) for p in run.panes],
    }
    original = spec.original
    if original is not None and spec.replay is not None:
        document["replay_of"] = original.id
        document["speed"] = spec.speed
        saved = {p.pane: p for p in original.panes}
        for panel in document["panels"]:
            was = saved.get(panel["panel"])
            if was is not None:  # what was measured live, beside what the replay measured
                panel["recorded"] = {"status": was.status, "metrics": was.metrics}
    elif original is not None:
        document["rerun_of"] = original.id
        deltas = rerun_deltas(comparison_record(spec, run).panes, original.panes,
                              original.id or 0)
        for panel in document["panels"]:
            delta = deltas.get(panel["panel"])
            panel["vs_original"] = delta.to_json() if delta is not None else None
    return document


def comparison_record(spec: CompareSpec, run: CompareRun) -> ComparisonRecord:
    """The history's record of a finished run (the target is its base URL, never the key),
    with its recordings when recording is on (`within_recording_limit` drops them when
    too big)."""
    panes = tuple(
        pane_record(
            p.pane, p.model, base_url=spec.base_url_of(asked),
            endpoint=asked.endpoint, result=p.result, target=p.target,
            temperature=asked.temperature,
            max_tokens=asked.max_tokens,
            cost=run.cost(p),
            conversation=asked.conversation,
        )
        for p, asked in zip(run.panes, spec.panes, strict=True) if p.result is not None
    )
    if spec.blind:
        panes = tuple(replace(p, label=BLIND_LABELS[p.pane - 1]) for p in panes)
    return ComparisonRecord(
        prompt=spec.prompt, panes=panes, system_prompt=spec.system or "",
        conversation=(spec.panes[0].conversation if spec.panes else None) or (),
        created_at=time.time(), source="compare",
        blind=spec.blind, rerun_of=spec.original.id if spec.original is not None else None)
