"""`anoman-tui serve` (a subprocess: it runs until a signal ends it), `compare` against
it, and `usage`, as a user runs them (in this process, `run_main`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_main


@pytest.fixture(autouse=True)
def _own_data_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each command's history, logs and config under the test's own directory, never the
    # machine's (a history there written by another anoman-tui changed what they print).
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def clean_env() -> dict[str, str]:
    """No `ANOMAN_*` variable, and an empty config file: never the developer's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANOMAN_")}
    env["ANOMAN_CONFIG"] = os.devnull
    return env


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_main(args, env=clean_env() if env is None else env)


def test_serve_compare_usage_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "ledger.sqlite3"
    env = clean_env()
    serve = subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "serve", "--port", "0", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url = key = None
        deadline = time.monotonic() + 20
        assert serve.stdout is not None
        while (url is None or key is None) and time.monotonic() < deadline:
            line = serve.stdout.readline()
            if "listening on" in line:
                url = line.rsplit(" ", 1)[1].strip()
            if "API key" in line:
                key = line.rsplit(" ", 1)[1].strip()
        assert url and key and key.startswith("anm-sk-")

        run_env = {**env, "ANOMAN_API_KEY": key}
        compared = cli(
            "compare",
            "What is a ledger?",
            "--base-url",
            url,
            "-m",
            "anoman-lite",
            "--json",
            "--endpoint",
            "anthropic",
            env=run_env,
        )
        assert compared.returncode == 0, compared.stderr
        entry = json.loads(compared.stdout)["panels"][0]
        assert entry["status"] == "completed" and entry["anoman"]["weighted_tokens"] > 0

        # The gateway writes the ledger row as the request's handler ends, which can be just
        # after the client read the last frame: ask again until the row is there.
        deadline = time.monotonic() + 30
        while True:
            remote = cli("usage", "--base-url", url, "--json", env=run_env)
            assert remote.returncode == 0, remote.stderr
            rows = json.loads(remote.stdout)["data"]
            if rows or time.monotonic() > deadline:
                break
        assert rows[0]["model"] == "anoman-lite" and rows[0]["status"] == "completed"
        assert key not in remote.stdout  # only a hint of the key is stored

        table = cli("usage", "--base-url", url, env=run_env)
        assert "anoman-lite" in table.stdout and "completed" in table.stdout

        wrong = cli("usage", "--base-url", url, env={**env, "ANOMAN_API_KEY": "anm-sk-wrong-0000"})
        assert wrong.returncode == 1 and "401" in wrong.stderr
    finally:
        serve.send_signal(signal.SIGINT)
        _, err = serve.communicate(timeout=20)
    assert serve.returncode == 0, err
    local = cli("usage", "--db", str(db), "--json", env=env)
    assert local.returncode == 0
    assert json.loads(local.stdout)["data"][0]["request_id"] == rows[0]["request_id"]


def test_usage_without_a_ledger_says_so(tmp_path: Path) -> None:
    result = cli("usage", "--db", str(tmp_path / "none.sqlite3"))
    assert result.returncode == 1 and "no ledger" in result.stderr


def test_compare_defaults_to_the_local_gateway(tmp_path: Path) -> None:
    env = clean_env()
    env["XDG_DATA_HOME"] = str(tmp_path)
    result = cli(
        "compare",
        "Name three sorting algorithms",
        "--json",
        "-H",
        "X-Anoman-Simulate: ttft=0,rate=2000",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert len(doc["panels"]) == 3
    assert all(p["status"] == "completed" for p in doc["panels"])
    assert (tmp_path / "anoman-tui" / "usage.sqlite3").exists()


def test_commands_name_the_url_they_could_not_reach() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    result = cli("compare", "x", "--base-url", url)
    assert result.returncode == 1
    assert result.stderr == (
        f"anoman-tui compare: cannot list models: cannot reach {url} (connection refused)\n")
    result = cli("usage", "--base-url", url + "/v1")
    assert result.returncode == 1
    assert result.stderr == f"anoman-tui usage: cannot reach {url} (connection refused)\n"
