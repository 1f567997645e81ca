"""Does a replay keep the recorded timing? Three panes at 300 tok/s, recorded then replayed.

Each run records three concurrent streams from the local gateway (`anoman-tui serve` in
a child process; `X-Anoman-Simulate: ttft=0.20,rate=300,tokens=900`, three seconds
each) through the stream core with `record=True`, then replays the three recordings at
once, twice: through the stream core alone (`ReplayTransport`, speed 1, as `compare
--replay` does), and in the real app (`AnomanApp` headless at 200x50 with the replay
as its first screen, as `anoman-tui replay ID` opens it: the three panes render the
Markdown while they replay). For every token delivered, its time since the request
went out (the stream core's stamp when its bytes were read) is compared between the
live stream and the replay:

* TTFT: |replayed - recorded| per pane; target <= 10 ms (worst pane of the run).
* inter-token gaps: |replayed gap - recorded gap| over every token of the three panes;
  target p99 <= 10 ms.

Also printed: a machine-speed probe (a fixed pure-Python workload, ms; larger is a slower
machine or a busier moment), so a slow run can be told from a regression.

    python benchmarks/replay_timing.py [--runs 3] [--tokens 900]

May import: the standard library, httpx, textual, anoman_tui and _common (beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import httpx
from _common import BENCH_KEY, percentile, print_header, probe_ms, start_gateway, verdict

from anoman_tui.streaming import ChatTurn, StreamClient, StreamDone, StreamRequest, TextDelta
from anoman_tui.streaming.recording import StreamRecording
from anoman_tui.streaming.replay import ReplayTransport

PANES = 3
RATE = 300
TARGET_MS = 10.0


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


async def record_live(base_url: str, tokens: int
                      ) -> tuple[list[list[float]], dict[int, StreamRecording]]:
    async with StreamClient() as client:
        live, recordings = await token_times(client, requests(base_url, tokens))
    assert all(r is not None for r in recordings), "a stream was not recorded"
    return live, {pane: r for pane, r in enumerate(recordings, start=1) if r is not None}


async def core_replay(by_pane: dict[int, StreamRecording], tokens: int
                      ) -> list[list[float]]:
    transport = ReplayTransport(by_pane, speed=1.0)
    async with StreamClient(httpx.AsyncClient(transport=transport)) as client:
        replayed, _ = await token_times(
            client, requests("http://replay.invalid", tokens, path=by_pane[1].path))
    return replayed


class _Tee:
    """A pane's stream, noting each token's stamp as the pane takes it."""

    def __init__(self, inner: Any, stamps: list[float]) -> None:
        self._inner = inner
        self._stamps = stamps

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aiter__(self) -> Any:
        async for event in self._inner:
            if isinstance(event, TextDelta):
                self._stamps.append(event.at)
            yield event


async def app_replay(by_pane: dict[int, StreamRecording]) -> list[list[float]]:
    """The replay as `anoman-tui replay ID` shows it, headless; each pane's token times."""
    from anoman_tui.config import Settings
    from anoman_tui.history import ComparisonRecord, PaneRecord
    from anoman_tui.ui.app import AnomanApp
    from anoman_tui.ui.network import NetworkThread
    from anoman_tui.ui.screens.replay import ReplayScreen

    stamps: dict[int, list[float]] = {pane: [] for pane in by_pane}
    streams: dict[int, Any] = {}
    original = NetworkThread.stream

    def teed(self: Any, request: StreamRequest, client: Any = None) -> Any:
        stream = original(self, request, client)
        pane = request.pane or 0
        streams[pane] = stream
        return _Tee(stream, stamps.setdefault(pane, []))

    record = ComparisonRecord(
        prompt="replay timing", id=1, created_at=time.time(), recorded=True,
        panes=tuple(PaneRecord(pane=pane, model=r.model, base_url="http://replay.invalid",
                               endpoint=r.endpoint) for pane, r in by_pane.items()))
    NetworkThread.stream = teed  # type: ignore[method-assign]
    try:
        app = AnomanApp(Settings(theme="anoman-dark", history=False),
                        replay=(record, by_pane, 1.0))
        async with app.run_test(size=(200, 50)) as pilot:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await pilot.pause(0.05)
                screen = app.screen
                if isinstance(screen, ReplayScreen) and len(streams) == len(by_pane) \
                        and not any(p.running for p in screen.panes):
                    break
    finally:
        NetworkThread.stream = original  # type: ignore[method-assign]
    return [[at - (streams[pane].sent_at or 0.0) for at in stamps[pane]]
            for pane in sorted(by_pane)]


def errors(live: list[list[float]], replayed: list[list[float]]) -> tuple[float, float]:
    """(worst pane's TTFT error, p99 inter-token gap error), in ms."""
    ttft_errors = []
    gap_errors = []
    for was, now in zip(live, replayed, strict=True):
        assert len(was) == len(now), "the replay delivered a different number of tokens"
        ttft_errors.append(abs(now[0] - was[0]) * 1000)
        for i in range(1, len(was)):
            gap_errors.append(abs((now[i] - now[i - 1]) - (was[i] - was[i - 1])) * 1000)
    return max(ttft_errors), percentile(gap_errors, 99)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=900)
    args = parser.parse_args()
    print_header(f"replay timing: {PANES} panes x {RATE} tok/s, recorded then replayed")
    found: dict[str, list[tuple[float, float]]] = {"stream core": [], "in the app": []}
    with start_gateway() as gateway:
        for run in range(1, args.runs + 1):
            probe = probe_ms()
            live, by_pane = asyncio.run(record_live(gateway.base_url, args.tokens))
            count = sum(len(w) for w in live)
            for where, replayed in (("stream core", asyncio.run(core_replay(by_pane, args.tokens))),
                                    ("in the app", asyncio.run(app_replay(by_pane)))):
                ttft, gap = errors(live, replayed)
                found[where].append((ttft, gap))
                ok = ttft <= TARGET_MS and gap <= TARGET_MS
                print(f"   run {run}, {where}: TTFT error (worst pane) {ttft:5.2f} ms, "
                      f"inter-token gap error p99 {gap:5.2f} ms over {count} tokens; "
                      f"probe {probe:.0f} ms [{verdict(ok)}]")
    for where, values in found.items():
        ttfts, gaps = [v[0] for v in values], [v[1] for v in values]
        print(f"   {where}: TTFT error {min(ttfts):.2f}-{max(ttfts):.2f} ms, gap error p99 "
              f"{min(gaps):.2f}-{max(gaps):.2f} ms (targets <= {TARGET_MS:g}) "
              f"[{verdict(max(ttfts) <= TARGET_MS and max(gaps) <= TARGET_MS)} in every run]")


if __name__ == "__main__":
    main()
