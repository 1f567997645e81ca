"""The one builder of a comparison record, for the compare screen and `anoman-tui compare`.

Both hand it what each pane sent and how its stream ended (`PaneTurn`); it makes the
`ComparisonRecord` the history saves, the exports write and the JSON documents serialize,
and (`for_history`) applies the recording limit with the one sentence that says so.

May import: the standard library, the rest of `anoman_tui.history`, `anoman_tui.streaming`,
`anoman_tui.streaming.safe_text`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from anoman_tui.history.model import ComparisonRecord, pane_record
from anoman_tui.streaming import StreamResult
from anoman_tui.streaming.cost import UNKNOWN, Cost
from anoman_tui.streaming.safe_text import redact_url

Turns = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class PaneTurn:
    """What one pane sent and how its stream ended."""

    pane: int
    """1-based, as shown."""
    model: str
    result: StreamResult
    base_url: str
    """Where the request went: the target's base URL, never its key."""
    endpoint: str
    target: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    scenario: str = "none"
    rate_series: tuple[float, ...] = ()
    cost: Cost = UNKNOWN
    conversation: Turns | None = None
    """The (role, content) turns this pane sent before the prompt."""
    simulated: bool = False
    label: str = ""
    """`A`, `B`, `C` in a blind round."""


def comparison_record(
    prompt: str,
    panes: Sequence[PaneTurn],
    *,
    source: str,
    system_prompt: str = "",
    blind: bool = False,
    rerun_of: int | None = None,
    created_at: float | None = None,
) -> ComparisonRecord:
    """The record of one comparison turn. Each pane keeps its own conversation (each
    model answered the earlier prompts its own way: the reports show each pane's); the
    record's is the first pane's, for what lists one (a follow-up's mark)."""
    records = tuple(
        pane_record(
            # A target's URL may carry user:password@: the history never keeps it.
            p.pane, p.model, base_url=redact_url(p.base_url), endpoint=p.endpoint,
            result=p.result,
            temperature=p.temperature, max_tokens=p.max_tokens, scenario=p.scenario,
            rate_series=p.rate_series, cost=p.cost, conversation=p.conversation,
            target=p.target, simulated=p.simulated, label=p.label)
        for p in panes)
    return ComparisonRecord(
        prompt=prompt, panes=records, system_prompt=system_prompt,
        conversation=(panes[0].conversation if panes else None) or (),
        created_at=time.time() if created_at is None else created_at, source=source,
        blind=blind, rerun_of=rerun_of)


@dataclass(frozen=True, slots=True)
class ForHistory:
    """A record as the history saves it, and why its recordings were left out, if so."""

    record: ComparisonRecord
    dropped: str | None = None
    """`2.3 MB of streams, over the 1 MB limit (record_limit_mb)` when its recordings
    were too big to keep, else None."""


def for_history(record: ComparisonRecord, limit_bytes: int | None) -> ForHistory:
    """`record` with its recordings when recording is on (`limit_bytes` not None) and they
    fit the limit; without them otherwise."""
    streams = record.recording_bytes
    kept, dropped = record.within_recording_limit(limit_bytes)
    if not dropped:
        return ForHistory(kept)
    limit_mb = (limit_bytes or 0) / 1e6
    return ForHistory(kept, f"{streams / 1e6:.1f} MB of streams, over the {limit_mb:g} MB "
                            "limit (record_limit_mb)")
