"""Row mapping: a pane record to the `panes` and `recordings` rows the store writes, and
those rows back to a record; a stored cost, conversation or recording read back as
strictly as an imported one (a database file may be edited by hand).

`PANE_COLUMNS` is the `panes` table's columns in the order every pane INSERT gives them,
so copying a history (`anoman_tui.history.transfer`) writes the same rows the store does.

May import: the standard library, the rest of `anoman_tui.history` (never the store) and
`anoman_tui.streaming` (costs and recordings).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from anoman_tui.history.model import PaneRecord, left_out_reason
from anoman_tui.streaming.cost import UNKNOWN, Cost, decimal_or_none
from anoman_tui.streaming.recording import RecordingError, StreamRecording


def json_or_none(text: str | None) -> Any:
    """A stored JSON column, or None where a hand-edited file left it unreadable."""
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


PANE_COLUMNS = (
    "comparison_id", "pane", "model", "base_url", "endpoint", "temperature", "max_tokens",
    "scenario", "status", "committed", "text", "reasoning", "finish_reason", "failure",
    "usage", "anoman", "metrics", "rate_series", "conversation", "target",
    "label", "ttft_s", "tokens_per_s", "cost_usd", "failure_kind", "cost_decimal",
    "cost_source", "provider_cost", "simulated", "left_out",
)
"""The `panes` table's columns, the comparison's id first, in the order a pane's INSERT
gives its values (`put_panes`); copying a history (`transfer`) writes them in this
order too. A column added by a migration is added here."""


_INSERT_PANE = (
    f"INSERT INTO panes ({', '.join(PANE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in PANE_COLUMNS)})"
)


_INSERT_RECORDING = ("INSERT INTO recordings (comparison_id, pane, body_bytes, data) "
                     "VALUES (?, ?, ?, ?)")


NEW_COMPARISON_PG = "currval(pg_get_serial_sequence('comparisons', 'id'))"
"""On PostgreSQL, the id the session's last comparison INSERT was given: what a save's
other rows refer to, so that the whole save goes in one round trip (`HistoryStore.save`)."""


def _pane_values(p: PaneRecord) -> tuple[Any, ...]:
    return (
        p.pane, p.model, p.base_url, p.endpoint, p.temperature, p.max_tokens,
        p.scenario, p.status, int(p.committed), p.text, p.reasoning, p.finish_reason,
        _dumps(p.failure), _dumps(p.usage), _dumps(p.anoman), _dumps(p.metrics),
        json.dumps(list(p.rate_series)),
        None if p.conversation is None else turns_json(p.conversation), p.target, p.label,
        _number(p.metrics.get("ttft_s")), _number(p.metrics.get("output_tokens_per_s")),
        None if p.cost.usd is None else float(p.cost.usd),
        p.failure.get("kind") if isinstance(p.failure, dict) else None,
        None if p.cost.usd is None else str(p.cost.usd),
        # A blind round's record is saved unmasked; a masked cost is never a stored one.
        "unknown" if p.cost.source == "hidden" else p.cost.source,
        None if p.provider_cost is None else str(p.provider_cost), int(p.simulated),
        left_out_reason(p),
    )


def keyed_insert(sql: str, key: int | str) -> tuple[str, tuple[Any, ...]]:
    """An INSERT whose first value is a comparison's id, and the parameters that lead its
    rows: the id itself, or none when `key` is an SQL expression giving it
    (`NEW_COMPARISON_PG`), written into the statement in place of that parameter."""
    if isinstance(key, int):
        return sql, (key,)
    head, values = sql.split("VALUES (?", 1)
    return f"{head}VALUES ({key}{values}", ()


def put_panes(conn: Any, comparison_id: int | str,
               panes: Sequence[PaneRecord]) -> None:
    """Insert panes of a comparison and the recordings of those that have one.
    `comparison_id`: its id, or an SQL expression that gives it (`NEW_COMPARISON_PG`)."""
    sql, lead = keyed_insert(_INSERT_PANE, comparison_id)
    conn.executemany(sql, [(*lead, *_pane_values(p)) for p in panes])
    sql, lead = keyed_insert(_INSERT_RECORDING, comparison_id)
    conn.executemany(sql, [(*lead, p.pane, len(p.recording.body),
                            _recording_blob(p.recording))
                           for p in panes if p.recording is not None])


def drop_pane(conn: Any, comparison_id: int, pane: int) -> None:
    """Delete one pane of a comparison and its recording."""
    conn.execute("DELETE FROM recordings WHERE comparison_id = ? AND pane = ?",
                 (comparison_id, pane))
    conn.execute("DELETE FROM panes WHERE comparison_id = ? AND pane = ?",
                 (comparison_id, pane))


def _recording_blob(recording: StreamRecording) -> bytes:
    # Level 1: a 5,000-token stream compresses in 6 ms instead of 15 (at the end of a turn,
    # beside three panes still drawing) for a blob ~10% larger.
    return zlib.compress(json.dumps(recording.to_json(), separators=(",", ":")).encode(), 1)


def recording_from_blob(data: bytes) -> StreamRecording:
    """A stored recording, read as strictly as an imported one: a file may be edited."""
    try:
        text = zlib.decompressobj().decompress(data, 4 * 64 * 1024 * 1024)
    except zlib.error:
        raise RecordingError("the stored recording is not readable (corrupt).") from None
    return StreamRecording.from_json(text)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def turns_json(turns: Iterable[tuple[str, str]]) -> str:
    """A conversation's (role, content) turns as their stored JSON column."""
    return json.dumps([list(turn) for turn in turns], ensure_ascii=False)


def turns_from_json(text: str | None) -> tuple[tuple[str, str], ...] | None:
    """A stored conversation column read back (None: not stored, for older rows)."""
    if text is None:
        return None
    return tuple((str(role), str(content)) for role, content in json.loads(text))


def pane_from_row(row: Any) -> PaneRecord:
    """A `panes` row (read with its columns by name) as the record that was saved."""
    return PaneRecord(
        pane=row["pane"],
        model=row["model"],
        base_url=row["base_url"],
        endpoint=row["endpoint"],
        temperature=row["temperature"],
        max_tokens=row["max_tokens"],
        scenario=row["scenario"],
        status=row["status"],
        committed=bool(row["committed"]),
        text=row["text"],
        reasoning=row["reasoning"],
        finish_reason=row["finish_reason"],
        failure=_loads(row["failure"]),
        usage=_loads(row["usage"]),
        anoman=_loads(row["anoman"]),
        metrics=_loads(row["metrics"]) or {},
        rate_series=tuple(float(x) for x in json.loads(row["rate_series"])),
        cost=stored_cost(row["cost_decimal"], row["cost_source"]),
        provider_cost=decimal_or_none(row["provider_cost"]),
        simulated=bool(row["simulated"]),
        conversation=turns_from_json(row["conversation"]),
        target=row["target"],
        label=row["label"],
    )


def stored_cost(amount: str | None, source: str) -> Cost:
    """A stored cost; one a hand-edited file left inconsistent reads as unknown."""
    try:
        return Cost.from_json({"usd": amount, "source": source})
    except ValueError:
        return UNKNOWN
