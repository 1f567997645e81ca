"""Long answers in the real app: memory and per-token cost as answers grow.

The real `AnomanApp` runs headless (`App.run_test`, 180x50) against the local gateway in
a separate process (`anoman-tui serve --port 0`). All three panes stream
`X-Anoman-Simulate: ttft=0.05,rate=R,tokens=N` (default 3 x 100,000 tokens at 2,500
tok/s, Markdown-rich). Every 0.5 s the script samples the app process's CPU time
(`time.process_time()`, all its threads) and the tokens the panes have taken in, then
prints:

* RSS: the process's resident size at the end (and its peak, `ru_maxrss`, which includes
  start-up). Target: <= 300 MB.
* per-token cost: CPU ms per 1,000 tokens (all panes) over the first and the last fifth
  of the run, and their ratio. Target: end <= 2x start.
* how far behind drawing was at the end (display lag p99 over the last fifth), to show
  the cost figures come from a UI that kept up.

A machine-speed probe (`_common.probe_line`) is printed before and after the run.

    python benchmarks/app_long_answers.py [--tokens 100000] [--rate 2500]

May import: the standard library, textual, anoman_tui, and _common and app_harness (beside
it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import time

from _common import probe_line
from app_harness import (
    BenchApp,
    gateway_process,
    isolate_environment,
    percentile,
    rss_mb,
)


async def main_async(tokens: int, rate: float) -> None:
    isolate_environment()
    samples: list[tuple[float, int, float]] = []  # (wall, tokens taken in, cpu)
    with gateway_process() as gateway:
        print(f"gateway: separate process (pid {gateway.process.pid}) at {gateway.base_url}; "
              f"machine probe {probe_line()[1]}")
        app = BenchApp(gateway)
        async with app.run_test(size=(180, 50)):
            await app.ready()
            rss_start = rss_mb()
            app.reset_lags()
            app.start_panes({i: f"ttft=0.05,rate={rate:g},tokens={tokens}" for i in (1, 2, 3)})
            wall0 = time.monotonic()
            while any(p.running for p in app.panes):
                samples.append((time.monotonic(), sum(lag.tokens for lag in app.lags),
                                time.process_time()))
                if time.monotonic() - wall0 > tokens / rate * 3 + 30:
                    raise TimeoutError("the streams did not finish")
                await asyncio.sleep(0.5)
            wall = time.monotonic() - wall0
            await asyncio.sleep(0.3)  # the final frames
            rss_end = rss_mb()
            results = [p.last_result for p in app.panes]
            drawn_tail = [d - a for lag in app.lags
                          for a, d in lag.drawn[len(lag.drawn) * 4 // 5:]]
            total = sum(lag.tokens for lag in app.lags)
            text_lengths = [len(p.answer.text) for p in
                            (app.compare.pane(i) for i in (1, 2, 3))]
    print(f"machine probe after the run {probe_line()[1]}")
    gc.collect()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    statuses = [r.status if r else "none" for r in results]
    print(f"3 panes x {tokens:,} tokens at {rate:g} tok/s each: {total:,} tokens taken in "
          f"over {wall:.1f} s ({total / wall:,.0f} tok/s in all); results {statuses}; "
          f"answers {', '.join(f'{n / 1e6:.2f} MB' for n in text_lengths)} of text")

    def cost(part: list[tuple[float, int, float]]) -> float:
        taken = part[-1][1] - part[0][1]
        return 1e6 * (part[-1][2] - part[0][2]) / taken if taken else float("nan")

    fifth = max(2, len(samples) // 5)
    first, last = cost(samples[:fifth + 1]), cost(samples[-fifth - 1:])
    ratio = last / first
    print(f"  CPU per 1,000 tokens: first fifth {first:.1f} ms, last fifth {last:.1f} ms, "
          f"ratio x{ratio:.2f}   target <= x2.00  {'MET' if ratio <= 2 else 'MISSED'}")
    print(f"  RSS {rss_start:.0f} MB before the streams, {rss_end:.0f} MB at the end "
          f"(peak {peak:.0f} MB)   target <= 300 MB  {'MET' if peak <= 300 else 'MISSED'}")
    print(f"  display lag over the last fifth: p50 {1000 * percentile(drawn_tail, .5):.0f} ms, "
          f"p99 {1000 * percentile(drawn_tail, .99):.0f} ms (keeping up, not skipping work)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000, help="tokens per pane")
    parser.add_argument("--rate", type=float, default=2500, help="tokens/s per pane")
    args = parser.parse_args()
    asyncio.run(main_async(args.tokens, args.rate))


if __name__ == "__main__":
    main()
