"""What the CLI tests share that is not a fixture: `anoman-tui` run as a user runs it
(in this process, `tests.helpers.run_main`; in the background as a subprocess,
`spawn_eval`), where its history file lives, and the key and pacing they use.
The fixtures (`gateway`, `data_home`) are in tests/cli/conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tests.helpers import run_main

if TYPE_CHECKING:
    from anoman_tui.gateway.embedded import EmbeddedGateway

ROOT = Path(__file__).resolve().parents[2]
KEY = "anm-sk-history-secret-5c4b3a29d8e7"
"""The key of the `gateway` fixture's local gateway."""
FAST = "X-Anoman-Simulate: ttft=0,rate=4000"


def cli(data_home: Path, *args: str, env: dict[str, str] | None = None,
        config: str = "") -> subprocess.CompletedProcess[str]:
    """`anoman-tui ARGS` (in this process) with its data under `data_home` (the
    `data_home` fixture: no `ANOMAN_*` variable is set but those in `env`) and `config`
    as its config file."""
    config_path = data_home.parent / "config.toml"
    config_path.write_text(config)
    full = dict(os.environ)
    full.update(XDG_DATA_HOME=str(data_home), ANOMAN_CONFIG=str(config_path),
                COLUMNS="200", **(env or {}))
    return run_main(args, env=full, cwd=ROOT)


def history_file(data_home: Path) -> Path:
    return data_home / "anoman-tui" / "history.sqlite3"


def write(tmp: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def run_eval(data_home: Path, gateway: EmbeddedGateway, *args: str,
             header: str = FAST) -> subprocess.CompletedProcess[str]:
    return cli(data_home, "eval", *args, "--base-url", gateway.base_url, "-H", header,
               env={"ANOMAN_API_KEY": KEY})


def spawn_eval(data_home: Path, gateway: EmbeddedGateway, suite: Path,
               header: str) -> subprocess.Popen[str]:
    """`anoman-tui eval SUITE` running in the background, its output piped."""
    config = data_home.parent / "config.toml"
    config.write_text("")
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(data_home),
               ANOMAN_CONFIG=str(config), ANOMAN_API_KEY=KEY)
    return subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "eval", str(suite), "--base-url",
         gateway.base_url, "-H", header],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cells_printed(proc: subprocess.Popen[str], wanted: int, timeout: float = 90) -> int:
    """Read its lines until `wanted` cells have finished (or it ends, or `timeout`)."""
    assert proc.stdout is not None
    finished = 0
    deadline = time.monotonic() + timeout
    while finished < wanted and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        finished += line.startswith(("PASS", "FAIL", "DONE"))
    return finished
