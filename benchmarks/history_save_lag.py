"""Does saving comparisons stall the panes? Display lag with and without saves running.

The real `AnomanApp` runs headless (`App.run_test`, 180x50) against the local gateway in
a separate process (`anoman-tui serve --port 0`), with its history open on a file that
already holds `--prefill` comparisons (3,000 by default, of the sizes
`history_store.py` uses). Panes 1 and 2 stream `--tokens` tokens each at `--rate` tok/s
(`X-Anoman-Simulate: ttft=0.05,rate=300,tokens=2000`); display lag is measured as in
`app_display_lag.py` (a token's arrival stamp at the socket -> the end of the frame that
drew it). Two loads per run, their order alternating from run to run so that drift
(other work on the machine, a warming process) falls on both alike:

* (a) the panes stream, nothing is saved (beyond the app's own save of the turn when both
  panes end, as in (b));
* (b) the panes stream while comparisons are saved back to back the way the compare
  screen saves a turn: `asyncio.to_thread(store.save, record)` started from the app's
  event loop, on the app's own open history. Each record is 3 panes x ~3,000-token
  answers (one with reasoning), a 120-cell token-rate series, usage, an Anoman block
  and metrics.

Target (per run, and on the medians over the runs): |p99(b) - p99(a)| <= 5 ms. Also
printed: how many saves ran during (b) and their duration, and how late a 10 ms sleep
on the event loop woke up in each load.

    python benchmarks/history_save_lag.py [--runs 3] [--prefill 3000]

May import: the standard library, textual, anoman_tui, _common, app_harness and history_store
(beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from _common import probe_line
from app_harness import (
    BenchApp,
    gateway_process,
    isolate_environment,
    loop_probe,
    percentile,
)
from history_store import MODELS as HISTORY_MODELS
from history_store import answer, comparison

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.streaming.cost import Cost

TARGET_MS = 5.0
CHARS_PER_TOKEN = 4  # about what the local gateway's answers average


@dataclass
class Load:
    saving: bool
    lag: list[float]  # arrival -> drawn, seconds
    loop_late: list[float]
    saves: list[float] = field(default_factory=list)  # each save's duration, seconds
    undrawn: int = 0

    def p99_ms(self) -> float:
        return 1000 * percentile(self.lag, 0.99)


def big_comparison(rng: random.Random, n: int, tokens: int) -> ComparisonRecord:
    """3 panes x `tokens`-token answers, as a long turn of the app would leave them."""
    models = rng.sample(HISTORY_MODELS, 3)
    cells = 120  # 250 ms cells: a 30 s answer
    panes = []
    for i, model in enumerate(models, start=1):
        panes.append(PaneRecord(
            pane=i, model=model, base_url="http://127.0.0.1:8765", endpoint="openai",
            temperature=0.7, max_tokens=None, scenario="none", status="completed",
            committed=True, text=answer(rng, tokens * CHARS_PER_TOKEN),
            reasoning=answer(rng, 3000) if i == 3 else "", finish_reason="stop",
            usage={"prompt_tokens": 60, "completion_tokens": tokens,
                   "total_tokens": tokens + 60},
            anoman={"request_id": f"req-save-{n}-{i}", "cost_usd": tokens * 2e-6,
                    "weighted_tokens": tokens * 3, "routing": {"mode": "auto", "region": "eu"},
                    "cache": {"status": "miss"}, "guardrails": {"pii": {"status": "pass"}}},
            metrics={"ttft_s": rng.uniform(0.1, 2), "e2e_s": rng.uniform(10, 40),
                     "output_tokens_per_s": rng.uniform(50, 150), "chunks": tokens},
            rate_series=tuple(round(rng.uniform(0, 200), 1) for _ in range(cells)),
            cost=Cost(Decimal(f"{tokens * 2e-6:.6f}"), "gateway"),
        ))
    return ComparisonRecord(
        prompt="compare connection pooling strategies for postgres under bursty load "
               f"(turn {n})",
        panes=tuple(panes), system_prompt="You are a careful reviewer.",
        conversation=(("user", "an earlier question"), ("assistant", answer(rng, 2000))),
        created_at=time.time(), source="app",
    )


async def keep_saving(store: HistoryStore, records: list[ComparisonRecord], every: float,
                      durations: list[float], stop: asyncio.Event) -> None:
    """Save one comparison every `every` seconds (0: back to back) as
    `CompareScreen._save_turn` saves one: in a thread, awaited from the app's loop."""
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        record = records[n % len(records)]
        n += 1
        start = time.perf_counter()
        await asyncio.to_thread(store.save, record)
        durations.append(time.perf_counter() - start)
        next_at += every
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))


async def run_load(app: BenchApp, saving: bool, records: list[ComparisonRecord],
                   every: float, rate: float, tokens: int) -> Load:
    store = app.history
    assert store is not None
    app.reset_lags()
    for pane in app.panes:
        pane.reset()  # no conversation: every request is the same size
    stop = asyncio.Event()
    load = Load(saving, [], [])
    tasks = [asyncio.create_task(loop_probe(load.loop_late, stop))]
    if saving:
        tasks.append(asyncio.create_task(keep_saving(store, records, every, load.saves, stop)))
    app.start_panes({i: f"ttft=0.05,rate={rate:g},tokens={tokens}" for i in (1, 2)})
    await app.wait_done([1, 2])
    deadline = time.monotonic() + 5
    while any(lag.arrivals for lag in app.lags[:2]) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.gather(*tasks)
    load.lag = [d - a for lag in app.lags[:2] for a, d in lag.drawn]
    load.undrawn = sum(len(lag.arrivals) for lag in app.lags[:2])
    # The app saves the turn that just ended: let it finish before the next load.
    await asyncio.sleep(0.5)
    return load


def ms(values: list[float], q: float) -> float:
    return 1000 * percentile(values, q) if values else float("nan")


def show(load: Load) -> None:
    label = "(b) saving    " if load.saving else "(a) no saving "
    saves = (f"; {len(load.saves)} saves, each p50/max {ms(load.saves, .5):.0f}/"
             f"{ms(load.saves, 1):.0f} ms" if load.saving else "")
    print(f"    {label} lag p50/p95/p99/max {ms(load.lag, .5):.1f}/{ms(load.lag, .95):.1f}/"
          f"{ms(load.lag, .99):.1f}/{ms(load.lag, 1):.1f} ms over {len(load.lag)} tokens, "
          f"undrawn {load.undrawn}; loop late p99 {ms(load.loop_late, .99):.1f} ms{saves}")


async def main_async(runs: int, prefill: int, every: float, rate: float, tokens: int,
                     answer_tokens: int) -> int:
    isolate_environment()
    home = Path(os.environ["XDG_DATA_HOME"]).parent  # the throw-away home made just now
    try:
        return await measure(runs, prefill, every, rate, tokens, answer_tokens)
    finally:
        # The history grows by hundreds of MB when saving back to back: never leave it.
        shutil.rmtree(home, ignore_errors=True)


async def measure(runs: int, prefill: int, every: float, rate: float, tokens: int,
                  answer_tokens: int) -> int:
    rng = random.Random(12)
    path = default_path()
    start = time.perf_counter()
    with HistoryStore.open(path) as store:
        for n in range(prefill):
            store.save(comparison(rng, n))
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 1e6
    print(f"history: {prefill:,} comparisons in {path} ({size:.0f} MB), "
          f"filled in {time.perf_counter() - start:.1f} s")
    records = [big_comparison(rng, n, answer_tokens) for n in range(8)]
    chars = sum(len(p.text) + len(p.reasoning) for p in records[0].panes)
    print(f"saved while streaming: 3 panes x {answer_tokens:,}-token answers "
          f"({chars / 1000:.0f} KB of text a comparison), "
          f"{'back to back' if every <= 0 else f'one every {1000 * every:g} ms'}")
    results: list[tuple[Load, Load]] = []
    with gateway_process() as gateway:
        print(f"gateway: separate process (pid {gateway.process.pid}) at {gateway.base_url}; "
              f"machine probe {probe_line()[1]}")
        print(f"load: panes 1 and 2 at {rate:g} tok/s x {tokens:,} tokens")
        for run in range(runs):
            app = BenchApp(gateway)
            async with app.run_test(size=(180, 50)):
                await app.ready()
                while app.history is None:
                    await asyncio.sleep(0.02)
                order = (False, True) if run % 2 == 0 else (True, False)
                print(f"run {run + 1}/{runs} ({'a then b' if run % 2 == 0 else 'b then a'})")
                loads = {}
                for saving in order:
                    loads[saving] = await run_load(app, saving, records, every, rate, tokens)
                    show(loads[saving])
                a, b = loads[False], loads[True]
                delta = b.p99_ms() - a.p99_ms()
                ok = abs(delta) <= TARGET_MS and not a.undrawn and not b.undrawn
                print(f"    p99 (b) - (a) = {delta:+.1f} ms   target |delta| <= "
                      f"{TARGET_MS:g} ms  {'MET' if ok else 'MISSED'}")
                results.append((a, b))
    a99 = statistics.median(a.p99_ms() for a, _ in results)
    b99 = statistics.median(b.p99_ms() for _, b in results)
    saves = [s for _, b in results for s in b.saves]
    met_runs = sum(abs(b.p99_ms() - a.p99_ms()) <= TARGET_MS for a, b in results)
    overall = abs(b99 - a99) <= TARGET_MS
    print(f"\nmedians over {runs} runs: display lag p99 (a) no saving {a99:.1f} ms, "
          f"(b) saving {b99:.1f} ms, difference {b99 - a99:+.1f} ms")
    print(f"  {len(saves)} saves in all, each p50 {ms(saves, .5):.0f} ms, p99 "
          f"{ms(saves, .99):.0f} ms; runs within target {met_runs}/{runs}")
    print(f"  target |p99(b) - p99(a)| <= {TARGET_MS:g} ms   {'MET' if overall else 'MISSED'}")
    return 0 if overall else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prefill", type=int, default=3000,
                        help="comparisons in the history before the runs")
    parser.add_argument("--save-every", type=float, default=0.1, metavar="SECONDS",
                        help="start a save this often during (b); 0: back to back")
    parser.add_argument("--rate", type=float, default=300.0, help="tok/s per pane")
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per pane")
    parser.add_argument("--answer-tokens", type=int, default=3000,
                        help="tokens of each answer in the comparisons saved")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main_async(args.runs, args.prefill, args.save_every,
                                            args.rate, args.tokens, args.answer_tokens)))


if __name__ == "__main__":
    main()
