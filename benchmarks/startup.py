"""`anoman-tui` start to first paint, against the import of Textual and httpx.

Two figures, each taken in fresh processes, alternately (so that a busy spell on a shared
machine weighs on both alike), median of `--runs`:

* the baseline: a new interpreter imports `textual.app` and `httpx`, timed inside the
  process (`time.perf_counter()` just before the first import and just after the last:
  the interpreter's own start is not counted);
* first paint: the real `anoman-tui` command (the console script beside this
  interpreter, not a version manager's shim in front of it: pyenv's adds ~0.1-0.3 s of
  bash before Python starts) in a pseudo-terminal of 160x45, with a fresh config and data
  directory, timed from just before the process is spawned (interpreter start, imports,
  settings, Textual's start, everything) to the read that completes the first frame
  showing the compare screen: its prompt box (the placeholder "Type a prompt · Enter
  send", whose first letter is under the cursor) and its status line ("requests go to")
  have both been written to the terminal.

The ratio first paint / baseline is the target: at most 1.5. Also printed: when the local
gateway is ready (the status line names "local gateway (127.0.0.1:PORT)": uvicorn,
started beside the UI after the first paint, listens and has answered `GET /v1/models`).
Then Ctrl+Q quits the app. Both run with bytecode caching on (`PYTHONDONTWRITEBYTECODE`
unset: a package installed by pip has its modules compiled), and one warm-up run of each
comes first (bytecode written, OS cache filled); a machine-speed probe
(`_common.probe_line`) and the load average before and after.

`--instructions` counts instead of timing, with valgrind's cachegrind (`--cache-sim=no`;
~20 s a start), which a busy machine does not move (two counts of one start agree within
~0.3%): the baseline is `python -c 'import textual.app; import httpx'` less
`python -c pass`; the first paint, the app's `main()` (as the console script calls it) in
the same pty from the interpreter's start to `App._display` of the compare screen's first
frame, where the process ends itself. Their ratio stands for the time's on an idle core.

    python benchmarks/startup.py [--runs 7] [--instructions]

May import: the standard library and _common beside it (the app runs in its own process).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
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

TARGET_RATIO = 1.5
PROMPT_BOX = "ype a prompt · Enter send".encode()  # "T" is drawn as the cursor
STATUS_LINE = b"requests go to"
GATEWAY_READY = b"local gateway (127.0.0.1"
# A sandbox or CI may turn bytecode caching off: then every start compiles the project's
# modules again (~0.3 s), which an installed package (compiled by pip) never does.
NO_BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
BASELINE_CODE = (
    "import time; t = time.perf_counter(); import textual.app; import httpx; "
    "print(time.perf_counter() - t)"
)


def fresh_env() -> dict[str, str]:
    """This environment, bytecode caching on (as an installed package has it)."""
    return {k: v for k, v in os.environ.items() if k not in NO_BYTECODE}


def command() -> list[str]:
    beside = Path(sys.executable).with_name("anoman-tui")
    if beside.exists():
        return [str(beside)]
    exe = shutil.which("anoman-tui")
    if exe:
        return [exe]
    return [sys.executable, "-c", "import sys; from anoman_tui.cli import main; sys.exit(main())"]


def baseline_run() -> float:
    """Seconds a new interpreter takes to import textual.app and httpx."""
    out = subprocess.run([sys.executable, "-c", BASELINE_CODE], capture_output=True,
                         text=True, check=True, env=fresh_env())
    return float(out.stdout.strip())


# The app up to its first frame of the compare screen, then gone (`--instructions`).
PAINT_CODE = (
    "import os, sys; from textual.app import App; from anoman_tui.cli import main\n"
    "shown = App._display\n"
    "def display(app, screen, renderable):\n"
    "    shown(app, screen, renderable)\n"
    "    if type(screen).__name__ == 'CompareScreen': os._exit(0)\n"
    "App._display = display; sys.argv = ['anoman-tui']; sys.exit(main())"
)


def instructions(command: list[str], home: Path | None = None) -> int:
    """Instructions `command` runs (valgrind's cachegrind), in a 160x45 pty if `home`."""
    with tempfile.NamedTemporaryFile(prefix="anoman-cachegrind-") as log:
        valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                    "--cachegrind-out-file=/dev/null", f"--log-file={log.name}", *command]
        if home is None:
            subprocess.run(valgrind, capture_output=True, env=fresh_env(), check=False)
        else:
            paint_run(home, timeout=300.0, command_line=valgrind, until_exit=True)
        text = Path(log.name).read_text()
    counted = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if counted is None:
        raise SystemExit(f"valgrind counted nothing:\n{text[-2000:]}")
    return int(counted.group(1).replace(",", ""))


def instructions_main(runs: int) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind")
    python = sys.executable
    print(f"instructions (cachegrind), {runs} counts each; load average "
          f"{os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="anoman-startup-") as tmp:
        paint_instructions(Path(tmp))  # warm-up: bytecode written
        bare = min(instructions([python, "-c", "pass"]) for _ in range(runs))
        imports = min(instructions([python, "-c", "import textual.app; import httpx"])
                      for _ in range(runs)) - bare
        paints = [paint_instructions(Path(tmp)) for _ in range(runs)]
    paint = min(paints)
    print(f"interpreter alone {bare / 1e9:.3f} G; import textual.app + httpx "
          f"{imports / 1e9:.3f} G; start -> first paint {paint / 1e9:.3f} G "
          f"(counts {', '.join(f'{p / 1e9:.3f}' for p in paints)})")
    print(f"ratio {paint / imports:.2f}×   target <= {TARGET_RATIO:g}×  "
          f"{verdict(paint / imports <= TARGET_RATIO)}")


def paint_instructions(home: Path) -> int:
    return instructions([sys.executable, "-c", PAINT_CODE], home)


def paint_run(home: Path, timeout: float = 30.0, *, command_line: list[str] | None = None,
              until_exit: bool = False) -> tuple[float, float]:
    """(seconds to first paint, seconds to gateway ready) for one start (`until_exit`:
    `command_line` ends by itself; its output is read until then, and nothing timed)."""
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
    for name in ("ANOMAN_BASE_URL", "ANOMAN_API_KEY", "ANOMAN_MODELS", "TEXTUAL",
                 *NO_BYTECODE):
        env.pop(name, None)
    started = time.perf_counter()
    process = subprocess.Popen(command_line or command(), stdin=slave, stdout=slave,
                               stderr=slave, env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    seen = b""
    painted = ready = float("nan")
    if until_exit:
        timeout = 0.0  # (nothing to wait for: the drain below reads until it has ended)
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
            seen += data
            if painted != painted and PROMPT_BOX in seen and STATUS_LINE in seen:
                painted = now - started
            if ready != ready and GATEWAY_READY in seen:
                ready = now - started
            if painted == painted and ready == ready:
                break
        if not until_exit:
            os.write(master, b"\x11")  # Ctrl+Q
        # Keep reading while it exits: a full pty buffer would block its last writes.
        quit_deadline = time.perf_counter() + (300 if until_exit else 5)
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
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions (valgrind) instead of timing; --runs 2 is "
                        "plenty")
    args = parser.parse_args()
    if args.instructions:
        instructions_main(args.runs)
        return
    baselines: list[float] = []
    paints: list[float] = []
    readies: list[float] = []
    print(f"command: {' '.join(command())} (in a 160x45 pty)")
    print(f"baseline: {sys.executable} -c {BASELINE_CODE!r}")
    print(f"machine probe {probe_line()[1]}, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="anoman-startup-") as tmp:
        for run in range(args.runs + 1):
            base = baseline_run()
            painted, ready = paint_run(Path(tmp))
            line = (f"import textual.app + httpx {base:.3f} s, first paint {painted:.3f} s "
                    f"({painted / base:.2f}×), gateway ready {ready:.3f} s")
            if run == 0:
                print(f"  warm-up: {line}")
                continue
            baselines.append(base)
            paints.append(painted)
            readies.append(ready)
            print(f"  run {run}: {line}   {verdict(painted / base <= TARGET_RATIO)}")
    print(f"machine probe after the runs {probe_line()[1]}, "
          f"load average {os.getloadavg()[0]:.2f}")
    base, paint = statistics.median(baselines), statistics.median(paints)
    ratio = paint / base
    met = sum(p / b <= TARGET_RATIO for p, b in zip(paints, baselines, strict=True))
    print(f"median over {args.runs} runs: import textual.app + httpx {base:.3f} s, "
          f"start -> first paint {paint:.3f} s")
    print(f"ratio {ratio:.2f}×   target <= {TARGET_RATIO:g}×  {verdict(ratio <= TARGET_RATIO)}; "
          f"MET in {met} of {args.runs} runs")
    print(f"start -> local gateway ready {statistics.median(readies):.3f} s "
          f"(max {max(readies):.3f} s)")


if __name__ == "__main__":
    main()
