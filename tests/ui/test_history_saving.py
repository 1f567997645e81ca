"""The compare screen saves every finished turn to the history, off the UI thread;
`--no-history` saves nothing; an unusable history is one notice, never a crash."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from anoman_tui.config import Settings
from anoman_tui.history import ComparisonRecord, HistoryStore, default_path
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.messages import PaneStreamFinished
from anoman_tui.ui.widgets.pane import PaneFooter
from tests.pilot import panes, ready, settled, until

KEY = "anm-sk-app-history-1f2e3d4c5b6a"


def saved() -> list[ComparisonRecord]:
    if not default_path().exists():
        return []
    with HistoryStore.open(default_path()) as store:
        return store.recent(limit=100)


async def type_and_send(pilot: Pilot, prompt: str) -> None:
    app = pilot.app
    assert isinstance(app, AnomanApp)
    app.compare.query_one("#prompt").focus()
    await pilot.press(*(ch if ch != " " else "space" for ch in prompt), "enter")


async def test_each_finished_turn_is_saved_as_shown(make_app, ui_gateway) -> None:
    app = make_app(system_prompt="Be brief.")
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await type_and_send(pilot, "history of pooling strategies")
        await until(pilot, lambda: settled(app))
        await until(pilot, lambda: len(saved()) == 1)
        record = saved()[0]
        assert record.prompt == "history of pooling strategies" and record.source == "app"
        assert record.system_prompt == "Be brief." and record.conversation == ()
        assert [p.model for p in record.panes] == [s.model for s in app.panes]
        for pane, shown in zip(record.panes, panes(app), strict=True):
            result = shown.state.last_result
            assert result is not None
            assert (pane.status, pane.text, pane.committed) == ("completed", result.text, True)
            assert pane.base_url == ui_gateway.base_url and pane.endpoint == "openai"
            assert pane.rate_series == shown.rate_series
            footer = str(shown.query_one(PaneFooter).render())
            assert pane.cost_text.startswith("$") and pane.cost_text in footer
            # A fast stream's tokens can all arrive in one read: then it has no rate
            # (docs/wire-contract.md §7), saved as null like the footer's "—".
            rate = result.metrics.output_tokens_per_s
            assert pane.metrics == {**result.metrics.to_json(), "output_tokens_per_s":
                                    None if rate is None else round(rate, 4)}
            assert pane.anoman

        # The next turn carries the conversation before it.
        await type_and_send(pilot, "history of sockets")
        await until(pilot, lambda: settled(app) and len(saved()) == 2)
        second = saved()[0]
        assert second.prompt == "history of sockets"
        assert second.conversation[0] == ("user", "history of pooling strategies")
        assert second.conversation[1][0] == "assistant" and len(second.conversation) == 2
        key = app.connector.api_key
    assert key
    for path in default_path().parent.glob("history.sqlite3*"):
        assert key.encode() not in path.read_bytes()


async def test_a_remote_key_never_reaches_the_history(ui_gateway) -> None:
    # A key the user gave (not the local gateway's): requests carry it, the file never.
    app = AnomanApp(
        Settings(base_url=ui_gateway.base_url, api_key=ui_gateway.api_key,
                 idle_timeout=1.5, theme="anoman-dark"),
        models=["anoman-lite", "claude-sonnet-4-6", "qwen3-coder"],
    )
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await type_and_send(pilot, "history with a key of my own")
        await until(pilot, lambda: settled(app) and len(saved()) == 1)
    assert saved()[0].panes[0].base_url.startswith(ui_gateway.base_url)
    files = list(default_path().parent.glob("history.sqlite3*"))
    assert files
    for path in files:
        assert ui_gateway.api_key.encode() not in path.read_bytes()


async def test_no_history_saves_nothing(make_app) -> None:
    app = make_app(history=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "history off for this one")
        await until(pilot, lambda: settled(app))
        await pilot.pause(0.3)
        assert app.history is None
    assert not default_path().exists()


async def test_an_unusable_history_is_one_notice_and_the_screen_works(make_app) -> None:
    path: Path = default_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all\n" * 50)
    before = path.read_bytes()
    app = make_app()
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: any("not saved this session" in str(n.message)
                                       for n in app._notifications))
        await type_and_send(pilot, "history broken for this one")
        await until(pilot, lambda: settled(app))
        assert all(p.status == "done" for p in panes(app))
        notices = [str(n.message) for n in app._notifications if "saved" in str(n.message)]
        assert notices == [f"Comparisons are not saved this session: {path} is not a readable "
                           "history database (corrupt or another kind of file)."]
        assert app.history is None
    assert path.read_bytes() == before


async def test_panes_ending_together_save_their_turn_once(make_app) -> None:
    # Panes that end at once post their finish messages before the screen handles the
    # first: each message then finds no pane running, as the last one does.
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await type_and_send(pilot, "history saved once")
        await until(pilot, lambda: settled(app) and len(saved()) == 1)
        for state in app.panes[1:]:
            assert state.last_result is not None
            app.compare.post_message(
                PaneStreamFinished(state.index, "history saved once", state.last_result))
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        assert [r.prompt for r in saved()] == ["history saved once"]


async def test_a_shared_history_whose_server_goes_away_keeps_the_turn_until_it_is_back(
        make_app, fast_answers, postgres_server) -> None:
    from tests.postgres import PASSWORD

    url = postgres_server.new_database()
    app = make_app(history_url=url, user="ann")

    def said() -> str:
        return " ".join(str(n.message) for n in app._notifications)

    try:
        async with app.run_test(size=(200, 50), notifications=True) as pilot:
            await ready(pilot)
            await until(pilot, lambda: app.history is not None)
            assert app.history is not None and app.history.engine == "postgresql"
            postgres_server.stop()
            await type_and_send(pilot, "kept while the server is away")
            await until(pilot, lambda: settled(app) and "kept and saved when it is back"
                        in said(), timeout=30)
            assert app.pending_saves is not None and app.pending_saves.waiting == 1
            postgres_server.start()
            app.pending_saves.retry_now()
            await until(pilot, lambda: "waited for the history's server is saved" in said(),
                        timeout=60)
            assert PASSWORD not in said()
    finally:
        if not postgres_server.running():
            postgres_server.start()
    with HistoryStore.open(url) as store:
        [record] = store.recent()
        assert record.prompt == "kept while the server is away" and record.user == "ann"
