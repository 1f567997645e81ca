"""What a finished `compare` run leaves behind: the history's record of the run, built by
the one builder (`history.builder`), and its `--json` document, which the report
writes from that record (`report.json_report.compare_json`).

Imports the history and the report; never Rich or Textual.
"""

from __future__ import annotations

from typing import Any

from anoman_tui.headless.run import CompareRun
from anoman_tui.headless.spec import CompareSpec
from anoman_tui.history import ComparisonRecord, builder
from anoman_tui.report import json_report


def comparison_record(spec: CompareSpec, run: CompareRun) -> ComparisonRecord:
    """The record of a finished run (the target is its base URL, never the key), with its
    recordings when recording is on (`builder.for_history` drops them when too big)."""
    turns = [
        builder.PaneTurn(
            p.pane, p.model, p.result, base_url=spec.base_url_of(asked),
            endpoint=asked.endpoint, target=p.target, temperature=asked.temperature,
            max_tokens=asked.max_tokens, cost=run.cost(p), conversation=asked.conversation,
            simulated=run.simulated(p), label=p.label, scenario=_scenario(spec))
        for p, asked in zip(run.panes, spec.panes, strict=True) if p.result is not None
    ]
    return builder.comparison_record(
        spec.prompt, turns, source="compare", system_prompt=spec.system or "",
        blind=spec.blind, rerun_of=spec.original.id if spec.original is not None else None)


def _scenario(spec: CompareSpec) -> str:
    """The demo scenario sent with `-H "X-Anoman-Simulate: ..."` (its directives), else
    "none": the scoreboard leaves such answers out of a model's figures."""
    return next((value for name, value in spec.headers
                 if name.lower() == "x-anoman-simulate" and value.strip()), "none")


def compare_json(spec: CompareSpec, record: ComparisonRecord,
                 history_id: int | None = None) -> dict[str, Any]:
    """The `--json` document of the run whose record is `record` (`report.json_report`)."""
    replaying = spec.replay is not None
    return json_report.compare_json(
        record, history_id=history_id, endpoint=spec.endpoint,
        replay_of=spec.original if replaying else None, speed=spec.speed,
        rerun_of=None if replaying else spec.original)
