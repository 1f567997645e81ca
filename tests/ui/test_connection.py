"""Reaching the gateway as a user meets it: the words when it fails, the retries, the
commands that change where requests go, the palette, and where typed keys go.

A real loopback server (`ReplayServer`) stands in for a gateway, a web page or nothing
at all; the app runs under Pilot at 80×24 and 200×50.
"""

from __future__ import annotations

import json
import socket

import pytest
from textual.widgets import Input

from anoman_tui.config import Settings
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.text_input import TextInputScreen
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.prompt_box import PromptBox
from tests.pilot import palette, until
from tests.replay_server import ReplayServer, Script

SIZES = [(80, 24), (200, 50)]
LISTING = json.dumps({"data": [{"id": "m-1"}, {"id": "m-2"}, {"id": "m-3"}]}).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def remote_app(base_url: str, **settings: object) -> AnomanApp:
    return AnomanApp(Settings(base_url=base_url, theme="anoman-dark", **settings))  # type: ignore[arg-type]


def status(app: AnomanApp) -> str:
    return str(app.compare.query_one("#status-line").render())


def gateway() -> ReplayServer:
    server = ReplayServer()
    server.scripts["/v1/models"] = Script(content_type="application/json", body=[LISTING],
                                          chunked=False)
    return server


def notices(app: AnomanApp) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


@pytest.mark.parametrize("size", SIZES)
async def test_a_404_on_the_model_list_says_not_a_gateway(size: tuple[int, int]) -> None:
    server = ReplayServer()  # answers every path with 404 {}
    await server.start()
    try:
        app = remote_app(server.base_url)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.compare.unavailable)
            said = app.compare.target_label
            assert (f"the base URL {server.base_url} does not look like an Anoman or "
                    "OpenAI-compatible gateway (GET /v1/models answered 404)") in said
            assert "model name" not in said and "MODEL NOT FOUND" not in said
            await until(pilot, lambda: said.removeprefix("unavailable: ") in notices(app))
            # A wrong address stays wrong: no retry scheduled, one request made.
            await pilot.pause(1.5)
            assert "retrying" not in status(app)
            assert len(server.requests) == 1
    finally:
        await server.stop()


async def test_an_html_answer_says_not_a_gateway() -> None:
    server = ReplayServer()
    server.scripts["/v1/models"] = Script(
        content_type="text/html; charset=utf-8", chunked=False,
        body=[b"<!doctype html><html><body>Welcome to my blog</body></html>"],
    )
    await server.start()
    try:
        app = remote_app(server.base_url + "/v1")
        async with app.run_test(size=(200, 50)) as pilot:
            await until(pilot, lambda: app.compare.unavailable)
            said = app.compare.target_label
            assert f"{server.base_url} does not look like an Anoman" in said
            assert "answered HTML" in said
    finally:
        await server.stop()


@pytest.mark.parametrize("size", SIZES)
async def test_a_refused_port_is_named_and_retried(size: tuple[int, int]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    app = remote_app(url)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.compare.unavailable)
        assert app.compare.target_label == (
            f"unavailable: cannot reach {url} (connection refused)")
        # The notice and the status line follow the state by a message each (a busy
        # machine once read the notices before the first had arrived).
        await until(pilot, lambda: f"cannot reach {url} (connection refused)" in notices(app))
        await until(pilot, lambda: "retrying in" in status(app))
        # Reconnect shows in the footer (and works) only while nothing answers.
        assert app.check_action("reconnect", ()) is True


@pytest.mark.parametrize("size", SIZES)
async def test_the_app_connects_by_itself_once_the_gateway_comes_up(
    size: tuple[int, int]
) -> None:
    port = free_port()
    app = remote_app(f"http://127.0.0.1:{port}")
    server = gateway()
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: "retrying in" in status(app))
        await server.start(port)
        try:
            await until(pilot, lambda: app.compare.base_url is not None, timeout=10)
            assert [m.id for m in app.compare.models] == ["m-1", "m-2", "m-3"]
            assert [p.model for p in app.panes] == ["m-1", "m-2", "m-3"]
            await until(pilot, lambda: f"Connected to http://127.0.0.1:{port}." in notices(app))
            assert "unavailable" not in status(app) and "retrying" not in status(app)
            assert app.check_action("reconnect", ()) is False
        finally:
            await server.stop()


async def test_reconnect_now_does_not_wait_for_the_backoff() -> None:
    server = ReplayServer()
    server.scripts["/v1/models"] = Script(status=503, content_type="application/json",
                                          body=[b'{"error": {"message": "warming up"}}'],
                                          chunked=False)
    await server.start()
    try:
        app = remote_app(server.base_url)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "retrying in" in status(app))
            assert "503 GATEWAY ERROR" in status(app) or "503" in app.compare.target_label
            # Let the backoff grow past the test's patience, then ask.
            await until(pilot, lambda: len(server.requests) >= 3, timeout=10)
            server.scripts["/v1/models"] = gateway().scripts["/v1/models"]
            await pilot.press("ctrl+g")
            await until(pilot, lambda: app.compare.base_url == server.base_url, timeout=2)
    finally:
        await server.stop()


@pytest.mark.parametrize("size", SIZES)
async def test_change_gateway_url_from_the_palette_reconnects(size: tuple[int, int]) -> None:
    app = remote_app(f"http://127.0.0.1:{free_port()}")
    server = gateway()
    await server.start()
    try:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.compare.unavailable)
            titles = [c.title for c in palette(app, app.compare)]
            assert "Change gateway URL" in titles and "Reconnect now" in titles
            app.compare.change_gateway_url()
            await until(pilot, lambda: isinstance(app.screen, TextInputScreen)
                        and bool(app.screen.query(Input)))
            field = app.screen.query_one(Input)
            field.value = "api.example"  # not a URL: refused in the dialog, which stays
            await pilot.press("enter")
            await pilot.pause(0.1)
            assert isinstance(app.screen, TextInputScreen)
            field.value = server.base_url
            await pilot.press("enter")
            await until(pilot, lambda: app.compare.base_url == server.base_url, timeout=5)
            assert app.settings.base_url == server.base_url
            assert server.requests[-1].path == "/v1/models"
    finally:
        await server.stop()


async def test_change_api_key_is_masked_and_sent() -> None:
    server = gateway()
    await server.start()
    secret = "anm-sk-brand-new-secret-7c1f"
    try:
        app = remote_app(server.base_url, api_key="anm-sk-old-key-for-testing-0000")
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.compare.base_url is not None)
            entry = next(c for c in palette(app, app.compare)
                         if c.title == "Change API key")
            assert entry.help == "now: anm-sk-…0000"
            app.compare.change_api_key()
            await until(pilot, lambda: isinstance(app.screen, TextInputScreen)
                        and bool(app.screen.query(Input)))
            field = app.screen.query_one(Input)
            assert field.password and field.value == ""  # the old key is not put on screen
            await pilot.press(*secret)
            await pilot.pause(0.05)
            assert "brand" not in app.export_screenshot()
            await pilot.press("enter")
            await until(pilot, lambda: len(server.requests) == 2 and
                        app.compare.base_url is not None, timeout=5)
            assert server.requests[-1].headers["authorization"] == f"Bearer {secret}"
            assert app.connector.api_key == secret
            assert "7c1f" in next(c.help for c in palette(app, app.compare)
                                  if c.title == "Change API key")
            assert secret not in " ".join(c.help for c in palette(app, app.compare))
    finally:
        await server.stop()


async def test_palette_holds_the_apps_commands_and_true_toggle_states(make_app) -> None:
    # One size: the palette's entries and their help are read from the screen and the
    # app, not drawn, so a second terminal size ran the same code again.
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        commands = {c.title: c for c in palette(app, app.compare)}
        assert {"Theme", "Keys", "Quit"} <= set(commands)
        assert not {"Screenshot", "Maximize", "Minimize"} & set(commands)
        assert commands["Sync parameters across panes"].help.startswith("now off")
        assert commands["Toggle cache bypass"].help.startswith("now using the cache")
        app.compare.toggle_sync()
        app.compare.toggle_cache_bypass()
        commands = {c.title: c for c in palette(app, app.compare)}
        assert commands["Sync parameters across panes"].help.startswith("now on")
        assert commands["Toggle cache bypass"].help.startswith("now bypassing")
        # The theme picker: the app's themes (and the user's), not Textual's stock.
        assert set(app.available_themes) == {"anoman-dark", "anoman-light",
                                             "anoman-high-contrast"}


@pytest.mark.parametrize("size", SIZES)
async def test_tab_cycles_the_two_boxes_and_typed_text_is_kept(
    size: tuple[int, int]
) -> None:
    app = AnomanApp(Settings(theme="anoman-dark"), models=["a", "b", "c"], connect=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(4):
            seen.append(app.focused.id if app.focused else None)
            await pilot.press("tab")
        assert seen == ["prompt", "system", "prompt", "system"]
        assert app.focused is not None and app.focused.id == "prompt"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "system"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "prompt"
        # Focus on a pane's answer (a click): typing goes to the prompt box all the same.
        app.compare.query(AnswerView).first().focus()
        await pilot.pause()
        await pilot.press("h", "i")
        await pilot.pause()
        prompt = app.compare.query_one(PromptBox)
        assert prompt.text == "hi" and app.focused is prompt
