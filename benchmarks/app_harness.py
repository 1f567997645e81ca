"""Shared harness for the app-level benchmarks (`app_display_lag.py`, `app_metrics_truth.py`,
`app_long_answers.py`): the real `AnomanApp`, headless, against the local gateway.

* The gateway runs in a separate process (`anoman-tui serve --port 0 --db <tmp>`), so its
  CPU is not charged to the app; the app process's CPU (`time.process_time()`, all its
  threads) is the app's alone.
* Each pane is paced by `X-Anoman-Simulate: ttft=..,rate=..,tokens=..`: the benchmark adds
  its own entries to `SCENARIO_HEADERS` (the table the app sends per-pane headers from).
* Display lag: a wrapped `append()` records each delta's arrival stamp (`TextDelta.at`,
  taken where the bytes came off the socket); a wrapped `_flush()` notes which arrivals
  it took in; a token is drawn at the end of the first frame (`_compositor_refresh`)
  after the flush that took it in. (`answer_view_lag.py` takes the last frame before
  `AnswerView.Flushed` arrives instead; that message crosses several queues in the app,
  so this does not depend on when it arrives. Both agreed within a few ms here;
  `--flushed-messages` in app_display_lag.py uses that measure.)
* Terminal output: headless, Textual skips turning each frame into terminal sequences;
  the app a person runs does that every frame and writes the result. `BenchApp` does it
  too (`ChopsUpdate.render_segments()` and a write to /dev/null), so its CPU is charged.
* Schedule lag: the gateway paces token i at `first + i / rate` on the shared monotonic
  clock; with the ledger's `first_token_at` that gives each token's due time, so
  "scheduled -> drawn" also charges any delay in reading the socket.
* `contention(N)`: N busy processes for a block (`--contend N`), a slow spell on demand.

Not a benchmark itself. May import: the standard library, textual, anoman_tui.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual import events
from textual._compositor import CompositorUpdate
from textual.binding import Binding
from textual.screen import Screen

from anoman_tui.config import Settings
from anoman_tui.locations import stylesheet
from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.pane import ComparePane

MODELS = ["claude-sonnet-4-6", "gpt-5-mini", "qwen3-coder"]  # Markdown-rich, no reasoning
PROMPT = "compare connection pooling strategies for postgres under bursty load"
KEY = "anm-sk-local-benchmark-key-0000000000"
# Offset between the wall clock (the ledger's unix times) and the monotonic clock; both
# clocks are system-wide, so this is the same in the gateway's process.
WALL_MINUS_MONO = time.time() - time.monotonic()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: list[float]) -> float:
    return percentile(values, 0.5) if len(values) % 2 else (
        (sorted(values)[len(values) // 2 - 1] + sorted(values)[len(values) // 2]) / 2
        if values else float("nan")
    )


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class GatewayProcess:
    base_url: str
    db_path: Path
    process: subprocess.Popen[str]
    api_key: str = KEY

    # EmbeddedGateway's interface, as far as the app uses it (gateway_factory).
    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def ledger_row(self, request_id: str, wait_s: float = 2.0) -> dict[str, Any] | None:
        """The ledger's row for `request_id` (written when the request ends)."""
        deadline = time.monotonic() + wait_s
        con = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        try:
            while True:
                row = con.execute(
                    "SELECT * FROM usage WHERE request_id = ?", (request_id,)
                ).fetchone()
                if row is not None or time.monotonic() > deadline:
                    return dict(row) if row is not None else None
                time.sleep(0.005)
        finally:
            con.close()


@contextlib.contextmanager
def gateway_process() -> Iterator[GatewayProcess]:
    """`anoman-tui serve` on a free port, in its own process, with generous limits."""
    with tempfile.TemporaryDirectory(prefix="anoman-bench-") as tmp:
        config = Path(tmp) / "gateway.toml"
        config.write_text(
            f'api_keys = ["{KEY}"]\nrate_limit_rpm = 1000000\n'
            "max_concurrent_streams = 1000\ncache_enabled = false\n"
        )
        db = Path(tmp) / "usage.sqlite3"
        command = [sys.executable, "-c", "from anoman_tui.cli import main; main()",
                   "serve", "--port", "0", "--db", str(db), "--config", str(config)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        assert process.stdout is not None
        base_url = ""
        for line in process.stdout:
            if m := re.search(r"listening on (http://\S+)", line):
                base_url = m.group(1)
                break
        if not base_url:
            raise RuntimeError("the gateway did not start")
        try:
            yield GatewayProcess(base_url, db, process)
        finally:
            process.terminate()
            process.wait(10)


def isolate_environment() -> None:
    """Never read or write the user's config, data or log files."""
    tmp = tempfile.mkdtemp(prefix="anoman-bench-home-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # each run made one and left it
    os.environ["ANOMAN_CONFIG"] = str(Path(tmp) / "config.toml")
    os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")
    os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
    for name in ("ANOMAN_BASE_URL", "ANOMAN_API_KEY", "ANOMAN_MODELS"):
        os.environ.pop(name, None)


def set_simulation(index: int, header: str) -> str:
    """Make pane `index` send `X-Anoman-Simulate: header`; returns its scenario name."""
    name = f"bench-{index}"
    SCENARIO_HEADERS[name] = header  # type: ignore[index]
    return name


@dataclass
class PaneDrawLag:
    arrivals: deque[float] = field(default_factory=deque)  # arrival stamps not yet drawn
    drawn: list[tuple[float, float]] = field(default_factory=list)  # (arrived, drawn at)
    tokens: int = 0  # appended (one inbox entry each)
    flushed: int = 0  # how many of them a flush has taken in

    def frame_drawn(self, now: float) -> None:
        arrivals = self.arrivals
        for _ in range(self.flushed - len(self.drawn)):
            self.drawn.append((arrivals.popleft(), now))


class BenchApp(AnomanApp):
    """The real app, plus a frame clock, flush bookkeeping and a key probe."""

    BINDINGS = [*AnomanApp.BINDINGS, Binding("f12", "probe_key", show=False, priority=True)]
    # A relative CSS_PATH would be resolved beside this subclass: use the app's own.
    CSS_PATH = stylesheet()

    def __init__(self, gateway: GatewayProcess, *, flushed_messages: bool = False) -> None:
        super().__init__(
            Settings(max_tokens=None, idle_timeout=30, theme="anoman-dark"),  # type: ignore[call-arg]
            models=MODELS,
            gateway_factory=lambda: gateway,
        )
        self.lags = [PaneDrawLag() for _ in range(3)]
        self.flushed_messages = flushed_messages  # measure as answer_view_lag.py does
        self.last_frame_at = 0.0
        self.key_latencies: list[float] = []
        self._key_sent: float | None = None
        self._terminal = open(os.devnull, "wb", buffering=0)  # noqa: SIM115 (app-long)

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        super()._display(screen, renderable)
        # What the terminal driver gets in the app a person runs (headless, Textual
        # skips it): the frame as terminal sequences, written out.
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            self._terminal.write(renderable.render_segments(self.console).encode())

    # -- set-up ----------------------------------------------------------------------
    async def ready(self) -> None:
        # Connected, and the start-up warm-up (a thread, ~0.2 s) is over: no one sends a
        # prompt sooner than that after launching the app.
        while self.compare.base_url is None or not self.warmed_up:
            await asyncio.sleep(0.02)
        screen = self.screen
        compositor_refresh = screen._compositor_refresh

        def timed_refresh() -> None:
            compositor_refresh()
            self.last_frame_at = now = time.monotonic()
            if not self.flushed_messages:
                for lag in self.lags:
                    lag.frame_drawn(now)

        screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]
        for index in range(3):
            self._instrument(index)

    def _instrument(self, index: int) -> None:
        view = self.compare.pane(index + 1).answer
        view._report_flushes = self.flushed_messages
        original = view.append
        original_flush = view._flush
        lag = self.lags[index]

        def flush(*, final: bool) -> None:
            original_flush(final=final)
            lag.flushed = lag.tokens - len(view._inbox)  # a split delta counts as not yet

        view._flush = flush  # type: ignore[method-assign]

        def append(text: str, at: float | None = None) -> None:
            if text:
                stamp = time.monotonic() if at is None else at
                lag.arrivals.append(stamp)
                lag.tokens += 1
            original(text, at)

        view.append = append  # type: ignore[method-assign]

    def reset_lags(self) -> None:
        for lag in self.lags:  # the wrapped append()s hold these objects: clear in place
            lag.arrivals.clear()
            lag.drawn.clear()
            lag.tokens = 0
            lag.flushed = 0

    def on_answer_view_flushed(self, message: AnswerView.Flushed) -> None:
        if not self.flushed_messages:
            return
        pane = message.answer_view.ancestors_with_self
        owner = next((n for n in pane if isinstance(n, ComparePane)), None)
        if owner is None or message.answer_view is not owner.answer:
            return
        lag = self.lags[owner.state.index - 1]
        now = self.last_frame_at
        while lag.arrivals and lag.arrivals[0] <= message.appended_at_latest:
            lag.drawn.append((lag.arrivals.popleft(), now))

    # -- key probe -------------------------------------------------------------------
    def send_probe_key(self) -> None:
        """Post a key as the terminal driver would; its action records the latency."""
        self._key_sent = time.monotonic()
        self.post_message(events.Key("f12", None))

    def action_probe_key(self) -> None:
        if self._key_sent is not None:
            self.key_latencies.append(time.monotonic() - self._key_sent)
            self._key_sent = None

    # -- driving ---------------------------------------------------------------------
    def arm_panes(self, headers: dict[int, str]) -> None:
        """Arm pane i's scenario (1-based index -> X-Anoman-Simulate) as the scenario
        picker does: the header says so at once (`AnomanApp.pick_scenario`)."""
        for index, header in headers.items():
            self.panes[index - 1].set_scenario(set_simulation(index, header))
            self.compare.pane(index).refresh_chrome()

    def send_panes(self, indices: list[int]) -> None:
        self.compare.send(PROMPT, [self.panes[i - 1] for i in indices])

    def start_panes(self, headers: dict[int, str]) -> None:
        """Arm the panes in `headers` and send the prompt to them at once."""
        self.arm_panes(headers)
        self.send_panes(list(headers))

    async def wait_done(self, indices: list[int], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while any(self.panes[i - 1].running for i in indices):
            if time.monotonic() > deadline:
                raise TimeoutError("streams did not finish")
            await asyncio.sleep(0.02)


async def loop_probe(lags: list[float], stop: asyncio.Event) -> None:
    """Event-loop latency: how late a 10 ms sleep wakes up."""
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - before - 0.01)


async def key_probe(app: BenchApp, stop: asyncio.Event, every: float = 0.1) -> None:
    while not stop.is_set():
        app.send_probe_key()
        await asyncio.sleep(every)


def schedule_lags(app: BenchApp, gateway: GatewayProcess, rate: float
                  ) -> tuple[list[float], list[float]]:
    """(scheduled -> drawn, scheduled -> read) per token, from the ledger's first token."""
    drawn_lags: list[float] = []
    read_delays: list[float] = []
    for index, lag in enumerate(app.lags):
        result = app.panes[index].last_result
        if result is None or result.request_id is None:
            continue
        row = gateway.ledger_row(result.request_id)
        if row is None or row["first_token_at"] is None:
            continue
        first_due = row["first_token_at"] - WALL_MINUS_MONO
        for i, (arrived, drawn) in enumerate(lag.drawn):
            due = first_due + i / rate
            drawn_lags.append(drawn - due)
            read_delays.append(arrived - due)
    return drawn_lags, read_delays


@contextlib.contextmanager
def contention(processes: int) -> Iterator[None]:
    """`processes` pure-Python busy loops in child processes while the block runs."""
    if processes:
        print(f"contention: {processes} busy processes beside the app and the gateway")
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(processes)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()
