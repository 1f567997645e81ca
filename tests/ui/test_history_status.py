"""The status line's history field with a shared (PostgreSQL) history on the real server:
its `host:port/db` while it works, `unavailable (why)` when it cannot be opened, `N saves
waiting` while the server is away, and a notice once they are written; arena votes and
the judge's verdicts wait as comparisons do; what still waits at close is kept in the
spool and written at the next start; a spool that cannot be read is reported and kept."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.history import HistoryStore
from anoman_tui.history.spool import read_spool, spool_path
from anoman_tui.ui.app import AnomanApp
from tests.pilot import ready, settled, submit, until
from tests.postgres import PASSWORD, PostgresServer
from tests.ui.screen_text import screen_lines


def shown(app: AnomanApp) -> str:
    return "\n".join(screen_lines(app))


async def comparison_kept_waiting(pilot: Any, app: AnomanApp, server: PostgresServer,
                                  prompt: str) -> None:
    """The history open, then its server stopped: a comparison of `prompt` is run, and
    its save waits (the status line says so)."""
    await ready(pilot)
    await until(pilot, lambda: app.history is not None)
    server.stop()
    await submit(pilot, prompt)
    await until(pilot, lambda: settled(app) and "history: 1 save waiting" in shown(app),
                timeout=30)


def said(app: AnomanApp) -> str:
    return " ".join(str(n.message) for n in app._notifications)


def _address(server: PostgresServer, url: str) -> str:
    return f"127.0.0.1:{server.port}/{url.rsplit('/', 1)[1]}"


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_status_line_names_the_store_and_the_saves_waiting_for_it(
        make_app, fast_answers, postgres_server: PostgresServer, size) -> None:
    url = postgres_server.new_database()
    address = _address(postgres_server, url)
    app = make_app(history_url=url, user="ann")
    try:
        async with app.run_test(size=size, notifications=True) as pilot:
            await ready(pilot)
            wide = size[0] >= 100
            if wide:
                await until(pilot, lambda: f"history: {address}" in shown(app))
            else:  # a full line: the store is named only when something is wrong
                await app.history_settled()
                await pilot.pause(0.2)
                assert "history:" not in shown(app)
                assert str(app.screen.query_one("#status-line").render()).count("\n") <= 1
            postgres_server.stop()
            await submit(pilot, "kept while the server is away")
            await until(pilot, lambda: "history: 1 save waiting" in shown(app), timeout=30)
            assert PASSWORD not in shown(app)
            postgres_server.start()
            assert app.pending_saves is not None
            app.pending_saves.retry_now()

            def written() -> bool:
                if "waited for the history's server is saved" not in said(app):
                    return False
                line = shown(app)
                return f"history: {address}" in line if wide else "history:" not in line

            await until(pilot, written, timeout=60)
    finally:
        if not postgres_server.running():
            postgres_server.start()
    with HistoryStore.open(url) as store:
        assert [r.prompt for r in store.recent()] == ["kept while the server is away"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.parametrize("fault", ["down", "credentials", "database"])
async def test_a_history_that_cannot_be_opened_says_why_on_the_status_line(
        make_app, postgres_server: PostgresServer, fault: str) -> None:
    url, why = {
        "down": (f"postgresql://ann:{PASSWORD}@127.0.0.1:{_closed_port()}/team",
                 "server not reachable"),
        "credentials": (postgres_server.url("postgres", password="wrong-secret-1234"),
                        "wrong credentials"),
        "database": (postgres_server.url("missing_db"), "no such database"),
    }[fault]
    app = make_app(history_url=url)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: f"history: unavailable ({why})" in shown(app))
        assert app.history is None and "not saved this session" in said(app)
        assert PASSWORD not in shown(app) + said(app)
        assert "wrong-secret" not in shown(app) + said(app)


async def test_an_arena_round_its_vote_and_the_judges_verdict_wait_and_are_written_once(
        make_app, postgres_server: PostgresServer) -> None:
    from anoman_tui.ui.screens.arena import ArenaScreen

    url = postgres_server.new_database()
    app = make_app(history_url=url, user="ann",
                   arena={"judge": "anoman-judge",
                          "pool": ["anoman-lite", "claude-sonnet-4-6", "deepseek-r1"]})
    try:
        async with app.run_test(size=(200, 50), notifications=True) as pilot:
            await ready(pilot)
            await until(pilot, lambda: app.history is not None)
            app.action_arena()
            await until(pilot, lambda: isinstance(app.screen, ArenaScreen)
                        and app.screen.phase == "ready")
            arena = app.screen
            assert isinstance(arena, ArenaScreen)
            postgres_server.stop()
            await submit(pilot, "How should I size a connection pool?")
            await until(pilot, lambda: arena.phase == "voting")
            await until(pilot, lambda: "history: 1 save waiting" in shown(app), timeout=30)
            await pilot.press("b")
            await until(pilot, lambda: arena.phase == "revealed")
            await until(pilot, lambda: (arena.judge_said or "").startswith(
                "judge anoman-judge"), timeout=30)
            await until(pilot, lambda: "history: 3 saves waiting" in shown(app), timeout=30)
            drawn = [p.model for p in arena.panes]
            postgres_server.start()
            assert app.pending_saves is not None
            app.pending_saves.retry_now()
            await until(pilot, lambda: app.pending_saves is not None
                        and app.pending_saves.waiting == 0, timeout=60)
            await until(pilot, lambda: "The arena judge's verdict that waited" in said(app))
    finally:
        if not postgres_server.running():
            postgres_server.start()
    with HistoryStore.open(url) as store:
        [round_] = store.recent()
        assert round_.blind and [p.model for p in round_.panes] == drawn
        assert round_.vote is not None and (round_.vote.winner_pane, round_.vote.user) == (
            2, "ann")
        assert round_.id is not None and store.round_judgement(round_.id) is not None


async def test_saves_still_waiting_at_close_are_spooled_and_written_at_the_next_start(
        make_app, fast_answers, postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    address = _address(postgres_server, url)
    app = make_app(history_url=url, user="ann")
    try:
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await comparison_kept_waiting(pilot, app, postgres_server, "kept across the close")
        path = spool_path()
        assert [where for where, _ in read_spool(path)] == [address]
        assert PASSWORD not in path.read_text()
        assert str(path) in app.closing_message and "1 save" in app.closing_message
    finally:
        if not postgres_server.running():
            postgres_server.start()
    again = make_app(history_url=url, user="ann")
    async with again.run_test(size=(120, 30), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: "kept from an earlier session was written" in said(again))
        assert f"history: {address}" in shown(again)
    assert not path.exists()
    with HistoryStore.open(url) as store:
        assert [(r.prompt, r.user) for r in store.recent()] == [
            ("kept across the close", "ann")]


async def test_a_spool_that_cannot_be_read_is_reported_and_kept(
        make_app, postgres_server: PostgresServer) -> None:
    path: Path = spool_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("this is not a spool\n")
    app = make_app(history_url=postgres_server.new_database())
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: "left as it is" in said(app))
        assert app.history is not None and str(path) in said(app)
    assert path.read_text() == "this is not a spool\n"


async def test_the_suite_screens_cells_wait_for_the_server_and_its_line_says_so(
        tmp_path: Path, ui_gateway, postgres_server: PostgresServer) -> None:
    import asyncio

    from anoman_tui.config import Settings
    from anoman_tui.history.pending import PendingSaves
    from anoman_tui.suites.engine import RunOptions
    from anoman_tui.suites.loader import load_suite
    from anoman_tui.suites.prepare import EvalRequest, prepare
    from anoman_tui.ui.screens.suite import SuiteScreen

    class Shared:  # the fixtures' gateway, left running by the run
        base_url, api_key = ui_gateway.base_url, ui_gateway.api_key

        def stop(self) -> None:
            pass

    url = postgres_server.new_database()
    address = _address(postgres_server, url)
    store = HistoryStore.open(url)
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text('name = "waits"\nmodels = ["anoman-lite", "qwen3-coder"]\n' + "".join(
        f'[[case]]\nid = "c{i}"\nprompt = "Say {i}."\n' for i in range(3)))
    settings = Settings()
    request = EvalRequest(
        suite=load_suite(suite_file), targets=settings.all_targets(),
        default_target=settings.default_target, endpoint=settings.endpoint,
        options=RunOptions(concurrency=2, headers=(("X-Anoman-Simulate", "ttft=0,rate=4000"),)))
    run = await asyncio.to_thread(prepare, request, store, Shared)
    pending = run.pending = PendingSaves(store, retry_s=0.2, max_retry_s=0.5)
    app = AnomanApp(Settings(theme="anoman-dark"), suite=run,  # type: ignore[call-arg]
                    gateway_factory=lambda: ui_gateway)
    try:
        postgres_server.stop()  # before the first cell is saved
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            # six cells and the run's end
            await until(pilot, lambda: "history: 7 saves waiting" in screen.progress_line)
            assert len(screen.results) == 6  # the summary has every cell, none saved yet
            postgres_server.start()
            pending.retry_now()
            await until(pilot, lambda: f"history: {address}" in screen.progress_line,
                        timeout=60)
            await until(pilot, lambda: "A suite cell that waited" in said(app))
        stored = store.run(run.run_id)
        assert stored is not None and stored.finished and len(stored.results) == 6
        assert len({(r["case"], r["model"]) for r in stored.results}) == 6
    finally:
        if not postgres_server.running():
            postgres_server.start()
        pending.close()
        store.close()


async def test_a_sighted_vote_on_a_comparison_still_waiting_waits_behind_it(
        make_app, fast_answers, postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    app = make_app(history_url=url, user="ann")
    try:
        async with app.run_test(size=(200, 50), notifications=True) as pilot:
            await comparison_kept_waiting(pilot, app, postgres_server,
                                          "voted on while the server is away")
            app.compare.sighted_vote(2)
            await until(pilot, lambda: "history: 2 saves waiting" in shown(app))
            assert "kept until the history's server is back" in said(app)
            postgres_server.start()
            assert app.pending_saves is not None
            app.pending_saves.retry_now()
            await until(pilot, lambda: "A vote that waited" in said(app), timeout=60)
    finally:
        if not postgres_server.running():
            postgres_server.start()
    with HistoryStore.open(url) as store:
        [record] = store.recent()
        assert record.vote is not None
        assert (record.vote.blind, record.vote.winner_pane, record.vote.user) == (
            False, 2, "ann")
