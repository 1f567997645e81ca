"""`serve` in a real process, the embedded gateway's contract, and the import rule."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.gateway.ledger import UsageLedger
from anoman_tui.gateway.serve import add_serve_arguments, is_loopback
from tests.gateway.helpers import SERVE_SCRIPT, chat_body, fast_config, start_serve
from tests.helpers import loopback_client


def test_serve_arguments() -> None:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    args = parser.parse_args([])
    assert (args.host, args.port, args.api_key, args.db, args.config, args.no_cache) == (
        "127.0.0.1", 8787, None, None, None, False)
    assert parser.parse_args(["--no-cache"]).no_cache is True
    args = parser.parse_args(["--api-key", "a", "--api-key", "b", "--db", "x.db"])
    assert args.api_key == ["a", "b"] and args.db == Path("x.db")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_url_and_key_and_stops_cleanly(tmp_path: Path, sig: int) -> None:
    db = tmp_path / "serve.db"
    proc, url, lines = start_serve("--port", "0", "--db", str(db))
    try:
        key_lines = [line for line in lines if line.startswith("API key")]
        assert len(key_lines) == 1
        key = key_lines[0].rsplit(" ", 1)[1]
        assert key.startswith("anm-sk-local-")
        assert url.startswith("http://127.0.0.1:")
        with loopback_client(url, timeout=10) as client, client.stream(
                "POST", "/v1/chat/completions", json=chat_body(),
                headers={"Authorization": f"Bearer {key}",
                         "X-Anoman-Simulate": "ttft=0,stall-after=2"}) as response:
            rid = response.headers["x-request-id"]
            proc.send_signal(sig)
            with pytest.raises(httpx.RemoteProtocolError):
                for _ in response.iter_raw():
                    pass
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert key not in err  # printed once, on stdout, never logged
    row = UsageLedger(db).get(rid)
    assert row is not None
    assert (row["status"], row["routing_mode"], row["completion_tokens"]) == (
        "cancelled", "streaming_cancelled", 2)


def test_serve_with_keys_and_config_warns_off_loopback(tmp_path: Path) -> None:
    config = tmp_path / "gw.toml"
    config.write_text('region = "sg"\n[models."anoman-lite"]\nsimulate = "ttft=0,rate=5000"\n')
    proc, url, lines = start_serve("--host", "0.0.0.0", "--port", "0", "--api-key",
                                   "anm-sk-mine-1234", "--config", str(config),
                                    "--db", str(tmp_path / "s.db"))
    try:
        assert not any(line.startswith("API key") for line in lines)
        port = url.rsplit(":", 1)[1]
        with loopback_client(f"http://127.0.0.1:{port}", timeout=10) as client:
            response = client.post("/v1/chat/completions", json=chat_body(stream=False),
                                   headers={"x-api-key": "anm-sk-mine-1234"})
        assert response.json()["_anoman"]["routing"]["region"] == "sg"
        proc.terminate()
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert "warning: binding to 0.0.0.0" in err


def test_serve_rejects_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("rate_limit_rpm = -5\n")
    done = subprocess.run([sys.executable, "-c", SERVE_SCRIPT, "--config", str(config),
                           "--port", "0"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "cannot load the configuration" in done.stderr


def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    """A busy port: one line naming it, exit 2, no log lines and nothing started."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "anoman_tui.cli", "serve", "--port",
                               str(port), "--db", str(tmp_path / "busy.db")],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"port {port} is already in use" in lines[0] and "--port" in lines[0]
    assert "Traceback" not in done.stderr and "uvicorn" not in done.stderr
    assert done.stdout == "" and not (tmp_path / "busy.db").exists()


def test_embedded_gateway_contract(tmp_path: Path) -> None:
    started = time.perf_counter()
    with EmbeddedGateway(fast_config(), db_path=tmp_path / "e.db") as gw:
        took = time.perf_counter() - started
        assert took < 1.0  # typically ~20 ms; generous for noisy machines
        assert gw.base_url == f"http://127.0.0.1:{gw.port}" and gw.port > 0
        assert gw.api_key.startswith("anm-sk-local-") and len(gw.api_key) > 30
        ok = httpx.get(f"{gw.base_url}/healthz")
        assert ok.json()["status"] == "ok"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{gw.base_url}/healthz")
    assert (tmp_path / "e.db").exists()
    other = EmbeddedGateway(fast_config(), db_path=tmp_path / "f.db", api_key="anm-sk-given")
    assert other.api_key == "anm-sk-given"
    assert EmbeddedGateway().api_key != EmbeddedGateway().api_key


def test_gateway_imports_no_textual_and_no_client_side() -> None:
    code = (
        "import sys\n"
        "import anoman_tui.gateway as g\n"
        "for name in g.__all__: getattr(g, name)\n"
        "import anoman_tui.gateway.app, anoman_tui.gateway.serve, anoman_tui.gateway.embedded\n"
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith(('textual.',"
        " 'anoman_tui.ui', 'anoman_tui.streaming'))]\n"
        "print(json.dumps(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
