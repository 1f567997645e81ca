"""Display lag of three `AnswerView`s streaming Markdown side by side.

A headless `App.run_test()` hosts three views; a feeder task appends Markdown-rich text
(headings, lists, tables, code fences with blank lines) to each at `--rate` tokens/s.
Every view posts `AnswerView.Flushed` after a flush has been drawn; the lag of each token
is the time from its `append()` to the end of the frame that drew it (the last frame
written before the first `Flushed` that includes it). Printed:
lag p50/p95/p99/max, whether the backlog grows (lag in the last third vs the first
third, and the time to draw everything after the last token), event-loop latency (is
the app responsive), process CPU % (process_time over wall time) and peak RSS.

    python benchmarks/answer_view_lag.py --rate 300 --tokens 2000

May import: the standard library, textual, anoman_tui.ui.widgets.answer_view, and _common
(beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import re
import resource
import statistics
import time
from collections import deque
from dataclasses import dataclass, field

from _common import probe_line
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical

from anoman_tui.ui.widgets.answer_view import AnswerView

SECTION = """## Section {n}: trade-offs

Streaming **Markdown** is mostly about *not* redoing work: the renderer keeps finished
blocks and only redraws the `last` one, so the cost of a token stays flat as the answer
grows. Here is what that means in practice for item {n}.

- first point, with `inline code` and a [link](https://example.com/{n})
- second point that is long enough to wrap across more than one line of a narrow pane
  - a nested point
- third point

1. Measure before optimising.

   Then measure again, with the real workload.

2. Keep the hot path allocation-free.

| Rate (tok/s) | p50 (ms) | p99 (ms) | Notes |
|---:|---:|---:|---|
| 100 | 31 | 52 | idle-ish |
| 300 | 35 | 71 | typical |
| 1000 | 44 | 120 | stress {n} |

```python
def flush(self, pending: list[str]) -> None:
    text = "".join(pending)

    for block in self.splitter.feed(text):
        self.render(block)  # once per block
    self.render_tail()
```

> A block quote that says something wise about item {n},
> spread over two lines.

"""


def markdown_tokens(count: int, seed: int) -> list[str]:
    """`count` LLM-like tokens (~4 characters) of Markdown-rich text."""
    rng = random.Random(seed)
    tokens: list[str] = []
    n = 0
    while len(tokens) < count:
        n += 1
        for piece in re.findall(r"\s*\S+|\s+", SECTION.format(n=n)):
            # Split long words the way BPE tokenizers do, roughly.
            while len(piece) > 6:
                cut = rng.randint(2, 5)
                tokens.append(piece[:cut])
                piece = piece[cut:]
            tokens.append(piece)
    return tokens[:count]


@dataclass
class PaneStats:
    sent: deque[float] = field(default_factory=deque)  # append times not yet drawn
    lags: list[tuple[float, float]] = field(default_factory=list)  # (sent at, lag)
    last_drawn: float = 0.0


class LagBench(App[None]):
    # Like the app: each answer in a bordered pane, the view itself padded.
    CSS = """
    Vertical { width: 1fr; height: 1fr; border: round $primary; }
    AnswerView { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, rate: float, tokens: int, seed: int, panes: int = 3) -> None:
        super().__init__()
        self.rate = rate
        self.token_count = tokens
        self.seed = seed
        self.panes = panes
        self.stats = [PaneStats() for _ in range(panes)]
        self.loop_lags: list[float] = []
        self.cost_samples: list[tuple[int, float]] = []  # (tokens sent, process_time)
        self.last_frame_at = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal():
            for index in range(self.panes):
                with Vertical():
                    yield AnswerView(report_flushes=True, id=f"pane{index}")

    def on_mount(self) -> None:
        # Time each frame as it is written out: `Flushed` is posted after the refresh
        # that drew the flush, but bubbles through a few message queues before it gets
        # here, so "drawn" is the end of the last frame before the message arrives.
        screen = self.screen
        compositor_refresh = screen._compositor_refresh

        def timed_refresh() -> None:
            compositor_refresh()
            self.last_frame_at = time.monotonic()

        screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]

    def on_answer_view_flushed(self, message: AnswerView.Flushed) -> None:
        now = self.last_frame_at
        assert message.answer_view.id is not None
        stats = self.stats[int(message.answer_view.id[-1])]
        while stats.sent and stats.sent[0] <= message.appended_at_latest:
            sent = stats.sent.popleft()
            stats.lags.append((sent, now - sent))
        stats.last_drawn = now

    async def probe_loop(self, stop: asyncio.Event) -> None:
        """Event-loop latency: how late a 10 ms sleep wakes up (UI responsiveness)."""
        while not stop.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            self.loop_lags.append(time.perf_counter() - before - 0.01)

    async def feed(self) -> float:
        """Append every pane's tokens on schedule; return the time the last was sent."""
        views = [self.query_one(f"#pane{index}", AnswerView) for index in range(self.panes)]
        streams = [
            markdown_tokens(self.token_count, self.seed + index) for index in range(self.panes)
        ]
        start = time.monotonic()
        sent = 0
        next_sample = start
        while sent < self.token_count:
            if time.monotonic() >= next_sample:
                self.cost_samples.append((sent, time.process_time()))
                next_sample += 0.25
            due = min(self.token_count, int((time.monotonic() - start) * self.rate) + 1)
            for index, view in enumerate(views):
                for token in streams[index][sent:due]:
                    self.stats[index].sent.append(time.monotonic())
                    view.append(token)
            sent = due
            await asyncio.sleep(0.005)  # deltas arrive in small bursts, as from SSE
        self.cost_samples.append((sent, time.process_time()))
        return time.monotonic()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cost_growth(samples: list[tuple[int, float]]) -> tuple[float, float]:
    """CPU ms per 1,000 tokens (per pane) over the first and the last fifth of the feed."""
    if len(samples) < 10:
        return float("nan"), float("nan")
    fifth = len(samples) // 5
    first, last = samples[: fifth + 1], samples[-fifth - 1 :]

    def rate(part: list[tuple[int, float]]) -> float:
        tokens = part[-1][0] - part[0][0]
        return 1e6 * (part[-1][1] - part[0][1]) / tokens if tokens else float("nan")

    return rate(first), rate(last)


async def run(
    rate: float, tokens: int, seed: int, width: int, height: int, panes: int, freeze: bool
) -> None:
    app = LagBench(rate, tokens, seed, panes)
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause(0.2)
        if freeze:
            # What an app can do after its first paint: keep start-up objects out of
            # the cyclic GC's full collections (which otherwise pause for 20-70 ms).
            gc.collect()
            gc.freeze()
        stop = asyncio.Event()
        probe = asyncio.create_task(app.probe_loop(stop))
        wall0, cpu0 = time.perf_counter(), time.process_time()
        fed_at = await app.feed()
        # Wait until every token has been drawn (or give up: the backlog is not draining).
        deadline = time.monotonic() + 30
        while any(s.sent for s in app.stats) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        drained_at = max(s.last_drawn for s in app.stats)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        finish0 = time.perf_counter()
        for index in range(panes):
            app.query_one(f"#pane{index}", AnswerView).finish()
        finish_ms = (time.perf_counter() - finish0) * 1000
        await pilot.pause()
        stop.set()
        await probe
        undrawn = sum(len(s.sent) for s in app.stats)

    lags = [lag for s in app.stats for _, lag in s.lags]
    gc_mode = "gc.freeze() after start-up" if freeze else "default GC"
    print(
        f"{panes} panes x {rate:g} tok/s x {tokens} tokens ({width}x{height} terminal, {gc_mode});"
        f" machine probe after the run {probe_line()[1]}"
    )
    print(
        "  lag ms  p50 {:.0f}  p95 {:.0f}  p99 {:.0f}  max {:.0f}".format(
            *(1000 * percentile(lags, q) for q in (0.5, 0.95, 0.99, 1.0))
        )
    )
    per_pane = ", ".join(
        f"{1000 * percentile([x for _, x in s.lags], 0.99):.0f}" for s in app.stats
    )
    print(f"  per-pane p99 ms  {per_pane}")
    for s in app.stats:
        s.lags.sort()
    thirds = [
        [lag for s in app.stats for _, lag in s.lags[part * len(s.lags) // 3 :][: len(s.lags) // 3]]
        for part in (0, 2)
    ]
    first, last = (statistics.median(t) * 1000 if t else float("nan") for t in thirds)
    grows = undrawn > 0 or last > 2 * first + 50
    print(
        f"  backlog  median lag first third {first:.0f} ms, last third {last:.0f} ms; "
        f"drawn {1000 * max(0.0, drained_at - fed_at):.0f} ms after the last token; "
        f"undrawn {undrawn} -> {'GROWS' if grows else 'steady'}"
    )
    print(
        "  event loop late  p50 {:.1f}  p99 {:.1f}  max {:.1f} ms".format(
            *(1000 * percentile(app.loop_lags, q) for q in (0.5, 0.99, 1.0))
        )
    )
    print(f"  CPU {100 * cpu / wall:.0f}% of one core over {wall:.1f} s")
    first_cost, last_cost = cost_growth(app.cost_samples)
    print(
        f"  CPU per 1k tokens per pane: first fifth {first_cost / panes:.1f} ms, "
        f"last fifth {last_cost / panes:.1f} ms (x{last_cost / first_cost:.2f})"
    )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  finish() on all panes {finish_ms:.1f} ms; peak RSS {rss_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=300, help="tokens/s per pane")
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per pane")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--width", type=int, default=180)
    parser.add_argument("--height", type=int, default=50)
    parser.add_argument("--panes", type=int, default=3)
    parser.add_argument("--gc-freeze", action="store_true", help="gc.freeze() after start-up")
    args = parser.parse_args()
    asyncio.run(
        run(
            args.rate,
            args.tokens,
            args.seed,
            args.width,
            args.height,
            args.panes,
            args.gc_freeze,
        )
    )


if __name__ == "__main__":
    main()
