"""`compare`, `eval` and `vote` whose shared history's server (a real PostgreSQL server)
goes away mid-run: they wait `--save-wait` seconds retrying, keep the unsaved writes in
the spool, say so in one line and exit 1; the next command that writes writes them first.
`vote` on a round already voted on still exits 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from anoman_tui.cli import main
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord
from anoman_tui.history.spool import read_spool, spool_path
from tests.cli.helpers import FAST, KEY, write
from tests.postgres import PASSWORD, PostgresServer

SUITE = """
name = "faults"
models = ["anoman-lite", "claude-sonnet-4-6"]
concurrency = 1

[[case]]
id = "one"
prompt = "Say one."

[[case]]
id = "two"
prompt = "Say two."
"""


def _kept_line(err: str, saves: str) -> str:
    [line] = [line for line in err.splitlines() if "did not answer within" in line]
    assert line.endswith(f"did not answer within 1 s: {saves} kept in {spool_path()}, "
                         "written at the next start"), line
    return line


def _compare(gateway: EmbeddedGateway, url: str, prompt: str) -> int:
    return main(["compare", prompt, "--base-url", gateway.base_url, "-H", FAST,
                 "--history-url", url, "--save-wait", "1"])


def test_compare_waits_then_spools_exits_1_and_the_next_run_writes_it_first(
        clean_env: Path, gateway: EmbeddedGateway, postgres_server: PostgresServer,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from anoman_tui.headless import compare as headless_compare

    monkeypatch.setenv("ANOMAN_API_KEY", KEY)
    url = postgres_server.new_database()
    real = headless_compare.save_to_history

    def server_gone_first(*args: Any) -> Any:  # the server goes away as the run ends
        postgres_server.stop()
        return real(*args)

    monkeypatch.setattr(headless_compare, "save_to_history", server_gone_first)
    try:
        assert _compare(gateway, url, "kept in the spool") == 1
        _, err = capsys.readouterr()
        _kept_line(err, "1 save")
        assert PASSWORD not in err and "Traceback" not in err
        [(where, w)] = read_spool(spool_path())
        assert where.startswith("127.0.0.1:") and w.kind == "comparison"
    finally:
        if not postgres_server.running():
            postgres_server.start()
    monkeypatch.setattr(headless_compare, "save_to_history", real)
    assert _compare(gateway, url, "the next run") == 0
    _, err = capsys.readouterr()
    assert "1 save kept from an earlier run was written to the history" in err
    assert not spool_path().exists()
    with HistoryStore.open(url) as store:
        assert [r.prompt for r in store.recent()] == ["the next run", "kept in the spool"]


def test_eval_keeps_the_cells_it_could_not_save_and_they_are_written_next_time(
        clean_env: Path, gateway: EmbeddedGateway, postgres_server: PostgresServer,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANOMAN_API_KEY", KEY)
    url = postgres_server.new_database()
    real = HistoryStore.save_cell
    calls = []

    def gone_after_the_first(self: HistoryStore, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        result = real(self, *args, **kwargs)
        if len(calls) == 1:
            postgres_server.stop()
        return result

    monkeypatch.setattr(HistoryStore, "save_cell", gone_after_the_first)
    suite = write(tmp_path, SUITE)
    try:
        assert main(["eval", str(suite), "--base-url", gateway.base_url, "-H", FAST,
                     "--history-url", url, "--save-wait", "1"]) == 1
        out, err = capsys.readouterr()
        _kept_line(err, "4 saves")  # three cells and the run's end
        assert "Traceback" not in err and PASSWORD not in err
        assert [w.kind for _, w in read_spool(spool_path())] == ["cell"] * 3 + ["finish"]
        assert "anoman-lite" in out  # the report of all four cells was printed
    finally:
        if not postgres_server.running():
            postgres_server.start()
    monkeypatch.setattr(HistoryStore, "save_cell", real)
    assert _compare(gateway, url, "any command that writes") == 0
    assert not spool_path().exists()
    with HistoryStore.open(url) as store:
        [listed] = store.runs()
        run = store.run(listed.run_id)
        assert run is not None and run.finished and len(run.results) == 4


def test_vote_waits_spools_exits_1_and_a_round_already_voted_on_still_exits_2(
        clean_env: Path, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = postgres_server.new_database()
    with HistoryStore.open(url) as store:
        round_id = store.save(ComparisonRecord(prompt="p", blind=True, panes=tuple(
            PaneRecord(pane=p, model=f"m{p}", base_url="http://x", endpoint="openai",
                       text="answer", label="AB"[p - 1]) for p in (1, 2))))
    real = HistoryStore.get

    def gone_once_read(self: HistoryStore, comparison_id: int) -> Any:
        found = real(self, comparison_id)
        postgres_server.stop()
        return found

    monkeypatch.setattr(HistoryStore, "get", gone_once_read)
    try:
        assert main(["vote", str(round_id), "B", "--history-url", url,
                     "--save-wait", "1"]) == 1
        out, err = capsys.readouterr()
        _kept_line(err, "1 save")
        assert out == "" and PASSWORD not in err
        assert [w.kind for _, w in read_spool(spool_path())] == ["vote"]
    finally:
        if not postgres_server.running():
            postgres_server.start()
    monkeypatch.setattr(HistoryStore, "get", real)
    # The next vote writes the kept one first: the round is then voted on.
    assert main(["vote", str(round_id), "A", "--history-url", url]) == 2
    _, err = capsys.readouterr()
    assert "1 save kept from an earlier run was written" in err
    assert f"round {round_id} was already voted on" in err
    with HistoryStore.open(url) as store:
        record = store.get(round_id)
        assert record is not None and record.vote is not None
        assert record.vote.winner_pane == 2
