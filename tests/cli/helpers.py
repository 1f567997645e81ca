"""What the CLI tests share that is not a fixture: `anoman-tui` run as a user runs it
(a subprocess), where its history file lives, and the key and pacing they use.
The fixtures (`gateway`, `data_home`) are in tests/cli/conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEY = "anm-sk-history-secret-5c4b3a29d8e7"
"""The key of the `gateway` fixture's local gateway."""
FAST = "X-Anoman-Simulate: ttft=0,rate=4000"


def cli(data_home: Path, *args: str, env: dict[str, str] | None = None,
        config: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m anoman_tui.cli ARGS` with its data under `data_home` (the `data_home`
    fixture: no `ANOMAN_*` variable is set but those in `env`) and `config` as its
    config file."""
    config_path = data_home.parent / "config.toml"
    config_path.write_text(config)
    full = dict(os.environ)
    full.update(PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(data_home),
                ANOMAN_CONFIG=str(config_path), COLUMNS="200", **(env or {}))
    return subprocess.run([sys.executable, "-m", "anoman_tui.cli", *args], capture_output=True,
                          text=True, env=full, cwd=ROOT, timeout=120)


def history_file(data_home: Path) -> Path:
    return data_home / "anoman-tui" / "history.sqlite3"
