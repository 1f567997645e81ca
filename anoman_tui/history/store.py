"""The history: every comparison turn in a local SQLite file or a team's PostgreSQL
database, searchable, safe to share.

One file under the user's data directory (`default_path()`), in WAL mode so a
reader never waits for a writer, each save one short `BEGIN IMMEDIATE`
transaction with a busy timeout, so two processes (two app instances, or the app
and `anoman-tui compare`) can write it at once. A process killed mid-stream loses
only what was never committed: the next open finds a clean database.

Suite runs (`anoman-tui eval`) are kept here too, each cell saved as it finishes with
its answer as a pane of its (case, repeat)'s comparison; `runs.py` holds their tables
and queries, this class their transactions.

A PostgreSQL history (`HistoryStore.open("postgresql://...")`, the `history_url`
setting) is the same store with the same semantics: one set of queries, the few
expressions spelled differently in `engines.py`; each write takes a transaction-level
advisory lock, as SQLite's BEGIN IMMEDIATE takes the file's, so concurrent writers
queue rather than interleave. Its schema is created whole and versioned in its
`anoman_meta` table.

The schema is versioned (SQLite's `PRAGMA user_version`) and migrated forward on open:
the tables and each engine's steps are in `schema/`; how a record becomes rows and rows a
record is in `rows.py`; this module holds the connection, the transactions and the
queries.
A database this code cannot use (corrupt, a newer schema, locked, read-only, disk
full) raises `HistoryUnavailable` with one sentence saying why, and is left exactly
as it was found: nothing is written to it before it has been read and judged.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from anoman_tui import locations
from anoman_tui.history import runs as suite_runs
from anoman_tui.history.engines import (
    POSTGRESQL,
    SQLITE,
    WRITE_LOCK_KEY,
    PgConnection,
    db_errors,
    describe_url,
    is_url,
    pg_reason,
    pg_tsquery,
    server_address,
)
from anoman_tui.history.model import (
    ComparisonRecord,
    LeftOut,
    ListedComparison,
    ListedPane,
    ModelNumbers,
    PaneRecord,
    RoundJudgement,
    VotedRound,
    VoteRecord,
)
from anoman_tui.history.rows import (
    NEW_COMPARISON_PG,
    drop_pane,
    keyed_insert,
    pane_from_row,
    put_panes,
    recording_from_blob,
    stored_cost,
    turns_from_json,
    turns_json,
)
from anoman_tui.history.runs import GroupInfo, RunListing, StoredRun
from anoman_tui.history.schema.postgresql import (
    PG_BASE_VERSION,
    PG_MIGRATIONS,
    PG_TABLES,
    create_schema,
)
from anoman_tui.history.schema.shared import refresh_vote_patterns
from anoman_tui.history.schema.sqlite import MIGRATIONS, SCHEMA_VERSION
from anoman_tui.streaming.cost import HIDDEN
from anoman_tui.streaming.recording import RecordingError, StreamRecording

FILE_NAME = "history.sqlite3"
BUSY_TIMEOUT_S = 5.0


class VoteRefused(Exception):
    """A vote that cannot be recorded; `reason` says why in one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HistoryUnavailable(Exception):
    """The history cannot be used; `reason` is one sentence a user can act on.
    `transient`: the history's server cannot be reached now (it may come back: a save
    can wait for it, `pending.PendingSaves`)."""

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


def new_uid() -> str:
    """A fresh comparison uid (`add_uids`)."""
    return uuid.uuid4().hex


def default_path() -> Path:
    return locations.data_dir() / FILE_NAME


def _reason(exc: sqlite3.Error, path: Path) -> str:
    """One sentence for what SQLite said about the file."""
    message = str(exc).lower()
    if "locked" in message or "busy" in message:
        return f"{path} is locked by another program"
    if "readonly" in message or "read-only" in message:
        return f"{path} is read-only"
    if "full" in message:
        return f"the disk holding {path} is full"
    if "not a database" in message or "malformed" in message or "corrupt" in message:
        return f"{path} is not a readable history database (corrupt or another kind of file)"
    if "unable to open" in message:
        return f"{path} cannot be opened"
    return f"{path} cannot be used: {exc}"


def _is_read_only(path: Path) -> bool:
    # The permission bits, not only access(): a file the user marked read-only stays
    # untouched even for a user (root) the system would let write it.
    mode = path.stat().st_mode
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def _interpolated(nearest: list[float], rank: float) -> float:
    """A percentile at `rank` = q / 100 * (n - 1) of n values, linearly interpolated
    between the two nearest ranks: `nearest` holds the values at ranks int(rank) and the
    next (the one alone at the last rank)."""
    low = float(nearest[0])
    high = float(nearest[-1])
    return low + (high - low) * (rank - int(rank))


def _fts_query(search: str) -> str:
    """Every word must match, each as a prefix (so filtering works while typing)."""
    return " ".join('"' + word.replace('"', '""') + '"*' for word in search.split())


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class HistoryStore:
    """The history file, open. Use `HistoryStore.open(path)`.

    Safe to call from several threads (the app saves from a worker thread): one call
    at a time, so one thread's transaction never interleaves with another's.
    """

    def __init__(self, conn: Any, path: Path | None, *, fts: bool,
                 location: str | None = None) -> None:
        self.user = ""
        """Who saves and votes through this store when a record or call names no one
        (the opener sets it from the `user` setting)."""
        self._conn = conn
        self._lock = threading.Lock()
        self.dialect = POSTGRESQL if isinstance(conn, PgConnection) else SQLITE
        """The SQL this database speaks where the two engines differ (`engines.Dialect`)."""
        self._errors = db_errors(conn)
        self.path = path
        """The SQLite file; None for a PostgreSQL history."""
        self.location = location if location is not None else str(path)
        """Where the history is, as it may be shown: the file, or the database's URL
        without its password."""
        self.fts = fts
        """Whether search uses the full-text index (else LIKE over the tables)."""
        self.address: str | None = None
        """A PostgreSQL history's `host:port/db` (what the status line and the spool name
        it by, never with a user or password); None for a file."""

    @property
    def engine(self) -> str:
        """`sqlite` or `postgresql`."""
        return self.dialect.name

    def _reason(self, exc: BaseException) -> str:
        if isinstance(self._conn, PgConnection):
            return pg_reason(exc, self._conn.url)
        assert self.path is not None and isinstance(exc, sqlite3.Error)
        return _reason(exc, self.path)

    def _unavailable(self, exc: BaseException) -> HistoryUnavailable:
        # A PostgreSQL session that is gone (server down, restarting, network) may come
        # back; anything else (a refused statement, a full disk) will not by waiting.
        conn = self._conn
        transient = isinstance(conn, PgConnection) and (
            conn.broken or "cannot be reached" in self._reason(exc))
        return HistoryUnavailable(self._reason(exc), transient=transient)

    def _reconnect_if_lost(self) -> None:
        """A PostgreSQL session lost (the server restarted) is opened again before the
        next read or write; if the server is still away, that read or write refuses."""
        conn = self._conn
        if isinstance(conn, PgConnection) and conn.broken:
            conn.reconnect()

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str | None = None, *,
             timeout: float = BUSY_TIMEOUT_S) -> HistoryStore:
        """Open (creating if absent) and migrate the history at `path`.

        `path` may be a PostgreSQL URL (`postgresql://user@host:port/db`): the shared
        history there, its schema created or migrated as a file's is.

        Raises `HistoryUnavailable` for a file it cannot use, without writing to it.
        """
        if is_url(path):
            assert isinstance(path, str)
            return cls._open_postgresql(path, timeout)
        path = Path(path) if path is not None else default_path()
        existed = path.exists()
        if existed:
            if not path.is_file():
                raise HistoryUnavailable(f"{path} is not a file")
            if _is_read_only(path):
                raise HistoryUnavailable(f"{path} is read-only")
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HistoryUnavailable(
                    f"cannot create the folder {path.parent}: {exc.strerror or exc}"
                ) from None
        mode = "rw" if existed else "rwc"
        try:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode={mode}", uri=True, timeout=timeout,
                isolation_level=None, check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise HistoryUnavailable(_reason(exc, path)) from None
        try:
            return cls._prepare(conn, path, timeout)
        except HistoryUnavailable:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise HistoryUnavailable(_reason(exc, path)) from None

    @classmethod
    def _prepare(cls, conn: sqlite3.Connection, path: Path, timeout: float) -> HistoryStore:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        # Reading the header first: a corrupt file fails here, untouched.
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise HistoryUnavailable(
                f"{path} was written by a newer anoman-tui (schema {version}, "
                f"this one reads up to {SCHEMA_VERSION})"
            )
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if version == 0 and tables:
            raise HistoryUnavailable(f"{path} holds other data, not an anoman-tui history")
        # The write lock, before any change: a locked or read-only file fails here.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            for step in range(version, SCHEMA_VERSION):
                MIGRATIONS[step](conn)
            if version != SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("PRAGMA journal_mode = WAL")
        # WAL with NORMAL sync: a committed save survives the process being killed.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        fts = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'comparisons_fts'"
        ).fetchone() is not None
        return cls(conn, path, fts=fts)

    @classmethod
    def _open_postgresql(cls, url: str, timeout: float) -> HistoryStore:
        try:
            import psycopg
        except ImportError:
            raise HistoryUnavailable(
                "a PostgreSQL history needs its driver: pip install 'anoman-tui[postgresql]'"
            ) from None
        shown = describe_url(url)
        try:
            conn = PgConnection(url, connect_timeout=timeout)
        except psycopg.Error as exc:
            raise HistoryUnavailable(pg_reason(exc, url)) from None
        try:
            cls._prepare_postgresql(conn, shown)
        except HistoryUnavailable:
            conn.close()
            raise
        except psycopg.Error as exc:
            conn.close()
            raise HistoryUnavailable(pg_reason(exc, url)) from None
        store = cls(conn, None, fts=True, location=shown)
        store.address = str(server_address(url))
        return store

    @staticmethod
    def _prepare_postgresql(conn: PgConnection, shown: str) -> None:
        """Create or migrate the schema, or refuse (a newer one, another program's
        tables) without changing anything. Under the write lock: two processes opening
        a new database at once create its tables once."""
        conn.execute("BEGIN")
        try:
            conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
            present = {row[0] for row in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()")}
            version = 0
            if "anoman_meta" in present:
                row = conn.execute("SELECT value FROM anoman_meta "
                                   "WHERE key = 'schema_version'").fetchone()
                version = int(row[0]) if row is not None else 0
            elif present & set(PG_TABLES):
                raise HistoryUnavailable(
                    f"{shown} holds other data, not an anoman-tui history (use a database "
                    "of its own)")
            if version > SCHEMA_VERSION:
                raise HistoryUnavailable(
                    f"{shown} was written by a newer anoman-tui (schema {version}, "
                    f"this one reads up to {SCHEMA_VERSION})")
            if version == 0:
                conn.execute("CREATE TABLE anoman_meta (key TEXT PRIMARY KEY, "
                             "value TEXT NOT NULL)")
                create_schema(conn)
                version = PG_BASE_VERSION
            elif version < PG_BASE_VERSION:
                raise HistoryUnavailable(f"{shown} has an unknown schema {version}")
            for step in range(version - PG_BASE_VERSION, len(PG_MIGRATIONS)):
                PG_MIGRATIONS[step](conn)
            conn.execute(
                "INSERT INTO anoman_meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction and not conn.broken:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------

    def save(self, record: ComparisonRecord, *, uid: str | None = None) -> int:
        """Store one comparison turn in one short transaction; returns its id. `uid`:
        the id it had in another history (an import), else a fresh one; a uid the
        history holds already is refused (`HistoryUnavailable`): look it up first
        (`find_uid`)."""
        created = record.created_at or time.time()
        insert = ("INSERT INTO comparisons (created_at, source, prompt, system_prompt, "
                  "conversation, blind, rerun_of, suite_run, suite_case, suite_repeat, "
                  "author, uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        values = (created, record.source, record.prompt, record.system_prompt,
                  turns_json(record.conversation), int(record.blind), record.rerun_of,
                  record.suite_run, record.suite_case, record.suite_repeat,
                  record.user or self.user, uid or new_uid())
        # A blind round is found by its labels until the vote: a search by model name
        # must not tell which rounds a model is in.
        models = " ".join((p.label if record.blind else p.model) for p in record.panes)
        # On PostgreSQL the whole save is one pipelined round trip: the rows after the
        # comparison name its id by the sequence's value (NEW_COMPARISON_PG), and the id
        # is read once the commit has come back. The app saves a turn on a thread while
        # its panes stream, and after each wait on the server that thread must win the
        # GIL back from the UI's (benchmarks/history_save_lag.py --postgres).
        inserted = None
        with self.writing(pipelined=True) as conn:
            if self.dialect is POSTGRESQL:
                inserted = conn.execute(insert + " RETURNING id", values)
                key: int | str = NEW_COMPARISON_PG
            else:
                key = self.dialect.insert_id(conn, insert, values)
            put_panes(conn, key, record.panes)
            if self.fts:
                sql, lead = keyed_insert(
                    "INSERT INTO comparisons_fts (rowid, prompt, models) VALUES (?, ?, ?)", key)
                conn.execute(sql, (*lead, record.prompt, models))
        if inserted is None:
            return int(key)
        try:
            return int(inserted.fetchone()[0])
        except self._errors as exc:
            raise self._unavailable(exc) from None

    # -- reading ---------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """One read, under the lock, of the open connection (a `sqlite3.Connection` or an
        `engines.PgConnection`); what the database raises becomes `HistoryUnavailable`
        (an FTS5 query error goes up as it is: the caller falls back to LIKE). Public for
        what reads rows as stored, such as copying a history (`transfer`)."""
        try:
            with self._lock:
                self._reconnect_if_lost()
                yield self._conn
        except self._errors as exc:
            if isinstance(exc, sqlite3.OperationalError) and "fts5" in str(exc).lower():
                raise
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.DatabaseError):
                raise
            raise self._unavailable(exc) from None

    def get(self, comparison_id: int) -> ComparisonRecord | None:
        found = self._load(
            "SELECT * FROM comparisons WHERE id = ?", (comparison_id,)
        )
        return found[0] if found else None

    def find_uid(self, uid: str) -> int | None:
        """The id of the comparison with this uid (`ComparisonRecord.uid`), if held."""
        with self.reading() as conn:
            row = conn.execute("SELECT id FROM comparisons WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else int(row[0])

    def recordings(self, comparison_id: int) -> dict[int, StreamRecording]:
        """Pane number -> its recorded stream, for the panes that were recorded.

        Raises `RecordingError` when a stored recording cannot be read back (an edited
        or damaged file), naming the pane.
        """
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT pane, data FROM recordings WHERE comparison_id = ? ORDER BY pane",
                (comparison_id,)).fetchall()
        found = {}
        for row in rows:
            try:
                found[row["pane"]] = recording_from_blob(row["data"])
            except RecordingError as exc:
                raise RecordingError(f"pane {row['pane']}: {exc.reason}") from None
        return found

    def recording_sizes(self, comparison_id: int) -> dict[int, int]:
        """Pane number -> its recorded stream's size in bytes (as received)."""
        with self.reading() as conn:
            return {row["pane"]: row["body_bytes"] for row in conn.execute(
                "SELECT pane, body_bytes FROM recordings WHERE comparison_id = ?",
                (comparison_id,))}

    def recent(self, limit: int = 50, search: str | None = None, *,
               before: int | None = None, user: str | None = None) -> list[ComparisonRecord]:
        """Newest first; `search` keeps those whose prompt or a model matches every word,
        `user` those that person ran (None: everyone's).

        `before` (an id) gives the next page: those older than the last one shown.
        """
        return self._matching(limit, search, before, "c.*", self._load, user)

    def listing(self, limit: int = 50, search: str | None = None, *,
                before: int | None = None, user: str | None = None
                ) -> list[ListedComparison]:
        """As `recent`, but only what a list shows (no answers): cheap to read while
        typing a filter. `get` reads one whole."""
        return self._matching(
            limit, search, before,
            "c.id, c.created_at, c.prompt, c.conversation != '[]' AS follow_up, c.blind, "
            "EXISTS (SELECT 1 FROM recordings r WHERE r.comparison_id = c.id) AS recorded, "
            "c.suite_run, c.suite_case, c.suite_repeat, c.author",
            self._list, user)

    def _matching(self, limit: int, search: str | None, before: int | None, columns: str,
                  load: Callable[[str, Iterable[Any]], list[Any]],
                  user: str | None = None) -> list[Any]:
        words = (search or "").split()
        below = (1 << 62) if before is None else before
        # One person's (`user`), as one more condition on every form of the query.
        by = "" if user is None else " AND c.author = ?"
        who: tuple[Any, ...] = () if user is None else (user,)
        if not words:
            return load(f"SELECT {columns} FROM comparisons c WHERE c.id < ?{by} "
                        "ORDER BY c.id DESC LIMIT ?", (below, *who, limit))
        if self.fts and self.dialect is POSTGRESQL:
            query = pg_tsquery(search or "")
            if query is not None:
                return load(
                    f"SELECT {columns} FROM comparisons c JOIN comparisons_fts f "
                    "ON f.rowid = c.id WHERE f.document @@ to_tsquery('simple', ?) "
                    f"AND f.rowid < ?{by} ORDER BY f.rowid DESC LIMIT ?",
                    (query, below, *who, limit),
                )
        elif self.fts:
            try:
                return load(
                    f"SELECT {columns} FROM comparisons c JOIN comparisons_fts f "
                    f"ON f.rowid = c.id WHERE comparisons_fts MATCH ? AND f.rowid < ?{by} "
                    "ORDER BY f.rowid DESC LIMIT ?",
                    (_fts_query(search or ""), below, *who, limit),
                )
            except sqlite3.OperationalError:
                pass  # a query FTS5 cannot parse: the plain match below still answers
        like = self.dialect.like
        clauses = []
        params: list[Any] = []
        for word in words:
            clauses.append(
                f"(c.prompt {like} ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM panes p "
                f"WHERE p.comparison_id = c.id AND p.model {like} ? ESCAPE '\\' "
                # (not by a model's name in a blind round before its vote)
                "AND (c.blind = 0 OR EXISTS (SELECT 1 FROM votes v "
                "WHERE v.comparison_id = c.id))))"
            )
            params += [_like(word), _like(word)]
        return load(
            f"SELECT {columns} FROM comparisons c WHERE {' AND '.join(clauses)} AND c.id < ?"
            f"{by} ORDER BY c.id DESC LIMIT ?",
            (*params, below, *who, limit),
        )

    def _list(self, sql: str, params: Iterable[Any]) -> list[ListedComparison]:
        with self.reading() as conn:
            rows = conn.execute(sql, tuple(params)).fetchall()
            if not rows:
                return []
            ids = [row["id"] for row in rows]
            panes: dict[int, list[ListedPane]] = {i: [] for i in ids}
            marks = ", ".join("?" for _ in ids)
            voted = self._voted(ids, marks)
            hidden = {row["id"] for row in rows if row["blind"] and row["id"] not in voted}
            for row in conn.execute(
                "SELECT comparison_id, pane, model, status, cost_decimal, cost_source, label, "
                "simulated FROM panes "
                f"WHERE comparison_id IN ({marks}) ORDER BY comparison_id, pane", ids,
            ):
                if row["comparison_id"] in hidden:  # a blind round: its labels only
                    panes[row["comparison_id"]].append(ListedPane(
                        row["pane"], row["label"] or f"pane {row['pane']}", row["status"],
                        HIDDEN, bool(row["simulated"])))
                    continue
                panes[row["comparison_id"]].append(ListedPane(
                    row["pane"], row["model"], row["status"],
                    stored_cost(row["cost_decimal"], row["cost_source"]), bool(row["simulated"])))
        return [ListedComparison(row["id"], row["created_at"], row["prompt"],
                                 bool(row["follow_up"]), tuple(panes[row["id"]]),
                                 blind=bool(row["blind"]), hidden=row["id"] in hidden,
                                 recorded=bool(row["recorded"]), suite_run=row["suite_run"],
                                 suite_case=row["suite_case"],
                                 suite_repeat=row["suite_repeat"], user=row["author"])
                for row in rows]

    def _voted(self, ids: list[int], marks: str) -> dict[int, VoteRecord]:
        return {
            row["comparison_id"]: VoteRecord(bool(row["blind"]), row["outcome"],
                                             row["winner_pane"], row["voted_at"],
                                             row["author"])
            for row in self._conn.execute(
                f"SELECT * FROM votes WHERE comparison_id IN ({marks})", ids)
        }

    def _load(self, sql: str, params: Iterable[Any]) -> list[ComparisonRecord]:
        with self.reading() as conn:
            rows = conn.execute(sql, tuple(params)).fetchall()
            if not rows:
                return []
            ids = [row["id"] for row in rows]
            panes: dict[int, list[PaneRecord]] = {i: [] for i in ids}
            marks = ", ".join("?" for _ in ids)
            for pane_row in conn.execute(
                f"SELECT * FROM panes WHERE comparison_id IN ({marks}) "
                "ORDER BY comparison_id, pane", ids,
            ):
                panes[pane_row["comparison_id"]].append(pane_from_row(pane_row))
            votes = self._voted(ids, marks)
            recorded = {row[0] for row in conn.execute(
                f"SELECT DISTINCT comparison_id FROM recordings WHERE comparison_id IN ({marks})",
                ids)}
        return [
            ComparisonRecord(
                prompt=row["prompt"],
                panes=tuple(panes[row["id"]]),
                system_prompt=row["system_prompt"],
                conversation=turns_from_json(row["conversation"]) or (),
                created_at=row["created_at"],
                source=row["source"],
                id=row["id"],
                blind=bool(row["blind"]),
                vote=votes.get(row["id"]),
                rerun_of=row["rerun_of"],
                recorded=row["id"] in recorded,
                suite_run=row["suite_run"],
                suite_case=row["suite_case"],
                suite_repeat=row["suite_repeat"],
                user=row["author"],
                uid=row["uid"],
            )
            for row in rows
        ]

    # -- votes -----------------------------------------------------------------

    def voted_rounds(self, *, include_sighted: bool = False,
                     user: str | None = None) -> list[VotedRound]:
        """Every distinct kind of voted round with how many there were: its models,
        which failed, the outcome and the winner's model. Blind votes only unless
        `include_sighted`; `user`: only that person's votes. Grouped by the database,
        so 100,000 votes come back as the few thousand patterns a scoreboard needs."""
        # (A vote on a comparison with no pane has no pattern, and no round to count.)
        conditions = ["v.pattern IS NOT NULL"] + ([] if include_sighted else ["v.blind = 1"]) + (
            [] if user is None else ["v.author = ?"])
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT v.pattern, v.blind, v.outcome, v.winner_pane, "
                "j.outcome AS j_outcome, j.best AS j_best, COUNT(*) AS n "
                "FROM votes v LEFT JOIN round_judgements j "
                "ON j.comparison_id = v.comparison_id AND j.outcome IN ('win', 'tie') "
                f"WHERE {' AND '.join(conditions)} GROUP BY v.pattern, v.blind, v.outcome, "
                "v.winner_pane, j.outcome, j.best", () if user is None else (user,)
            ).fetchall()
        # A round's fields as a tuple while counting, each pattern parsed once: the same
        # pattern comes back with each outcome and winner (12,566 rows in 0.15 s of
        # Python for 100,000 votes over 12 models, half of it building dataclasses).
        parsed: dict[str, tuple[tuple[str, ...], frozenset[str], dict[int, str],
                                tuple[tuple[str, str], ...]]] = {}
        counts: dict[tuple[Any, ...], int] = {}
        for pattern, blind, outcome, winner_pane, j_outcome, j_best, n in rows:
            found = parsed.get(pattern)
            if found is None:
                # (concatenation order is the engine's: sorted here, so equal rounds merge)
                panes = sorted((int(number), model, status, left_out)
                               for number, model, status, left_out, *_ in
                               ((*part.split("\x1f"), "") for part in pattern.split("\x1e")))
                found = parsed[pattern] = (
                    tuple(m for _, m, _, _ in panes),
                    frozenset(m for _, m, status, _ in panes if status != "completed"),
                    {number: m for number, m, _, _ in panes},
                    tuple((m, why) for _, m, _, why in panes if why))
            models, failed, by_pane, left_out = found
            key = (models, failed, outcome, by_pane.get(winner_pane), bool(blind), j_outcome,
                   j_best if j_outcome == "win" else None, left_out)
            counts[key] = counts.get(key, 0) + n
        return [VotedRound(models, failed, outcome, winner, blind, judge_outcome=j_outcome,
                           judge_winner=j_winner, count=n, left_out=left_out)
                for (models, failed, outcome, winner, blind, j_outcome, j_winner, left_out), n
                in counts.items()]

    def votes_by_user(self, *, include_sighted: bool = False) -> dict[str, int]:
        """How many votes each person cast (blind ones unless `include_sighted`); votes
        cast before authors were kept count under ""."""
        where = "" if include_sighted else "WHERE blind = 1"
        with self.reading() as conn:
            return {row[0]: int(row[1]) for row in conn.execute(
                f"SELECT author, COUNT(*) FROM votes {where} GROUP BY author ORDER BY author")}

    def simulated_models(self) -> frozenset[str]:
        """The models any of whose saved answers came from a simulated model (the local
        gateway's): every view that names them says so."""
        with self.reading() as conn:
            return frozenset(row[0] for row in conn.execute(
                "SELECT DISTINCT model FROM panes WHERE simulated = 1"))

    def model_numbers(self) -> dict[str, ModelNumbers]:
        """What the history knows of each model, over every pane it answered: its TTFTs
        and tokens/s (sorted), mean cost shown, and how each answer ended. Aggregated by
        the database over columns kept for it (schema 6), not JSON read in Python.

        Only what the model did (`left_out_reason`, `left_out`): answers under a demo
        scenario or refused for their request are left out of every figure, cache hits
        out of TTFT and tokens/s."""
        numbers: dict[str, ModelNumbers] = {}
        with self.reading() as conn:
            for row in conn.execute(
                    "SELECT model, COUNT(*) AS n, AVG(cost_usd) AS cost FROM panes "
                    "WHERE left_out IS NULL OR left_out = 'cache_hit' GROUP BY model"):
                numbers[row["model"]] = ModelNumbers(answers=row["n"],
                                                     mean_cost=row["cost"])
            # (from the index of simulated panes: `simulated` is not in panes_by_model)
            for row in conn.execute(
                    "SELECT model, COUNT(*) AS n FROM panes WHERE simulated = 1 "
                    "GROUP BY model"):
                numbers.setdefault(row["model"], ModelNumbers()).simulated_answers = row["n"]
            for row in conn.execute(
                    "SELECT model, failure_kind, COUNT(*) AS n FROM panes "
                    "WHERE status = 'failed' AND left_out IS NULL "
                    "GROUP BY model, failure_kind"):
                kind = row["failure_kind"] or "failed"
                numbers[row["model"]].failures[kind] = row["n"]
            if self.dialect is POSTGRESQL:
                # PostgreSQL computes them: percentile_cont is the same interpolation
                # between the two nearest ranks as `_interpolated`; sending 600,000
                # values as text to split here took 2 s for 100,000 rounds.
                for row in conn.execute(
                        "SELECT model, percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP "
                        "(ORDER BY ttft_s) AS t, percentile_cont(ARRAY[0.5, 0.95]) WITHIN "
                        "GROUP (ORDER BY tokens_per_s) AS r FROM panes "
                        "WHERE left_out IS NULL GROUP BY model"):
                    found = numbers[row["model"]].percentiles
                    for column, pair in (("ttft_s", row["t"]), ("tokens_per_s", row["r"])):
                        for q, value in zip((50.0, 95.0), pair or (None, None), strict=True):
                            if value is not None:
                                found[(column, q)] = float(value)
                return numbers
            # SQLite: each percentile's two nearest ranks read from the model's index of
            # the column (`panes_by_ttft`, `panes_by_rate`) and interpolated here; the
            # 600,000 values sent as text to split and sort here took 0.45 s.
            sizes = {row[0]: (row[1], row[2]) for row in conn.execute(
                "SELECT model, COUNT(ttft_s), COUNT(tokens_per_s) FROM panes "
                "WHERE left_out IS NULL GROUP BY model")}
            for model, counts in sizes.items():
                found = numbers[model].percentiles
                for column, size in zip(("ttft_s", "tokens_per_s"), counts, strict=True):
                    for q in (50.0, 95.0):
                        if not size:
                            continue
                        rank = q / 100 * (size - 1)
                        pair = [row[0] for row in conn.execute(
                            f"SELECT {column} FROM panes WHERE model = ? AND left_out IS NULL "
                            f"AND {column} IS NOT NULL ORDER BY {column} LIMIT 2 OFFSET ?",
                            (model, int(rank)))]
                        found[(column, q)] = _interpolated(pair, rank)
        return numbers

    def left_out(self) -> LeftOut:
        """How many comparisons and answers the scoreboard's figures leave out, by reason
        (`left_out_reason`): read from the index of the few panes left out."""
        rounds, answers = {}, {}
        with self.reading() as conn:
            for row in conn.execute(
                    "SELECT left_out, COUNT(DISTINCT comparison_id) AS r, COUNT(*) AS n "
                    "FROM panes WHERE left_out IS NOT NULL GROUP BY left_out"):
                rounds[row["left_out"]] = int(row["r"])
                answers[row["left_out"]] = int(row["n"])
        return LeftOut(rounds=rounds, answers=answers)

    def cast_vote(self, comparison_id: int, outcome: str, winner_pane: int | None, *,
                  blind: bool, voted_at: float | None = None, user: str | None = None) -> None:
        """Record the one vote a comparison gets (by `user`, else the store's `user`);
        raises `VoteRefused` (already voted: the first vote stays, and the refusal says
        who cast it; no such comparison) or `HistoryUnavailable`. A blind round becomes
        searchable by its models once voted on."""
        if outcome not in ("win", "tie", "bad") or (outcome == "win") != (winner_pane is not None):
            raise ValueError(f"not a vote: {outcome} {winner_pane}")
        with self.writing() as conn:
            if conn.execute("SELECT 1 FROM comparisons WHERE id = ?",
                            (comparison_id,)).fetchone() is None:
                raise VoteRefused(f"there is no comparison {comparison_id}")
            first = conn.execute("SELECT author FROM votes WHERE comparison_id = ?",
                                 (comparison_id,)).fetchone()
            if first is not None:
                by = f" by {first[0]}" if first[0] else ""
                raise VoteRefused(f"comparison {comparison_id} was already voted on{by}")
            conn.execute(
                "INSERT INTO votes (comparison_id, blind, outcome, winner_pane, "
                "voted_at, author) VALUES (?, ?, ?, ?, ?, ?)",
                (comparison_id, int(blind), outcome, winner_pane,
                 voted_at if voted_at is not None else time.time(),
                 self.user if user is None else user))
            refresh_vote_patterns(conn, self.dialect is POSTGRESQL, (comparison_id,))
            if self.fts:
                models = " ".join(r[0] for r in conn.execute(
                    "SELECT model FROM panes WHERE comparison_id = ? ORDER BY pane",
                    (comparison_id,)))
                conn.execute("UPDATE comparisons_fts SET models = ? WHERE rowid = ?",
                             (models, comparison_id))

    def save_round_judgement(self, comparison_id: int, judge: str, outcome: str,
                             best: str | None, data: dict[str, Any], *,
                             judged_at: float | None = None) -> None:
        """Keep the arena judge's verdict with a voted round (replacing an earlier one).
        Raises `VoteRefused` for a round not voted on yet (the judge never runs before
        the vote) or `HistoryUnavailable`."""
        if outcome not in ("win", "tie", "none") or (outcome == "win") != (best is not None):
            raise ValueError(f"not a verdict: {outcome} {best}")
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        with self.writing() as conn:
            if conn.execute("SELECT 1 FROM votes WHERE comparison_id = ?",
                            (comparison_id,)).fetchone() is None:
                raise VoteRefused(f"round {comparison_id} has no vote: the judge "
                                  "gives its verdict after the vote")
            conn.execute(
                "INSERT INTO round_judgements (comparison_id, judge, outcome, best, data, "
                "judged_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (comparison_id) DO UPDATE "
                "SET judge = excluded.judge, outcome = excluded.outcome, "
                "best = excluded.best, data = excluded.data, judged_at = excluded.judged_at",
                (comparison_id, judge, outcome, best, text,
                 judged_at if judged_at is not None else time.time()))

    def round_judgement(self, comparison_id: int) -> RoundJudgement | None:
        """The judge's verdict kept with a round, if any (an unreadable one: None)."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT judge, outcome, best, data, judged_at FROM round_judgements "
                "WHERE comparison_id = ?", (comparison_id,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row["data"])
        except (ValueError, TypeError):
            return None
        if not isinstance(data, dict):
            return None
        return RoundJudgement(comparison_id, row["judge"], row["outcome"], row["best"],
                              data, row["judged_at"])

    # -- suite runs (history/runs.py) --------------------------------------------

    @contextlib.contextmanager
    def writing(self, *, pipelined: bool = False) -> Iterator[Any]:
        """One short write transaction, under the lock (and the database's write lock:
        `Dialect.begin_write`): committed whole or not at all; what the database raises
        becomes `HistoryUnavailable`. `pipelined` (PostgreSQL): its statements are sent
        without waiting for each answer, for a transaction that reads little back.
        Public for what writes rows as stored, such as copying a history (`transfer`)."""
        with self._lock:
            try:
                self._reconnect_if_lost()
                conn = self._conn
                batch = (conn.pipeline() if pipelined and isinstance(conn, PgConnection)
                         else contextlib.nullcontext())
                try:
                    with batch:
                        self.dialect.begin_write(conn)
                        yield conn
                        conn.execute("COMMIT")
                except BaseException:
                    # (out of the pipeline: rolled back whatever the batch had reached)
                    if conn.in_transaction and not getattr(conn, "broken", False):
                        conn.execute("ROLLBACK")
                    raise
            except self._errors as exc:
                raise self._unavailable(exc) from None

    def create_run(self, run_id: str, *, name: str, suite: dict[str, Any],
                   settings: dict[str, Any], models: list[str], cells: int,
                   created_at: float | None = None, user: str | None = None) -> None:
        """Record a suite run about to start: its suite (`Suite.to_json()`) and settings
        kept whole for `--resume`. An id already held raises `RunExists` (never
        overwritten); JSON that cannot be stored raises ValueError."""
        now = time.time()
        with self.writing() as conn:
            suite_runs.insert_run(conn, run_id, name=name, suite=suite, settings=settings,
                                  models=models, cells=cells,
                                  created_at=created_at if created_at is not None else now,
                                  now=now, author=self.user if user is None else user)

    def save_cell(self, run_id: str, cell: dict[str, Any], *, case_id: str, model: str,
                  repeat: int, status: str, passed: bool | None,
                  pane: PaneRecord | None, group: GroupInfo | None = None) -> int | None:
        """Save one finished cell of a run in one transaction; returns the id of the
        comparison holding its answer (None for a cell with no answer: not_run).

        With a `pane`, the (case, repeat)'s comparison is found or made (from `group`),
        the pane (its number as given) is put in it, replacing one of that number and
        its recording, and the cell's row (`cell`, its JSON, with `comparison_id` filled
        in) is inserted or replaced. A cell saved again leaves no pane of its earlier
        save behind. A kill between two saves leaves every earlier save whole.
        Raises `UnknownRun` for a run not created, `HistoryUnavailable`.
        """
        if pane is not None and group is None:
            raise ValueError("a cell with an answer needs its group to make its comparison")
        key = (case_id, model, repeat)
        now = time.time()
        with self.writing() as conn:
            suite_runs.require_run(conn, run_id)
            before = suite_runs.cell_place(conn, run_id, key)
            if before is not None and before[0] is not None and before[1] is not None:
                drop_pane(conn, before[0], before[1])
            comparison_id = None
            if pane is not None and group is not None:
                comparison_id = suite_runs.group_comparison(conn, run_id, case_id, repeat)
                made = comparison_id is None
                if comparison_id is None:
                    comparison_id = suite_runs.create_group_comparison(
                        conn, run_id, case_id, repeat, group,
                        group.created_at if group.created_at is not None else now,
                        author=suite_runs.run_author(conn, run_id))
                drop_pane(conn, comparison_id, pane.pane)
                put_panes(conn, comparison_id, (pane,))
                self._index_models(conn, comparison_id, group.prompt if made else None)
            suite_runs.put_result(conn, run_id, cell, key=key, status=status, passed=passed,
                                  comparison_id=comparison_id,
                                  pane=None if pane is None else pane.pane, finished_at=now)
            if before is not None and before[0] is not None and before[0] != comparison_id:
                self._drop_if_empty(conn, before[0])
            refresh_vote_patterns(conn, self.dialect is POSTGRESQL, {
                i for i in (comparison_id, None if before is None else before[0])
                if i is not None})
            suite_runs.touch_run(conn, run_id, now)
        return comparison_id

    def delete_cells(self, run_id: str, keys: Iterable[tuple[str, str, int]]) -> None:
        """Forget cells of a run (`--retry-errors` runs them again): their rows and their
        panes; a comparison left with no pane goes too. Cells not saved are ignored."""
        now = time.time()
        with self.writing() as conn:
            suite_runs.require_run(conn, run_id)
            touched: set[int] = set()
            for key in suite_runs.keys_of(keys):
                suite_runs.delete_pairs_of(conn, run_id, key)
                place = suite_runs.cell_place(conn, run_id, key)
                if place is None:
                    continue
                suite_runs.delete_result(conn, run_id, key)
                comparison_id, pane = place
                if comparison_id is not None and pane is not None:
                    drop_pane(conn, comparison_id, pane)
                    touched.add(comparison_id)
            for comparison_id in sorted(touched):
                self._drop_if_empty(conn, comparison_id)
            refresh_vote_patterns(conn, self.dialect is POSTGRESQL, sorted(touched))
            suite_runs.touch_run(conn, run_id, now)

    def save_pair(self, run_id: str, pair: dict[str, Any]) -> None:
        """Save one pairwise verdict of a run (`PairJudgement.to_json()`), replacing one
        of the same (case, repeat, a, b). Raises `UnknownRun`, `HistoryUnavailable`."""
        now = time.time()
        with self.writing() as conn:
            suite_runs.require_run(conn, run_id)
            suite_runs.put_pair(conn, run_id, pair)
            suite_runs.touch_run(conn, run_id, now)

    def finish_run(self, run_id: str, *, finished: bool, stopped: str | None) -> None:
        """Mark how a run (or one resumed stretch of it) ended: `stopped` is one of
        `runs.STOP_REASONS` or None. Raises `UnknownRun`, ValueError for another reason."""
        now = time.time()
        with self.writing() as conn:
            suite_runs.set_run_end(conn, run_id, finished=finished, stopped=stopped, now=now)

    def run(self, run_id: str, convert: Callable[[dict[str, Any]], Any] | None = None
            ) -> StoredRun | None:
        """The run `run_id` names, or one whose id it uniquely begins (`AmbiguousRunId`
        when several), with every saved cell (its JSON, or what `convert` makes of it);
        None when none matches. A cell whose JSON cannot be read (or `convert` refuses) is
        left out and named in `unreadable`; a suite or settings that cannot be read raise
        `UnreadableRun`."""
        with self.reading() as conn:
            found = suite_runs.matching_run_id(conn, run_id)
            return None if found is None else suite_runs.read_run(conn, found, convert)

    def runs(self, limit: int = 50, *, user: str | None = None) -> list[RunListing]:
        """The latest suite runs, newest first, with their cells counted (not read);
        `user`: those that person started (None: everyone's)."""
        with self.reading() as conn:
            return suite_runs.list_runs(conn, limit, user)

    def run_comparison(self, run_id: str, case_id: str, repeat: int) -> int | None:
        """The comparison holding the answers of (case, repeat) of a run, if saved."""
        with self.reading() as conn:
            return suite_runs.group_comparison(conn, run_id, case_id, repeat)

    def _index_models(self, conn: Any, comparison_id: int,
                      new_prompt: str | None) -> None:
        """Keep a grown comparison searchable by every model it now holds; `new_prompt`:
        it was just made, and gets its row in the index."""
        if not self.fts:
            return
        models = " ".join(r[0] for r in conn.execute(
            "SELECT model FROM panes WHERE comparison_id = ? ORDER BY pane", (comparison_id,)))
        if new_prompt is not None:
            conn.execute("INSERT INTO comparisons_fts (rowid, prompt, models) VALUES (?, ?, ?)",
                         (comparison_id, new_prompt, models))
        else:
            conn.execute("UPDATE comparisons_fts SET models = ? WHERE rowid = ?",
                         (models, comparison_id))

    def _drop_if_empty(self, conn: Any, comparison_id: int) -> None:
        """Delete a comparison that has lost its last pane (its index row with it); else
        index the models it still has."""
        if conn.execute("SELECT 1 FROM panes WHERE comparison_id = ? LIMIT 1",
                        (comparison_id,)).fetchone() is not None:
            self._index_models(conn, comparison_id, None)
            return
        conn.execute("DELETE FROM comparisons WHERE id = ?", (comparison_id,))
        if self.fts:
            conn.execute("DELETE FROM comparisons_fts WHERE rowid = ?", (comparison_id,))
