"""Where the test suite's time goes: wall time and CPU per test, file and folder.

The suite's budget is 5 minutes on 2 cores (CONTRIBUTING.md), and on 2 cores it is
CPU-bound: more workers do not help once both cores are busy, so what has to shrink is
the CPU each test costs. This runs `pytest` (any arguments after `--` are passed on)
with a small plugin loaded in every worker (`_suite_cost_plugin.py` beside this script)
that records, for each test's whole protocol (set-up, call, tear-down):

* its wall time;
* the CPU of the worker process over that time (every thread: the app's, its network
  thread, the in-process local gateway's);
* the CPU of the child processes that ended in that time (a subprocess it ran, a wheel
  it built).

Then it prints the totals (with the run's wall time and the whole run's CPU, collection
and session fixtures included) and the biggest folders, files and tests by CPU.

    python benchmarks/suite_cost.py [--top 25] [-- PYTEST ARGS...]

May import: the standard library only (pytest runs in its own process).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _row(label: str, cpu: float, child: float, wall: float, count: int | None = None) -> str:
    counted = f"{count:5d}  " if count is not None else ""
    return f"{cpu:8.1f} {child:8.1f} {wall:8.1f}  {counted}{label}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=25, help="rows in each list")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, ANOMAN_SUITE_COST_DIR=scratch,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(HERE),
                                                             os.environ.get("PYTHONPATH")])))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "_suite_cost_plugin",
                               *args.pytest_args], cwd=ROOT, env=env, check=False)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = [json.loads(line) for path in Path(scratch).glob("*.jsonl")
                for line in path.read_text(encoding="utf-8").splitlines()]
    run_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    tests_cpu = sum(r["cpu"] + r["child"] for r in rows)
    print(f"\npytest exit status {done.returncode}; {len(rows)} tests; wall {wall:.1f} s; "
          f"CPU of the whole run {run_cpu:.1f} s ({run_cpu / wall:.2f} cores busy on average)")
    print(f"in the tests: {tests_cpu:.1f} s of CPU ({sum(r['cpu'] for r in rows):.1f} s in the "
          f"workers, {sum(r['child'] for r in rows):.1f} s in child processes); the rest "
          f"({run_cpu - tests_cpu:.1f} s) is start-up, collection and session fixtures")
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    by_folder: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for r in rows:
        path = r["id"].split("::")[0]
        for table, key in ((by_file, path), (by_folder, path.rsplit("/", 1)[0])):
            entry = table[key]
            entry[0] += r["cpu"]
            entry[1] += r["child"]
            entry[2] += r["wall"]
            entry[3] += 1
    header = f"{'CPU s':>8} {'child s':>8} {'wall s':>8}"
    for title, table in (("folders", by_folder), ("files", by_file)):
        print(f"\nby {title}, most CPU first\n{header}  tests")
        for key, (cpu, child, spent, count) in sorted(
                table.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:args.top]:
            print(_row(key, cpu, child, spent, int(count)))
    print(f"\ntests, most CPU first\n{header}")
    for r in sorted(rows, key=lambda r: -(r["cpu"] + r["child"]))[:args.top]:
        print(_row(r["id"], r["cpu"], r["child"], r["wall"]))
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
