"""The two engines a history lives on: an embedded SQLite file, or a shared PostgreSQL
database (`history_url`). The store (store.py, runs.py, schema/) keeps one set of queries,
written in the SQL both understand, with `?` placeholders; what differs lives here:

- `PgConnection` gives a psycopg 3 connection the face of a `sqlite3.Connection` that
  the store uses (`execute` returning a cursor whose rows index by name and position,
  `executemany`, `in_transaction`), turning `?` into psycopg's `%s`;
- `Dialect` holds the few expressions that are spelled differently (string aggregation,
  case-insensitive LIKE, the write lock, an insert's new id, full-text search);
- `describe_url` / `pg_reason` say where a server is and what went wrong in one
  sentence, never with the password.

Why psycopg 3 under a small dialect layer rather than SQLAlchemy Core: the store's
queries are hand-tuned SQL (covering indexes, grouped patterns for the scoreboard) and
its careful transaction, migration and refusal handling is written against a DB-API
connection; psycopg 3 is the maintained PostgreSQL driver, with binary wheels, and the
differences between the two engines are a dozen expressions, not a query language.

psycopg is imported only when a PostgreSQL history is opened (start-up time; SQLite
users never load it). May import: the standard library, psycopg.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

URL_SCHEMES = ("postgresql", "postgres")

# One write at a time, across every process writing the database: the transaction-level
# advisory lock is PostgreSQL's counterpart of SQLite's BEGIN IMMEDIATE, so both engines
# give a save, a vote or a cell the same all-or-nothing, one-after-another semantics.
WRITE_LOCK_KEY = 0x616E6F6D616E  # "anoman"


def is_url(location: object) -> bool:
    """Whether `location` names a PostgreSQL database (else a SQLite file)."""
    return isinstance(location, str) and location.split(":", 1)[0].lower() in URL_SCHEMES


def describe_url(url: str) -> str:
    """The URL as it may be shown: user, host, port and database, never a password."""
    return scrub_url(url)


_PASSWORD_IN_URL = re.compile(r"(?i)\b((?:postgres(?:ql)?|[a-z][a-z0-9+.-]*)://[^:/@\s]*):[^@/\s]*@")


_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&\s'\"]*")


def scrub_url(text: str) -> str:
    """`text` with the password of every URL in it masked (`user:***@host`)."""
    # (and libpq's `?password=` query parameter)
    return _QUERY_PASSWORD.sub(r"\1***", _PASSWORD_IN_URL.sub(r"\1:***@", text))


@dataclass(frozen=True)
class ServerAddress:
    host: str
    port: str
    database: str

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"


def server_address(url: str) -> ServerAddress:
    """Where a URL points (libpq's defaults filled in), for messages."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    host = parts.hostname or (query.get("host") or ["localhost"])[0]
    try:
        port = str(parts.port or 5432)
    except ValueError:
        port = "?"
    database = urllib.parse.unquote(parts.path.lstrip("/")) or (
        urllib.parse.unquote(parts.username or "") or "postgres")
    return ServerAddress(host, port, database)


def pg_reason(exc: BaseException, url: str) -> str:
    """One sentence for what PostgreSQL (or libpq) said, naming the host and database."""
    where = server_address(url)
    message = str(exc).lower()
    if "password authentication failed" in message or "no password supplied" in message \
            or "authentication failed" in message:
        return (f"the PostgreSQL server at {where.host}:{where.port} refused the user or "
                f"password for database {where.database}")
    if "does not exist" in message and "database" in message:
        return (f"the PostgreSQL server at {where.host}:{where.port} has no database "
                f"{where.database}")
    if "permission denied" in message:
        return (f"the PostgreSQL user has no permission to use database {where.database} "
                f"at {where.host}:{where.port}")
    if any(s in message for s in ("connection refused", "could not connect", "timeout",
                                  "timed out", "server closed the connection",
                                  "connection is lost", "connection is closed",
                                  "terminating connection", "could not translate host",
                                  "no route", "network is unreachable", "the connection is",
                                  "consuming input failed", "sending query failed",
                                  "server conn crashed", "shutting down")):
        return (f"the PostgreSQL server at {where.host}:{where.port} (database "
                f"{where.database}) cannot be reached")
    first = scrub_url(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    return f"the PostgreSQL history {where} cannot be used: {first}"


class _Row(tuple[Any, ...]):
    """A result row readable as `row["name"]` and `row[0]`, as `sqlite3.Row` is."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> _Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> Any:
    index = {column.name: i for i, column in enumerate(cursor.description or ())}

    def make(values: Sequence[Any]) -> _Row:
        return _Row(values, index)

    return make


def _storable(params: Iterable[Any]) -> tuple[Any, ...]:
    """Parameters PostgreSQL accepts: its text cannot hold NUL, which SQLite's can (a
    model may send one), so a NUL in text becomes U+FFFD, the replacement character: a
    save never fails for it. (Recordings are bytes: kept exact.)"""
    return tuple(p.replace("\x00", "\ufffd") if isinstance(p, str) and "\x00" in p else p
                 for p in params)


_translated: dict[str, str] = {}


def _translate(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (a literal `%` doubled). The store's SQL has no
    `?` inside a string literal."""
    found = _translated.get(sql)
    if found is None:
        found = _translated[sql] = sql.replace("%", "%%").replace("?", "%s")
    return found


class PgConnection:
    """A psycopg connection in autocommit mode, used as the store uses sqlite3's."""

    def __init__(self, url: str, *, connect_timeout: float) -> None:
        self.url = url
        self._timeout = connect_timeout
        self._conn = self._connect()

    def _connect(self) -> Any:
        import psycopg

        # autocommit: a read is its own statement (as SQLite's autocommit reads are);
        # writes open their transaction themselves (`Dialect.begin_write`).
        return psycopg.connect(self.url, autocommit=True,
                               connect_timeout=max(1, int(self._timeout)),
                               application_name="anoman-tui")

    @property
    def broken(self) -> bool:
        return bool(self._conn.closed or self._conn.broken)

    def reconnect(self) -> None:
        """A new session after the old one was lost (the server restarted)."""
        # (closing a lost connection may fail too: nothing is left to close then)
        with contextlib.suppress(Exception):
            self._conn.close()
        self._conn = self._connect()

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        cursor = self._conn.cursor(row_factory=_row_factory)
        cursor.execute(_translate(sql), _storable(params))
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [_storable(row) for row in rows]
        if rows:
            with self._conn.cursor() as cursor:
                cursor.executemany(_translate(sql), rows)

    @contextlib.contextmanager
    def pipeline(self) -> Iterator[None]:
        """Statements sent without waiting for each one's answer (psycopg's pipeline
        mode): the connection waits only where a result is read, and at the end. After
        an error, roll back once out of it: inside, the aborted pipeline ignores it."""
        import psycopg

        # A statement's error may come back while later ones are still being sent: the
        # rest of the block is then skipped, and the error raised once the pipeline has
        # ended (psycopg would otherwise log the pipeline aborted by it as a second error).
        failed = None
        try:
            with self._conn.pipeline():
                try:
                    yield
                except psycopg.Error as exc:
                    failed = exc
        except psycopg.Error:
            self._forget_prepared()
            if failed is None:
                raise
        if failed is not None:
            self._forget_prepared()
            raise failed

    def _forget_prepared(self) -> None:
        """After an aborted pipeline: psycopg counts a statement it began preparing in it
        as prepared although the server skipped it, and its next use fails ('prepared
        statement "_pg3_N" does not exist': a later save refused, seen when two processes
        wrote one comparison at once). Its cache is started afresh (psycopg's own
        `_prepared`: there is no public way)."""
        prepared = getattr(self._conn, "_prepared", None)
        if prepared is not None:
            prepared.clear()  # (and DEALLOCATE ALL after the next statement, the ROLLBACK)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self._conn.info.transaction_status != TransactionStatus.IDLE)

    def close(self) -> None:
        self._conn.close()


def db_errors(conn: object) -> tuple[type[BaseException], ...]:
    """The exceptions a connection's database raises (what the store turns into
    `HistoryUnavailable`)."""
    if isinstance(conn, PgConnection):
        import psycopg

        return (psycopg.Error,)
    return (sqlite3.Error,)


@dataclass(frozen=True)
class Dialect:
    """The expressions the two engines spell differently."""

    name: str
    like: str
    """The operator of the plain (non-index) search: case-insensitive on both."""

    def begin_write(self, conn: Any) -> None:
        if self.name == "sqlite":
            conn.execute("BEGIN IMMEDIATE")
        else:
            conn.execute("BEGIN")
            conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")

    def string_agg(self, expression: str, separator: str) -> str:
        if self.name == "sqlite":
            return f"group_concat({expression}, {separator})"
        return f"string_agg(({expression})::text, {separator})"

    def char(self, code: int) -> str:
        return f"char({code})" if self.name == "sqlite" else f"chr({code})"

    def insert_id(self, conn: Any, sql: str, params: Iterable[Any]) -> int:
        """Run an INSERT into a table with an `id` column; the new row's id."""
        if self.name == "sqlite":
            return int(conn.execute(sql, tuple(params)).lastrowid or 0)
        return int(conn.execute(sql + " RETURNING id", tuple(params)).fetchone()[0])


SQLITE = Dialect("sqlite", like="LIKE")
POSTGRESQL = Dialect("postgresql", like="ILIKE")


def dialect_of(conn: object) -> Dialect:
    return POSTGRESQL if isinstance(conn, PgConnection) else SQLITE


def pg_tsquery(search: str) -> str | None:
    """Every word must match, each as a prefix (as SQLite's `_fts_query`); a word of
    several tokens (`gpt-4o`) as a phrase whose last token is a prefix. None when a word
    has nothing to search by (punctuation): the caller falls back to LIKE."""
    parts = []
    for word in search.split():
        tokens = re.findall(r"[^\W_]+", word.lower())  # as the document is split
        if not tokens:
            return None
        quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in tokens]
        quoted[-1] += ":*"
        parts.append("(" + " <-> ".join(quoted) + ")")
    return " & ".join(parts) if parts else None
