"""What only a PostgreSQL history does: its schema's version in `anoman_meta`, refusals
in one sentence that name the host and database (never the password), many processes
voting at once, a server that goes away mid-session and comes back, and two people
working on one history from their own machines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.history import (
    ComparisonRecord,
    HistoryStore,
    HistoryUnavailable,
    PaneRecord,
    VoteRefused,
)
from anoman_tui.history.engines import pg_tsquery, scrub_url
from anoman_tui.history.schema.sqlite import SCHEMA_VERSION
from tests.cli.helpers import FAST, KEY
from tests.helpers import LocalGateways, run_main
from tests.postgres import PASSWORD, PostgresServer

ROOT = Path(__file__).resolve().parents[1]


def _record(prompt: str, *, blind: bool = False) -> ComparisonRecord:
    panes = tuple(PaneRecord(pane=p, model=f"m{p}", base_url="http://x", endpoint="openai",
                             text="answer", label=f"Model {'AB'[p - 1]}" if blind else "")
                  for p in (1, 2))
    return ComparisonRecord(prompt=prompt, panes=panes, blind=blind)


def _db(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_the_schema_version_is_kept_and_a_newer_one_refused(
        postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    with HistoryStore.open(url) as store:
        assert store.engine == "postgresql" and store.path is None
        assert PASSWORD not in store.location and _db(url) in store.location
        store.save(_record("kept"))
    version = postgres_server.psql(
        "SELECT value FROM anoman_meta WHERE key = 'schema_version'", _db(url))
    assert version == str(SCHEMA_VERSION)
    postgres_server.psql(f"UPDATE anoman_meta SET value = '{SCHEMA_VERSION + 1}'", _db(url))
    with pytest.raises(HistoryUnavailable) as refused:
        HistoryStore.open(url)
    assert "newer anoman-tui" in refused.value.reason and PASSWORD not in refused.value.reason
    assert "\n" not in refused.value.reason
    # Left as it was found.
    assert postgres_server.psql("SELECT count(*) FROM comparisons", _db(url)) == "1"


def test_another_programs_tables_are_refused(postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    postgres_server.psql("CREATE TABLE comparisons (x int)", _db(url))
    with pytest.raises(HistoryUnavailable, match="holds other data"):
        HistoryStore.open(url)


def test_bad_credentials_and_a_missing_database_name_host_and_database(
        postgres_server: PostgresServer) -> None:
    wrong = postgres_server.url("postgres", password="not-the-password-42")
    with pytest.raises(HistoryUnavailable) as refused:
        HistoryStore.open(wrong)
    reason = refused.value.reason
    assert f"127.0.0.1:{postgres_server.port}" in reason and "postgres" in reason
    assert "refused the user or password" in reason and "not-the-password-42" not in reason
    with pytest.raises(HistoryUnavailable) as missing:
        HistoryStore.open(postgres_server.url("no_such_db"))
    assert missing.value.reason == (f"the PostgreSQL server at 127.0.0.1:"
                                    f"{postgres_server.port} has no database no_such_db")


def test_a_server_that_is_not_there_is_one_sentence() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(HistoryUnavailable) as refused:
        HistoryStore.open(f"postgresql://someone:hunter2@127.0.0.1:{port}/team", timeout=2)
    assert refused.value.reason == (f"the PostgreSQL server at 127.0.0.1:{port} "
                                    "(database team) cannot be reached")


_VOTER = textwrap.dedent(
    """
    import sys
    from anoman_tui.history import HistoryStore, VoteRefused
    url, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    kept = refused = 0
    with HistoryStore.open(url) as store:
        for cid in range(first, last + 1):
            try:
                store.cast_vote(cid, "win", 1, blind=True)
                kept += 1
            except VoteRefused:
                refused += 1
    print(kept, refused)
    """
)


def test_processes_voting_at_once_keep_every_vote_once(
        postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    with HistoryStore.open(url) as store:
        ids = [store.save(_record(f"round {i}", blind=True)) for i in range(120)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Four voters over overlapping halves: every round is voted on by two of them.
    spans = [(ids[0], ids[59]), (ids[0], ids[59]), (ids[60], ids[-1]), (ids[60], ids[-1])]
    procs = [subprocess.Popen([sys.executable, "-c", _VOTER, url, str(a), str(b)],
                              stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for a, b in spans]
    totals = [0, 0]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        kept, refused = map(int, out.split())
        totals[0] += kept
        totals[1] += refused
    assert totals == [120, 120]
    with HistoryStore.open(url) as store:
        assert sum(r.count for r in store.voted_rounds()) == 120
        with pytest.raises(VoteRefused, match="already voted"):
            store.cast_vote(ids[0], "tie", None, blind=True)


def test_a_server_restarted_mid_session_is_reconnected_to(
        postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    store = HistoryStore.open(url)
    try:
        first = store.save(_record("before the restart"))
        postgres_server.stop()
        with pytest.raises(HistoryUnavailable) as lost:
            store.save(_record("while it is down"))
        assert "cannot be reached" in lost.value.reason and PASSWORD not in lost.value.reason
        postgres_server.start()
        second = store.save(_record("after the restart"))
        assert [r.id for r in store.recent()] == [second, first]
    finally:
        if not postgres_server.running():
            postgres_server.start()
        store.close()


@pytest.mark.parametrize(("search", "query"), [
    ("gpt-4o", "('gpt' <-> '4o':*)"),
    ("Sky it's", "('sky':*) & ('it' <-> 's':*)"),
    ('"', None),
    ("", None),
])
def test_search_words_become_a_prefix_query(search: str, query: str | None) -> None:
    assert pg_tsquery(search) == query


def test_urls_lose_their_passwords_wherever_they_are_shown() -> None:
    text = "bad --history-url=postgresql://ann:s3cr%40t@db.example:5432/team and more"
    assert scrub_url(text) == ("bad --history-url=postgresql://ann:***@db.example:5432/team"
                               " and more")
    assert scrub_url("postgresql://ann@db/team") == "postgresql://ann@db/team"
    assert scrub_url("postgresql://ann@db/team?sslmode=require&password=s3cr3t") == (
        "postgresql://ann@db/team?sslmode=require&password=***")


def test_a_nul_in_a_models_answer_does_not_stop_a_save(
        postgres_server: PostgresServer) -> None:
    with HistoryStore.open(postgres_server.new_database()) as store:
        record = _record("a prompt with a \x00 in it")
        new_id = store.save(record)
        got = store.get(new_id)
        assert got is not None and got.prompt == "a prompt with a \ufffd in it"
        assert [r.id for r in store.recent(search="prompt")] == [new_id]


def test_the_scoreboards_figures_are_the_same_on_both_engines(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    import random

    rng = random.Random(3)
    stores = [HistoryStore.open(tmp_path / "h.sqlite3"),
              HistoryStore.open(postgres_server.new_database())]
    try:
        for i in range(120):
            panes = tuple(PaneRecord(
                pane=p, model=f"m{(i + p) % 4}", base_url="x", endpoint="openai",
                status="failed" if (i + p) % 9 == 0 else "completed",
                failure={"kind": "stalled"} if (i + p) % 9 == 0 else None,
                metrics={} if rng.random() < 0.1 else {
                    "ttft_s": rng.uniform(0, 3), "output_tokens_per_s": rng.uniform(1, 300)})
                for p in (1, 2, 3))
            for store in stores:
                store.save(ComparisonRecord(prompt="p", panes=panes))
        sqlite_numbers, pg_numbers = (store.model_numbers() for store in stores)
        assert sqlite_numbers.keys() == pg_numbers.keys()
        for model, numbers in sqlite_numbers.items():
            other = pg_numbers[model]
            assert (numbers.answers, numbers.failures, numbers.simulated_answers) == (
                other.answers, other.failures, other.simulated_answers)
            # (SQLite hands its values over as 15-digit text: equal to 12 digits)
            assert numbers.percentiles == pytest.approx(other.percentiles, rel=1e-12)
            assert len(numbers.percentiles) == 4
    finally:
        for store in stores:
            store.close()


def test_saves_wait_for_a_server_that_went_away_and_are_written_in_order(
        postgres_server: PostgresServer) -> None:
    import threading

    from anoman_tui.history.pending import PendingSaves

    url = postgres_server.new_database()
    written: list[tuple[str, int]] = []
    done = threading.Event()

    def on_written(token: str, new_id: int) -> None:
        written.append((token, new_id))
        if len(written) == 2:
            done.set()

    store = HistoryStore.open(url)
    pending = PendingSaves(store, on_written=on_written, retry_s=0.2, max_retry_s=0.5)
    try:
        first = pending.save(_record("before"), "before")
        assert first is not None and pending.waiting == 0
        postgres_server.stop()
        assert pending.save(_record("during 1"), "during 1") is None
        assert pending.save(_record("during 2"), "during 2") is None
        assert pending.waiting == 2 and "cannot be reached" in pending.last_problem
        assert PASSWORD not in pending.last_problem
        postgres_server.start()
        assert done.wait(60), "the waiting saves were not written once the server was back"
        assert [token for token, _ in written] == ["during 1", "during 2"]
        assert pending.waiting == 0 and pending.last_problem == ""
        assert [r.prompt for r in store.recent()] == ["during 2", "during 1", "before"]
        assert [r.id for r in store.recent()][:2] == [written[1][1], written[0][1]]
    finally:
        if not postgres_server.running():
            postgres_server.start()
        assert pending.close() == 0
        store.close()


def test_a_lasting_refusal_is_not_kept_waiting(tmp_path: Path) -> None:
    from anoman_tui.history.pending import PendingSaves

    path = tmp_path / "h.sqlite3"
    store = HistoryStore.open(path)
    pending = PendingSaves(store)
    try:
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # a full disk
        big = _record("x" * 100_000)
        with pytest.raises(HistoryUnavailable) as refused:
            for _ in range(50):
                pending.save(big)
        assert not refused.value.transient and "full" in refused.value.reason
        assert pending.waiting == 0
    finally:
        pending.close()
        store.close()


class Person:
    """One person at their own machine: `anoman-tui` with their own `ANOMAN_USER`, data
    directory and config file, pointed at the team's PostgreSQL history and at the local
    gateway. The work both do at the same time runs as two real processes (the console
    script, this checkout first on the path); what each does afterwards, one command at
    a time, runs in this process (`run_main`: a third of a process's cost)."""

    def __init__(self, name: str, home: Path, url: str, base_url: str) -> None:
        self.name = name
        self.base_url = base_url
        home.mkdir()
        config = home / "config.toml"
        config.write_text("")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "ANOMAN_USER": name,
                    "ANOMAN_HISTORY_URL": url, "ANOMAN_API_KEY": KEY,
                    "XDG_DATA_HOME": str(home / "data"), "ANOMAN_CONFIG": str(config),
                    "COLUMNS": "200"}
        self.outputs: list[str] = []

    def run(self, *args: str, process: bool = False) -> Any:
        """`anoman-tui ARGS` (with ``process``, as a process of its own); what it printed
        as JSON (one document, or a list of its lines for `history --json`)."""
        if process:
            command = Path(sys.executable).with_name("anoman-tui")
            done = subprocess.run([str(command), *args], capture_output=True, text=True,
                                  env=self.env, cwd=ROOT, timeout=180)
        else:
            done = run_main(args, env=self.env, cwd=ROOT)
        self.outputs.append(done.stdout + done.stderr)
        assert done.returncode == 0, f"{self.name}: anoman-tui {args[0]}: {done.stderr}"
        if args[0] == "history":
            return [json.loads(line) for line in done.stdout.splitlines()]
        return json.loads(done.stdout)

    def work(self, suite: Path, into: dict[str, Any]) -> None:
        """A blind round and a suite run, as this person would start them."""
        into["round"] = self.run("compare", f"{self.name}'s question about WAL", "--blind",
                                 "--json", "--base-url", self.base_url, "-m", "anoman-lite",
                                 "-m", "claude-sonnet-4-6", "-H", FAST, process=True)
        into["eval"] = self.run("eval", str(suite), "--json", "--base-url", self.base_url,
                                "-H", FAST, process=True)


@pytest.mark.long(10)
def test_two_people_share_one_history_and_see_who_did_what(
        clean_env: Path, tmp_path: Path, postgres_server: PostgresServer,
        make_local_gateway: LocalGateways) -> None:
    url = postgres_server.new_database()
    gateway = make_local_gateway(api_key=KEY)
    suite = tmp_path / "small.toml"
    suite.write_text('name = "small"\nmodels = ["anoman-lite"]\n'
                     '[[case]]\nprompt = "Say hello"\n')
    ann = Person("ann", tmp_path / "ann", url, gateway.base_url)
    bob = Person("bob", tmp_path / "bob", url, gateway.base_url)

    # Both at work at the same time, each a blind round and a suite run.
    did: dict[str, dict[str, Any]] = {"ann": {}, "bob": {}}
    failures: list[BaseException] = []

    def work(person: Person) -> None:
        try:
            person.work(suite, did[person.name])
        except BaseException as exc:  # handed to the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(p,)) for p in (ann, bob)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures
    assert did["ann"]["eval"]["user"] == "ann" and did["bob"]["eval"]["user"] == "bob"
    rounds = {name: did[name]["round"]["id"] for name in did}
    assert rounds["ann"] != rounds["bob"]

    # Each votes on the other's round.
    assert bob.run("vote", str(rounds["ann"]), "A", "--json")["id"] == rounds["ann"]
    assert ann.run("vote", str(rounds["bob"]), "tie", "--json")["id"] == rounds["bob"]

    runs = {did[name]["eval"]["run_id"]: name for name in did}
    for person in (ann, bob):
        listed = person.run("history", "--json")
        by_id = {row["id"]: row for row in listed}
        assert (by_id[rounds["ann"]]["user"], by_id[rounds["ann"]]["voted_by"]) == (
            "ann", "bob")
        assert (by_id[rounds["bob"]]["user"], by_id[rounds["bob"]]["voted_by"]) == (
            "bob", "ann")
        # The suite runs' comparisons are their starters'.
        cases = {row["id"]: row["user"] for row in listed if row["id"] not in rounds.values()}
        assert sorted(cases.values()) == ["ann", "bob"]
        assert {row["user"] for row in listed} == {"ann", "bob"}
        mine = person.run("history", "--json", "--user", person.name)
        assert {row["user"] for row in mine} == {person.name} and len(mine) == 2

        suite_runs = person.run("runs", "--json")
        assert {run["run_id"]: run["user"] for run in suite_runs} == runs
        board = person.run("scoreboard", "--json")
        assert board["votes_by_user"] == {"ann": 1, "bob": 1}

    # Nothing went to either machine's own SQLite file; no password was ever shown.
    for person in (ann, bob):
        assert not list((tmp_path / person.name).rglob("history.sqlite3*"))
        assert not any(PASSWORD in text for text in person.outputs)
