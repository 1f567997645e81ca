"""`anoman-tui eval` under load: CPU, memory and saving of a large suite run.

    python benchmarks/eval_load.py [--cases 1000] [--small 100] [--concurrency 32]

A local gateway runs in another process (`anoman-tui serve`, `_common.start_gateway`),
its models paced at about 100 tok/s (`X-Anoman-Simulate: rate=100,tokens=...`). The
suite has `--cases` cases x 3 models, each case with two assertions; `anoman-tui eval`
runs it at `--concurrency` streams in flight, piped (one line per finished cell), into
a history of its own, exactly as a user runs it. Sampled every 0.25 s from /proc:

- the eval process's CPU while streaming (first finished cell to last), as a share of
  one core: parsing, timing, assertions, saving and recording included;
- its RSS, for the big run and for a `--small` run of the same suite: flat in the
  number of cases means the big run's peak within 1.2x of the small one's;
- results saved as they finish: how far the history's saved cells trail the printed
  ones (in cells, at each sample).

Targets (benchmarks/README.md): CPU at most 25% of a core, RSS within 1.2x.

May import: the standard library and `_common`.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, print_header, start_gateway, verdict

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def suite_text(cases: int) -> str:
    lines = ['name = "load"', 'models = ["claude-sonnet-4-6", "anoman-lite", "qwen3-coder"]',
             "repeat = 1"]
    for i in range(1, cases + 1):
        lines += ["[[case]]", f'prompt = "Question {i}: how do I descale a kettle?"',
                  "[[case.assert]]", 'type = "icontains"', 'value = "kettle"',
                  "[[case.assert]]", 'type = "regex"', "value = '\\\\d'"]
    return "\n".join(lines) + "\n"


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mb(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * PAGE / 1e6


def saved_cells(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM suite_results").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return -1


def run_eval(base_url: str, key: str, cases: int, concurrency: int, tokens: int
             ) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="anoman-eval-bench-") as tmp:
        suite = Path(tmp) / "suite.toml"
        suite.write_text(suite_text(cases))
        data = Path(tmp) / "data"
        env = dict(os.environ, XDG_DATA_HOME=str(data), ANOMAN_CONFIG=os.devnull,
                   ANOMAN_API_KEY=key)
        db = data / "anoman-tui" / "history.sqlite3"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", "from anoman_tui.cli import main; raise SystemExit(main())",
             "eval", str(suite), "--base-url", base_url, "--concurrency", str(concurrency),
             "-H", f"X-Anoman-Simulate: rate=100,tokens={tokens}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert proc.stdout is not None
        printed = 0
        first_at: float | None = None
        last_at = 0.0
        cpu_first = cpu_last = 0.0
        rss_streaming = 0.0  # the peak up to the last finished cell (before the report)
        lock = threading.Lock()

        def read() -> None:
            nonlocal printed, first_at, last_at, cpu_first, cpu_last, rss_streaming
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith(("PASS", "FAIL", "ERROR", "DONE")):
                    now = time.monotonic()
                    cpu = cpu_s(proc.pid)
                    rss = rss_mb(proc.pid)
                    with lock:
                        rss_streaming = max(rss_streaming, rss)
                        printed += 1
                        if first_at is None:
                            first_at, cpu_first = now, cpu
                        last_at, cpu_last = now, cpu

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        peak = 0.0
        trail: list[int] = []
        while proc.poll() is None:
            try:
                rss = rss_mb(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            peak = max(peak, rss)
            with lock:
                shown = printed
                if first_at is not None and shown < cases * 3:
                    rss_streaming = max(rss_streaming, rss)
            saved = saved_cells(db)
            if shown and saved >= 0:
                trail.append(shown - saved)
            time.sleep(0.25)
        reader.join(timeout=10)
        wall = time.monotonic() - started
        streaming = (last_at - first_at) if first_at is not None else 0.0
        return {
            "cells": printed, "status": float(proc.returncode or 0), "wall_s": wall,
            "streaming_s": streaming,
            "cpu_share": (cpu_last - cpu_first) / streaming if streaming > 0 else 0.0,
            "rss_peak_mb": peak, "rss_streaming_mb": rss_streaming,
            "saved": float(saved_cells(db)),
            "trail_max": float(max(trail, default=0)),
            "trail_median": float(median(trail)) if trail else 0.0,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=200,
                        help="answer length in tokens (2 s at 100 tok/s)")
    args = parser.parse_args()
    print_header(f"eval: {args.cases} and {args.small} cases x 3 models, "
                 f"{args.concurrency} streams in flight, 100 tok/s x {args.tokens} tokens")
    with start_gateway() as gateway:
        small = run_eval(gateway.base_url, gateway.api_key, args.small, args.concurrency,
                         args.tokens)
        big = run_eval(gateway.base_url, gateway.api_key, args.cases, args.concurrency,
                       args.tokens)
    for label, figures in (("small", small), ("big", big)):
        print(f"   {label}: {figures['cells']:.0f} cells in {figures['wall_s']:.1f} s "
              f"(streaming {figures['streaming_s']:.1f} s), CPU while streaming "
              f"{figures['cpu_share'] * 100:.1f}% of a core, RSS peak "
              f"{figures['rss_peak_mb']:.0f} MB ({figures['rss_streaming_mb']:.0f} MB while "
              f"streaming, the rest the summary), saved {figures['saved']:.0f}, saved trails "
              f"printed by median {figures['trail_median']:.0f} / max "
              f"{figures['trail_max']:.0f} cells, exit {figures['status']:.0f}")
    cpu_ok = big["cpu_share"] <= 0.25
    ratio = big["rss_peak_mb"] / small["rss_peak_mb"] if small["rss_peak_mb"] else 0.0
    streaming_ratio = (big["rss_streaming_mb"] / small["rss_streaming_mb"]
                       if small["rss_streaming_mb"] else 0.0)
    saved_ok = big["saved"] == big["cells"] == args.cases * 3
    print(f"   CPU ≤ 25% of a core while streaming: {big['cpu_share'] * 100:.1f}% "
          f"{verdict(cpu_ok)}")
    print(f"   RSS {args.cases} cases / {args.small} cases ≤ 1.2: {ratio:.2f} "
          f"{verdict(ratio <= 1.2)} (while streaming: {streaming_ratio:.2f})")
    print(f"   every cell saved ({big['saved']:.0f} of {args.cases * 3}), saved as they finish "
          f"(trailing by at most {big['trail_max']:.0f} cells): {verdict(saved_ok)}")
    return 0 if cpu_ok and ratio <= 1.2 and saved_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
