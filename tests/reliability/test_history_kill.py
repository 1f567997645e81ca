"""The history survives a killed app and shared writers: the real `anoman-tui` in a pty.

The app runs as a user runs it (`python -m anoman_tui.cli` in a pseudo-terminal of
200x50, a throw-away XDG_DATA_HOME, no config file) against a local gateway this test
starts, and writes its history where it always does (`$XDG_DATA_HOME/anoman-tui/
history.sqlite3`). The test reads that file read-only (sqlite3 `mode=ro`) to know when a
comparison is saved, and drives the pacing of the simulated models with the gateway's
per-model settings (`models.NAME.simulate` in its config, changed between turns here).

* SIGKILL mid-stream loses no comparison that had already ended, and the next start
  opens the file cleanly (no notice, and it saves the next turn).
* The app and several `anoman-tui compare` runs writing the same history at once all
  succeed: every comparison is there afterwards, and nobody says "not saved".
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.gateway.faults import FaultPlan
from anoman_tui.history import HistoryStore
from tests.helpers import LocalGateways

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

ROOT = Path(__file__).resolve().parents[2]
KEY = "anm-sk-history-kill-7d1e0c9b8a65"
MODELS = ("anoman-lite", "claude-sonnet-4-6", "qwen3-coder")
FAST = "ttft=0,rate=1000"
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
NOTICES = ("not saved", "History unavailable")  # the app's two history notices


def until(condition: Callable[[], object], timeout: float, what: str,
          app: PtyApp | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            shown = f"; the app's screen ends with:\n{app.screen()}" if app else ""
            raise AssertionError(f"timed out waiting for {what}{shown}")
        time.sleep(0.05)


@pytest.fixture
def gateway(make_local_gateway: LocalGateways) -> EmbeddedGateway:
    return make_local_gateway(time_scale=1.0, rate_limit_rpm=1_000_000, api_key=KEY,
                              faults={m: FAST for m in MODELS})


def pace(gw: EmbeddedGateway, simulate: str) -> None:
    """What `models.NAME.simulate` in the gateway's config would set, for the next requests."""
    for model in MODELS:
        gw.state.model_faults[model] = FaultPlan.parse(simulate)


def environment(data_home: Path) -> dict[str, str]:
    env = dict(os.environ)  # clean_env (tests/reliability/conftest.py): no ANOMAN_* of ours
    env.update(PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(data_home),
               XDG_CONFIG_HOME=str(data_home.parent / "config"), ANOMAN_CONFIG="/dev/null",
               ANOMAN_API_KEY=KEY, TERM="xterm-256color", COLUMNS="200")
    return env


class PtyApp:
    """`anoman-tui` on a pseudo-terminal; everything it prints is kept (and drained, so a
    full terminal buffer never blocks it)."""

    def __init__(self, gw: EmbeddedGateway, data_home: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        command = [sys.executable, "-m", "anoman_tui.cli", "--base-url", gw.base_url]
        for model in MODELS:
            command += ["-m", model]
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave,
                                        env=environment(data_home), cwd=ROOT,
                                        start_new_session=True)
        os.close(slave)
        self.master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.base_url = gw.base_url

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the app closed its side
                return
            if not data:
                return
            with self._lock:
                self._output += data

    def text(self) -> str:
        """All it has printed so far, escape sequences removed."""
        with self._lock:
            raw = bytes(self._output)
        return ANSI.sub(b"", raw).decode("utf-8", "replace")

    def screen(self) -> str:
        """The last screenful or so, for failure messages."""
        return "\n".join(line.rstrip() for line in self.text()[-20000:].splitlines()
                         if line.strip())[-4000:]

    def wait_for_target(self) -> None:
        until(lambda: f"requests go to: {self.base_url}" in self.text(), 30,
              "the first paint with the gateway's address", self)

    def send(self, prompt: str) -> None:
        os.write(self.master, prompt.encode())
        time.sleep(0.2)  # typed, then Enter, as a person would
        os.write(self.master, b"\r")

    def quit(self) -> int:
        os.write(self.master, b"\x11")  # Ctrl+Q
        return self.process.wait(20)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
        self._reader.join(5)


@pytest.fixture
def apps() -> Iterator[list[PtyApp]]:
    started: list[PtyApp] = []
    yield started
    for app in started:
        app.close()


def history_file(data_home: Path) -> Path:
    return data_home / "anoman-tui" / "history.sqlite3"


def read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)


def saved_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the history's tables (empty while the file or its tables do not exist)."""
    if not path.exists():
        return {"comparisons": [], "panes": []}
    conn = read_only(path)
    try:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
                for table in ("comparisons", "panes")}
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # created, not yet migrated
            return {"comparisons": [], "panes": []}
        raise
    finally:
        conn.close()


def saved_prompts(path: Path) -> list[str]:
    return [row[3] for row in saved_rows(path)["comparisons"]]


def wait_saved(path: Path, prompts: list[str], app: PtyApp) -> None:
    """Until the history holds `prompts`, oldest first: each turn once (a turn saved twice
    fails here, not as a time-out)."""
    until(lambda: len(saved_prompts(path)) >= len(prompts), 20, f"{prompts} in the history",
          app)
    time.sleep(0.3)  # a second copy of the turn would be written by now
    assert saved_prompts(path) == prompts


def streaming(gw: EmbeddedGateway, streams: int, tokens: int) -> bool:
    try:
        runs = list(gw.state.active)  # a set the gateway's thread changes
    except RuntimeError:
        return False
    return len(runs) >= streams and all(getattr(r, "sent", 0) >= tokens for r in runs)


@pytest.mark.long(15)
def test_sigkill_mid_stream_keeps_ended_comparisons_and_the_next_start_is_clean(
    gateway: EmbeddedGateway, tmp_path: Path, apps: list[PtyApp],
) -> None:
    data_home = tmp_path / "data"
    path = history_file(data_home)
    app = PtyApp(gateway, data_home)
    apps.append(app)
    app.wait_for_target()
    # ~3 s: long enough for a few sparkline cells (0.25 s each) also when a loaded
    # machine delivers a stream in bursts (at ~1 s, CI once saw a pane with none).
    pace(gateway, "ttft=0,rate=100")
    app.send("why is the sky blue")
    wait_saved(path, ["why is the sky blue"], app)
    before = saved_rows(path)

    # The next turn streams slowly (~35 s): it is still going when the app is killed.
    pace(gateway, "ttft=0,rate=10")
    app.send("write a long essay about connection pools")
    until(lambda: streaming(gateway, 3, 5), 20, "three panes streaming the second turn")
    app.process.send_signal(signal.SIGKILL)
    assert app.process.wait(10) == -signal.SIGKILL
    pace(gateway, "ttft=0,rate=300")

    conn = read_only(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    assert saved_rows(path) == before  # the ended turn, byte for byte; nothing half-saved
    with HistoryStore.open(path) as store:
        first = store.get(before["comparisons"][0][0])
    assert first is not None and first.prompt == "why is the sky blue"
    assert [(p.model, p.status, p.committed) for p in first.panes] == [
        (m, "completed", True) for m in MODELS]
    assert all(p.text and p.usage and p.metrics and p.rate_series for p in first.panes), first

    # The next start opens the file without a notice, and keeps saving.
    again = PtyApp(gateway, data_home)
    apps.append(again)
    again.wait_for_target()
    # The app opens its history in a thread after the first paint, and a turn that ends
    # before that is not saved: give it the second a person takes to start typing.
    time.sleep(1)
    again.send("a third question after the crash")
    wait_saved(path, ["why is the sky blue", "a third question after the crash"], again)
    assert again.quit() == 0
    screen = again.text()
    assert not [n for n in NOTICES if n in screen], screen[-3000:]

    listed = subprocess.run([sys.executable, "-m", "anoman_tui.cli", "history", "--json"],
                            capture_output=True, text=True, env=environment(data_home),
                            cwd=ROOT, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["prompt"] for r in rows] == ["a third question after the crash",
                                          "why is the sky blue"]
    assert [p["status"] for p in rows[1]["panes"]] == ["completed"] * 3


def compare_run(gw: EmbeddedGateway, data_home: Path, n: int) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "anoman_tui.cli", "compare", f"shared writer question {n}",
         "--json", "--base-url", gw.base_url, "-m", "anoman-lite", "-m", "qwen3-coder"],
        capture_output=True, text=True, env=environment(data_home), cwd=ROOT, timeout=60,
    )
    return result.returncode, result.stdout, result.stderr


@pytest.mark.long(13)
def test_the_app_and_compare_runs_write_one_history_at_once(
    gateway: EmbeddedGateway, tmp_path: Path, apps: list[PtyApp],
) -> None:
    data_home = tmp_path / "data"
    path = history_file(data_home)
    app = PtyApp(gateway, data_home)
    apps.append(app)
    app.wait_for_target()
    until(path.exists, 10, "the app to open its history")
    # Three `compare` runs at a time, one after another, from before the app's turn until
    # after it is saved: the app's save lands among theirs.
    pace(gateway, "ttft=0,rate=150")  # the app's turn lasts ~2 s; compare's the same
    results: list[tuple[int, str, str]] = []
    stop = threading.Event()
    counter = iter(range(1000))
    lock = threading.Lock()

    def writer() -> None:
        while not stop.is_set():
            with lock:
                n = next(counter)
            outcome = compare_run(gateway, data_home, n)
            with lock:
                results.append(outcome)

    def app_saved() -> bool:
        return any(r[3] == "the app's own question" for r in saved_rows(path)["comparisons"])

    with ThreadPoolExecutor(3) as pool:
        writers = [pool.submit(writer) for _ in range(3)]
        try:
            until(lambda: len(results) >= 1, 30, "a compare run before the app's turn")
            app.send("the app's own question")
            until(app_saved, 20, "the app's comparison in the history", app)
            after = len(results)
            until(lambda: len(results) >= after + 3, 30, "compare runs after the app's save")
        finally:
            stop.set()
        for done in writers:
            done.result()
    assert app.quit() == 0

    ids = []
    for code, out, err in results:
        assert code == 0, err
        assert "not saved" not in err and "history disabled" not in err, err
        ids.append(json.loads(out)["id"])
    rows = saved_rows(path)["comparisons"]
    by_prompt = {row[3]: row[0] for row in rows}
    assert len(rows) == len(results) + 1 == len(by_prompt)
    assert sorted(ids) == sorted(v for k, v in by_prompt.items() if k.startswith("shared"))
    app_id = by_prompt["the app's own question"]
    assert min(ids) < app_id < max(ids)  # compare saved both before and after the app did
    assert len(saved_rows(path)["panes"]) == 2 * len(results) + 3
    screen = app.text()
    assert not [n for n in NOTICES if n in screen], screen[-3000:]
