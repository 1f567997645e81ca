"""A suite run's reports at scale: `runs show` and its HTML of 10,000 results.

    python benchmarks/eval_reports.py [--results 10000] [--runs 3]

Builds a history holding one suite run of `--results` results (cases x 3 models, each
with two assertions, a tenth failing, a few streams failed, answers' figures varied)
through the history's own `save_cell`, then times, as a user runs them (a new process
each time, start-up included):

- `anoman-tui runs show RUN_ID` (the summary: Wilson intervals, percentiles, McNemar
  with Holm, bootstrap intervals, all from the stored cells);
- `anoman-tui runs show RUN_ID --html FILE` (the self-contained page with its charts);

and the same two in-process (read, summarise, render) to show what is start-up.
Targets (benchmarks/README.md): `runs show` ≤ 1 s, the HTML of 10,000 results ≤ 3 s.

May import: the standard library, `_common` and the package.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, print_header, verdict

from anoman_tui.history import HistoryStore
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import (
    Assertion,
    AssertionResult,
    Case,
    CellResult,
    Suite,
)

MODELS = ("claude-sonnet-4-6", "anoman-lite", "qwen3-coder")


def build(path: Path, results: int) -> str:
    rng = random.Random(7)
    cases = results // len(MODELS)
    suite = Suite(name="reports at scale", models=MODELS, cases=tuple(
        Case(str(i), f"Question {i}: how do I descale a kettle?",
             asserts=(Assertion("icontains", "kettle"), Assertion("regex", r"\d")))
        for i in range(1, cases + 1)))
    run_id = "run-bench-reports"
    with HistoryStore.open(path) as store:
        store.create_run(run_id, name=suite.name, suite=suite.to_json(), settings={},
                         models=list(MODELS), cells=cases * len(MODELS))
        for case in suite.cases:
            for pane, model in enumerate(MODELS, start=1):
                failed = rng.random() < 0.02
                passed = None if failed else rng.random() > 0.1 * pane
                cell = CellResult(
                    case=case.id, model=model, repeat=1,
                    status="stream_error" if failed else "completed",
                    passed=False if failed else passed,
                    assertions=() if failed else (
                        AssertionResult("icontains", bool(passed), "found 'kettle'"),
                        AssertionResult("regex", True, "matched \\d")),
                    ttft_s=None if failed else rng.lognormvariate(-1.2 + 0.2 * pane, 0.3),
                    e2e_s=None if failed else rng.uniform(1.5, 4.0),
                    output_tokens_per_s=None if failed else rng.uniform(60, 140),
                    output_tokens=200,
                    cost=Cost(Decimal(f"{rng.uniform(1e-5, 3e-4):.8f}"), "gateway"),
                    failure="STREAM ERROR: interrupted" if failed else None,
                    simulated=True)
                store.save_cell(run_id, cell.to_json(), case_id=case.id, model=model,
                                repeat=1, status=cell.status, passed=cell.passed, pane=None)
        store.finish_run(run_id, finished=True, stopped=None)
    return run_id


def timed_cli(env: dict[str, str], *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from anoman_tui.cli import main; raise SystemExit(main())",
         *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return elapsed


def in_process(path: Path, run_id: str, html: Path) -> tuple[float, float]:
    from anoman_tui.report.suite_html import suite_html
    from anoman_tui.suites.summary import summarize

    start = time.perf_counter()
    with HistoryStore.open(path) as store:
        stored = store.run(run_id)
    assert stored is not None
    suite = Suite.from_json(stored.suite)
    results = [CellResult.from_json(r) for r in stored.results]
    summary = summarize(suite.models, results)
    shown = time.perf_counter() - start
    page = suite_html(suite=suite, results=results, summary=summary, run_id=run_id,
                      created_at=stored.created_at, finished=True, stopped=None)
    html.write_text(page)
    return shown, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_header(f"suite reports: one run of {args.results} results")
    with tempfile.TemporaryDirectory(prefix="anoman-reports-bench-") as tmp:
        data = Path(tmp) / "data"
        db = data / "anoman-tui" / "history.sqlite3"
        db.parent.mkdir(parents=True)
        started = time.perf_counter()
        run_id = build(db, args.results)
        print(f"   built in {time.perf_counter() - started:.1f} s "
              f"({db.stat().st_size / 1e6:.1f} MB)")
        env = dict(os.environ, XDG_DATA_HOME=str(data), ANOMAN_CONFIG=os.devnull)
        html = Path(tmp) / "report.html"
        show = [timed_cli(env, "runs", "show", run_id) for _ in range(args.runs)]
        page = [timed_cli(env, "runs", "show", run_id, "--html", str(html))
                for _ in range(args.runs)]
        inside = [in_process(db, run_id, html) for _ in range(args.runs)]
        size = html.stat().st_size / 1e6
    show_s, page_s = median(show), median(page)
    print(f"   runs show (a new process): median {show_s:.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in show)}) ≤ 1 s: {verdict(show_s <= 1)}")
    print(f"   runs show --html (a new process): median {page_s:.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in page)}), {size:.1f} MB ≤ 3 s: "
          f"{verdict(page_s <= 3)}")
    print(f"   in-process: read + summary median {median([a for a, _ in inside]):.2f} s, "
          f"+ HTML median {median([b for _, b in inside]):.2f} s")
    return 0 if show_s <= 1 and page_s <= 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
