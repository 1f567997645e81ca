"""The terminal goes away without a hang-up signal: the app exits instead of spinning.

Runs the real `anoman-tui` in a pseudo-terminal, waits for its first paint, then closes
the terminal's side of the pty without sending SIGHUP (a terminal that just vanishes).
Textual's input thread then reads end-of-file forever at 100% CPU; the app must notice
and exit with 129 (128 + SIGHUP).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


def test_app_exits_when_its_terminal_vanishes(tmp_path: Path) -> None:
    # clean_env (tests/reliability/conftest.py): no ANOMAN_* of ours, tmp config and data
    env = dict(os.environ, TERM="xterm-256color")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 150, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli"],
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )
    os.close(slave)
    try:
        screen = b""
        deadline = time.monotonic() + 30
        while b"requests go to" not in screen:
            assert time.monotonic() < deadline, "no first paint"
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                screen += os.read(master, 65536)
        os.close(master)  # the terminal is gone; nobody sends SIGHUP
        master = -1
        started = time.monotonic()
        cpu_before = _cpu_seconds(process.pid)
        try:
            code = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            spent = _cpu_seconds(process.pid) - cpu_before
            raise AssertionError(
                f"still running {time.monotonic() - started:.0f} s after its terminal "
                f"closed ({spent:.1f} s of CPU)"
            ) from None
        assert code == 129
        log = (tmp_path / "data" / "anoman-tui" / "anoman-tui.log").read_text()
        assert "the terminal hung up" in log
        assert "Traceback" not in log
    finally:
        if master >= 0:
            os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
