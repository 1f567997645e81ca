"""`--history-url`, $ANOMAN_HISTORY_URL and the config file's `history_url`: every
command that reads or writes the history works on a team's PostgreSQL database, says in
one line when it cannot (naming host and database), and never shows the password, not
even in argparse's usage errors."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from anoman_tui.cli import main
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.cli.helpers import FAST, KEY, cli
from tests.postgres import PASSWORD, PostgresServer

READERS = [
    ("history",), ("history", "--json"), ("export", "1"), ("vote", "1", "A"),
    ("scoreboard",), ("runs",), ("replay", "1"), ("compare", "--replay", "1"),
]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.parametrize("args", READERS, ids=" ".join)
def test_a_server_that_is_not_there_is_one_line_without_the_password(
        clean_env: Path, args: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    url = f"postgresql://ann:{PASSWORD}@127.0.0.1:{port}/team"
    assert main([args[0], "--history-url", url, *args[1:]]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"anoman-tui {args[0]}: the PostgreSQL server at "
                                f"127.0.0.1:{port} (database team) cannot be reached"]


def test_wrong_credentials_and_a_missing_database_name_host_and_database(
        clean_env: Path, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    where = f"127.0.0.1:{postgres_server.port}"
    monkeypatch.setenv("ANOMAN_HISTORY_URL",
                       postgres_server.url("postgres", password="wrong-secret-1234"))
    assert main(["history"]) == 1
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"anoman-tui history: the PostgreSQL server at {where} "
                                "refused the user or password for database postgres"]
    monkeypatch.setenv("ANOMAN_HISTORY_URL", postgres_server.url("missing_db"))
    assert main(["scoreboard"]) == 1
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"anoman-tui scoreboard: the PostgreSQL server at {where} "
                                "has no database missing_db"]
    assert PASSWORD not in err


SHOWN = "postgresql://ann:***@db.example/team"


@pytest.mark.parametrize(("argv", "expected"), [
    (["history", f"--bogus=postgresql://ann:{PASSWORD}@db.example/team"],
     f"unrecognized arguments: --bogus={SHOWN}"),
    (["history", "--limit", f"postgresql://ann:{PASSWORD}@db.example/team"], f"'{SHOWN}'"),
    ([f"postgresql://ann:{PASSWORD}@db.example/team"], f"invalid choice: '{SHOWN}'"),
    (["history", f"--bogus=postgresql://ann@db.example/team?password={PASSWORD}"],
     "--bogus=postgresql://ann@db.example/team?password=***"),
    (["vote", "--history-url", f"postgresql://ann:{PASSWORD}@db.example/team", "x", "A"],
     "argument id: not an integer: 'x'"),
])
def test_usage_errors_never_echo_a_password(
        clean_env: Path, argv: list[str], expected: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert PASSWORD not in out + err
    assert expected in err.splitlines()[-1]


@pytest.mark.parametrize(("how", "source"), [
    ("flag", "flag --history-url"),
    ("env", "environment variable ANOMAN_HISTORY_URL"),
    ("config", "config file"),
])
def test_a_url_that_is_not_postgresql_is_refused_by_its_source(
        clean_env: Path, how: str, source: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"mysql://ann:{PASSWORD}@db.example/team"
    argv = ["history"]
    if how == "flag":
        argv += ["--history-url", url]
    elif how == "env":
        monkeypatch.setenv("ANOMAN_HISTORY_URL", url)
    else:
        clean_env.write_text(f'history_url = "{url}"\n')
    assert main(argv) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and PASSWORD not in err
    assert err.startswith(f"anoman-tui history: {source}") and "postgresql://" in err


def test_compare_vote_history_and_export_share_one_postgresql_history(
        gateway: EmbeddedGateway, data_home: Path, postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    # The URL from the environment for some commands, the flag for others: one history.
    env = {"ANOMAN_API_KEY": KEY, "ANOMAN_HISTORY_URL": url, "ANOMAN_USER": "ann"}
    saved = cli(data_home, "compare", "Why is the sky blue?", "--json", "--base-url",
                gateway.base_url, "-m", "anoman-lite", "-m", "claude-sonnet-4-6", "-H", FAST,
                env=env)
    assert saved.returncode == 0, saved.stderr
    first = json.loads(saved.stdout)["id"]
    blind = cli(data_home, "compare", "Explain WAL", "--blind", "--json", "--base-url",
                gateway.base_url, "-m", "anoman-lite", "-m", "claude-sonnet-4-6", "-H", FAST,
                "--history-url", url, env={"ANOMAN_API_KEY": KEY})
    assert blind.returncode == 0, blind.stderr
    round_id = json.loads(blind.stdout)["id"]
    assert round_id == first + 1
    # Nothing went to the SQLite file.
    assert not (data_home / "anoman-tui" / "history.sqlite3").exists()

    listed = cli(data_home, "history", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["id"] for r in rows] == [round_id, first]
    assert rows[0]["voted"] is False and rows[0]["panes"][0]["model"] is None
    found = cli(data_home, "history", "--json", "--search", "sky", env=env)
    assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == [first]

    voted = cli(data_home, "vote", str(round_id), "A", env=env)
    assert voted.returncode == 0, voted.stderr
    again = cli(data_home, "vote", str(round_id), "B", env=env)
    assert again.returncode == 2
    assert again.stderr.splitlines() == [
        f"anoman-tui vote: round {round_id} was already voted on by ann"]
    board = cli(data_home, "scoreboard", "--json", env=env)
    assert board.returncode == 0, board.stderr
    exported = cli(data_home, "export", str(first), "-f", "json", "-o", "-", env=env)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["prompt"] == "Why is the sky blue?"
    for result in (saved, blind, listed, found, voted, again, board, exported):
        assert PASSWORD not in result.stdout + result.stderr


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_who_ran_and_who_voted_in_history_and_scoreboard(
        gateway: EmbeddedGateway, data_home: Path, engine: str,
        request: pytest.FixtureRequest) -> None:
    env = {"ANOMAN_API_KEY": KEY}
    if engine == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        env["ANOMAN_HISTORY_URL"] = server.new_database()

    def run(*args: str, user: str) -> dict[str, object] | list[dict[str, object]]:
        result = cli(data_home, *args, env={**env, "ANOMAN_USER": user})
        assert result.returncode == 0, result.stderr
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        return lines[0] if len(lines) == 1 and args[0] != "history" else lines

    blind = ("compare", "Explain WAL", "--blind", "--json", "--base-url", gateway.base_url,
             "-m", "anoman-lite", "-m", "claude-sonnet-4-6", "-H", FAST)
    first = run(*blind, user="ann")
    second = run(*blind, user="bob")
    assert isinstance(first, dict) and isinstance(second, dict)
    run("vote", str(first["id"]), "A", "--json", user="bob")
    refused = cli(data_home, "vote", str(first["id"]), "B", env={**env, "ANOMAN_USER": "ann"})
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"anoman-tui vote: round {first['id']} was already voted on by bob"]
    run("vote", str(second["id"]), "tie", "--json", user="bob")

    everyone = run("history", "--json", user="ann")
    assert [(r["id"], r["user"], r.get("voted_by")) for r in everyone] == [
        (second["id"], "bob", "bob"), (first["id"], "ann", "bob")]
    anns = run("history", "--json", "--user", "ann", user="bob")
    assert [r["id"] for r in anns] == [first["id"]]

    board = run("scoreboard", "--json", user="ann")
    assert isinstance(board, dict) and board["votes_by_user"] == {"bob": 2}
    none = run("scoreboard", "--json", "--user", "ann", user="ann")
    assert isinstance(none, dict) and none["votes_by_user"] == {"ann": 0}
    assert none["models"] == []


def test_history_migrate_copies_the_local_file_once(
        data_home: Path, postgres_server: PostgresServer) -> None:
    from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord

    local = data_home / "anoman-tui" / "history.sqlite3"
    with HistoryStore.open(local) as store:
        store.user = "ann"
        for i in range(3):
            store.save(ComparisonRecord(prompt=f"question {i}", blind=i == 2, panes=tuple(
                PaneRecord(pane=p, model=f"m{p}", base_url="http://x", endpoint="openai",
                           label="AB"[p - 1]) for p in (1, 2))))
    url = postgres_server.new_database()
    first = cli(data_home, "history", "migrate", "--to", url)
    assert first.returncode == 0, first.stderr
    shown = url.replace(PASSWORD, "***")
    assert first.stdout.splitlines() == [
        f"Copied 3 comparisons (0 copied before), 0 votes and 0 suite runs (0 copied "
        f"before) from {local} to {shown}."]
    again = cli(data_home, "history", "migrate", "--to", url, "--from", str(local))
    assert again.stdout.splitlines() == [
        f"Copied 0 comparisons (3 copied before), 0 votes and 0 suite runs (0 copied "
        f"before) from {local} to {shown}."]
    listed = cli(data_home, "history", "--json", "--history-url", url)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["prompt"], r["user"], r.get("voted")) for r in rows] == [
        ("question 2", "ann", False), ("question 1", "ann", None), ("question 0", "ann", None)]
    for result in (first, again, listed):
        assert PASSWORD not in result.stdout + result.stderr
    missing = cli(data_home, "history", "migrate", "--to", url, "--from",
                  str(data_home / "nothing.sqlite3"))
    assert missing.returncode == 2 and missing.stderr.splitlines() == [
        f"anoman-tui history migrate: there is no history at {data_home / 'nothing.sqlite3'}"]
