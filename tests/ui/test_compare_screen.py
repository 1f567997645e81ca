"""The compare screen against the real local gateway, driven with Pilot: what only the
screen does (its prompt, status line, New, Retry, cache bypass, palette, settings,
connection).

What a pane does with its stream (its answer and footer, failure badges, a cache hit,
aborting one, a follow-up's conversation, a deck cleared while it streams, the badges of
errors before a stream, tabs in a narrow terminal) runs on a deck alone, fed by the same
gateway: test_deck_streams.py."""

from __future__ import annotations

import time

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import ComparePane
from tests.pilot import badge_text, panes, ready, send, settled, until


async def test_a_prompt_streams_every_pane_and_the_key_is_never_drawn(make_app) -> None:
    # (what each pane shows of its answer, its footer's figures: test_deck_streams.py)
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        assert "local gateway" in str(app.compare.query_one("#status-line").render())
        await send(pilot, "compare pooling strategies")
        await until(pilot, lambda: settled(app))
        for pane in panes(app):
            assert pane.status == "done", badge_text(pane)
            assert len(pane.state.history) == 2
        # the key is never drawn
        drawn = "".join(str(w.render()) for w in app.screen.query("Static"))
        assert app.connector.api_key not in drawn
        # The screen's cache bypass reaches its requests: the same prompt again streams
        # afresh. (What a pane shows of a cache hit: test_deck_streams.py.)
        app.compare.toggle_cache_bypass()
        await pilot.press("ctrl+n")
        await send(pilot, "compare pooling strategies")
        await until(pilot, lambda: settled(app) and all(
            len(p.state.history) == 2 for p in panes(app)))
        assert not any("CACHE HIT" in badge_text(p) for p in panes(app))


async def test_retry_resends_failed_panes_only(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.panes[0].scenario = "interrupt"
        await send(pilot, "retry this one")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["failed", "done", "done"]
        done_text = app.compare.pane(2).answer.text
        app.panes[0].scenario = "none"
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.compare.pane(1).status == "done")
        assert len(app.panes[0].history) == 2
        assert app.compare.pane(2).answer.text == done_text  # untouched
        assert len(app.panes[1].history) == 2


async def test_rate_limit_retry_waits_for_retry_after(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.panes[2].scenario = "rate_limit"
        await send(pilot, "rate limited prompt")
        await until(pilot, lambda: settled(app))
        app.panes[2].scenario = "none"
        started = time.monotonic()
        await pilot.press("ctrl+r")
        await pilot.pause(0.2)
        assert "waiting" in badge_text(app.compare.pane(3))
        await until(pilot, lambda: app.compare.pane(3).status == "done")
        assert time.monotonic() - started >= 0.9  # Retry-After: 1


async def test_command_palette_changes_model_and_endpoint(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.compare.pick_model(1)
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.panes[0].model != "anoman-lite"
        app.compare.pick_endpoint(2)
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.panes[1].endpoint == "anthropic"
        await send(pilot, "formats differ")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["done", "done", "done"]


async def test_theme_choice_persists(make_app, isolated_config) -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        assert app.theme == "anoman-dark"
        app.theme = "anoman-light"
        await pilot.pause()
    assert 'theme = "anoman-light"' in isolated_config.read_text()


async def test_unreachable_gateway_is_told_not_crashed(make_app) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = make_app(base_url=f"http://127.0.0.1:{port}")
    async with app.run_test(size=(160, 45)) as pilot:
        status = app.compare.query_one("#status-line")
        await until(pilot, lambda: "unavailable" in str(status.render()))
        assert "connection refused" in str(status.render()) or "cannot reach" in str(
            status.render()
        )
        # sending now says why nothing happens, instead of failing silently
        await send(pilot, "anyone there?")
        await pilot.pause(0.2)
        assert all(p.status == "idle" for p in panes(app))


async def test_gateway_lost_mid_session_is_a_transport_badge(make_app) -> None:
    import socket

    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # The local gateway's address now leads nowhere.
        assert app.connector.local is not None
        app.connector.local = (f"http://127.0.0.1:{port}", app.connector.local[1])
        app.connector.connections.clear()
        await send(pilot, "where did it go")
        await until(pilot, lambda: settled(app))
        for pane in panes(app):
            assert "GATEWAY UNREACHABLE" in badge_text(pane)
            assert "connection refused" in badge_text(pane)


async def test_prompt_sent_before_the_gateway_is_up_goes_out_once_it_is(ui_gateway) -> None:
    from anoman_tui.config import Settings
    from anoman_tui.streaming import ModelInfo
    from anoman_tui.ui.messages import GatewayReady

    app = AnomanApp(Settings(api_key=ui_gateway.api_key), models=["anoman-lite"] * 3,
                    connect=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await send(pilot, "early bird")
        await pilot.pause(0.1)
        assert all(p.status == "idle" for p in panes(app))
        assert app.compare.query_one("#prompt").text == ""
        # as the app's start sets it
        app.connector.local = (ui_gateway.base_url, ui_gateway.api_key)
        app.compare.post_message(
            GatewayReady(ui_gateway.base_url, "local gateway", [ModelInfo("anoman-lite")])
        )
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["done"] * 3
        assert app.panes[0].last_prompt == "early bird"


async def test_enter_right_after_typed_ahead_text_sends_all_of_it(ui_gateway) -> None:
    """Keys that arrive in one read (fast typing, tmux send-keys) must keep their order."""
    from textual import events

    from anoman_tui.config import Settings

    app = AnomanApp(Settings(api_key=ui_gateway.api_key), models=["anoman-lite"] * 3,
                    connect=False)
    async with app.run_test(size=(160, 45)) as pilot:
        app.compare.query_one("#prompt").focus()
        await pilot.pause()
        submitted: list[str] = []
        app.compare.send = lambda prompt, panes, delays=None: submitted.append(prompt)
        app.compare.base_url = ui_gateway.base_url
        for ch in "burst":
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("enter", "\r"))
        await pilot.pause(0.2)
        assert submitted == ["burst"]


async def test_the_status_line_counts_streaming_panes_from_their_states() -> None:
    # (a pane's status, its state's, shown in the pane at every change: test_deck_streams.py)
    from anoman_tui.config import Settings

    app = AnomanApp(Settings(), models=["m1", "m2", "m3"], connect=False, frozen_clock=True)
    async with app.run_test(size=(160, 45)) as pilot:
        pane = app.compare.pane(1)
        assert pane.state is app.panes[0]
        line = app.compare.query_one("#status-line")
        pane.set_status("streaming")
        await pilot.pause()
        assert "1 streaming" in str(line.render())  # the screen counts from the states
        pane.set_status("idle")
        await pilot.pause()
        assert "streaming" not in str(line.render())


async def test_screen_toggles_redraw_only_the_status_line_through_their_watchers() -> None:
    from anoman_tui.config import Settings

    app = AnomanApp(Settings(), models=["m1", "m2", "m3"], connect=False, frozen_clock=True)
    async with app.run_test(size=(160, 45)) as pilot:
        compare = app.compare
        line = compare.query_one("#status-line")
        assert "cache: on" in str(line.render())
        assert "params: per pane" in str(line.render())
        screen_refreshes: list[dict[str, object]] = []
        original_refresh = compare.refresh

        def recording_refresh(*args: object, **kwargs: object) -> object:
            screen_refreshes.append(kwargs)
            return original_refresh(*args, **kwargs)  # type: ignore[arg-type]

        compare.refresh = recording_refresh  # type: ignore[method-assign]

        app.compare.toggle_cache_bypass()  # the "Toggle cache bypass" command
        assert compare.bypass_cache
        assert "cache: bypassed (no-cache)" in str(line.render())
        compare.bypass_cache = False  # no update_status() call: the watcher draws it
        assert "cache: on" in str(line.render())

        app.panes[0].params = pane_state.PaneParams(temperature=0.3, max_tokens=99)
        app.compare.toggle_sync()  # the "Sync parameters across panes" command
        assert compare.sync_params
        assert "params: synced" in str(line.render())
        assert all(p.params == app.panes[0].params for p in app.panes)
        compare.sync_params = False
        assert "params: per pane" in str(line.render())

        await pilot.pause()
        assert screen_refreshes == []  # a toggle redraws one line, not the screen


async def test_the_once_a_second_streaming_check_outlives_the_screens(make_app) -> None:
    # Its timer fired during a shutdown on a loaded machine, after the last screen had
    # gone, and the app ended with a ScreenStackError.
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert app._streaming() is False
    assert not app.screen_stack
    assert app._streaming() is False


async def test_a_compare_screen_taken_apart_before_it_mounts_does_not_fail(make_app) -> None:
    # When the app quit just as an arena screen was pushed, its mount handler ran after
    # its children were gone, and looking up its first pane raised.
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        compare = app.compare
        await compare.query(ComparePane).remove()
        await compare.query("#prompt-area").remove()
        compare.on_mount()  # raised NoMatches ('#pane-1')


async def test_a_comparison_starts_without_rebuilding_the_keys_or_a_layout(
    make_app, monkeypatch
) -> None:
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=20")
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.pause(0.3)
        bar = app.compare.query_one(KeyBar)
        idle = list(bar.query("FooterKey"))
        for index, pane in enumerate(app.panes, 1):  # as the scenario picker arms them
            pane.set_scenario("slow_thinking")
            app.compare.pane(index).refresh_chrome()
        await pilot.pause(0.3)
        layouts = [0]
        original = app.screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            layouts[0] += 1
            original(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(app.screen, "_refresh_layout", counted)
        await send(pilot, "explain the first frames")
        await until(pilot, lambda: all(p.status == "streaming" for p in panes(app)))
        await pilot.pause(0.3)
        # A layout of the screen costs 30-70 ms, just as the first answer text comes in.
        assert layouts[0] == 0
        assert list(bar.query("FooterKey")) == idle  # the same keys, not rebuilt
        await pilot.press("escape")
        await until(pilot, lambda: settled(app))
