"""Are the app's numbers true under load, and are aborts instant?

The real `AnomanApp` runs headless (`App.run_test`, 180x50) against the local gateway in
a separate process (`anoman-tui serve --port 0`); panes are paced with
`X-Anoman-Simulate`. While panes 2 and 3 stream at 300, 1,000 and 2,000 tok/s in turn
(`--background`; started first, drawing the whole time):

* TTFT: pane 1 asks for `ttft=0.30,rate=200,tokens=500`; the TTFT the pane reports
  (`StreamResult.metrics.ttft_s`, the figure in its footer) is compared with the
  schedule (0.300 s). Also shown: the gateway's own view (ledger `first_token_at -
  started_at`), to tell gateway overhead from client error. Target: within +-10 ms.
* tokens/s: the same pane's reported rate vs the schedule (200). Target: within +-3 %.
* abort: pane 2 streams (300 tok/s) while panes 1 and 3 stream at 300 tok/s; F2 is pressed
  (a key event posted as the terminal driver posts it) and the time of the press
  (`time.time()`) is compared with the `ended_at` the gateway's ledger records for that
  stream (row looked up by the stream's `x-request-id`). Target: p99 <= 50 ms over 20 tries.

    python benchmarks/app_metrics_truth.py [--tries 8] [--aborts 20] [--contend 2]

`--contend N` runs N busy processes beside the app and the gateway (as
app_display_lag.py does): a slow spell on demand.

May import: the standard library, textual, anoman_tui, and _common and app_harness (beside
it).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _common import probe_line
from app_harness import (
    WALL_MINUS_MONO,
    BenchApp,
    GatewayProcess,
    contention,
    gateway_process,
    isolate_environment,
    percentile,
)
from textual import events

TTFT = 0.30
RATE = 200.0
BREAKDOWN: list[tuple[float, float]] = []
BACKGROUND = "ttft=0.05,rate={rate:g},tokens=100000"


async def measure_metrics(app: BenchApp, gateway: GatewayProcess, tries: int,
                          background: float = 300.0
                          ) -> tuple[list[float], list[float], list[float]]:
    """(reported TTFT - schedule, gateway TTFT - schedule, reported rate error) per try.

    Also fills BREAKDOWN: (request stamped -> admitted, gateway's first write -> read stamp).
    """
    ttft_err: list[float] = []
    gateway_err: list[float] = []
    rate_err: list[float] = []
    BREAKDOWN.clear()
    load = BACKGROUND.format(rate=background)
    app.start_panes({2: load, 3: load})
    await asyncio.sleep(0.5)  # panes 2 and 3 are drawing
    for _ in range(tries):
        app.panes[0].reset()
        app.start_panes({1: f"ttft={TTFT},rate={RATE:g},tokens=500"})
        await app.wait_done([1], timeout=20)
        result = app.panes[0].last_result
        assert result is not None and result.metrics.ttft_s is not None, result
        ttft_err.append(result.metrics.ttft_s - TTFT)
        row = gateway.ledger_row(result.request_id or "")
        if row is not None and row["first_token_at"] is not None:
            gateway_err.append(row["first_token_at"] - row["started_at"] - TTFT)
            pane = app.compare.pane(1)
            if pane._sent_at is not None and pane._first_text_at is not None:
                BREAKDOWN.append((row["started_at"] - WALL_MINUS_MONO - pane._sent_at,
                                  pane._first_text_at - (row["first_token_at"] - WALL_MINUS_MONO)))
        rate = result.metrics.output_tokens_per_s or 0.0
        rate_err.append(rate / RATE - 1)
        await asyncio.sleep(0.1)
    app.compare.action_abort_all()
    await app.wait_done([1, 2, 3])
    return ttft_err, gateway_err, rate_err


async def measure_aborts(app: BenchApp, gateway: GatewayProcess, tries: int) -> list[float]:
    """F2 press -> the gateway's ledger ended_at for pane 2's stream, per try."""
    latencies: list[float] = []
    app.start_panes({1: BACKGROUND.format(rate=300), 3: BACKGROUND.format(rate=300)})
    await asyncio.sleep(0.3)
    for _ in range(tries):
        app.panes[1].reset()
        app.start_panes({2: "ttft=0.05,rate=300,tokens=100000"})
        await asyncio.sleep(0.4)  # pane 2 is streaming and drawing
        pressed = time.time()
        app.post_message(events.Key("f2", None))  # as the driver delivers a key press
        await app.wait_done([2], timeout=10)
        result = app.panes[1].last_result
        assert result is not None and result.status == "cancelled", result
        row = gateway.ledger_row(result.request_id or "")
        assert row is not None, "no ledger row for the aborted stream"
        latencies.append(row["ended_at"] - pressed)
    app.compare.action_abort_all()
    await app.wait_done([1, 2, 3])
    return latencies


async def main_async(tries: int, aborts: int, backgrounds: list[float]) -> None:
    isolate_environment()
    found = {}
    with gateway_process() as gateway:
        print(f"gateway: separate process (pid {gateway.process.pid}) at {gateway.base_url}; "
              f"machine probe {probe_line()[1]}")
        app = BenchApp(gateway)
        async with app.run_test(size=(180, 50)):
            await app.ready()
            for background in backgrounds:
                found[background] = (*await measure_metrics(app, gateway, tries, background),
                                     list(BREAKDOWN))
            abort_lat = await measure_aborts(app, gateway, aborts)
        print(f"machine probe after the runs {probe_line()[1]}")

    def ms_list(values: list[float]) -> str:
        return ", ".join(f"{1000 * v:+.1f}" for v in values)

    for background, (ttft_err, gateway_err, rate_err, breakdown) in found.items():
        print(f"TTFT (schedule {TTFT:.3f} s) while panes 2-3 draw at {background:g} tok/s, "
              f"{tries} tries")
        print(f"  reported - schedule, ms: {ms_list(ttft_err)}")
        worst = max(abs(v) for v in ttft_err)
        med = statistics.median(ttft_err)
        print(f"  median {1000 * med:+.1f} ms, worst |error| {1000 * worst:.1f} ms   "
              f"target within +-10 ms  {'MET' if worst <= 0.010 else 'MISSED'}")
        if gateway_err:
            print(f"  gateway's own first token - admission - schedule: median "
                  f"{1000 * statistics.median(gateway_err):+.1f} ms (gateway overhead, not "
                  "the app)")
        if breakdown:
            print("  where the error is, ms (request stamped -> gateway admitted / gateway's "
                  "first write -> read stamped): " + ", ".join(
                      f"{1000 * a:+.1f}/{1000 * b:+.1f}" for a, b in breakdown))
        print(f"tokens/s (schedule {RATE:g}) under the same load")
        print("  reported / schedule - 1, %: " + ", ".join(f"{100 * v:+.2f}" for v in rate_err))
        worst = max(abs(v) for v in rate_err)
        print(f"  median {100 * statistics.median(rate_err):+.2f} %, worst |error| "
              f"{100 * worst:.2f} %   target within +-3 %  {'MET' if worst <= 0.03 else 'MISSED'}")
    print(f"abort (F2) -> gateway ledger ended_at, panes 1 and 3 at 300 tok/s, {aborts} tries")
    p99 = 1000 * percentile(abort_lat, 0.99)
    print(f"  p50 {1000 * percentile(abort_lat, 0.5):.1f} ms, p95 "
          f"{1000 * percentile(abort_lat, 0.95):.1f} ms, p99 {p99:.1f} ms, max "
          f"{1000 * max(abort_lat):.1f} ms   target p99 <= 50 ms  "
          f"{'MET' if p99 <= 50 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=8, help="TTFT / tokens/s streams")
    parser.add_argument("--aborts", type=int, default=20)
    parser.add_argument("--background", default="300,1000,2000",
                        help="the other two panes' rates, tok/s (default: 300,1000,2000)")
    parser.add_argument("--contend", type=int, default=0, metavar="N",
                        help="run N busy processes beside the app and the gateway")
    args = parser.parse_args()
    with contention(args.contend):
        asyncio.run(main_async(args.tries, args.aborts,
                               [float(r) for r in args.background.split(",") if r]))


if __name__ == "__main__":
    main()
