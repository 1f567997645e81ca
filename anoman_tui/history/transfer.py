"""Copy one history into another (`anoman-tui history migrate`): a local SQLite file into
a team's PostgreSQL database, typically, though any two stores will do. (The schema's
own migrations, one version to the next, are in `schema/`.)

Everything is copied as stored, row by row (no record is rebuilt, so nothing a record
type does not carry is lost): comparisons with their panes, recordings, votes (unvoted
blind rounds stay unvoted), the arena judge's verdicts, and suite runs with their cells
and pairwise verdicts. Ids are the target's own; a comparison is recognised by its
`uid`, so copying twice copies nothing twice, and a vote cast on a round after it was
first copied is carried over the second time. Suite runs are recognised by their run id.

Each batch of comparisons is one transaction in the target: an interrupted copy leaves
whole comparisons, and running it again finishes it.

May import: the standard library, the rest of `anoman_tui.history`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anoman_tui.history.engines import POSTGRESQL
from anoman_tui.history.rows import PANE_COLUMNS
from anoman_tui.history.schema.shared import refresh_vote_patterns
from anoman_tui.history.store import HistoryStore, new_uid

BATCH = 200
"""Comparisons per read and per target transaction."""

_COMPARISON_COLUMNS = ("created_at", "source", "prompt", "system_prompt", "conversation",
                       "blind", "suite_run", "suite_case", "suite_repeat", "author")
_RUN_COLUMNS = ("run_id", "name", "created_at", "suite", "settings", "models", "cells",
                "finished", "stopped", "updated_at", "author")
_RESULT_COLUMNS = ("run_id", "case_id", "model", "repeat", "status", "pass", "data",
                   "comparison_id", "pane", "finished_at")
_PAIR_COLUMNS = ("run_id", "case_id", "repeat", "a", "b", "data")


@dataclass
class CopyCounts:
    """What one copy did."""

    comparisons: int = 0
    """Comparisons copied."""
    already: int = 0
    """Comparisons the target held already (copied before)."""
    votes: int = 0
    runs: int = 0
    runs_already: int = 0


def _insert(columns: tuple[str, ...], table: str, conflict: str = "") -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){conflict}"


def copy_history(source: HistoryStore, target: HistoryStore,
                 progress: Callable[[int, int], None] | None = None) -> CopyCounts:
    """Copy every comparison and suite run of `source` into `target`; `progress(done,
    total)` after each batch. Raises `HistoryUnavailable` (either side)."""
    counts = CopyCounts()
    with source.reading() as conn:
        total = int(conn.execute("SELECT COUNT(*) FROM comparisons").fetchone()[0])
    uids: dict[int, str] = {}
    """source id -> uid, for `rerun_of`, which names an earlier comparison."""
    target_ids: dict[str, int] = {}
    last, done = 0, 0
    while True:
        with source.reading() as conn:
            rows = conn.execute("SELECT * FROM comparisons WHERE id > ? ORDER BY id LIMIT ?",
                                (last, BATCH)).fetchall()
            if not rows:
                break
            ids = [row["id"] for row in rows]
            marks = ", ".join("?" for _ in ids)
            panes = conn.execute(f"SELECT * FROM panes WHERE comparison_id IN ({marks}) "
                                 "ORDER BY comparison_id, pane", ids).fetchall()
            recordings = conn.execute(
                "SELECT comparison_id, pane, body_bytes, data FROM recordings "
                f"WHERE comparison_id IN ({marks})", ids).fetchall()
            votes = {row["comparison_id"]: row for row in conn.execute(
                f"SELECT * FROM votes WHERE comparison_id IN ({marks})", ids)}
            verdicts = {row["comparison_id"]: row for row in conn.execute(
                f"SELECT * FROM round_judgements WHERE comparison_id IN ({marks})", ids)}
        by_comparison: dict[int, list[Any]] = {i: [] for i in ids}
        for pane in panes:
            by_comparison[pane["comparison_id"]].append(pane)
        recorded: dict[int, list[Any]] = {i: [] for i in ids}
        for recording in recordings:
            recorded[recording["comparison_id"]].append(recording)
        with target.writing() as out:
            for row in rows:
                uid = row["uid"] or new_uid()
                uids[row["id"]] = uid
                found = out.execute("SELECT id FROM comparisons WHERE uid = ?",
                                    (uid,)).fetchone()
                if found is not None:
                    new_id = int(found[0])
                    counts.already += 1
                else:
                    rerun_of = target_ids.get(uids.get(row["rerun_of"], "")) \
                        if row["rerun_of"] is not None else None
                    new_id = target.dialect.insert_id(
                        out, _insert((*_COMPARISON_COLUMNS, "rerun_of", "uid"), "comparisons"),
                        (*(row[c] for c in _COMPARISON_COLUMNS), rerun_of, uid))
                    out.executemany(
                        _insert(PANE_COLUMNS, "panes"),
                        [(new_id, *(p[c] for c in PANE_COLUMNS[1:]))
                         for p in by_comparison[row["id"]]])
                    out.executemany(
                        _insert(("comparison_id", "pane", "body_bytes", "data"), "recordings"),
                        [(new_id, r["pane"], r["body_bytes"], bytes(r["data"]))
                         for r in recorded[row["id"]]])
                    counts.comparisons += 1
                target_ids[uid] = new_id
                vote = votes.get(row["id"])
                if vote is not None and out.execute(
                        "SELECT 1 FROM votes WHERE comparison_id = ?", (new_id,)).fetchone() \
                        is None:
                    out.execute(_insert(("comparison_id", "blind", "outcome", "winner_pane",
                                         "voted_at", "author"), "votes"),
                                (new_id, vote["blind"], vote["outcome"], vote["winner_pane"],
                                 vote["voted_at"], vote["author"]))
                    refresh_vote_patterns(out, target.dialect is POSTGRESQL, (new_id,))
                    counts.votes += 1
                verdict = verdicts.get(row["id"])
                if verdict is not None:
                    out.execute(
                        _insert(("comparison_id", "judge", "outcome", "best", "data",
                                 "judged_at"), "round_judgements",
                                " ON CONFLICT (comparison_id) DO NOTHING"),
                        (new_id, verdict["judge"], verdict["outcome"], verdict["best"],
                         verdict["data"], verdict["judged_at"]))
                if target.fts and (found is None or vote is not None):
                    _index(out, new_id, row["prompt"], bool(row["blind"]) and vote is None,
                           by_comparison[row["id"]], fresh=found is None)
        last = ids[-1]
        done += len(rows)
        if progress is not None:
            progress(done, total)
    _copy_runs(source, target, target_ids, uids, counts)
    return counts


def _index(out: Any, comparison_id: int, prompt: str, hidden: bool, panes: list[Any], *,
           fresh: bool) -> None:
    """The target's search row: a blind round not voted on is found by its labels only."""
    models = " ".join((p["label"] if hidden else p["model"]) for p in panes)
    if fresh:
        out.execute("INSERT INTO comparisons_fts (rowid, prompt, models) VALUES (?, ?, ?)",
                    (comparison_id, prompt, models))
    else:
        out.execute("UPDATE comparisons_fts SET models = ? WHERE rowid = ?",
                    (models, comparison_id))


def _copy_runs(source: HistoryStore, target: HistoryStore, target_ids: dict[str, int],
               uids: dict[int, str], counts: CopyCounts) -> None:
    with source.reading() as conn:
        runs = conn.execute("SELECT * FROM suite_runs ORDER BY rowid").fetchall()
    for run in runs:
        run_id = run["run_id"]
        with source.reading() as conn:
            results = conn.execute("SELECT * FROM suite_results WHERE run_id = ? "
                                   "ORDER BY rowid", (run_id,)).fetchall()
            pairs = conn.execute("SELECT * FROM suite_pairs WHERE run_id = ? ORDER BY rowid",
                                 (run_id,)).fetchall()
        with target.writing() as out:
            if out.execute("SELECT 1 FROM suite_runs WHERE run_id = ?",
                           (run_id,)).fetchone() is not None:
                counts.runs_already += 1
                continue
            out.execute(_insert(_RUN_COLUMNS, "suite_runs"), tuple(run[c] for c in _RUN_COLUMNS))
            out.executemany(_insert(_RESULT_COLUMNS, "suite_results"), [
                (*(r[c] for c in _RESULT_COLUMNS[:7]),
                 None if r["comparison_id"] is None
                 else target_ids.get(uids.get(r["comparison_id"], "")),
                 r["pane"], r["finished_at"]) for r in results])
            out.executemany(_insert(_PAIR_COLUMNS, "suite_pairs"),
                            [tuple(p[c] for c in _PAIR_COLUMNS) for p in pairs])
            counts.runs += 1
