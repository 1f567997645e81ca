"""`anoman-tui eval` against a local gateway answering 429 with a huge `Retry-After`: the
wait is capped (`--max-retry-after`, default 60 s) and announced, and Ctrl+C or SIGTERM
during the wait ends the run within seconds with status 130, with no request sent after
the stop (the gateway's ledger counts them). Before, a cell slept up to 600 s, five
times, unstoppable but by SIGKILL, and sent again after it was told to stop."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.cli.helpers import KEY, ROOT, write
from tests.helpers import LocalGateways

LIMITED = "X-Anoman-Simulate: status=429,retry-after=100000"
SUITE = 'name = "limited"\nmodels = ["anoman-lite"]\nconcurrency = 1\n' \
        '[[case]]\nprompt = "Say hi."\n'


@pytest.fixture(scope="module")
def limited_gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    return make_module_gateway(GatewayConfig(rate_limit_rpm=100_000), api_key=KEY)


def _eval(gateway: EmbeddedGateway, tmp_path: Path, *flags: str) -> subprocess.Popen[str]:
    config = tmp_path / "config.toml"
    config.write_text("")
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(tmp_path / "data"),
               ANOMAN_CONFIG=str(config), ANOMAN_API_KEY=KEY)
    return subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "eval", str(write(tmp_path, SUITE)),
         "--base-url", gateway.base_url, "-H", LIMITED, *flags],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The process's first line on stderr ("" if none comes within `timeout`)."""
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    stderr = proc.stderr
    threading.Thread(target=lambda: lines.put(stderr.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        return ""


def _rows_at_least(gateway: EmbeddedGateway, wanted: int, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while (count := gateway.state.ledger.count()) < wanted and time.monotonic() < deadline:
        time.sleep(0.02)
    return count


@pytest.mark.parametrize("signal_sent", [signal.SIGINT, signal.SIGTERM],
                         ids=["ctrl-c", "sigterm"])
def test_a_stop_ends_a_long_retry_after_wait_at_once_and_sends_nothing_after(
        limited_gateway: EmbeddedGateway, tmp_path: Path, signal_sent: int) -> None:
    before = limited_gateway.state.ledger.count()
    proc = _eval(limited_gateway, tmp_path)
    announced = _first_line(proc)  # the first thing said on stderr: the long wait
    # Capped at the default 60 s, and said so, with what the server asked for.
    assert "anoman-lite is rate limited (429): waiting 60 s" in announced, announced
    assert "100000 s" in announced and "--max-retry-after" in announced
    assert _rows_at_least(limited_gateway, before + 1) == before + 1
    stopped_at = time.monotonic()
    proc.send_signal(signal_sent)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - stopped_at
    assert proc.returncode == 130, err  # interrupted (eval --help)
    assert took < 10, took
    assert "Traceback" not in err and "stopped: 0 of 1 cells done" in err
    # The one request before the stop, none after it (the process has ended).
    assert limited_gateway.state.ledger.count() == before + 1


def test_the_retry_after_cap_is_honoured(limited_gateway: EmbeddedGateway,
                                         tmp_path: Path) -> None:
    """With `--max-retry-after 0.2` five 429s are waited out 0.2 s each, not a day: the
    cell then ends on its sixth 429, as any failed stream does (a short wait is not
    announced)."""
    before = limited_gateway.state.ledger.count()
    started = time.monotonic()
    proc = _eval(limited_gateway, tmp_path, "--max-retry-after", "0.2", "--json")
    out, err = proc.communicate(timeout=90)
    assert time.monotonic() - started < 60
    assert proc.returncode == 0, err  # (no assertion judged)
    assert "rate limited (429): waiting" not in err and "Traceback" not in err
    assert "429" in err and "retried 5×" in err and '"http_error"' in out
    assert limited_gateway.state.ledger.count() == before + 6  # the first try and 5 more
