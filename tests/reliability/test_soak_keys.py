"""Soak and keys.

Soak: many comparisons in a row in one headless app (aborts and failures mixed in) leave
no growth in running asyncio tasks, open sockets (counted as file descriptors) or memory
beyond the bounds below. 60 comparisons by default, 200 with --run-slow.

Keys: a known key goes through the app, the logs and `anoman-tui compare`, including
servers that echo the key back in error messages; it is never found on screen, in the
log file, in CLI output or in error messages. `--api-key` help says the environment or
the config file is safer. (Keys echoed into answers, every export, `eval`'s outputs and
URL passwords: tests/reliability/test_secrets_in_output.py.)
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
from pathlib import Path

import pytest

from anoman_tui.cli.logs import setup_file_logging
from anoman_tui.locations import log_file
from tests.helpers import main_in_thread, run_main
from tests.reliability.app_helpers import (
    connect_to,
    panes,
    remote_app,
    screen_text,
    send,
    settled,
    until,
)
from tests.reliability.helpers import error_frame, open_fds, open_sockets, rss_bytes, spec_frames
from tests.replay_server import ReplayServer, Script

# Bounds: a few tasks/sockets of slack for timers and the keep-alive pool; memory may grow
# by caches that fill once (Rich/Textual style caches), not per comparison.
TASK_SLACK = 5
SOCKET_SLACK = 6
MEMORY_BOUND = 40 * 1024 * 1024


def soak_scripts(replay: ReplayServer) -> None:
    frames = spec_frames("openai")
    paced: list[bytes | float] = []
    for frame in frames:
        paced += [frame, 0.005]
    replay.scripts["good"] = Script(body=paced)
    replay.scripts["hang"] = Script(body=frames[:3], ending="hang")
    replay.scripts["interrupt"] = Script(body=[*frames[:3], error_frame("openai"),
                                               b"data: [DONE]\n\n"])
    replay.scripts["reset"] = Script(body=frames[:3], ending="reset")
    replay.scripts["500"] = Script(status=500, content_type="text/html", body=[b"<h1>x</h1>"])


async def _soak(replay: ReplayServer, rounds: int) -> None:
    soak_scripts(replay)
    app = remote_app(replay.base_url, ["good", "good", "good"], idle_timeout=5)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        cycle = ["good", "hang", "interrupt", "reset", "500"]
        baseline: tuple[int, int, int] | None = None
        for i in range(rounds):
            app.panes[1].model = cycle[i % len(cycle)]
            app.panes[2].model = "good" if i % 3 else "500"
            await send(pilot, f"soak {i}")
            if app.panes[1].model == "hang":
                await until(pilot, lambda: app.compare.pane(2).status == "streaming", 10)
                await pilot.press("f2" if i % 2 else "escape")  # one pane, or all
            await until(pilot, lambda: settled(app), 20)
            assert app.compare.pane(1).status in ("done", "cancelled")
            if i == 9:  # warmed up: caches filled, pool connections open
                gc.collect()
                baseline = (len(asyncio.all_tasks()), open_sockets(), rss_bytes())
        await pilot.pause(0.2)
        gc.collect()
        assert baseline is not None
        tasks, sockets, rss = len(asyncio.all_tasks()), open_sockets(), rss_bytes()
        print(f"\nsoak {rounds}: tasks {baseline[0]}→{tasks}, sockets {baseline[1]}→{sockets}, "
              f"fds now {open_fds()}, RSS {baseline[2] / 2**20:.0f}→{rss / 2**20:.0f} MiB")
        assert tasks <= baseline[0] + TASK_SLACK
        assert sockets <= baseline[1] + SOCKET_SLACK
        assert rss <= baseline[2] + MEMORY_BOUND
        # Still responsive after it all.
        await pilot.press("ctrl+n")
        await until(pilot, lambda: all(p.status == "idle" for p in panes(app)), 5)


@pytest.mark.long(25)
async def test_soak_60_comparisons(replay: ReplayServer) -> None:
    await _soak(replay, 60)


@pytest.mark.slow
async def test_soak_200_comparisons(replay: ReplayServer) -> None:
    await _soak(replay, 200)


# -- keys ---------------------------------------------------------------------------

KEY = "anm-sk-known-secret-key-7f3a9c1e5b2d4086"
SECRET_PART = KEY.removeprefix("anm-sk-")[:-4]  # anything beyond the shown hint


def echo_scripts(replay: ReplayServer) -> None:
    frames = spec_frames("openai")
    echo = json.dumps({"error": {"type": "authentication_error",
                                 "message": f"invalid key {KEY} (Bearer {KEY})"}}).encode()
    replay.scripts["good"] = Script(body=frames)
    replay.scripts["echo-401"] = Script(status=401, content_type="application/json", body=[echo])
    frame = {"error": {"type": "provider_error", "code": "x",
                       "message": f"upstream said: key={KEY}"}}
    replay.scripts["echo-frame"] = Script(
        body=[*frames[:3], f"data: {json.dumps(frame)}\n\n".encode(), b"data: [DONE]\n\n"])
    replay.scripts["echo-html"] = Script(status=502, content_type="text/html",
                                         body=[f"<p>key {KEY}</p>".encode()])


def assert_no_key(text: str, where: str) -> None:
    assert KEY not in text, where
    assert SECRET_PART not in text, where


async def test_key_never_on_screen_or_in_logs(replay: ReplayServer) -> None:
    echo_scripts(replay)
    setup_file_logging(secrets=[KEY])
    root = logging.getLogger()
    try:
        app = remote_app(replay.base_url, ["echo-401", "good", "echo-html"], key=KEY)
        async with app.run_test(size=(160, 45)) as pilot:
            await connect_to(pilot, replay.base_url)
            assert_no_key(screen_text(app), "screen at start")
            await send(pilot, "leak it")
            await until(pilot, lambda: settled(app))
            assert_no_key(screen_text(app), "screen with failures")
            for pane in panes(app):
                result = pane.state.last_result
                assert result is not None
                if result.failure is not None:
                    assert_no_key(result.failure.message, f"failure of pane {pane.state.index}")
                assert_no_key(repr(result), "result repr")
            assert_no_key(repr(app.settings), "settings repr")
            await pilot.press("f5")  # the usage screen (its request fails here: 404)
            await pilot.pause(0.3)
            assert_no_key(screen_text(app), "usage screen")
            # Whatever the app or a library logs about the key goes through the filter.
            logging.getLogger("anoman_tui.test").error("request failed with key %s", KEY)
        for handler in root.handlers:
            handler.flush()
        logged = log_file().read_text(encoding="utf-8")
        assert "request failed with key" in logged
        assert_no_key(logged, "log file")
    finally:
        for handler in list(root.handlers):
            if isinstance(handler, logging.FileHandler):
                root.removeHandler(handler)
                handler.close()


async def _cli(*args: str, env_key: str | None) -> tuple[int, str, str]:
    # In this process (`main_in_thread`): what is checked is what the command writes, not
    # anything a process boundary changes.
    env = dict(os.environ)  # clean_env (tests/reliability/conftest.py): no ANOMAN_* of ours
    if env_key is not None:
        env["ANOMAN_API_KEY"] = env_key
    done = await main_in_thread(args, env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("how", ["flag", "env"])
async def test_key_never_in_cli_output(replay: ReplayServer, tmp_path: Path, how: str) -> None:
    echo_scripts(replay)
    key_args = ["--api-key", KEY] if how == "flag" else []
    env_key = KEY if how == "env" else None
    models = ["-m", "good", "-m", "echo-401", "-m", "echo-html"]
    for extra in ([], ["--json"], ["--endpoint", "anthropic"]):
        code, out, err = await _cli("compare", "hi", "--base-url", replay.base_url, *models,
                                    *key_args, *extra, env_key=env_key)
        assert code == 1
        assert_no_key(out + err, f"compare {extra} ({how})")
    # Error paths: nothing listening, and the usage command against a failing server.
    code, out, err = await _cli("compare", "hi", "--base-url", "http://127.0.0.1:1",
                                *key_args, env_key=env_key)
    assert code == 1 and "Traceback" not in err
    assert_no_key(out + err, f"compare unreachable ({how})")
    code, out, err = await _cli("usage", "--base-url", replay.base_url, *key_args,
                                env_key=env_key)
    assert "Traceback" not in err
    assert_no_key(out + err, f"usage ({how})")


async def test_key_echoed_in_an_error_frame_is_masked(replay: ReplayServer) -> None:
    echo_scripts(replay)
    app = remote_app(replay.base_url, ["echo-frame", "good", "good"], key=KEY)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        await send(pilot, "leak it mid-stream")
        await until(pilot, lambda: settled(app))
        result = app.compare.pane(1).state.last_result
        assert result is not None and result.failure is not None
        assert result.failure.kind == "stream_error"
        assert_no_key(result.failure.message, "stream_error message")
        assert_no_key(screen_text(app), "screen")
    code, out, err = await _cli("compare", "hi", "--base-url", replay.base_url, "-m",
                                "echo-frame", "--json", env_key=KEY)
    assert code == 1
    assert_no_key(out + err, "compare --json")


def _help(*args: str) -> str:
    done = run_main([*args, "--help"], env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0
    return " ".join(done.stdout.split())


@pytest.mark.parametrize("command", [(), ("compare",), ("usage",)])
def test_api_key_help_says_env_or_config_is_safer(command: tuple[str, ...]) -> None:
    text = _help(*command)
    start = text.rindex("--api-key")  # the options section, not the usage line
    line = text[start : start + 400].lower()
    assert "environment variable" in line and "config file" in line, line


def test_serve_api_key_help_says_config_is_safer() -> None:
    text = _help("serve")
    start = text.rindex("--api-key KEY")
    line = text[start : start + 300].lower()
    assert "config" in line and ("history" in line or "safer" in line or "prefer" in line), line
