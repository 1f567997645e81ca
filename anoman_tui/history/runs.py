"""Suite runs in the history: the tables of schema 9 and the queries over them.

A suite run (`anoman-tui eval`) is one `suite_runs` row (its suite and settings kept
whole, so `--resume` and `--retry-errors` keep the original) and one `suite_results`
row per finished cell (case, model, repeat), saved as each finishes. The answers of one
(case, repeat) are panes of one ordinary comparison (source `eval`, marked with
`suite_run`, `suite_case`, `suite_repeat`), so a case reopens, exports and replays like
any comparison. `HistoryStore` (store.py) owns the connection and the transactions and
calls these functions inside them; nothing here opens or commits anything.

The history never reads the suite's or a cell's JSON for its own sake: it stores what
the engine (`anoman_tui.suites`) hands it, as plain dicts. The columns beside the JSON
(status, pass, the comparison) are the truth the listing counts; on reading, a cell's
JSON gets them back, so it never disagrees with its row.

The queries are the ones both engines run (SQLite, PostgreSQL: engines.py); `conn` is a
`sqlite3.Connection` or an `engines.PgConnection`. A PostgreSQL history's tables carry a
`rowid` column of their own, so ordering by it means the same on both.

May import: the standard library, `engines`. Never `anoman_tui.suites` (suites uses
history).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from anoman_tui.history.engines import dialect_of

STOP_REASONS: tuple[str, ...] = ("interrupted", "cost_limit")
"""Why a run ended before its last cell (`finish_run`'s `stopped`)."""

NOT_FAILED = ("completed", "not_run")
"""Cell statuses that are not a failed stream (every other status is a failure kind)."""


class RunRefused(ValueError):
    """A suite run operation that cannot be done; `reason` is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunExists(RunRefused):
    """`create_run` with an id the history already holds (the engine makes fresh ids:
    a clash is a bug or two engines given one id, never something to overwrite)."""


class UnknownRun(RunRefused):
    """A write to a run the history does not hold."""


class AmbiguousRunId(RunRefused):
    """A prefix given for a run id that starts several runs' ids."""


class UnreadableRun(RunRefused):
    """A run whose stored suite or settings are not JSON objects (an edited file)."""


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """What the comparison of one (case, repeat) is made with when its first pane is
    saved: the prompt every model of the case was sent."""

    prompt: str
    system_prompt: str = ""
    created_at: float | None = None
    """Unix time; None: when it is saved."""


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One suite run as the history holds it (`HistoryStore.run`)."""

    run_id: str
    name: str
    created_at: float
    suite: dict[str, Any]
    """`Suite.to_json()` as the run was started with."""
    settings: dict[str, Any]
    models: list[str]
    cells: int
    """How many cells the run has in all (case x model x repeat)."""
    finished: bool
    stopped: str | None
    """`interrupted`, `cost_limit`, or None."""
    updated_at: float
    results: list[Any]
    """Each saved cell's JSON (`CellResult.to_json()`), in the order first saved; its
    `case`, `model`, `repeat`, `status`, `pass` and `comparison_id` are its row's. Read
    with a `convert`, what it made of each (`read_results`)."""
    unreadable: tuple[tuple[str, str, int], ...] = ()
    """(case, model, repeat) of saved cells whose JSON could not be read (an edited or
    damaged file): left out of `results`, so a resume runs them again."""
    pairs: list[dict[str, Any]] = field(default_factory=list)
    """The judge's pairwise verdicts (`PairJudgement.to_json()`), one per (case, repeat,
    a, b), in the order saved; one whose JSON cannot be read is left out (and judged
    again by a resume)."""
    user: str = ""
    """Who started it (the `user` setting); "" for a run saved before authors were kept."""


@dataclass(frozen=True, slots=True)
class RunListing:
    """What a list of suite runs shows of one (`HistoryStore.runs`): counts, no cells."""

    run_id: str
    name: str
    created_at: float
    models: list[str]
    cells: int
    results: int
    """Cells saved so far (not_run ones included)."""
    passed: int
    failed: int
    """Cells whose stream failed (any status but completed and not_run)."""
    judged: int
    """Cells with a verdict (pass true or false)."""
    finished: bool
    stopped: str | None
    user: str = ""
    """Who started it (`StoredRun.user`)."""


def add_suite_runs(conn: sqlite3.Connection) -> None:
    """Schema 8 -> 9: suite runs, their results, and which comparisons belong to them."""
    conn.execute("ALTER TABLE comparisons ADD COLUMN suite_run TEXT")
    conn.execute("ALTER TABLE comparisons ADD COLUMN suite_case TEXT")
    conn.execute("ALTER TABLE comparisons ADD COLUMN suite_repeat INTEGER")
    # One comparison per (run, case, repeat), even when two processes save one run.
    conn.execute("CREATE UNIQUE INDEX comparisons_by_suite_cell ON comparisons "
                 "(suite_run, suite_case, suite_repeat) WHERE suite_run IS NOT NULL")
    conn.execute(
        """CREATE TABLE suite_runs (
            run_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at REAL NOT NULL,
            suite TEXT NOT NULL,
            settings TEXT NOT NULL,
            models TEXT NOT NULL,
            cells INTEGER NOT NULL,
            finished INTEGER NOT NULL DEFAULT 0,
            stopped TEXT,
            updated_at REAL NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX suite_runs_by_time ON suite_runs (created_at)")
    conn.execute(
        """CREATE TABLE suite_results (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            case_id TEXT NOT NULL,
            model TEXT NOT NULL,
            repeat INTEGER NOT NULL,
            status TEXT NOT NULL,
            pass INTEGER,
            data TEXT NOT NULL,
            comparison_id INTEGER REFERENCES comparisons(id) ON DELETE SET NULL,
            pane INTEGER,
            finished_at REAL NOT NULL,
            PRIMARY KEY (run_id, case_id, model, repeat)
        )"""
    )
    # Covering the listing's counts: a run of 10,000 cells is tallied from this index,
    # never from the rows that carry each cell's JSON.
    conn.execute("CREATE INDEX suite_results_tally ON suite_results (run_id, status, pass)")


def add_suite_pairs(conn: sqlite3.Connection) -> None:
    """Schema 9 -> 10: a judge's pairwise verdicts, one row per (case, repeat, pair)."""
    conn.execute(
        """CREATE TABLE suite_pairs (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            case_id TEXT NOT NULL,
            repeat INTEGER NOT NULL,
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, case_id, repeat, a, b)
        )"""
    )


def put_pair(conn: Any, run_id: str, pair: dict[str, Any]) -> None:
    key = (run_id, str(pair["case"]), int(pair["repeat"]), str(pair["a"]), str(pair["b"]))
    text = _json_text(pair, "a pairwise verdict")
    # Deleted, then inserted: a replaced verdict moves to the end of the order, as SQLite's
    # INSERT OR REPLACE did (this runs inside the store's write transaction).
    conn.execute("DELETE FROM suite_pairs WHERE run_id = ? AND case_id = ? AND repeat = ? "
                 "AND a = ? AND b = ?", key)
    conn.execute("INSERT INTO suite_pairs (run_id, case_id, repeat, a, b, data) "
                 "VALUES (?, ?, ?, ?, ?, ?)", (*key, text))


def delete_pairs_of(conn: Any, run_id: str, key: tuple[str, str, int]) -> None:
    """Forget the verdicts a cell took part in: its answer is about to be replaced."""
    case_id, model, repeat = key
    conn.execute("DELETE FROM suite_pairs WHERE run_id = ? AND case_id = ? AND repeat = ? "
                 "AND (a = ? OR b = ?)", (run_id, case_id, repeat, model, model))


def read_pairs(conn: Any, run_id: str) -> list[dict[str, Any]]:
    pairs = []
    for (data,) in conn.execute("SELECT data FROM suite_pairs WHERE run_id = ? ORDER BY rowid",
                                (run_id,)):
        try:
            pair = json.loads(data)
        except (ValueError, TypeError):
            continue
        if isinstance(pair, dict):
            pairs.append(pair)
    return pairs


def _json_text(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the run's {what} is not JSON: {exc}") from None


def insert_run(conn: Any, run_id: str, *, name: str, suite: dict[str, Any],
               settings: dict[str, Any], models: list[str], cells: int,
               created_at: float, now: float, author: str = "") -> None:
    if not run_id:
        raise ValueError("a run id cannot be empty")
    row = (run_id, name, created_at, _json_text(suite, "suite"),
           _json_text(settings, "settings"), _json_text(list(models), "models"), cells, now,
           author)
    if conn.execute("SELECT 1 FROM suite_runs WHERE run_id = ?", (run_id,)).fetchone():
        raise RunExists(f"the history already holds a suite run {run_id}")
    conn.execute("INSERT INTO suite_runs (run_id, name, created_at, suite, settings, models, "
                 "cells, finished, stopped, updated_at, author) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?)", row)


def run_author(conn: Any, run_id: str) -> str:
    """Who started a run: its cells' comparisons are theirs, whoever resumes it."""
    row = conn.execute("SELECT author FROM suite_runs WHERE run_id = ?", (run_id,)).fetchone()
    return "" if row is None else str(row[0])


def require_run(conn: Any, run_id: str) -> None:
    if conn.execute("SELECT 1 FROM suite_runs WHERE run_id = ?", (run_id,)).fetchone() is None:
        raise UnknownRun(f"the history holds no suite run {run_id}")


def touch_run(conn: Any, run_id: str, now: float) -> None:
    conn.execute("UPDATE suite_runs SET updated_at = ? WHERE run_id = ?", (now, run_id))


def set_run_end(conn: Any, run_id: str, *, finished: bool,
                stopped: str | None, now: float) -> None:
    if stopped is not None and stopped not in STOP_REASONS:
        raise ValueError(f"a run stops for one of {', '.join(STOP_REASONS)}, not {stopped!r}")
    cursor = conn.execute(
        "UPDATE suite_runs SET finished = ?, stopped = ?, updated_at = ? WHERE run_id = ?",
        (int(finished), stopped, now, run_id))
    if cursor.rowcount == 0:
        raise UnknownRun(f"the history holds no suite run {run_id}")


def group_comparison(conn: Any, run_id: str, case_id: str,
                     repeat: int) -> int | None:
    """The comparison holding the answers of (case, repeat) of a run, if one was saved."""
    row = conn.execute("SELECT id FROM comparisons WHERE suite_run = ? AND suite_case = ? "
                       "AND suite_repeat = ?", (run_id, case_id, repeat)).fetchone()
    return None if row is None else int(row[0])


def create_group_comparison(conn: Any, run_id: str, case_id: str, repeat: int,
                            group: GroupInfo, created_at: float, author: str = "") -> int:
    return dialect_of(conn).insert_id(
        conn,
        "INSERT INTO comparisons (created_at, source, prompt, system_prompt, conversation, "
        "blind, rerun_of, suite_run, suite_case, suite_repeat, author, uid) "
        "VALUES (?, 'eval', ?, ?, '[]', 0, NULL, ?, ?, ?, ?, ?)",
        (created_at, group.prompt, group.system_prompt, run_id, case_id, repeat, author,
         uuid.uuid4().hex))


def cell_place(conn: Any, run_id: str,
               key: tuple[str, str, int]) -> tuple[int | None, int | None] | None:
    """(comparison id, pane number) a saved cell's answer is in; None: no such cell."""
    row = conn.execute("SELECT comparison_id, pane FROM suite_results WHERE run_id = ? "
                       "AND case_id = ? AND model = ? AND repeat = ?",
                       (run_id, *key)).fetchone()
    return None if row is None else (row[0], row[1])


def put_result(conn: Any, run_id: str, cell: dict[str, Any], *,
               key: tuple[str, str, int], status: str, passed: bool | None,
               comparison_id: int | None, pane: int | None, finished_at: float) -> None:
    """Insert or replace one cell's row; a replaced cell keeps its place in the run's order
    (an upsert keeps the rowid that `read_results` orders by)."""
    data = {**cell, "comparison_id": comparison_id}
    conn.execute(
        "INSERT INTO suite_results (run_id, case_id, model, repeat, status, pass, data, "
        "comparison_id, pane, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, case_id, model, repeat) DO UPDATE SET status = excluded.status, "
        "pass = excluded.pass, data = excluded.data, comparison_id = excluded.comparison_id, "
        "pane = excluded.pane, finished_at = excluded.finished_at",
        (run_id, *key, status, None if passed is None else int(passed),
         _json_text(data, "cell"), comparison_id, pane, finished_at))


def delete_result(conn: Any, run_id: str, key: tuple[str, str, int]) -> None:
    conn.execute("DELETE FROM suite_results WHERE run_id = ? AND case_id = ? AND model = ? "
                 "AND repeat = ?", (run_id, *key))


def matching_run_id(conn: Any, given: str) -> str | None:
    """The run id `given` names: itself, else the one id it is a prefix of (as short git
    ids are). Raises `AmbiguousRunId` when it starts several."""
    if not given:
        return None
    if conn.execute("SELECT 1 FROM suite_runs WHERE run_id = ?", (given,)).fetchone():
        return given
    # (a scan of the runs table: a few rows per run, never its cells)
    found = [row[0] for row in conn.execute(
        "SELECT run_id FROM suite_runs WHERE substr(run_id, 1, ?) = ? ORDER BY run_id LIMIT 3",
        (len(given), given))]
    if len(found) > 1:
        shown = ", ".join(found[:2]) + (", ..." if len(found) > 2 else "")
        raise AmbiguousRunId(f"{given} starts the ids of several suite runs ({shown}): "
                             "give more of the id")
    return found[0] if found else None


def _object(text: str | None, what: str, run_id: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise UnreadableRun(f"suite run {run_id}'s stored {what} is not readable "
                            "(the history file was edited or damaged)")
    return value


def _models(text: str | None) -> list[str]:
    """A run's models; an unreadable list reads as none (the listing still shows the run)."""
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return []
    return [str(m) for m in value] if isinstance(value, list) else []


def read_run(conn: Any, run_id: str,
             convert: Callable[[dict[str, Any]], Any] | None = None) -> StoredRun | None:
    row = conn.execute("SELECT * FROM suite_runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    results, unreadable = read_results(conn, run_id, convert)
    return StoredRun(
        run_id=row["run_id"], name=row["name"], created_at=row["created_at"],
        suite=_object(row["suite"], "suite", run_id),
        settings=_object(row["settings"], "settings", run_id),
        models=_models(row["models"]), cells=row["cells"], finished=bool(row["finished"]),
        stopped=row["stopped"], updated_at=row["updated_at"], results=results,
        unreadable=unreadable, pairs=read_pairs(conn, run_id), user=row["author"])


def read_results(conn: Any, run_id: str,
                 convert: Callable[[dict[str, Any]], Any] | None = None
                 ) -> tuple[list[Any], tuple[tuple[str, str, int], ...]]:
    """Every saved cell's JSON, or with `convert` what it makes of each as it is read (so
    the dicts of a large run are never all held at once: `eval` reads its run back this
    way, benchmarks/eval_load.py); a cell `convert` refuses (KeyError, TypeError,
    ValueError) is unreadable."""
    results: list[Any] = []
    unreadable: list[tuple[str, str, int]] = []
    loads = json.loads
    for case_id, model, repeat, status, passed, data, comparison_id in conn.execute(
            "SELECT case_id, model, repeat, status, pass, data, comparison_id "
            "FROM suite_results WHERE run_id = ? ORDER BY rowid", (run_id,)):
        try:
            cell = loads(data)
        except (ValueError, TypeError):
            cell = None
        if not isinstance(cell, dict):
            unreadable.append((case_id, model, repeat))
            continue
        # The row's columns win: a deleted comparison leaves its id stale in the JSON.
        cell.update(case=case_id, model=model, repeat=repeat, status=status,
                    comparison_id=comparison_id)
        cell["pass"] = None if passed is None else bool(passed)
        if convert is not None:
            try:
                cell = convert(cell)
            except (KeyError, TypeError, ValueError):
                unreadable.append((case_id, model, repeat))
                continue
        results.append(cell)
    return results, tuple(unreadable)


def list_runs(conn: Any, limit: int, user: str | None = None) -> list[RunListing]:
    """Newest first, each with its counts tallied by SQLite (from `suite_results_tally`);
    `user`: only the runs that person started (None: everyone's)."""
    marks = ", ".join("?" for _ in NOT_FAILED)
    by = "" if user is None else "WHERE author = ? "
    who: tuple[str, ...] = () if user is None else (user,)
    rows = conn.execute(
        "SELECT r.run_id, r.name, r.created_at, r.models, r.cells, r.finished, r.stopped, "
        "r.author, "
        "COUNT(s.run_id) AS results, "
        "COALESCE(SUM(CASE WHEN s.pass = 1 THEN 1 ELSE 0 END), 0) AS passed, "
        f"COALESCE(SUM(CASE WHEN s.status NOT IN ({marks}) THEN 1 ELSE 0 END), 0) AS failed, "
        "COUNT(s.pass) AS judged "
        f"FROM (SELECT *, rowid AS seq FROM suite_runs {by}ORDER BY created_at DESC, "
        "rowid DESC LIMIT ?) r LEFT JOIN suite_results s ON s.run_id = r.run_id "
        # (every column named: PostgreSQL groups a subquery's rows by what is listed)
        "GROUP BY r.run_id, r.name, r.created_at, r.models, r.cells, r.finished, r.stopped, "
        "r.author, r.seq ORDER BY r.created_at DESC, r.seq DESC",
        (*NOT_FAILED, *who, limit)).fetchall()
    return [RunListing(run_id=row["run_id"], name=row["name"], created_at=row["created_at"],
                       models=_models(row["models"]), cells=row["cells"],
                       results=row["results"], passed=row["passed"], failed=row["failed"],
                       judged=row["judged"], finished=bool(row["finished"]),
                       stopped=row["stopped"], user=row["author"])
            for row in rows]


def keys_of(keys: Iterable[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The cells named, each once, in the order given."""
    return list(dict.fromkeys((str(c), str(m), int(r)) for c, m, r in keys))
