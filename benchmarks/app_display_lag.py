"""Display lag, responsiveness and CPU of the real app while three panes stream.

The real `AnomanApp` runs headless (`App.run_test`, 180x50) against the local gateway,
which runs in a separate process (`anoman-tui serve --port 0`), so the CPU printed is the
app process's alone (`time.process_time()` over wall time, all threads). Each pane is paced
by `X-Anoman-Simulate: ttft=0.05,rate=R,tokens=N` (models with Markdown-rich answers:
headings, lists, tables, code fences). Three loads, each repeated `--runs` times:

* 3 x 300 tok/s x 2,000 tokens: display lag = a token's arrival stamp (taken where its
  bytes came off the socket) -> the end of the frame that drew it; also from the
  gateway's schedule (token i due at the ledger's first token + i/rate) -> drawn, which
  also charges any delay in reading the socket; backlog = median lag of the last third
  of tokens vs the first third, and how long after the last token everything was drawn.
  Target: p99 <= 100 ms, no growing backlog.
* 3 x 1,000 tok/s x 5,000 tokens: lag p99 <= 250 ms; responsiveness = key -> handled
  latency (an F12 key event posted every 100 ms, as the terminal driver posts keys, to a
  priority binding) and event-loop latency (how late a 10 ms sleep wakes up).
* 3 x 100 tok/s x 1,000 tokens: CPU <= 50 % of one core.

Medians over the runs are printed beside the targets.

    python benchmarks/app_display_lag.py [--runs 3]

May import: the standard library, textual, anoman_tui, and app_harness (beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass

from app_harness import (
    BenchApp,
    GatewayProcess,
    gateway_process,
    isolate_environment,
    key_probe,
    loop_probe,
    percentile,
    schedule_lags,
)


@dataclass
class LoadResult:
    rate: float
    tokens: int
    lag: list[float]  # arrival -> drawn, seconds
    sched_lag: list[float]  # scheduled -> drawn
    read_delay: list[float]  # scheduled -> read off the socket
    first_third: float
    last_third: float
    drain_ms: float
    undrawn: int
    cpu: float  # fraction of one core
    wall: float
    key_lat: list[float]
    loop_late: list[float]


async def run_load(app: BenchApp, gateway: GatewayProcess, rate: float, tokens: int
                   ) -> LoadResult:
    app.reset_lags()
    app.key_latencies.clear()
    for pane in app.panes:
        pane.reset()  # no history: every request is the same size
    stop = asyncio.Event()
    loop_late: list[float] = []
    probes = [asyncio.create_task(loop_probe(loop_late, stop)),
              asyncio.create_task(key_probe(app, stop))]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    app.start_panes({i: f"ttft=0.05,rate={rate:g},tokens={tokens}" for i in (1, 2, 3)})
    await app.wait_done([1, 2, 3])
    # Everything is drawn by finish(); wait until the last frame has been counted.
    deadline = time.monotonic() + 5
    while any(lag.arrivals for lag in app.lags) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    stop.set()
    await asyncio.gather(*probes)
    lags = [d - a for lag in app.lags for a, d in lag.drawn]
    thirds = []
    for part in (0, 2):
        chunk = [d - a for lag in app.lags
                 for a, d in lag.drawn[part * len(lag.drawn) // 3:][: len(lag.drawn) // 3]]
        thirds.append(statistics.median(chunk) if chunk else float("nan"))
    last_arrival = max((lag.drawn[-1][0] for lag in app.lags if lag.drawn), default=0.0)
    last_drawn = max((lag.drawn[-1][1] for lag in app.lags if lag.drawn), default=0.0)
    sched, read = schedule_lags(app, gateway, rate)
    return LoadResult(rate, tokens, lags, sched, read, thirds[0], thirds[1],
                      1000 * (last_drawn - last_arrival),
                      sum(len(lag.arrivals) for lag in app.lags), cpu / wall, wall,
                      list(app.key_latencies), loop_late)


def ms(values: list[float], q: float) -> float:
    return 1000 * percentile(values, q)


def show(r: LoadResult) -> None:
    print(f"  3 x {r.rate:g} tok/s x {r.tokens}: lag p50/p95/p99/max "
          f"{ms(r.lag, .5):.0f}/{ms(r.lag, .95):.0f}/{ms(r.lag, .99):.0f}/{ms(r.lag, 1):.0f} ms;"
          f" schedule->drawn p99 {ms(r.sched_lag, .99):.0f} ms, read delay p99 "
          f"{ms(r.read_delay, .99):.1f} ms; backlog first/last third "
          f"{1000 * r.first_third:.0f}/{1000 * r.last_third:.0f} ms, drained "
          f"{r.drain_ms:.0f} ms after the last token, undrawn {r.undrawn}; key->handled p50/p99 "
          f"{ms(r.key_lat, .5):.1f}/{ms(r.key_lat, .99):.1f} ms; loop late p99 "
          f"{ms(r.loop_late, .99):.1f} ms; CPU {100 * r.cpu:.0f}% over {r.wall:.1f} s")


async def main_async(runs: int, flushed_messages: bool) -> None:
    isolate_environment()
    loads = [(300.0, 2000), (1000.0, 5000), (100.0, 1000)]
    results: dict[float, list[LoadResult]] = {rate: [] for rate, _ in loads}
    with gateway_process() as gateway:
        print(f"gateway: separate process (pid {gateway.process.pid}) at {gateway.base_url}")
        for run in range(runs):
            app = BenchApp(gateway, flushed_messages=flushed_messages)
            async with app.run_test(size=(180, 50)):
                await app.ready()
                print(f"run {run + 1}/{runs}")
                for rate, tokens in loads:
                    result = await run_load(app, gateway, rate, tokens)
                    results[rate].append(result)
                    show(result)

    def med(rate: float, fn: object) -> float:
        return statistics.median(fn(r) for r in results[rate])  # type: ignore[operator]

    def grows(r: LoadResult) -> bool:
        return r.undrawn > 0 or r.last_third > 2 * r.first_third + 0.05

    print(f"\nmedians over {runs} runs (app process only; gateway in its own process)")
    p99 = med(300, lambda r: ms(r.lag, .99))
    print(f"  3 x 300 tok/s   lag p50 {med(300, lambda r: ms(r.lag, .5)):.0f} ms, "
          f"p95 {med(300, lambda r: ms(r.lag, .95)):.0f} ms, p99 {p99:.0f} ms   "
          f"target p99 <= 100 ms  {'MET' if p99 <= 100 else 'MISSED'}")
    print(f"                  schedule->drawn p99 {med(300, lambda r: ms(r.sched_lag, .99)):.0f}"
          f" ms (socket read delay p99 {med(300, lambda r: ms(r.read_delay, .99)):.1f} ms)")
    growing = sum(grows(r) for r in results[300])
    print(f"                  backlog: median lag first third "
          f"{1000 * med(300, lambda r: r.first_third):.0f} ms, last third "
          f"{1000 * med(300, lambda r: r.last_third):.0f} ms, drained "
          f"{med(300, lambda r: r.drain_ms):.0f} ms after the last token; growing in "
          f"{growing}/{runs} runs   target: no growing backlog  "
          f"{'MET' if not growing else 'MISSED'}")
    p99 = med(1000, lambda r: ms(r.lag, .99))
    print(f"  3 x 1000 tok/s  lag p50 {med(1000, lambda r: ms(r.lag, .5)):.0f} ms, "
          f"p99 {p99:.0f} ms   target p99 <= 250 ms  {'MET' if p99 <= 250 else 'MISSED'}")
    key99 = med(1000, lambda r: ms(r.key_lat, .99))
    print(f"                  key->handled p50 {med(1000, lambda r: ms(r.key_lat, .5)):.1f} ms,"
          f" p99 {key99:.1f} ms, max {med(1000, lambda r: ms(r.key_lat, 1)):.1f} ms; "
          f"event loop late p99 {med(1000, lambda r: ms(r.loop_late, .99)):.1f} ms   "
          f"target: responsive (key p99 <= 100 ms)  {'MET' if key99 <= 100 else 'MISSED'}")
    print(f"                  CPU {100 * med(1000, lambda r: r.cpu):.0f}% of one core")
    cpu = 100 * med(100, lambda r: r.cpu)
    print(f"  3 x 100 tok/s   CPU {cpu:.0f}% of one core   target <= 50%  "
          f"{'MET' if cpu <= 50 else 'MISSED'}  (lag p99 {med(100, lambda r: ms(r.lag, .99)):.0f}"
          " ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--flushed-messages", action="store_true",
                        help="drawn = last frame before AnswerView.Flushed arrives "
                        "(answer_view_lag.py's measure; overstates lag in the app)")
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.flushed_messages))


if __name__ == "__main__":
    main()
