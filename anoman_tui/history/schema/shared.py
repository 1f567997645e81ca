"""The migration steps both engines run (SQLite's and PostgreSQL's schema 11 on), and the
pattern each vote keeps of its round (`vote_pattern`), which the store writes again
whenever a voted round's panes change (`refresh_vote_patterns`).

Each step takes a `sqlite3.Connection` or an `engines.PgConnection`, which speak the same
SQL here; where the engines differ the step asks which one it has.

May import: the standard library and the rest of `anoman_tui.history` (never the store).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from anoman_tui.history.engines import POSTGRESQL, SQLITE, PgConnection
from anoman_tui.history.model import PaneRecord, left_out_reason
from anoman_tui.history.rows import json_or_none


def add_authors(conn: Any) -> None:
    # Who ran each comparison and suite run and who cast each vote (the `user` setting):
    # a shared history is many people's. `author`, as `user` is a keyword in PostgreSQL;
    # "" for what was saved before.
    for table in ("comparisons", "votes", "suite_runs"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN author TEXT NOT NULL DEFAULT ''")
    conn.execute("CREATE INDEX comparisons_by_author ON comparisons (author, id)")
    conn.execute("CREATE INDEX votes_by_author ON votes (author)")


def vote_pattern(postgres: bool, *, left_out: bool = True) -> str:
    """A scalar subquery: the voted round `votes.comparison_id` as its panes' pattern
    (`pane`, `model`, `status`, `left_out` of each, unit- and record-separated; in no
    set order),
    kept on the vote (`votes.pattern`) for `voted_rounds` to group by. `left_out=False`:
    without it, as patterns were written before schema 16 (its migration writes them
    all again)."""
    dialect = POSTGRESQL if postgres else SQLITE
    unit = dialect.char(31)
    part = f"pane || {unit} || model || {unit} || status"
    if left_out:
        part += f" || {unit} || COALESCE(left_out, '')"
    return (f"(SELECT {dialect.string_agg(part, dialect.char(30))} FROM panes "
            "WHERE panes.comparison_id = votes.comparison_id)")


def refresh_vote_patterns(conn: Any, postgres: bool, ids: Iterable[int]) -> None:
    """Write the pattern of the votes on these comparisons afresh (a comparison not
    voted on is left alone): after a vote, or a change to a voted comparison's panes."""
    conn.executemany(f"UPDATE votes SET pattern = {vote_pattern(postgres)} "
                     "WHERE comparison_id = ?", [(i,) for i in ids])


def add_vote_patterns(conn: Any) -> None:
    # Each vote keeps its round's pattern (models, who failed), written with the vote
    # and whenever a voted comparison's panes change: the scoreboard groups 100,000
    # votes by it instead of concatenating 300,000 panes per read (0.4-0.8 s).
    conn.execute("ALTER TABLE votes ADD COLUMN pattern TEXT")
    conn.execute("UPDATE votes SET pattern = "
                 f"{vote_pattern(isinstance(conn, PgConnection), left_out=False)}")


def index_scoreboard_reads(conn: Any) -> None:
    # Which models' answers were simulated, without reading every pane's row: the
    # scoreboard's `SUM(simulated)` was the one column of its reads outside the covering
    # index `panes_by_model` (0.9 s over 300,000 panes on SQLite). Few panes are simulated.
    conn.execute("CREATE INDEX panes_simulated ON panes (model) WHERE simulated = 1")
    # Each model's TTFTs and tokens/s in order: a percentile is read at its rank.
    conn.execute("CREATE INDEX panes_by_ttft ON panes (model, ttft_s)")
    conn.execute("CREATE INDEX panes_by_rate ON panes (model, tokens_per_s)")


def add_uids(conn: Any) -> None:
    # A comparison's id for ever, wherever it is copied (ids are per database): copying a
    # history into another (`history migrate`) twice recognises what it copied before.
    conn.execute("ALTER TABLE comparisons ADD COLUMN uid TEXT")
    if isinstance(conn, PgConnection):
        conn.execute("UPDATE comparisons SET uid = md5(random()::text || id::text)")
    else:
        conn.execute("UPDATE comparisons SET uid = lower(hex(randomblob(16)))")
    conn.execute("CREATE UNIQUE INDEX comparisons_by_uid ON comparisons (uid)")


def add_left_out(conn: Any) -> None:
    # Why a pane's answer is not its model's doing (`model.left_out_reason`: a demo
    # scenario, a request refused for itself, a cache hit), as a column the scoreboard's
    # reads filter on inside its indexes. Filled for what was saved before from the
    # columns that already said it; few panes qualify, so only candidates are read.
    conn.execute("ALTER TABLE panes ADD COLUMN left_out TEXT")
    updates = []
    for row in conn.execute(
            "SELECT comparison_id, pane, scenario, failure, anoman FROM panes "
            "WHERE scenario <> 'none' OR failure_kind = 'http_error' "
            "OR anoman LIKE '%\"hit\": true%'").fetchall():
        reason = left_out_reason(PaneRecord(
            pane=row["pane"], model="", base_url="", endpoint="", scenario=row["scenario"],
            failure=json_or_none(row["failure"]), anoman=json_or_none(row["anoman"])))
        if reason is not None:
            updates.append((reason, row["comparison_id"], row["pane"]))
    conn.executemany("UPDATE panes SET left_out = ? WHERE comparison_id = ? AND pane = ?",
                     updates)
    # The scoreboard's figures leave those panes out: the column joins its indexes.
    for name, columns in (
            ("panes_by_model", "model, left_out, status, failure_kind, ttft_s, "
                               "tokens_per_s, cost_usd"),
            ("panes_by_ttft", "model, left_out, ttft_s"),
            ("panes_by_rate", "model, left_out, tokens_per_s")):
        conn.execute(f"DROP INDEX {name}")
        conn.execute(f"CREATE INDEX {name} ON panes ({columns})")
    conn.execute("CREATE INDEX panes_left_out ON panes (left_out, comparison_id) "
                 "WHERE left_out IS NOT NULL")
    # Votes keep their round's pattern, which now says which panes are left out.
    conn.execute(f"UPDATE votes SET pattern = {vote_pattern(isinstance(conn, PgConnection))}")
