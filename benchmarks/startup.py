"""`anoman-tui` start to first paint, local gateway included.

Runs the real `anoman-tui` command (a new process, as a user would: interpreter start-up,
imports, settings, the app) in a pseudo-terminal of 160x45, with a fresh config and data
directory, and reads what it writes to the terminal. Timed from just before the process
is spawned to:

* first paint: the compare screen's status line ("requests go to: ...") has been written;
* gateway ready: the status line names the local gateway's address ("local gateway
  (127.0.0.1:PORT)"), i.e. the embedded gateway (uvicorn, in the app's process) is
  listening and has answered `GET /v1/models`.

Then Ctrl+Q quits it. Repeated `--runs` times; each run and the median get MET/MISSED,
with a machine-speed probe (`_common.probe_line`) before and after. Target: start to first
paint <= 1.0 s (the gateway starts beside the UI, after the first paint, by design; its
ready time is printed too).

    python benchmarks/startup.py [--runs 5]

May import: the standard library and _common beside it (the app runs in its own process).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from _common import probe_line, verdict

TARGET_S = 1.0
FIRST_PAINT = b"requests go to"
GATEWAY_READY = b"local gateway (127.0.0.1"


def command() -> list[str]:
    exe = shutil.which("anoman-tui")
    if exe:
        return [exe]
    return [sys.executable, "-c", "import sys; from anoman_tui.cli import main; sys.exit(main())"]


def one_run(home: Path, timeout: float = 20.0) -> tuple[float, float]:
    """(seconds to first paint, seconds to gateway ready) for one start."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "ANOMAN_CONFIG": str(home / "config.toml"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    for name in ("ANOMAN_BASE_URL", "ANOMAN_API_KEY", "ANOMAN_MODELS", "TEXTUAL"):
        env.pop(name, None)
    started = time.perf_counter()
    process = subprocess.Popen(command(), stdin=slave, stdout=slave, stderr=slave, env=env,
                               start_new_session=True, close_fds=True)
    os.close(slave)
    seen = b""
    painted = ready = float("nan")
    try:
        deadline = started + timeout
        while time.perf_counter() < deadline:
            readable, _, _ = select.select([master], [], [], 0.05)
            if not readable:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            now = time.perf_counter()
            seen = seen[-200:] + data
            if painted != painted and FIRST_PAINT in seen:
                painted = now - started
            if ready != ready and GATEWAY_READY in seen:
                ready = now - started
                break
        os.write(master, b"\x11")  # Ctrl+Q
        # Keep reading while it exits: a full pty buffer would block its last writes.
        quit_deadline = time.perf_counter() + 5
        while process.poll() is None and time.perf_counter() < quit_deadline:
            if select.select([master], [], [], 0.05)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    break
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return painted, ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    paints: list[float] = []
    readies: list[float] = []
    print(f"command: {' '.join(command())} (in a 160x45 pty)")
    print(f"machine probe {probe_line()[1]}")
    with tempfile.TemporaryDirectory(prefix="anoman-startup-") as tmp:
        for run in range(args.runs + 1):
            painted, ready = one_run(Path(tmp))
            if run == 0:
                # Warm-up: the first start also compiles bytecode and fills the OS cache.
                print(f"  warm-up: first paint {painted:.3f} s, gateway ready {ready:.3f} s")
                continue
            paints.append(painted)
            readies.append(ready)
            print(f"  run {run}: first paint {painted:.3f} s, gateway ready {ready:.3f} s   "
                  f"{verdict(painted <= TARGET_S)}")
    print(f"machine probe after the runs {probe_line()[1]}")
    paint = statistics.median(paints)
    met = sum(p <= TARGET_S for p in paints)
    print(f"median over {args.runs} runs: start -> first paint {paint:.3f} s   "
          f"target <= {TARGET_S:g} s  {verdict(paint <= TARGET_S)}; MET in {met} of "
          f"{args.runs} runs")
    print(f"                     start -> local gateway ready {statistics.median(readies):.3f} s"
          f" (max {max(readies):.3f} s)")


if __name__ == "__main__":
    main()
