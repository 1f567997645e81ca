"""What a finished `compare` run leaves behind: the history's record of the run, built by
the one builder (`history.builder`), and its `--json` document, whose panels the one
serializer writes (`report.json_report`), a replay adding what was recorded and a rerun
its differences from the original.

Imports the history and the report; never Rich or Textual.
"""

from __future__ import annotations

from typing import Any

from anoman_tui.headless.run import CompareRun
from anoman_tui.headless.spec import CompareSpec
from anoman_tui.history import ComparisonRecord, builder
from anoman_tui.report import json_report
from anoman_tui.report.rerun import rerun_deltas


def comparison_record(spec: CompareSpec, run: CompareRun) -> ComparisonRecord:
    """The record of a finished run (the target is its base URL, never the key), with its
    recordings when recording is on (`builder.for_history` drops them when too big)."""
    turns = [
        builder.PaneTurn(
            p.pane, p.model, p.result, base_url=spec.base_url_of(asked),
            endpoint=asked.endpoint, target=p.target, temperature=asked.temperature,
            max_tokens=asked.max_tokens, cost=run.cost(p), conversation=asked.conversation,
            simulated=run.simulated(p), label=p.label)
        for p, asked in zip(run.panes, spec.panes, strict=True) if p.result is not None
    ]
    return builder.comparison_record(
        spec.prompt, turns, source="compare", system_prompt=spec.system or "",
        blind=spec.blind, rerun_of=spec.original.id if spec.original is not None else None)


def compare_json(spec: CompareSpec, record: ComparisonRecord,
                 history_id: int | None = None) -> dict[str, Any]:
    """The `--json` document of the run whose record is `record`."""
    document = json_report.compare_json(record, history_id=history_id, endpoint=spec.endpoint)
    original = spec.original
    if record.hidden:
        return document  # a blind round's: nothing beside its masked panels
    if original is not None and spec.replay is not None:
        document["replay_of"] = original.id
        document["speed"] = spec.speed
        saved = {p.pane: p for p in original.panes}
        for panel in document["panels"]:
            was = saved.get(panel["panel"])
            if was is not None:  # what was measured live, beside what the replay measured
                panel["recorded"] = {"status": was.status,
                                     "metrics": json_report.metrics_json(was.metrics)}
    elif original is not None:
        document["rerun_of"] = original.id
        deltas = rerun_deltas(record.panes, original.panes, original.id or 0)
        for panel in document["panels"]:
            delta = deltas.get(panel["panel"])
            panel["vs_original"] = delta.to_json() if delta is not None else None
    return document
