"""Does a replay keep the recorded timing? Three panes at 300 tok/s, recorded then replayed.

Each run records three concurrent streams from the local gateway (`anoman-tui serve` in
a child process; `X-Anoman-Simulate: ttft=0.20,rate=300,tokens=900`, three seconds
each) through the stream core with `record=True`, then replays the three recordings at
once through the same stream core (`ReplayTransport`, speed 1), as `anoman-tui replay`
and `compare --replay` do. For every token the core delivered, its time since the
request went out is compared between the live stream and the replay:

* TTFT: |replayed - recorded| per pane; target <= 10 ms (worst pane of the run).
* inter-token gaps: |replayed gap - recorded gap| over every token of the three panes;
  target p99 <= 10 ms.

Also printed: a machine-speed probe (a fixed pure-Python workload, ms; larger is a slower
machine or a busier moment), so a slow run can be told from a regression.

    python benchmarks/replay_timing.py [--runs 3] [--tokens 900]

May import: the standard library, httpx, anoman_tui and _common (beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx
from _common import BENCH_KEY, median, percentile, print_header, start_gateway, verdict

from anoman_tui.streaming import ChatTurn, StreamClient, StreamDone, StreamRequest, TextDelta
from anoman_tui.streaming.recording import ReplayTransport, StreamRecording

PANES = 3
RATE = 300
TARGET_MS = 10.0


def probe_ms() -> float:
    """A fixed workload (dict and string churn, as parsing is): the best of 5, in ms."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        table: dict[str, int] = {}
        for i in range(200_000):
            key = f"k{i % 5000}"
            table[key] = table.get(key, 0) + len(key)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def requests(base_url: str, tokens: int, path: str | None = None) -> list[StreamRequest]:
    simulate = f"ttft=0.20,rate={RATE},tokens={tokens}"
    return [
        StreamRequest(
            base_url=base_url, api_key=BENCH_KEY, model="anoman-lite", pane=pane,
            messages=(ChatTurn(role="user", content=f"replay timing, pane {pane}"),),
            extra_headers=(("X-Anoman-Simulate", simulate),), record=path is None,
            **({"path": path} if path else {}),
        )
        for pane in range(1, PANES + 1)
    ]


async def token_times(client: StreamClient, batch: list[StreamRequest]
                      ) -> tuple[list[list[float]], list[StreamRecording | None]]:
    """Per pane: each token's seconds since its request went out; and the recordings."""

    async def one(request: StreamRequest) -> tuple[list[float], StreamRecording | None]:
        stream = client.stream(request)
        stamps = []
        recording = None
        async for event in stream:
            if isinstance(event, TextDelta):
                stamps.append(event.at)
            elif isinstance(event, StreamDone):
                recording = event.result.recording
        sent = stream.sent_at or 0.0
        return [at - sent for at in stamps], recording

    done = await asyncio.gather(*(one(r) for r in batch))
    return [d[0] for d in done], [d[1] for d in done]


async def one_run(base_url: str, tokens: int) -> tuple[float, float, int]:
    async with StreamClient() as client:
        live, recordings = await token_times(client, requests(base_url, tokens))
    assert all(r is not None for r in recordings), "a stream was not recorded"
    by_pane = {pane: r for pane, r in enumerate(recordings, start=1) if r is not None}
    transport = ReplayTransport(by_pane, speed=1.0)
    async with StreamClient(httpx.AsyncClient(transport=transport)) as client:
        replayed, _ = await token_times(
            client, requests("http://replay.invalid", tokens, path=by_pane[1].path))
    ttft_errors = []
    gap_errors = []
    for was, now in zip(live, replayed, strict=True):
        assert len(was) == len(now), "the replay delivered a different number of tokens"
        ttft_errors.append(abs(now[0] - was[0]) * 1000)
        for i in range(1, len(was)):
            gap_errors.append(abs((now[i] - now[i - 1]) - (was[i] - was[i - 1])) * 1000)
    return max(ttft_errors), percentile(gap_errors, 99), sum(len(w) for w in live)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=900)
    args = parser.parse_args()
    print_header(f"replay timing: {PANES} panes x {RATE} tok/s, recorded then replayed")
    worst_ttft, gaps = [], []
    with start_gateway() as gateway:
        for run in range(1, args.runs + 1):
            probe = probe_ms()
            ttft, gap, count = asyncio.run(one_run(gateway.base_url, args.tokens))
            ok = ttft <= TARGET_MS and gap <= TARGET_MS
            print(f"   run {run}: TTFT error (worst pane) {ttft:5.2f} ms, inter-token gap "
                  f"error p99 {gap:5.2f} ms over {count} tokens; probe {probe:.0f} ms "
                  f"[{verdict(ok)}]")
            worst_ttft.append(ttft)
            gaps.append(gap)
    print(f"   median: TTFT error {median(worst_ttft):.2f} ms (target <= {TARGET_MS:g}) "
          f"[{verdict(median(worst_ttft) <= TARGET_MS)}], gap error p99 "
          f"{median(gaps):.2f} ms (target <= {TARGET_MS:g}) [{verdict(median(gaps) <= TARGET_MS)}]")
    print(f"   every run: [{verdict(max(worst_ttft) <= TARGET_MS and max(gaps) <= TARGET_MS)}]")


if __name__ == "__main__":
    main()
