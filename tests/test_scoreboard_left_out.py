"""What the scoreboard's figures leave out, in the history on both engines: answers under
a demo scenario, refused for their request (a 4xx other than 408 and 429) and cache hits
are marked (`panes.left_out`, schema 16) as they are saved, and a history of schema 15
gets them marked when it is opened; `model_numbers` leaves them out, `left_out` counts
them, and a voted round carries which of its panes were left out."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from anoman_tui.history import (
    ComparisonRecord,
    HistoryStore,
    LeftOut,
    PaneRecord,
    left_out_reason,
)
from anoman_tui.report.scoreboard import build, left_out_json, votes_left_out


def pane(n: int, model: str, *, ttft: float = 0.5, scenario: str = "none",
         failure: dict[str, Any] | None = None, cache_hit: bool = False) -> PaneRecord:
    failed = failure is not None
    return PaneRecord(
        pane=n, model=model, base_url="http://x", endpoint="openai", scenario=scenario,
        status="failed" if failed else "completed", committed=not failed,
        text="" if failed else "an answer", failure=failure, label="ABC"[n - 1],
        anoman={"cache": {"hit": cache_hit}},
        metrics={} if failed else {"ttft_s": ttft, "output_tokens_per_s": 50.0})


def http(status: int) -> dict[str, Any]:
    return {"kind": "http_error", "status": status, "message": f"{status}"}


def test_which_answers_are_not_the_models_doing() -> None:
    assert left_out_reason(pane(1, "m")) is None
    assert left_out_reason(pane(1, "m", scenario="interrupt")) == "scenario"
    assert left_out_reason(pane(1, "m", scenario="ttft=0,rate=4000")) == "scenario"
    for status in (400, 401, 403, 404, 413, 422):
        assert left_out_reason(pane(1, "m", failure=http(status))) == "request", status
    for status in (408, 429, 500, 502, 503):  # the server's or the model's doing
        assert left_out_reason(pane(1, "m", failure=http(status))) is None, status
    assert left_out_reason(pane(1, "m", failure={"kind": "truncated"})) is None
    assert left_out_reason(pane(1, "m", cache_hit=True)) == "cache_hit"


def fill(store: HistoryStore) -> None:
    """Rounds of three models: ordinary ones, one under a demo scenario, one the
    gateway refused with three 400s, one answered from the cache, one where `slow`
    truncated (its own failure) and one where its pane was refused (a 404)."""
    def save(*panes: PaneRecord, vote: tuple[str, int | None] | None = None) -> None:
        cid = store.save(ComparisonRecord(prompt="p", panes=panes, blind=True))
        if vote is not None:
            store.cast_vote(cid, vote[0], vote[1], blind=True)

    for _ in range(3):
        save(pane(1, "fast", ttft=0.2), pane(2, "slow", ttft=2.0), pane(3, "mid", ttft=1.0),
             vote=("win", 1))
    save(pane(1, "fast", ttft=9.0, scenario="interrupt", failure={"kind": "stream_error"}),
         pane(2, "slow", ttft=9.0, scenario="interrupt"), pane(3, "mid", ttft=9.0,
                                                               scenario="interrupt"),
         vote=("win", 2))
    save(*(pane(n, m, failure=http(400)) for n, m in enumerate(("fast", "slow", "mid"), 1)))
    save(pane(1, "fast", ttft=0.01, cache_hit=True), pane(2, "slow", ttft=0.01,
                                                          cache_hit=True),
         pane(3, "mid", ttft=1.0), vote=("win", 1))
    save(pane(1, "fast", ttft=0.2), pane(2, "slow", failure={"kind": "truncated"}),
         pane(3, "mid", ttft=1.0), vote=("win", 3))
    save(pane(1, "fast", ttft=0.2), pane(2, "slow", failure=http(404)),
         pane(3, "mid", ttft=1.0), vote=("win", 1))


def check(store: HistoryStore) -> None:
    numbers = store.model_numbers()
    # `slow`: 3 ordinary answers, its cache hit and its own truncation; not the one under
    # the demo scenario, the 400 nor the 404.
    slow = numbers["slow"]
    assert slow.answers == 3 + 1 + 1  # ordinary, cache hit, truncated
    assert slow.failures == {"truncated": 1}
    assert slow.percentiles[("ttft_s", 50.0)] == 2.0  # no 9 s scenario, no 0.01 s cache
    fast = numbers["fast"]
    assert fast.failures == {} and fast.answers == 3 + 1 + 2
    assert fast.percentiles[("ttft_s", 50.0)] == 0.2 and fast.percentiles[
        ("ttft_s", 95.0)] == 0.2
    left = store.left_out()
    assert left == LeftOut(rounds={"scenario": 1, "request": 2, "cache_hit": 1},
                           answers={"scenario": 3, "request": 4, "cache_hit": 2})

    rounds = store.voted_rounds()
    assert sum(r.count for r in rounds) == 7
    # The vote naming `fast`'s cache hit best is left out; so is none other: the 404'd
    # pane of the last round is taken out of it (no loss for `slow`), the scenario
    # round's panes that completed stay.
    assert votes_left_out(rounds) == {"cache_hit": 1}
    rows = {r.model: r for r in build(rounds, numbers, bootstrap=10)}
    assert (rows["slow"].rounds, rows["slow"].losses) == (3 + 1 + 1, 3 + 1)
    assert rows["slow"].wins == 1  # the scenario round
    # `fast` failed under the scenario: taken out of that round, not a loss.
    assert (rows["fast"].rounds, rows["fast"].wins, rows["fast"].losses) == (5, 4, 1)
    assert rows["slow"].failure_rates == {"http_error": 0.0, "stream_error": 0.0,
                                          "truncated": 1 / 5, "stalled": 0.0,
                                          "protocol_error": 0.0}
    assert left_out_json(left, votes_left_out(rounds))["request"] == {
        "rounds": 2, "answers": 4, "votes": 0}


def test_left_out_answers_on_both_engines(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        fill(store)
        check(store)


def test_a_schema_15_history_gets_its_answers_marked_on_both_engines(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        fill(store)
    # Back to schema 15: no `left_out`, the indexes as they were, votes' patterns without it.
    undo = ["DROP INDEX panes_left_out", "DROP INDEX panes_by_model",
            "DROP INDEX panes_by_ttft", "DROP INDEX panes_by_rate",
            "ALTER TABLE panes DROP COLUMN left_out",
            "CREATE INDEX panes_by_model ON panes (model, status, failure_kind, ttft_s, "
            "tokens_per_s, cost_usd)",
            "CREATE INDEX panes_by_ttft ON panes (model, ttft_s)",
            "CREATE INDEX panes_by_rate ON panes (model, tokens_per_s)"]
    if isinstance(history_location, Path):
        with sqlite3.connect(history_location) as conn:
            for statement in undo:
                conn.execute(statement)
            conn.execute("UPDATE votes SET pattern = substr(pattern, 1, 0) || 'stale'")
            conn.execute("PRAGMA user_version = 15")
    else:
        import psycopg

        with psycopg.connect(history_location, autocommit=True) as pg:
            for statement in undo:
                pg.execute(statement)
            pg.execute("UPDATE votes SET pattern = 'stale'")
            pg.execute("UPDATE anoman_meta SET value = '15' WHERE key = 'schema_version'")
    with HistoryStore.open(history_location) as store:
        check(store)
