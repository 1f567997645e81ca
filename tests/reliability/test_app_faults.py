"""The fault matrix through the app: each fault in pane 2 while panes 1 and 3 stream a good
answer → pane 2 shows the right badge and commits nothing, panes 1 and 3 complete, and
the app keeps taking keys. One app per endpoint format runs every fault in turn."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from anoman_tui.streaming import EndpointFormat
from tests.reliability.app_helpers import (
    badge_text,
    connect_to,
    panes,
    remote_app,
    screen_text,
    send,
    settled,
    until,
)
from tests.reliability.helpers import FORMATS, RawServer, error_frame, spec_frames
from tests.replay_server import ReplayServer, Script

JSON = "application/json"


def fault_scripts(endpoint: EndpointFormat) -> dict[str, tuple[Script, str]]:
    """fault name → (script for pane 2, words its badge must show)."""
    frames = spec_frames(endpoint)
    done = [b"data: [DONE]\n\n"] if endpoint != "anthropic" else []
    err = b'{"error":{"type":"authentication_error","message":"bad key"}}'
    return {
        "401 json": (Script(status=401, content_type=JSON, body=[err]),
                     "401 UNAUTHORIZED"),
        "502 html": (Script(status=502, content_type="text/html",
                            body=[b"<html><h1>Bad Gateway</h1></html>"]), "502 GATEWAY ERROR"),
        "503 empty": (Script(status=503, content_type=None, body=[]), "503 GATEWAY ERROR"),
        "429": (Script(status=429, content_type=JSON, headers=[("Retry-After", "2")],
                       body=[b'{"error":{"type":"rate_limit_error","message":"slow"}}']),
                "429 RATE LIMITED: retry in 2 s"),
        "error frame": (Script(body=[*frames[:3], error_frame(endpoint), *done]),
                        "STREAM INTERRUPTED after 42 tokens"),
        "truncated": (Script(body=frames[:4], ending="truncate"), "TRUNCATED"),
        "mid-frame cut": (Script(body=[*frames[:3], frames[3][:9]], ending="truncate"),
                          "TRUNCATED"),
        "reset": (Script(body=frames[:4], ending="reset"), "TRUNCATED"),
        "stall": (Script(body=frames[:3], ending="hang"), "STALLED"),
        "invalid frame": (Script(body=[*frames[:3], b"data: {oops\n\n", *frames[3:]]),
                          "PROTOCOL ERROR"),
        "html 200": (Script(content_type="text/html", body=[b"<html></html>"]),
                     "PROTOCOL ERROR"),
    }


@pytest.mark.long(12)
@pytest.mark.parametrize("endpoint", FORMATS)
async def test_every_fault_in_one_pane_leaves_the_others_alone(
    replay: ReplayServer, endpoint: EndpointFormat
) -> None:
    frames = spec_frames(endpoint)
    # The good panes stream slowly enough to still be running when pane 2 fails.
    paced: list[bytes | float] = []
    for frame in frames:
        paced += [frame, 0.03]
    replay.scripts["good"] = Script(body=paced)
    faults = fault_scripts(endpoint)
    for name, (script, _) in faults.items():
        replay.scripts[name] = script

    # A good pane's frames come 30 ms apart, but on a loaded machine (3 workers on 2
    # cores and a busy core) the app's loop has gone 0.5 s without reading one: stalled
    # wrongly. 1.5 s still ends the stall fault within the round.
    app = remote_app(replay.base_url, ["good", "good", "good"], endpoint, idle_timeout=1.5)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        for name, (_, words) in faults.items():
            app.panes[1].model = name
            await send(pilot, f"round {name}")
            await until(pilot, lambda: settled(app))
            one, two, three = panes(app)
            assert two.status == "failed", name
            assert words in badge_text(two), (name, badge_text(two))
            assert two.state.history == []  # nothing committed
            for good in (one, three):
                assert good.status == "done", (name, badge_text(good))
                assert good.answer.text == "Once upon a time..."
                assert len(good.state.history) == 2
            assert "Traceback" not in screen_text(app)
            # Still responsive: a key is handled at once.
            started = time.monotonic()
            await pilot.press("ctrl+n")
            await until(pilot, lambda: all(p.status == "idle" for p in panes(app)), 5.0)
            assert time.monotonic() - started < 5.0

        # The whole gateway gone: every pane says so, and the app still works afterwards.
        async with RawServer("reset") as dead:
            connections = app.connector.connections
            live = connections["gateway"]
            connections["gateway"] = replace(live, base_url=dead.base_url)
            await send(pilot, "anyone there")
            await until(pilot, lambda: settled(app))
            assert all("GATEWAY UNREACHABLE" in badge_text(p) for p in panes(app))
        app.connector.connections["gateway"] = live
        app.panes[1].model = "good"
        await pilot.press("ctrl+n")
        await send(pilot, "back again")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["done"] * 3


async def test_abort_one_pane_mid_stream_others_complete(replay: ReplayServer) -> None:
    frames = spec_frames("openai")
    replay.scripts["hang"] = Script(body=frames[:3], ending="hang")
    replay.scripts["good"] = Script(body=[frames[0], 0.3, *frames[1:]])
    app = remote_app(replay.base_url, ["good", "hang", "good"], idle_timeout=30)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        await send(pilot, "abort the middle")
        two = app.compare.pane(2)
        await until(pilot, lambda: two.status == "streaming")
        await pilot.press("f2")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["done", "cancelled", "done"]
        assert "CANCELLED" in badge_text(two) and two.state.history == []
