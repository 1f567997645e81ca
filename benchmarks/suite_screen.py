"""The suite screen under load: keys, matrix updates, CPU, a live case, a large finished run.

    python benchmarks/suite_screen.py [--cases 300] [--concurrency 32] [--finished 1000]

A local gateway runs in another process (`anoman-tui serve`, `app_harness.gateway_process`),
its models paced at 100 tok/s (`X-Anoman-Simulate: rate=100,tokens=200`). The suite is
`eval_load.py`'s (`--cases` cases x 3 models, two assertions each).

1. The same suite twice, at `--concurrency` streams in flight:
   - headless: `anoman-tui eval` in a process of its own (`eval_load.run_eval`): its CPU
     share from its first finished cell to its last;
   - on the suite screen: the real `AnomanApp` headless in this process (120x40, each
     frame also rendered to terminal sequences and written to /dev/null, as
     `app_harness.BenchApp` does), the run prepared before the app starts (`prepare`;
     `eval --tui` does the same work on the loop the app then runs on). Once the first
     cell has finished and the start-up warm-up is over, in turn:
     a. the matrix shown, nothing pressed, `--quiet` s: the process's CPU share
        (`time.process_time()`, every thread; the run is on the app's loop);
     b. `--keys` down/up presses, one every 100 ms, posted as the terminal driver posts
        them: key -> the matrix's cursor action run (handled) and -> the next frame
        drawn;
     c. `--opens` times: Enter on a case whose three cells have streamed for 0.3-0.6 s
        -> every live pane of the case screen has text (`pane.answer.text`), and ->
        drawn: the end of the first frame of the case screen after which each pane has
        taken into the lines it draws at least the text its stream had read at Enter
        ("its panes' text so far"; checked as each frame ends), with a timeline of the
        steps between; then three CPU windows of 1 s
        each: the case open, from its text shown (its streams' ends fall in it); Esc, the
        matrix; a blank screen pushed over the matrix (nothing drawn; the run and the
        screen's polls go on). One live pane's CPU = (case open - blank) / its live
        panes.
     Throughout a and b every `SuiteScreen._poll` (taking in what the run reported and
     updating the matrix, per-model figures and progress line) is timed.
   Targets: keys handled p99 <= 100 ms; `_poll` p99 <= one frame
   (`FrameClock.INTERVAL`, 40 ms); the app's CPU share (a) <= headless + one live pane;
   the case's text shown within 100 ms of Enter (every try).
2. A finished run of `--finished` cases x 3 models (seeded through the history's
   `save_cell`, as `eval_reports.py` does), taken up as `eval --resume RUN_ID --tui`
   takes it up (`prepare(EvalRequest(run_id=...))`, timed apart): `SuiteScreen` pushed
   on a fresh app -> the end of the first frame that drew the summary pictures with the
   matrix holding every row. Median of `--tries`; target 500 ms.

`--profile` prints the UI thread's cProfile (top functions by own and by cumulative time)
for 1a, the first open of 1c and the last open of 2.

May import: the standard library, textual, anoman_tui, and _common, app_harness,
eval_load and eval_reports (beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import logging
import os
import pstats
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median, percentile, print_header, probe_line, verdict
from app_harness import GatewayProcess, gateway_process, isolate_environment
from eval_load import run_eval, suite_text
from eval_reports import build
from textual import events
from textual._compositor import Compositor, CompositorUpdate
from textual.screen import Screen

from anoman_tui.config import Settings
from anoman_tui.locations import stylesheet
from anoman_tui.streaming.events import TextDelta
from anoman_tui.suites.engine import RunOptions
from anoman_tui.suites.prepare import EvalRequest, Prepared, prepare
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.suite import SuitePictures, SuiteRunner, SuiteScreen
from anoman_tui.ui.screens.suite_case import CaseScreen, LiveStream
from anoman_tui.ui.widgets.case_matrix import CaseMatrix
from anoman_tui.ui.widgets.frame_clock import FrameClock

FRAME_S = FrameClock.INTERVAL
KEY_TARGET_S = 0.100
OPEN_CASE_TARGET_S = 0.100
FINISHED_TARGET_S = 0.500
SIZE = (120, 40)
WINDOW_S = 1.0
"""Each CPU window of 1c."""
TICKS = os.sysconf("SC_CLK_TCK")

# -- instrumentation (class-level wraps, in place before any app starts) ---------------

POLLS: list[tuple[float, float, int]] = []
"""Every `SuiteScreen._poll`: (start, seconds, reports waiting)."""
FRAMES: list[tuple[Screen[Any], float, float, float]] = []  # (screen, start, end, CPU)
# Each frame's parts, by the UI thread's CPU (ms): layout, widgets updated, the update
# rendered, written out; keyed by the frame's start.
FRAME_PARTS: dict[float, dict[str, float]] = {}
_parts: dict[str, float] = {}
"""Every screen update beat that did something (`Screen._on_timer_update`: layout if
needed, then compositing): (screen, start, end), perf_counter."""
PICTURES_RENDERED: list[float] = []
"""When `SuitePictures.render` ran with figures to draw."""
MOUNTS: list[tuple[float, float]] = []
"""`SuiteScreen.on_mount`: (start, seconds)."""
STAMPS: dict[str, list[float]] = {}
"""Moments (perf_counter) along opening a case or a finished run, by name."""
_frame_waiters: list[Any] = []
_frame_conditions: list[tuple[Callable[..., bool], Any]] = []


def stamp(name: str) -> None:
    STAMPS.setdefault(name, []).append(time.perf_counter())


def stamped(cls: type, name: str, label: str, *, end: bool = False) -> None:
    """Stamp `label` when `cls.name` is called (and `label:end` when it returns)."""
    original = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stamp(label)
        try:
            return original(*args, **kwargs)
        finally:
            if end:
                stamp(f"{label}:end")

    setattr(cls, name, wrapper)


GC_PAUSES: list[tuple[float, int, float, str]] = []
"""Every cyclic collection: (start, generation, seconds, thread name)."""


def watch_gc() -> None:
    started: dict[int, float] = {}

    def callback(phase: str, info: dict[str, int]) -> None:
        ident = threading.get_ident()
        if phase == "start":
            started[ident] = time.perf_counter()
        elif ident in started:
            begun = started.pop(ident)
            GC_PAUSES.append((begun, info["generation"], time.perf_counter() - begun,
                              threading.current_thread().name))

    gc.callbacks.append(callback)


def gc_line(start: float, end: float) -> str:
    pauses = [p for p in GC_PAUSES if start <= p[0] <= end]
    full = [p for p in pauses if p[1] == 2]
    return (f"GC {len(pauses)} collections, {1000 * sum(p[2] for p in pauses):.0f} ms; "
            f"{len(full)} full, longest {1000 * max((p[2] for p in full), default=0):.0f} ms"
            + (f" (on {', '.join(sorted({p[3] for p in full}))})" if full else ""))


class LoggedErrors(logging.Handler):
    """Errors the app logs (else printed with their tracebacks): counted, the first kept."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if not self.first:
            error = record.exc_info[1] if record.exc_info else None
            self.first = record.getMessage() + (f": {type(error).__name__}: {error}"
                                                if error is not None else "")


def instrument() -> None:
    poll, refresh = SuiteScreen._poll, Screen._compositor_refresh
    beat = Screen._on_timer_update
    render, on_mount = SuitePictures.render, SuiteScreen.on_mount
    stamped(SuiteScreen, "action_open_case", "open_case")
    stamped(CaseScreen, "show_turn", "show_turn", end=True)
    stamped(LiveStream, "_pump", "attach")
    stamped(SuiteRunner, "_main", "runner")
    stamped(SuiteScreen, "_ended", "ended", end=True)

    def timed_poll(self: SuiteScreen) -> None:
        waiting = len(self.runner._reports)
        start = time.perf_counter()
        poll(self)
        POLLS.append((start, time.perf_counter() - start, waiting))

    def timed_beat(self: Screen[Any]) -> None:
        _parts.clear()
        start, cpu = time.perf_counter(), time.thread_time()
        beat(self)
        end = time.perf_counter()
        if end - start >= 0.0005:  # (a beat with nothing to do is not a frame)
            FRAMES.append((self, start, end, time.thread_time() - cpu))
            FRAME_PARTS[start] = dict(_parts)
            if len(FRAME_PARTS) > 20_000:
                FRAME_PARTS.clear()
            if len(FRAMES) > 20_000:
                del FRAMES[:10_000]

    def timed_refresh(self: Screen[Any]) -> None:
        refresh(self)
        end = time.perf_counter()
        for condition, waiter in list(_frame_conditions):
            if waiter.done():
                _frame_conditions.remove((condition, waiter))
            elif condition(self):
                waiter.set_result(end)
                _frame_conditions.remove((condition, waiter))
        while _frame_waiters:
            waiter = _frame_waiters.pop()
            if not waiter.done():
                waiter.set_result(end)

    def timed_render(self: SuitePictures) -> Any:
        if self.figures:
            PICTURES_RENDERED.append(time.perf_counter())
        return render(self)

    def timed_mount(self: SuiteScreen) -> None:
        start = time.perf_counter()
        on_mount(self)
        MOUNTS.append((start, time.perf_counter() - start))

    def part(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            cpu = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                _parts[label] = _parts.get(label, 0.0) + 1000 * (time.thread_time() - cpu)

        setattr(owner, name, wrapper)

    part(Screen, "_refresh_layout", "layout")
    part(Compositor, "update_widgets", "widgets")
    part(Compositor, "render_update", "render")
    part(Compositor, "render_full_update", "of it whole screen")
    part(SuiteBenchApp, "_display", "write")  # (with its terminal output)
    SuiteScreen._poll = timed_poll  # type: ignore[method-assign]
    Screen._compositor_refresh = timed_refresh  # type: ignore[method-assign]
    Screen._on_timer_update = timed_beat  # type: ignore[method-assign]
    SuitePictures.render = timed_render  # type: ignore[method-assign]
    SuiteScreen.on_mount = timed_mount  # type: ignore[method-assign]


async def next_frame(timeout: float = 2.0) -> float:
    """perf_counter at the end of the next screen refresh."""
    waiter = asyncio.get_running_loop().create_future()
    _frame_waiters.append(waiter)
    return await asyncio.wait_for(waiter, timeout)


def frame_when(condition: Callable[..., bool]) -> Any:
    """A future: perf_counter at the end of the first screen refresh after which
    `condition(the screen refreshed)` holds (checked as each refresh ends, so the frame
    that drew it)."""
    waiter = asyncio.get_running_loop().create_future()
    _frame_conditions.append((condition, waiter))
    return waiter


def text_so_far(stream: Any) -> int:
    """Characters of answer text a running cell's stream had read (0: none yet)."""
    if stream is None:
        return 0
    return sum(len(e.text) for e in list(stream.events or ()) if type(e) is TextDelta)


def shows_so_far(case: Screen[Any], so_far: list[int]) -> bool:
    """The screen just drawn is the case screen, and each of its panes has taken in
    (into the lines it draws) at least the text its stream had at Enter."""
    if not isinstance(case, CaseScreen) or case is not case.app.screen:
        return False
    return all(len(case.pane(index).answer.text) >= chars
               for index, chars in enumerate(so_far, start=1) if chars)


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process, by Python thread name."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    found: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(task.name), "other")
        if name.startswith(("asyncio_", "ThreadPoolExecutor")):
            name = "workers"
        found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return found


def split_line(before: dict[str, float], after: dict[str, float], wall: float) -> str:
    shares = {n: (after.get(n, 0) - before.get(n, 0)) / wall for n in after}
    return ", ".join(f"{n} {100 * s:.1f}%" for n, s in
                     sorted(shares.items(), key=lambda kv: -kv[1]) if s >= 0.005)


class Window:
    """CPU over repeated windows of `WINDOW_S`: the process's and each thread's."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0
        self.threads: dict[str, float] = {}

    async def measure(self) -> None:
        threads0, cpu0, wall0 = thread_cpu(), time.process_time(), time.perf_counter()
        await asyncio.sleep(WINDOW_S)
        threads1 = thread_cpu()
        self.cpu += time.process_time() - cpu0
        self.wall += time.perf_counter() - wall0
        for name, seconds in threads1.items():
            self.threads[name] = self.threads.get(name, 0.0) + seconds - threads0.get(name, 0.0)

    @property
    def share(self) -> float:
        return self.cpu / self.wall

    def line(self) -> str:
        return f"{100 * self.share:.1f}% ({split_line({}, self.threads, self.wall)})"


def profiled(enabled: bool) -> cProfile.Profile | None:
    if not enabled:
        return None
    profile = cProfile.Profile()
    profile.enable()
    return profile


def print_profile(profile: cProfile.Profile | None, title: str) -> None:
    if profile is None:
        return
    profile.disable()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        shown = int(os.environ.get("PROFILE_LINES", "16"))  # (more lines: set it)
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(shown)
        lines = [ln for ln in out.getvalue().splitlines() if ln.strip()][3:]
        print(f"   cProfile, UI thread, {title} (by {order}):")
        for line in lines:
            print(f"     {line[:160]}")


class SuiteBenchApp(AnomanApp):
    """The real app, each frame also rendered to terminal sequences (`BenchApp` does so)."""

    CSS_PATH = stylesheet()

    def __init__(self, gateway: GatewayProcess, suite: Prepared | None) -> None:
        super().__init__(Settings(theme="anoman-dark"),
                         suite=suite, gateway_factory=lambda: gateway)
        self._terminal = open(os.devnull, "wb", buffering=0)  # noqa: SIM115 (app-long)

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        super()._display(screen, renderable)
        if isinstance(renderable, CompositorUpdate) and not self._batch_count:
            self._terminal.write(renderable.render_segments(self.console).encode())


def request_for(settings: Settings, suite: Any, concurrency: int, header: str,
                run_id: str | None = None) -> EvalRequest:
    """As `anoman_tui.cli.eval_` builds it (defaults for what a flag would set)."""
    targets = settings.all_targets()
    limit = int(settings.record_limit_mb * 1_000_000) if settings.record else None
    options = RunOptions(concurrency=concurrency, idle_timeout=settings.idle_timeout,
                         record_limit=limit, headers=(("X-Anoman-Simulate", header),),
                         target_limits={n: t.max_concurrency for n, t in targets.items()
                                        if t.max_concurrency is not None})
    return EvalRequest(suite=suite, targets=targets, default_target=settings.default_target,
                       endpoint=settings.endpoint, options=options, run_id=run_id)


def timeline(start: float, stamps: dict[str, list[float]]) -> str:
    """`name +ms` for each stamp after `start`, in order (first and last of repeats)."""
    moments: list[tuple[float, str]] = []
    for name, times in stamps.items():
        after = [t for t in times if t >= start]
        if not after:
            continue
        moments.append((after[0], name))
        if len(after) > 1:
            moments.append((after[-1], f"{name}#{len(after)}"))
    return ", ".join(f"{name} {1000 * (t - start):.0f}" for t, name in sorted(moments))


async def until(condition: Callable[[], bool], timeout: float, step: float = 0.001) -> float:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(step)
    return time.perf_counter()


async def streaming_case(rows: list[str], live: dict[Any, Any], models: list[str]) -> str:
    """A case whose cells all stream, each for 0.3-0.6 s (text so far, more to come)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        now = time.monotonic()
        for case_id in rows:
            streams = [live.get((case_id, model, 1)) for model in models]
            if all(s is not None and s.sent_at is not None and 0.3 <= now - s.sent_at <= 0.6
                   for s in streams):
                return case_id
        await asyncio.sleep(0.01)
    ages = {k: None if s.sent_at is None else round(time.monotonic() - s.sent_at, 2)
            for k, s in list(live.items())}
    raise TimeoutError(f"no case streams on all its models: {ages}")


# -- 1: the suite streaming on the screen ----------------------------------------------

async def live_run(gateway: GatewayProcess, prepared: Prepared, args: argparse.Namespace
                   ) -> dict[str, Any]:
    app = SuiteBenchApp(gateway, prepared)
    out: dict[str, Any] = {}
    async with app.run_test(size=SIZE):
        await until(lambda: isinstance(app.screen, SuiteScreen) and app.warmed_up, 30, 0.01)
        screen = app.screen
        assert isinstance(screen, SuiteScreen)
        table = screen.query_one("#suite-matrix", CaseMatrix)
        run = screen.runner.run
        assert run is not None
        await until(lambda: run.progress.done >= 1, 30, 0.01)
        await asyncio.sleep(1.0)

        # a. the matrix shown, nothing pressed
        in_flight: list[int] = []
        profile = profiled(args.profile)
        polls_from = len(POLLS)
        threads0, cpu0, wall0 = thread_cpu(), time.process_time(), time.perf_counter()
        end = wall0 + args.quiet
        while time.perf_counter() < end:
            in_flight.append(run.progress.running)
            await asyncio.sleep(0.5)
        wall = time.perf_counter() - wall0
        out["quiet_share"] = (time.process_time() - cpu0) / wall
        out["quiet_threads"] = split_line(threads0, thread_cpu(), wall)
        out["quiet_in_flight"] = median(in_flight)
        out["quiet_gc"] = gc_line(wall0, wall0 + wall)
        print_profile(profile, f"the matrix shown, {args.quiet:.0f} s")
        quiet_frames = [(e - s) for sc, s, e, _ in FRAMES if sc is screen and s >= wall0]
        out["quiet_frames"] = quiet_frames

        # b. keys
        handled: list[float] = []
        drawn: list[float] = []
        pending: dict[str, Any] = {}
        for name in ("action_cursor",):
            original = getattr(table, name)

            def wrapped(*args: Any, original: Any = original) -> None:
                original(*args)
                waiter = pending.pop("key", None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(time.perf_counter())
                    # The first frame after the key was handled.
                    frame = pending["drawn"] = asyncio.get_running_loop().create_future()
                    _frame_waiters.append(frame)

            setattr(table, name, wrapped)
        threads0, cpu0, wall0 = thread_cpu(), time.process_time(), time.perf_counter()
        for i in range(args.keys):
            key = "down" if (i // 20) % 2 == 0 else "up"
            waiter = pending["key"] = asyncio.get_running_loop().create_future()
            sent = time.perf_counter()
            app.post_message(events.Key(key, None))
            got = await asyncio.wait_for(waiter, 5)
            handled.append(got - sent)
            drawn.append(await asyncio.wait_for(pending.pop("drawn"), 5) - sent)
            await asyncio.sleep(max(0.0, sent + 0.1 - time.perf_counter()))
        wall = time.perf_counter() - wall0
        out["keys_share"] = (time.process_time() - cpu0) / wall
        out["keys_gc"] = gc_line(wall0, wall0 + wall)
        out["handled"], out["drawn"] = handled, drawn
        out["polls"] = POLLS[polls_from:]

        # c. open a running case, its panes streaming; then the matrix alone
        opens: list[tuple[float, float, int]] = []  # (Enter -> text, -> drawn, live panes)
        timelines: list[str] = []
        opened: list[str] = []
        store = prepared.store
        assert store is not None
        stamped(store, "run_comparison", "run_comparison", end=True)  # type: ignore[arg-type]
        stamped(store, "get", "get", end=True)  # type: ignore[arg-type]
        windows = {name: Window() for name in ("case", "matrix", "blank")}
        panes_shown: list[int] = []
        models = screen.models
        for _ in range(args.opens):
            case_id = await streaming_case(screen._shown_rows, run.live, models)
            opened.append(case_id)
            table.move_cursor(screen._shown_rows.index(case_id))
            await next_frame()
            STAMPS.clear()
            profile = profiled(args.profile and not opens)
            # The text each of the case's streams had read when Enter was pressed: what
            # the case must show ("its panes' text so far").
            so_far = [text_so_far(run.live.get((case_id, prepared.slots[i].spec, 1)))
                      for i in screen.case_slots]
            assert any(so_far), "the case's streams have no text yet"
            drawn_waiter = frame_when(lambda drawn, so_far=so_far: shows_so_far(drawn, so_far))
            sent = time.perf_counter()
            app.post_message(events.Key("enter", None))

            def shown() -> bool:
                case = app.screen
                if not isinstance(case, CaseScreen) or not case.is_mounted:
                    return False
                return all(case.pane(i).answer.text for i in case.streams)

            text_at = await until(shown, 5)
            print_profile(profile, "Enter on a running case -> its text")
            drawn_at = await asyncio.wait_for(drawn_waiter, 5)
            case = app.screen
            assert isinstance(case, CaseScreen)
            live = [case.pane(i) for i in case.streams]
            opens.append((text_at - sent, drawn_at - sent, len(live)))
            last = max(text_at, drawn_at)
            frames = " ".join(f"{1000 * (b - sent):.0f}+{1000 * (e - b):.0f}"
                              f"({1000 * c:.0f}: " + " ".join(
                                  f"{k} {v:.0f}" for k, v in FRAME_PARTS.get(b, {}).items())
                              + ")"
                              for _, b, e, c in FRAMES if sent <= b <= last and e - b >= 0.005)
            timelines.append(timeline(sent, {**STAMPS, "text": [text_at]})
                             + f"; frames (start+took(its CPU: parts)) {frames}; "
                             + gc_line(sent, last))
            # The case open, its panes streaming (its opening left out; their ends in).
            await windows["case"].measure()
            panes_shown.append(len(live))
            app.post_message(events.Key("escape", None))
            await until(lambda: app.screen is screen, 5)
            await asyncio.sleep(0.3)
            await windows["matrix"].measure()
            # Nothing shown: a blank screen over the matrix (the run and its polls go on).
            blank: Screen[None] = Screen()
            await app.push_screen(blank)
            await asyncio.sleep(0.2)
            await windows["blank"].measure()
            app.pop_screen()
            await until(lambda: app.screen is screen, 5)
            await asyncio.sleep(0.2)
        out["opens"], out["timelines"] = opens, timelines
        # Did leaving a case while it streamed cost its cells? (their results' status)
        await asyncio.sleep(3)
        out["opened_status"] = sorted(
            {r.status for case_id in opened for m in models
             for r in screen.cells[(case_id, m)].results.values()})
        out["windows"] = windows
        out["pane_share"] = ((windows["case"].share - windows["blank"].share)
                             / (sum(panes_shown) / len(panes_shown)))
        out["panes_shown"] = panes_shown
        out["done_at_end"] = run.progress.done
    await screen.runner.ended()  # (stopped as the screen went: its streams aborted)
    return out


# -- 2: a finished run opened ----------------------------------------------------------

async def open_finished(gateway: GatewayProcess, prepared: Prepared, rows: int,
                        profile_it: bool) -> dict[str, float]:
    app = SuiteBenchApp(gateway, None)
    finish = prepared.finish
    finished: list[tuple[float, float]] = []

    def timed_finish(*a: Any) -> Any:
        start = time.perf_counter()
        try:
            return finish(*a)
        finally:
            finished.append((start, time.perf_counter() - start))

    prepared.finish = timed_finish  # type: ignore[method-assign,assignment]
    async with app.run_test(size=SIZE):
        await until(lambda: app.warmed_up and app.compare.base_url is not None, 30, 0.01)
        await asyncio.sleep(0.3)
        PICTURES_RENDERED.clear()
        STAMPS.clear()
        mounts_from, polls_from = len(MOUNTS), len(POLLS)
        screen = SuiteScreen(prepared)
        profile = profiled(profile_it)
        pushed = time.perf_counter()
        app.push_screen(screen)
        table: list[CaseMatrix] = []

        def complete() -> bool:
            if not screen.is_mounted or screen.summary is None or not PICTURES_RENDERED:
                return False
            if not table:
                table.append(screen.query_one("#suite-matrix", CaseMatrix))
            return table[0].row_count == rows

        await until(complete, 30)
        rendered = PICTURES_RENDERED[0]
        # The end of the frame that drew the pictures (they render inside a refresh).
        done = next((e for sc, s, e, _ in FRAMES if sc is screen and e >= rendered), None)
        if done is None:
            done = await next_frame()
        print_profile(profile, "the finished run opened")
        mount_start, mount_s = MOUNTS[mounts_from]
        end_poll = max(POLLS[polls_from:], key=lambda p: p[1])
        frame = next((e - s for sc, s, e, _ in FRAMES if sc is screen and e >= rendered), 0.0)
        stamps = {**STAMPS, "on_mount": [mount_start], "on_mount:end": [mount_start + mount_s],
                  "finish": [finished[0][0]], "finish:end": [sum(finished[0])],
                  "end_poll": [end_poll[0]], "end_poll:end": [sum(end_poll[:2])],
                  "pictures": [rendered], "drawn": [done]}
        frames = " ".join(f"{1000 * (b - pushed):.0f}+{1000 * (e - b):.0f}"
                          for _, b, e, _ in FRAMES if pushed <= b <= done and e - b >= 0.005)
        figures: dict[str, Any] = {"total": done - pushed, "frame": frame,
                                   "timeline": timeline(pushed, stamps)
                                   + f"; frames (start+took) {frames}; "
                                   + gc_line(pushed, done)}
    prepared.finish = finish  # type: ignore[method-assign]
    await screen.runner.ended()
    return figures


# -- the report ------------------------------------------------------------------------

def ms(values: list[float], q: float) -> str:
    return f"{1000 * percentile(values, q):.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--quiet", type=float, default=12.0,
                        help="seconds of the matrix shown with nothing pressed")
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--finished", type=int, default=1000,
                        help="cases of the finished run opened (x 3 models)")
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--skip-headless", action="store_true")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    header = f"rate=100,tokens={args.tokens}"
    print_header(f"suite screen: {args.cases} cases x 3 models at {args.concurrency} in "
                 f"flight ({header}); a finished run of {args.finished} x 3 opened; "
                 f"{SIZE[0]}x{SIZE[1]}, frame {FRAME_S * 1000:.0f} ms")
    isolate_environment()
    instrument()
    watch_gc()
    errors = LoggedErrors()
    logging.getLogger().addHandler(errors)
    from anoman_tui.history import HistoryStore
    from anoman_tui.suites.loader import load_suite
    from anoman_tui.suites.model import Suite

    settings = Settings()
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="anoman-suite-screen-") as tmp, \
            gateway_process() as gateway:
        if not args.skip_headless:
            print(f"   machine probe {probe_line()[1]} before the headless run")
            headless = run_eval(gateway.base_url, gateway.api_key, args.cases,
                                args.concurrency, args.tokens)
            print(f"   headless eval: {headless['cells']:.0f} cells, streaming "
                  f"{headless['streaming_s']:.1f} s, CPU {100 * headless['cpu_share']:.1f}% "
                  f"of a core (first cell to last), exit {headless['status']:.0f}")
        if not args.skip_live:
            suite_file = Path(tmp) / "suite.toml"
            suite_file.write_text(suite_text(args.cases))
            request = request_for(settings, load_suite(suite_file), args.concurrency, header)
            with HistoryStore.open(Path(tmp) / "live.sqlite3") as store:
                prepared = prepare(request, store, lambda: gateway)
                print(f"   machine probe {probe_line()[1]} before the suite screen's run")
                live = asyncio.run(live_run(gateway, prepared, args))
            polls = [d for _, d, _ in live["polls"]]
            reports = [n for _, _, n in live["polls"]]
            print(f"   on the suite screen, the matrix shown ({args.quiet:.0f} s, "
                  f"{live['quiet_in_flight']:.0f} streams in flight): CPU "
                  f"{100 * live['quiet_share']:.1f}% of a core ({live['quiet_threads']}); "
                  f"frames p50 {ms(live['quiet_frames'], 50)} ms, p99 "
                  f"{ms(live['quiet_frames'], 99)} ms, max {ms(live['quiet_frames'], 100)} ms "
                  f"({len(live['quiet_frames'])}); {live['quiet_gc']}")
            print(f"   keys (down/up x {len(live['handled'])}): handled p50 "
                  f"{ms(live['handled'], 50)} ms, p99 {ms(live['handled'], 99)} ms, max "
                  f"{ms(live['handled'], 100)} ms; drawn p50 {ms(live['drawn'], 50)} ms, p99 "
                  f"{ms(live['drawn'], 99)} ms; CPU meanwhile {100 * live['keys_share']:.1f}%; "
                  f"{live['keys_gc']}")
            print(f"   _poll ({len(polls)} polls, {median(reports):.0f} reports each by median, "
                  f"max {max(reports)}): p50 {ms(polls, 50)} ms, p99 {ms(polls, 99)} ms, "
                  f"max {ms(polls, 100)} ms")
            texts = [t for t, _, _ in live["opens"]]
            print(f"   a running case opened ({len(texts)} tries, live panes "
                  f"{'/'.join(str(n) for n in live['panes_shown'])}): Enter -> text "
                  + ", ".join(f"{1000 * t:.0f}" for t in texts) + " ms; -> drawn "
                  + ", ".join(f"{1000 * d:.0f}" for _, d, _ in live["opens"]) + " ms")
            for line in live["timelines"]:
                print(f"     ms after Enter: {line}")
            print(f"   the opened cases' cells ended: {', '.join(live['opened_status'])}")
            win = live["windows"]
            print(f"   CPU in 1 s windows taken in turn: the case open {win['case'].line()}; the "
                  f"matrix {win['matrix'].line()}; nothing shown (a blank screen over the "
                  f"matrix) {win['blank'].line()}")
            print(f"   one live pane = (case open - nothing shown) / live panes = "
                  f"{100 * live['pane_share']:.1f}% of a core")
            checks.append((f"keys handled p99 ≤ {KEY_TARGET_S * 1000:.0f} ms: "
                           f"{ms(live['handled'], 99)} ms",
                           percentile(live["handled"], 99) <= KEY_TARGET_S))
            checks.append((f"_poll p99 ≤ a frame ({FRAME_S * 1000:.0f} ms): {ms(polls, 99)} ms",
                           percentile(polls, 99) <= FRAME_S))
            if not args.skip_headless:
                limit = headless["cpu_share"] + live["pane_share"]
                checks.append((f"app CPU ≤ headless + one live pane: "
                               f"{100 * live['quiet_share']:.1f}% against "
                               f"{100 * headless['cpu_share']:.1f}% + "
                               f"{100 * live['pane_share']:.1f}% = {100 * limit:.1f}%",
                               live["quiet_share"] <= limit))
            drawns = [d for _, d, _ in live["opens"]]
            checks.append((f"a running case's text drawn within "
                           f"{OPEN_CASE_TARGET_S * 1000:.0f} ms of Enter: worst "
                           f"{1000 * max(drawns):.0f} ms",
                           max(drawns) <= OPEN_CASE_TARGET_S))

        db = Path(tmp) / "finished.sqlite3"
        started = time.perf_counter()
        run_id = build(db, args.finished * 3)
        print(f"   a finished run of {args.finished * 3} cells seeded in "
              f"{time.perf_counter() - started:.1f} s")
        totals = []
        with HistoryStore.open(db) as store:
            stored = store.run(run_id)
            assert stored is not None
            suite = Suite.from_json(stored.suite)
            for attempt in range(args.tries):
                request = request_for(settings, suite, args.concurrency, header, run_id)
                started = time.perf_counter()
                prepared = prepare(request, store, lambda: gateway)
                prepare_s = time.perf_counter() - started
                figures = asyncio.run(open_finished(
                    gateway, prepared, args.finished,
                    args.profile and attempt == args.tries - 1))
                totals.append(figures["total"])
                print(f"   opened {attempt + 1}: {1000 * figures['total']:.0f} ms (prepare() "
                      f"before it {1000 * prepare_s:.0f} ms; the frame that drew the pictures "
                      f"{1000 * figures['frame']:.0f} ms); ms after the push: "
                      f"{figures['timeline']}")
        checks.append((f"a finished run of {args.finished} x 3 opened ≤ "
                       f"{FINISHED_TARGET_S * 1000:.0f} ms: median {1000 * median(totals):.0f} ms",
                       median(totals) <= FINISHED_TARGET_S))
    print(f"   machine probe {probe_line()[1]} at the end")
    if errors.count:
        print(f"   errors the app logged: {errors.count} (the first: {errors.first})")
    for text, ok in checks:
        print(f"   {text}   {verdict(ok)}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
