"""No key and no URL password leaves the program, whatever a server sends back.

A real loopback server (`tests.replay_server`) echoes keys into an answer (split across
two chunks) and into an error: the key the request carried, and another target's. What
`compare` prints, its `--json`, the history it saves, `export --format md|html|json` of
a comparison saved with a key in it, and `eval`'s summary, `--json`, `--junit` and
`--html` hold none of them, only the masked form (`anm-sk-…4086`). A target whose base
URL carries `user:p'a"ss@` never shows the password: not in the history's rows, the
exports, the recordings or a usage error.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from anoman_tui.history import HistoryStore
from anoman_tui.streaming import ChatTurn, StreamClient, StreamRequest
from anoman_tui.streaming.safe_text import mask_secret
from anoman_tui.ui.screens import export
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.text_input import TextInputScreen
from tests.helpers import main_in_thread
from tests.reliability.app_helpers import connect_to, remote_app, send, settled, until
from tests.replay_server import ReplayServer, Script

KEY = "anm-sk-known-secret-key-7f3a9c1e5b2d4086"
OTHER = "sk-other-target-secret-99887766aabb"
"""The key of another target than the one answering (not one the request carried)."""
LEAKS = (KEY, KEY.removeprefix("anm-sk-")[:-4], OTHER, OTHER[:-4])
"""The keys, and what is more of each than the shown hint (its last four)."""
PASSWORD = "p'a\"ss"
PASSWORD_LEAKS = ("p'a", "p\\'a", "p&#x27;a", "p\\u0027a", "p%27a", 'a"ss', 'a\\"ss',
                  "a&quot;ss", "a%22ss")
"""The password's characters as any format (JSON, HTML, a repr, a URL) could write them."""


def _chunk(text: str) -> bytes:
    delta = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(delta)}\n\n".encode()


def echo_scripts(replay: ReplayServer) -> None:
    half = len(KEY) // 2
    replay.scripts["echo"] = Script(body=[
        _chunk(f"Your key is {KEY[:half]}"), _chunk(f"{KEY[half:]}; theirs is {OTHER}."),
        b"data: [DONE]\n\n"])
    error = {"error": {"type": "authentication_error",
                       "message": f"bad key {KEY}; try {OTHER}"}}
    replay.scripts["echo-401"] = Script(status=401, content_type="application/json",
                                        body=[json.dumps(error).encode()])
    replay.scripts["/v1/models"] = Script(
        content_type="application/json",
        body=[b'{"object":"list","data":[{"id":"echo"},{"id":"echo-401"}]}'])


def config(replay: ReplayServer, *, password: bool = False) -> str:
    where = replay.base_url.replace("://", f"://user:{PASSWORD}@") if password \
        else replay.base_url
    return (f"[targets.echo]\nbase_url = {json.dumps(where)}\napi_key_env = \"ECHO_KEY\"\n"
            f"[targets.other]\nbase_url = {json.dumps(replay.base_url)}\n"
            "api_key_env = \"OTHER_KEY\"\n")


async def cli(*args: str, cwd: Path, env: dict[str, str] | None = None
              ) -> tuple[int, str, str]:
    """`anoman-tui ARGS` as a user runs it (`anoman_tui.cli.main` in this process, in a
    thread: the loop keeps serving the replay server)."""
    full = {**os.environ, "ECHO_KEY": KEY, "OTHER_KEY": OTHER, "COLUMNS": "200",
            **(env or {})}
    done = await main_in_thread(args, env=full, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def assert_no_secret(text: str, where: str, leaks: Iterable[str] = LEAKS) -> None:
    for leak in leaks:
        assert leak not in text, f"{leak!r} in {where}"


def history_bytes(clean_env: Path) -> str:
    """Every row of the history database, as text."""
    path = clean_env.parent / "data" / "anoman-tui" / "history.sqlite3"
    with sqlite3.connect(path) as db:
        return "\n".join(db.iterdump())


async def test_an_echoed_key_is_masked_in_compare_and_what_it_saves(
        replay: ReplayServer, clean_env: Path, tmp_path: Path) -> None:
    echo_scripts(replay)
    clean_env.write_text(config(replay))
    models = ["-m", "echo:echo", "-m", "echo:echo-401"]
    code, out, err = await cli("compare", f"is {KEY} mine?", *models, cwd=tmp_path)
    assert code == 1, err
    assert_no_secret(out + err, "compare")
    assert f"Your key is {mask_secret(KEY)}; theirs is {mask_secret(OTHER)}." in out
    assert mask_secret(KEY) in err + out  # the 401's message, masked

    code, out, err = await cli("compare", "hi", *models, "--json", cwd=tmp_path)
    assert code == 1, err
    assert_no_secret(out + err, "compare --json")
    document = json.loads(out)
    assert document["panels"][0]["text"] == \
        f"Your key is {mask_secret(KEY)}; theirs is {mask_secret(OTHER)}."
    message = document["panels"][1]["failure"]["message"]
    assert KEY[-4:] in message and mask_secret(OTHER) in message, message
    assert_no_secret(history_bytes(clean_env), "the history")  # nothing stored either


async def test_a_key_the_history_kept_is_masked_in_every_export(
        replay: ReplayServer, clean_env: Path, tmp_path: Path) -> None:
    """A comparison saved with the keys in it (as a server echoed them, before masking
    existed): each report the export command writes masks them."""
    echo_scripts(replay)
    clean_env.write_text(config(replay))
    code, out, err = await cli("compare", "hi", "-m", "echo:echo", "-m", "echo:echo-401",
                               "--json", cwd=tmp_path)
    assert code == 1, err
    with HistoryStore.open(clean_env.parent / "data" / "anoman-tui" / "history.sqlite3") \
            as store:
        record = store.get(json.loads(out)["id"])
        assert record is not None
        leaky = store.save(replace(
            record, id=None, prompt=f"is {KEY} mine?", panes=tuple(
                replace(p, text=f"Your key is {KEY}; theirs is {OTHER}.",
                        failure=p.failure and {**p.failure, "message": f"bad key {OTHER}"})
                for p in record.panes)))
    for fmt in ("md", "html", "json"):
        code, out, err = await cli("export", str(leaky), "--format", fmt, "-o", "-",
                                   cwd=tmp_path)
        assert code == 0, err
        assert_no_secret(out + err, f"export --format {fmt}")
        assert mask_secret(KEY) in out and mask_secret(OTHER) in out, fmt
    for listing in (["history"], ["history", "--json"]):
        code, out, err = await cli(*listing, cwd=tmp_path)
        assert code == 0, err
        assert_no_secret(out + err, " ".join(listing))
        assert mask_secret(KEY) in out, listing  # the prompt, masked
    code, out, err = await cli("export", str(leaky), "--format", "md", cwd=tmp_path)
    assert code == 0, err
    assert_no_secret((tmp_path / f"comparison-{leaky}.md").read_text(), "the .md file")


SUITE = """
name = "echo"
models = ["echo:echo", "echo:echo-401"]

[[case]]
id = "leak"
prompt = "Say something"
[[case.assert]]
type = "icontains"
value = "never in the answer"
"""


async def test_an_echoed_key_is_masked_in_every_eval_output(
        replay: ReplayServer, clean_env: Path, tmp_path: Path) -> None:
    echo_scripts(replay)
    clean_env.write_text(config(replay))
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    junit, html = tmp_path / "run.xml", tmp_path / "run.html"
    for extra in (["--json"], ["--no-history"]):
        code, out, err = await cli("eval", str(suite), "--junit", str(junit), "--html",
                                   str(html), *extra, cwd=tmp_path)
        assert code == 1, err  # the assertion fails, and the 401
        assert_no_secret(out + err, f"eval {extra}")
        for path in (junit, html):
            assert_no_secret(path.read_text(), f"{path.name} ({extra})")
        if extra == ["--json"]:
            assert mask_secret(OTHER) in out  # the 401's message, masked
            # The run as the history keeps it, shown and written again.
            code, out, err = await cli("runs", "show", json.loads(out)["run_id"], "--json",
                                       "--junit", str(junit), "--html", str(html),
                                       cwd=tmp_path)
            assert code == 0, err
            assert_no_secret(out + err, "runs show")
            for path in (junit, html):
                assert_no_secret(path.read_text(), f"{path.name} (runs show)")
            assert mask_secret(OTHER) in out
        # The answer is in the JUnit file (with --no-history at least), masked.
        if extra == ["--no-history"]:
            assert mask_secret(KEY) in junit.read_text()


async def test_a_url_password_is_never_stored_or_shown(
        replay: ReplayServer, clean_env: Path, tmp_path: Path) -> None:
    echo_scripts(replay)
    clean_env.write_text(config(replay, password=True))
    code, out, err = await cli("compare", "hi", "-m", "echo:echo", "--json", cwd=tmp_path)
    assert code == 0, err
    assert_no_secret(out + err, "compare --json", PASSWORD_LEAKS)
    comparison = json.loads(out)["id"]
    assert_no_secret(history_bytes(clean_env), "the history's rows", PASSWORD_LEAKS)
    assert "user:***@127.0.0.1" in history_bytes(clean_env)
    for fmt in ("md", "html", "json", "recording"):
        code, out, err = await cli("export", str(comparison), "--format", fmt, "-o", "-",
                                   cwd=tmp_path)
        assert code == 0, err
        assert_no_secret(out + err, f"export --format {fmt}", PASSWORD_LEAKS)
    code, out, err = await cli("compare", "hi", "-m", "echo:echo", cwd=tmp_path)
    assert code == 0, err
    assert_no_secret(out + err, "compare", PASSWORD_LEAKS)

    # Usage errors: a flag argparse refuses, a URL the settings refuse, a config file's.
    bad_url = f"htps://user:{PASSWORD}@example.test/v1"
    for args, config_text in (
            (["compare", "hi", "--speed", f"https://user:{PASSWORD}@example.test"], ""),
            (["compare", "hi", "--base-url", bad_url], ""),
            (["compare", "hi"], f"[targets.pw]\nbase_url = {json.dumps(bad_url)}\n")):
        clean_env.write_text(config_text)
        code, out, err = await cli(*args, cwd=tmp_path)
        assert code == 2, (args, err)
        assert "Traceback" not in err, err
        assert "user:***@" in err, err
        assert_no_secret(out + err, f"usage error {args[2:]}", PASSWORD_LEAKS)


async def test_the_screens_export_masks_every_key(replay: ReplayServer, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl+S on the compare screen: each report masks the key the app sends and a key
    variable's (another target's) that a server echoed into an answer."""
    echo_scripts(replay)
    monkeypatch.setenv("OPENAI_API_KEY", OTHER)
    monkeypatch.setattr(export, "default_path",
                        lambda record, fmt, directory=None: tmp_path / f"screen.{fmt}")
    app = remote_app(replay.base_url, ["echo", "echo-401", "echo"], key=KEY)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        await send(pilot, "leak it")
        await until(pilot, lambda: settled(app), 60)
        for downs, fmt in enumerate(("md", "html", "json")):
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
            for _ in range(downs):
                await pilot.press("down")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TextInputScreen))
            await pilot.press("enter")
            path = tmp_path / f"screen.{fmt}"
            await until(pilot, lambda p=path: p.exists() and "aabb" in p.read_text(), 60)
            text = path.read_text()
            assert_no_secret(text, f"the screen's {fmt} export")
            assert mask_secret(KEY) in text and mask_secret(OTHER) in text, fmt


async def test_a_url_password_a_server_echoes_is_not_recorded(replay: ReplayServer) -> None:
    echoed = f"bad password {PASSWORD} for user".encode()
    replay.scripts["m"] = Script(status=401, content_type="text/plain",
                                 headers=[("X-Request-Id", f"id-{PASSWORD}")], body=[echoed])
    request = StreamRequest(base_url=replay.base_url.replace("://", f"://user:{PASSWORD}@"),
                            api_key=KEY, model="m", record=True,
                            messages=(ChatTurn(role="user", content="hi"),))
    async with StreamClient() as client:
        result = await client.stream(request).wait()
    assert result.recording is not None and result.recording.status == 401
    assert_no_secret(json.dumps(result.recording.to_json()) + result.recording.body.decode(),
                     "the recording", PASSWORD_LEAKS)
