"""The metering ledger: one SQLite row per request, whatever its ending.

``UsageLedger`` owns a SQLite file in WAL mode (readers such as
`anoman-tui usage` never block the gateway). A row is written once, when the
request ends: completed, failed, cancelled (client disconnect or gateway
shutdown, billed for the tokens already produced), blocked by a guardrail, or
answered from the cache. Only the last four characters of the API key are
stored. ``format_usage_table`` renders rows as the plain-text table the CLI
prints.

Imports only the standard library.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

RowStatus = Literal["completed", "failed", "cancelled", "blocked", "cache_hit"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    request_id        TEXT PRIMARY KEY,
    key_hint          TEXT NOT NULL,
    endpoint          TEXT NOT NULL,
    model             TEXT NOT NULL,
    stream            INTEGER NOT NULL,
    status            TEXT NOT NULL,
    routing_mode      TEXT NOT NULL,
    http_status       INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    weighted_tokens   INTEGER NOT NULL,
    cost_usd          TEXT NOT NULL,
    guardrails        TEXT NOT NULL,
    failure_class     TEXT,
    compare_id        TEXT,
    panel             INTEGER,
    started_at        REAL NOT NULL,
    first_token_at    REAL,
    ended_at          REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS usage_ended_at ON usage (ended_at);
"""

_COLUMNS = (
    "request_id", "key_hint", "endpoint", "model", "stream", "status", "routing_mode",
    "http_status", "prompt_tokens", "completion_tokens", "weighted_tokens", "cost_usd",
    "guardrails", "failure_class", "compare_id", "panel", "started_at", "first_token_at",
    "ended_at",
)


def key_hint(api_key: str) -> str:
    """The only part of a key the ledger keeps."""
    return api_key[-4:]


@dataclass(slots=True)
class UsageRow:
    """One request, as metered."""

    request_id: str
    key_hint: str
    endpoint: str
    model: str
    stream: bool
    status: RowStatus
    routing_mode: str
    http_status: int
    prompt_tokens: int
    completion_tokens: int
    weighted_tokens: int
    cost_usd: str
    guardrails: dict[str, Any]
    failure_class: str | None
    started_at: float
    first_token_at: float | None
    ended_at: float
    compare_id: str | None = None
    panel: int | None = None


class UsageLedger:
    """SQLite (WAL) store of ``UsageRow``s; safe to share between threads."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: commits do not fsync, so a write costs microseconds.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=2000")
            self._conn.executescript(_SCHEMA)

    def record(self, row: UsageRow) -> None:
        values = asdict(row)
        values["stream"] = int(row.stream)
        values["guardrails"] = json.dumps(row.guardrails, separators=(",", ":"))
        placeholders = ", ".join(f":{c}" for c in _COLUMNS)
        with self._lock:
            self._conn.execute(
                f"INSERT OR REPLACE INTO usage ({', '.join(_COLUMNS)}) VALUES ({placeholders})",
                values,
            )

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """The newest ``limit`` rows, newest first."""
        with self._lock:
            cur = self._conn.execute(
                "SELECT * FROM usage ORDER BY ended_at DESC, rowid DESC LIMIT ?", (limit,)
            )
            return [_to_dict(r) for r in cur.fetchall()]

    def get(self, request_id: str) -> dict[str, Any] | None:
        with self._lock:
            cur = self._conn.execute("SELECT * FROM usage WHERE request_id = ?", (request_id,))
            found = cur.fetchone()
        return _to_dict(found) if found is not None else None

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM usage").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _to_dict(row: sqlite3.Row) -> dict[str, Any]:
    out = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row is not a Mapping
    out["stream"] = bool(out["stream"])
    out["guardrails"] = json.loads(out["guardrails"])
    return out


_TABLE_COLUMNS: list[tuple[str, str, str]] = [
    # (header, row key, alignment)
    ("ended", "ended_at", "<"),
    ("request", "request_id", "<"),
    ("key", "key_hint", "<"),
    ("endpoint", "endpoint", "<"),
    ("model", "model", "<"),
    ("status", "status", "<"),
    ("routing", "routing_mode", "<"),
    ("prompt", "prompt_tokens", ">"),
    ("compl", "completion_tokens", ">"),
    ("weighted", "weighted_tokens", ">"),
    ("cost_usd", "cost_usd", ">"),
    ("failure", "failure_class", "<"),
]


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "ended_at":
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value)))
    if key == "key_hint":
        return f"…{value}"
    if key == "request_id":
        return str(value)[-12:]
    return str(value)


def format_usage_table(rows: list[dict[str, Any]]) -> str:
    """Rows (as from ``UsageLedger.recent`` or `GET /anoman/v1/usage`) as a text table."""
    if not rows:
        return "No usage recorded yet."
    cells = [[_cell(key, row.get(key)) for _, key, _ in _TABLE_COLUMNS] for row in rows]
    widths = [
        max(len(header), *(len(r[i]) for r in cells))
        for i, (header, _, _) in enumerate(_TABLE_COLUMNS)
    ]

    def line(values: list[str]) -> str:
        return "  ".join(
            f"{v:{align}{w}}" for v, w, (_, _, align) in zip(values, widths, _TABLE_COLUMNS,
                                                             strict=True)
        ).rstrip()

    out = [line([h for h, _, _ in _TABLE_COLUMNS]), line(["-" * w for w in widths])]
    out.extend(line(r) for r in cells)
    total_cost = sum((Decimal(str(r.get("cost_usd") or 0)) for r in rows), Decimal(0))
    total_weighted = sum(int(r.get("weighted_tokens") or 0) for r in rows)
    out.append(f"{len(rows)} request(s), {total_weighted} weighted tokens, "
               f"${total_cost.quantize(Decimal('0.000001'))} total")
    return "\n".join(out)
