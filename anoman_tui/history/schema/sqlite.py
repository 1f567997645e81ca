"""A SQLite history's schema: `MIGRATIONS[n]` takes a file at version n (its
`PRAGMA user_version`) to n + 1, from an empty file (0) to `SCHEMA_VERSION`.

Steps are never edited once released: a user's file may be at any version. The steps
after schema 11 are the ones PostgreSQL runs too (`schema.shared`).

May import: the standard library and the rest of `anoman_tui.history` (never the store).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from anoman_tui.history import runs as suite_runs
from anoman_tui.history.legacy import legacy_cost
from anoman_tui.history.schema.shared import (
    add_authors,
    add_left_out,
    add_uids,
    add_vote_patterns,
    index_scoreboard_reads,
)


def _fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._fts5_probe")
    except sqlite3.OperationalError:
        return False
    return True


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE comparisons (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at REAL NOT NULL,
            source TEXT NOT NULL,
            prompt TEXT NOT NULL,
            system_prompt TEXT NOT NULL DEFAULT '',
            conversation TEXT NOT NULL DEFAULT '[]'
        )"""
    )
    conn.execute(
        """CREATE TABLE panes (
            comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
            pane INTEGER NOT NULL,
            model TEXT NOT NULL,
            base_url TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            temperature REAL,
            max_tokens INTEGER,
            scenario TEXT NOT NULL,
            status TEXT NOT NULL,
            committed INTEGER NOT NULL,
            text TEXT NOT NULL,
            reasoning TEXT NOT NULL,
            finish_reason TEXT,
            failure TEXT,
            usage TEXT,
            anoman TEXT,
            metrics TEXT NOT NULL,
            cost_text TEXT NOT NULL,
            PRIMARY KEY (comparison_id, pane)
        )"""
    )


def _add_rate_series_and_index(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE panes ADD COLUMN rate_series TEXT NOT NULL DEFAULT '[]'")
    if not _fts5_available(conn):
        return  # search falls back to LIKE over the tables
    conn.execute("CREATE VIRTUAL TABLE comparisons_fts USING fts5(prompt, models)")
    # Rows saved before the index existed become searchable too.
    conn.execute(
        """INSERT INTO comparisons_fts (rowid, prompt, models)
           SELECT c.id, c.prompt,
                  COALESCE((SELECT group_concat(p.model, ' ') FROM panes p
                            WHERE p.comparison_id = c.id), '')
           FROM comparisons c"""
    )


def _add_pane_conversation(conn: sqlite3.Connection) -> None:
    # NULL for turns saved before: they are continued with the comparison's conversation.
    conn.execute("ALTER TABLE panes ADD COLUMN conversation TEXT")


def _add_pane_target(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE panes ADD COLUMN target TEXT NOT NULL DEFAULT ''")


def _add_blind_rounds_and_votes(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE comparisons ADD COLUMN blind INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE panes ADD COLUMN label TEXT NOT NULL DEFAULT ''")
    conn.execute(
        """CREATE TABLE votes (
            comparison_id INTEGER PRIMARY KEY REFERENCES comparisons(id) ON DELETE CASCADE,
            blind INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            winner_pane INTEGER,
            voted_at REAL NOT NULL
        )"""
    )


def _add_scoreboard_columns(conn: sqlite3.Connection) -> None:
    # The figures a scoreboard aggregates over every answer, as columns SQLite can
    # sum and sort: reading them out of JSON took over a second for 300,000 answers.
    for column in ("ttft_s REAL", "tokens_per_s REAL", "cost_usd REAL", "failure_kind TEXT"):
        conn.execute(f"ALTER TABLE panes ADD COLUMN {column}")
    # A covering index: the scoreboard's scans read it, not the wide rows of answers.
    conn.execute("CREATE INDEX panes_by_model ON panes (model, status, failure_kind, "
                 "ttft_s, tokens_per_s, cost_usd)")
    conn.execute(
        "UPDATE panes SET ttft_s = json_extract(metrics, '$.ttft_s'), "
        "tokens_per_s = json_extract(metrics, '$.output_tokens_per_s'), "
        "failure_kind = json_extract(failure, '$.kind')"
    )  # cost_usd: filled from each cost's amount by the 7 -> 8 step


def _add_recordings(conn: sqlite3.Connection) -> None:
    # Each pane's stream as `StreamRecording.to_json()`, zlib-compressed JSON (SSE text
    # compresses well); apart from the panes so that lists and the scoreboard never
    # read them. `body_bytes` is the stream's size as it came off the socket.
    conn.execute(
        """CREATE TABLE recordings (
            comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
            pane INTEGER NOT NULL,
            body_bytes INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (comparison_id, pane)
        )"""
    )
    conn.execute("ALTER TABLE comparisons ADD COLUMN rerun_of INTEGER")


def _cost_as_value(conn: sqlite3.Connection) -> None:
    # The cost becomes its amount (an exact decimal string; `cost_usd` stays its REAL copy
    # for the scoreboard's sums) and its source, in place of the text a view showed.
    conn.execute("ALTER TABLE panes ADD COLUMN cost_decimal TEXT")
    conn.execute("ALTER TABLE panes ADD COLUMN cost_source TEXT NOT NULL DEFAULT 'unknown'")
    conn.execute("ALTER TABLE panes ADD COLUMN provider_cost TEXT")
    # The local gateway's models are simulated: its panes were saved with target `local`.
    conn.execute("ALTER TABLE panes ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0")
    updates = []
    for rowid, text in conn.execute("SELECT rowid, cost_text FROM panes").fetchall():
        cost = legacy_cost(text)
        amount = None if cost.usd is None else str(cost.usd)
        updates.append((amount, cost.source, None if cost.usd is None else float(cost.usd),
                        amount if cost.source == "provider" else None, rowid))
    conn.executemany("UPDATE panes SET cost_decimal = ?, cost_source = ?, cost_usd = ?, "
                     "provider_cost = ? WHERE rowid = ?", updates)
    conn.execute("UPDATE panes SET simulated = 1 WHERE target = 'local'")
    conn.execute("ALTER TABLE panes DROP COLUMN cost_text")


def _add_round_judgements(conn: sqlite3.Connection) -> None:
    # One verdict per round (a later one replaces it); `best` and `outcome` are columns
    # so the scoreboard groups by them in SQL, the pairs' details stay JSON.
    conn.execute(
        """CREATE TABLE round_judgements (
            comparison_id INTEGER PRIMARY KEY REFERENCES comparisons(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            outcome TEXT NOT NULL,
            best TEXT,
            data TEXT NOT NULL,
            judged_at REAL NOT NULL
        )"""
    )


# MIGRATIONS[n] takes a database at version n to version n + 1.
MIGRATIONS: Sequence[Callable[[sqlite3.Connection], None]] = (
    _create_tables,  # 0 -> 1: comparisons and panes
    _add_rate_series_and_index,  # 1 -> 2: the sparkline's series, the full-text index
    _add_pane_conversation,  # 2 -> 3: each pane's own earlier turns
    _add_pane_target,  # 3 -> 4: the target (server) each pane streamed from
    _add_blind_rounds_and_votes,  # 4 -> 5: blind arena rounds, pane labels, votes
    _add_scoreboard_columns,  # 5 -> 6: TTFT, tokens/s, cost and failure kind as columns
    _add_recordings,  # 6 -> 7: streams recorded for replay; which comparison a rerun repeats
    _cost_as_value,  # 7 -> 8: cost as amount and source; whether the model was simulated
    suite_runs.add_suite_runs,  # 8 -> 9: suite runs and their results (history/runs.py)
    suite_runs.add_suite_pairs,  # 9 -> 10: a judge's pairwise verdicts of a suite run
    _add_round_judgements,  # 10 -> 11: the arena judge's verdict on a voted blind round
    add_authors,  # 11 -> 12: who ran each comparison and suite run, who cast each vote
    add_uids,  # 12 -> 13: each comparison's id across copies of the history
    add_vote_patterns,  # 13 -> 14: each vote keeps its round's pattern (the scoreboard's)
    index_scoreboard_reads,  # 14 -> 15: simulated panes, TTFT and tokens/s by model
    add_left_out,  # 15 -> 16: panes whose answer was not the model's doing
)
SCHEMA_VERSION = len(MIGRATIONS)
