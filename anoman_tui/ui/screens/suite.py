"""The suite screen: a suite run watched as it goes, a matrix of its cells, and its
summary when it ends (`anoman-tui eval SUITE --tui`, docs/suites.md "On the screen").

The run is the headless engine's (`anoman_tui.suites.prepare`, `SuiteRun`), run as the
headless `eval` runs it: on one event loop (here the app's, as a worker: `SuiteRunner`)
through one HTTP pool (`suite_client`) for the models' lists, the cells' streams and the
judge's calls. What the run reports (a cell started, a cell finished, the end) is queued
and taken in by the screen a few times a second, so a cell's end costs no frame of its
own.

The matrix has a row per case and a column per model; a cell shows its state as a glyph
*and* a word (colour only repeats them), repeats folded (`2/3`), and its TTFT when done.
Beside it (under it in a narrow terminal), per model: the pass rate with its Wilson
interval, TTFT p50/p95 and the cost so far.

Keys: Enter opens the case's comparison (the compare screen's panes, read-only, with
zoom, diff, copy and export); `p` pauses and resumes (no new stream starts); Esc asks,
then stops the run (resumable: `anoman-tui eval --resume RUN_ID`), and on a run that
has ended goes back; `f` shows only failures; `/` filters by case id or prompt words;
`r` runs the failed cells again once the run has ended.

May import: Textual, Rich, the history, the suites and the headless run. Never the
stream core's internals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from anoman_tui.suites.model import NOT_RUN, CellResult
from anoman_tui.suites.stats import wilson
from anoman_tui.suites.summary import timed_ttfts, ttft_p50_p95
from anoman_tui.ui.render.charts import (
    ChartStyle,
    IntervalRow,
    SampleRow,
    ScatterPoint,
    distribution_chart,
    interval_chart,
    percent,
    scatter_chart,
)
from anoman_tui.ui.services import app_services
from anoman_tui.ui.widgets.case_matrix import CaseMatrix
from anoman_tui.ui.widgets.frame_clock import FrameClock
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import SIMULATED_STYLE

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from anoman_tui.history import ComparisonRecord
    from anoman_tui.report.suite_files import ReportFiles
    from anoman_tui.streaming import StreamClient
    from anoman_tui.suites.engine import Cell, RunOutcome, SuiteRun
    from anoman_tui.suites.model import Case, RunSummary
    from anoman_tui.suites.prepare import EvalRequest, Prepared
    from anoman_tui.ui.screens.suite_case import CaseScreen

log = logging.getLogger(__name__)

POLL_S = 0.2
"""How often the screen takes in what the run reported: each take redraws the rows,
figures and progress that changed, a frame's work; five a second keep the matrix current
at half the UI's CPU of ten (benchmarks/suite_screen.py), and the end is taken in at
once (`SuiteRunner.wake`)."""
SIDE_MIN_WIDTH = 110
PICTURES_ALL_WIDTH = 90
PICTURES_ALL_HEIGHT = 30
CASE_WIDTH = 30
CELL_WIDTH = 17
"""Below this many columns the per-model figures go under the matrix."""

# A cell's state: (glyph, word, style). The word says it; glyph and colour repeat it.
STATES: dict[str, tuple[str, str, str]] = {
    "waiting": ("·", "wait", "dim"),
    "streaming": ("▶", "live", "bold cyan"),
    "passed": ("✓", "pass", "green"),
    "done": ("○", "done", ""),
    "failed": ("✗", "FAIL", "bold red"),
    "stream": ("!", "", "bold yellow"),  # the word is the failure kind
    "judge": ("?", "judge err", "yellow"),
    "not_run": ("–", "not run", "dim"),
}


@dataclass
class CellView:
    """What the matrix shows of one (case, model): its repeats' results so far."""

    repeats: int
    results: dict[int, CellResult] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)

    def state(self) -> tuple[str, str]:
        """(state key, word) of the cell as a whole: the worst of its repeats."""
        if self.live:
            return "streaming", STATES["streaming"][1]
        if not self.results:
            return "waiting", STATES["waiting"][1]
        kinds = [r.status for r in self.results.values()
                 if r.status not in ("completed", NOT_RUN)]
        if kinds:
            return "stream", kinds[0]
        if any(r.judge_errors for r in self.results.values()):
            return "judge", STATES["judge"][1]
        if any(r.failed for r in self.results.values()):  # (judged and failed, here)
            return "failed", STATES["failed"][1]
        if all(r.status == NOT_RUN for r in self.results.values()):
            return "not_run", STATES["not_run"][1]
        if any(r.passed for r in self.results.values()):
            return "passed", STATES["passed"][1]
        return "done", STATES["done"][1]

    @property
    def failed(self) -> bool:
        return self.state()[0] in ("failed", "stream", "judge")

    def text(self) -> Text:
        key, word = self.state()
        glyph, _, style = STATES[key]
        text = Text(f"{glyph} {word}", style=style)
        if self.repeats > 1:
            passed = sum(1 for r in self.results.values() if r.passed)
            done = sum(1 for r in self.results.values() if r.status != NOT_RUN)
            text.append(f" {passed}/{self.repeats}" if done else f" 0/{self.repeats}")
        if not self.live:
            # Its TTFT as the run's figures count one (`ttft_p50_p95`: timed repeats
            # only), so the matrix, the figures beside it and the summary agree.
            ttft, _ = ttft_p50_p95(self.results.values())
            if ttft is not None:
                text.append(f" {ttft:.2f}s", style="dim")
            elif any(r.cache_hit for r in self.results.values()):
                text.append(" cached", style="dim")  # answered, but not timed
        return text


class SuitePictures(Widget):
    """The run's results as pictures (`ui/render/charts.py`), each with its figures in
    words: per model the TTFT distribution, the pass rate with its Wilson interval, the
    judge's rating with its interval (when there is one), and cost against pass rate.
    Narrower than `PICTURES_ALL_WIDTH` or lower than `PICTURES_ALL_HEIGHT` (80×24), only
    the first two. Colours are the theme's (as the scoreboard's `RatingChart`)."""

    COMPONENT_CLASSES = {"suite-pictures--point", "suite-pictures--interval",
                         "suite-pictures--axis", "suite-pictures--title"}
    DEFAULT_CSS = """
    SuitePictures { height: auto; padding: 0 1; }
    SuitePictures > .suite-pictures--point { color: $accent; text-style: bold; }
    SuitePictures > .suite-pictures--interval { color: $primary; }
    SuitePictures > .suite-pictures--axis { color: $text-muted; }
    SuitePictures > .suite-pictures--title { text-style: bold; }
    """

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.figures: list[tuple[str, list[CellResult], bool]] = []
        self.ratings: list[IntervalRow] = []

    def show(self, figures: list[tuple[str, list[CellResult], bool]],
             ratings: list[IntervalRow]) -> None:
        """Per model: (name, its results, simulated); the judge's ratings, if any."""
        self.figures, self.ratings = figures, ratings
        self.refresh(layout=True)

    def pictures(self, width: int) -> Text:
        width = max(30, width)
        style = ChartStyle(
            point=self.get_component_rich_style("suite-pictures--point"),
            interval=self.get_component_rich_style("suite-pictures--interval"),
            axis=self.get_component_rich_style("suite-pictures--axis"),
            muted=self.get_component_rich_style("suite-pictures--axis"),
            simulated=SIMULATED_STYLE)
        title = self.get_component_rich_style("suite-pictures--title")
        samples, rates, points = [], [], []
        for model, results, simulated in self.figures:
            samples.append(SampleRow(model, timed_ttfts(results), simulated))
            judged = [r for r in results if r.passed is not None]
            passed = sum(1 for r in judged if r.passed)
            interval = wilson(passed, len(judged)) if judged else None
            rate = 100 * passed / len(judged) if judged else None
            rates.append(IntervalRow(model, rate, interval and 100 * interval[0],
                                     interval and 100 * interval[1], simulated))
            costs = [float(r.cost.usd) for r in results if r.cost.usd is not None]
            points.append(ScatterPoint(model, sum(costs) / len(costs) if costs else None,
                                       rate, simulated))
        parts: list[Text] = [
            Text("TTFT per model (box p25–p75, whiskers p5–p95, ● median)", style=title),
            distribution_chart(samples, width, style=style),
            Text("Pass rate with its 95% Wilson interval", style=title),
            interval_chart(rates, width, fmt=percent, lo=0, hi=100, style=style),
        ]
        screen = self.screen.size if self.is_mounted else None
        if width >= PICTURES_ALL_WIDTH and (screen is None
                                            or screen.height >= PICTURES_ALL_HEIGHT):
            if self.ratings:
                parts += [Text("Judge rating with its 95% bootstrap interval", style=title),
                          interval_chart(self.ratings, width, style=style)]
            parts += [Text("Cost per answer against pass rate", style=title),
                      scatter_chart(points, width, 8, style=style)]
        return Text("\n").join(parts)

    def render(self) -> Text:
        return self.pictures(self.content_size.width) if self.figures else Text()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.pictures(width).plain.split("\n")) if self.figures else 0


def suite_client(prepared: Prepared | EvalRequest) -> StreamClient:
    """The one HTTP pool of a suite run on the screen: its models' lists, its cells'
    streams and its judge's calls, on the app's loop. Its streams keep their events, so
    a case opened mid-stream shows its text so far (`suite_case.LiveStream`)."""
    from anoman_tui.suites.engine import SuiteRun
    from anoman_tui.suites.prepare import Prepared

    request = prepared.request if isinstance(prepared, Prepared) else prepared
    return SuiteRun.client_of(request.suite, replace(request.options, keep_events=True))


class SuiteRunner:
    """A prepared run on the app's event loop, as a worker of the app (not of the screen,
    so that closing the screen stops the run rather than cancelling it mid-save); what
    it reports is queued for the screen (`take()`), taken in at its next poll.

    One loop for the run and the screen: the engine awaits between its reads (paced on a
    shared 50 ms grid, `engine.READ_GRID`) and saves off the loop, and the summary's
    figures (bootstrap resamples) are computed off it, so the screen's keys answer while
    the run streams (benchmarks/suite_screen.py)."""

    def __init__(self, prepared: Prepared, client: StreamClient,
                 wake: Callable[[], None] | None = None) -> None:
        """`client`: where every request of the run goes (`suite_client`); `wake`:
        called once the run has ended, so the screen takes the end in at once rather
        than at its next poll."""
        self.prepared = prepared
        self.client = client
        self.wake = wake
        self.run: SuiteRun | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: Worker[None] | None = None
        self._reports: deque[tuple[str, Any]] = deque()
        self.running = False
        self.outcome: RunOutcome | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The run's event loop (the app's), once it runs."""
        return self._loop

    def start(self, app: App[Any], todo: list[Cell]) -> None:
        if self.running:
            return
        self.running = True
        self._loop = asyncio.get_running_loop()
        run = self.run = self.prepared.make_run(self._finished_cell, keep_events=True)
        run.on_start = lambda cell: self._reports.append(("start", cell.key))
        self._worker = app.run_worker(self._main(run, todo), name="suite-run",
                                      group="suite-run", exit_on_error=False)

    async def _main(self, run: SuiteRun, todo: list[Cell]) -> None:
        try:
            outcome = await run.run(todo, self.client)
            # Reading thousands of results back and their bootstrap intervals: off the loop.
            results, summary = await asyncio.to_thread(self.prepared.finish, run, outcome)
        except asyncio.CancelledError:
            # The app closes mid-run: the engine has aborted its streams (it stopped as
            # Esc stops it); what finished is saved, for --resume, and the history says
            # the run was interrupted (one short write, as `eval` does on Ctrl+C).
            self.running = False
            self.prepared.record_end("interrupted")
            raise
        except Exception as exc:  # a bug ends the run, not the app: the screen says so
            log.exception("suite run %s failed", self.prepared.run_id)
            self._reports.append(("error", f"{type(exc).__name__}: {exc}"))
            self.running = False
            if self.wake is not None:
                self.wake()
            return
        self.outcome = outcome
        self.running = False
        self._reports.append(("end", (outcome, results, summary)))
        if self.wake is not None:
            self.wake()

    def _finished_cell(self, result: CellResult) -> None:
        self._reports.append(("cell", result))

    def take(self) -> list[tuple[str, Any]]:
        reports = []
        while self._reports:
            reports.append(self._reports.popleft())
        return reports

    def pause(self) -> None:
        if self.run is not None and self.running:
            self.run.pause()

    def resume(self) -> None:
        if self.run is not None:
            self.run.resume()

    def stop(self) -> None:
        if self.run is not None and self.running:
            self.run.stop()

    @property
    def paused(self) -> bool:
        return self.run is not None and self.run.paused

    async def ended(self) -> None:
        """Once the run's worker is over (at once if it never started)."""
        worker = self._worker
        if worker is not None:
            with contextlib.suppress(Exception):
                await worker.wait()


def model_figures(results: Sequence[CellResult]) -> list[str]:
    """A model's live figures beside the matrix: pass rate, TTFT (as the run's summary
    computes it, `ttft_p50_p95`) and cost so far."""
    judged = [r for r in results if r.passed is not None]
    passed = sum(1 for r in judged if r.passed)
    parts = []
    if judged:
        low, high = wilson(passed, len(judged)) or (0.0, 0.0)
        parts.append(f"pass {passed / len(judged):.0%} [{low:.0%}–{high:.0%}] "
                     f"of {len(judged)}")
    else:
        parts.append("pass —")
    ttft_p50, ttft_p95 = ttft_p50_p95(results)
    if ttft_p50 is not None:
        parts.append(f"TTFT p50 {ttft_p50:.2f} s · p95 {ttft_p95 or 0:.2f} s")
    costs = [r.cost.usd for r in results if r.cost.usd is not None]
    parts.append(f"cost ${sum(costs, 0):.4f}" if costs else "cost —")
    return parts


class SuiteScreen(Screen[None]):
    """One suite run: progress, the matrix of its cells, per-model figures, then the
    summary."""

    BINDINGS = [
        Binding("escape", "stop_or_back", "Stop/Back", id="suite.back"),
        Binding("enter", "open_case", "Open", id="suite.open"),
        Binding("p", "pause", "Pause/Resume", id="suite.pause"),
        Binding("f", "failures", "Failures", id="suite.failures"),
        Binding("slash", "filter", "Filter", id="suite.filter", key_display="/"),
        Binding("r", "retry_failed", "Retry failed", id="suite.retry"),
        Binding("ctrl+s", "export", "Export", id="suite.export", priority=True),
        # Shown only with more than three models: which three a case opens with.
        Binding("m", "case_models", "Case models", id="suite.models"),
    ]

    def __init__(self, prepared: Prepared, *, back: bool = True,
                 stop_gateway: bool = False, files: ReportFiles | None = None,
                 client: StreamClient | None = None, close_client: bool = False) -> None:
        """`stop_gateway`: the local gateway `prepared` started is this screen's, stopped
        when it closes (opened from the app; `eval --tui` stops its own); `files`: the
        `--junit` and `--html` files to write when the run ends (`eval --tui`);
        `client`: the pool that prepared the run (`suite_client`, on this app's loop),
        where its cells and judge go too (None: one is made here), closed with the
        screen when `close_client` (or made here)."""
        super().__init__(id="suite")
        self.prepared = prepared
        self.files = files
        self._stop_gateway = stop_gateway
        self._close_client = close_client or client is None
        self.client = client if client is not None else suite_client(prepared)
        self.runner = SuiteRunner(prepared, self.client, self._wake)
        self._back = back
        suite = prepared.request.suite
        self.models = [slot.spec for slot in prepared.slots]
        self.cases = list(suite.cases)
        self._by_id = {case.id: case for case in self.cases}
        self.cells: dict[tuple[str, str], CellView] = {
            (case.id, model): CellView(suite.repeat)
            for case in self.cases for model in self.models}
        self._done = 0
        """Results in the matrix that ran (not not_run): kept as they come, since the
        progress line shows it every poll."""
        for result in prepared.before:
            view = self.cells.get((result.case, result.model))
            if view is not None:
                self._set_result(view, result)
        self.case_slots = list(range(min(3, len(prepared.slots))))
        """Which of the models (their indexes) a case opens with: the first three, or
        the three chosen with `m`."""
        self.only_failures = False
        self.filter_text = ""
        self.summary: RunSummary | None = None
        self.results: list[CellResult] = []
        self.problem = ""
        self._shown_rows: list[str] = []
        self._started_at = time.monotonic()
        self._stop_asked_at = 0.0
        self.progress_line = ""
        """The progress line's words, as last shown."""
        self._heights: dict[str, int] = {}
        self._unseen: set[str] = set()  # rows changed while another screen covered this
        self._shown: dict[str, Text] = {}
        self._case_screen: CaseScreen | None = None
        """The screen running cases open in, kept for the next (`_open_live`)."""

    # -- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        name = self.prepared.request.suite.name
        yield Label(Text.assemble(("Suite ", "bold"), (name, "bold"),
                                  f" · run {self.prepared.run_id}"), classes="screen-title")
        yield Static(id="suite-progress")
        yield Input(placeholder="filter: case id or prompt words (Enter keeps, Esc clears)",
                    id="suite-filter")
        with Horizontal(id="suite-body"):
            # Fixed widths: a cell's text grows as it finishes ("✗ FAIL 2/3 0.42s").
            yield CaseMatrix([("case", CASE_WIDTH), *(
                (model, max(CELL_WIDTH, min(len(model), 24))) for model in self.models)],
                self._row, id="suite-matrix")
            yield Static(id="suite-models")
        with VerticalScroll(id="suite-summary"):
            yield SuitePictures(id="suite-pictures")
            yield Static(id="suite-summary-text")
        yield KeyBar(shed=("case_models", "export", "retry_failed", "filter"))  # action names

    def on_mount(self) -> None:
        table = self.query_one("#suite-matrix", CaseMatrix)
        self.query_one("#suite-filter", Input).display = False
        self.query_one("#suite-summary").display = False
        self._rebuild_rows()
        self._layout(self.size.width)
        table.focus()
        pending = self.prepared.pending
        if pending is not None and pending.on_written is None:
            pending.on_written = self._waited_write
        self.runner.start(self.app, self.prepared.todo)
        self.set_interval(POLL_S, self._poll, name="suite-poll")
        self._update_progress()
        self._update_models()
        if self.prepared.todo:
            self.call_after_refresh(self.run_worker, self._ready_case_screen(),
                                    group="case-screen", exit_on_error=False)

    def on_resize(self) -> None:
        self._heights.clear()  # the next updates lay out at the new width
        self._layout(self.size.width)
        self._update_models()

    def _layout(self, width: int) -> None:
        side = width >= SIDE_MIN_WIDTH
        body = self.query_one("#suite-body")
        body.styles.layout = "horizontal" if side else "vertical"
        models = self.query_one("#suite-models")
        models.styles.width = 44 if side else "1fr"
        models.styles.height = "1fr" if side else "auto"
        # Under the matrix: one line a model, cut with an ellipsis, so the matrix keeps
        # its rows at 80x24.
        models.styles.text_wrap = "wrap" if side else "nowrap"
        models.styles.text_overflow = "fold" if side else "ellipsis"
        # Ended, in a narrow terminal: the summary's table has these figures, and the
        # matrix keeps the room.
        models.display = side or self.summary is None
        summary = self.query_one("#suite-summary")
        summary.styles.max_height = "70%" if self.size.height >= 40 else "50%"

    # -- taking in what the run reports ------------------------------------------

    def _wake(self) -> None:
        """The run has ended: take it in now."""
        self._poll_if_shown()

    def _poll_if_shown(self) -> None:
        if self.is_attached:
            self._poll()

    def _poll(self) -> None:
        changed: set[str] = set()
        for kind, data in self.runner.take():
            if kind == "start":
                case, model, repeat = data
                view = self.cells.get((case, model))
                if view is not None:
                    view.live.add(repeat)
                    changed.add(case)
            elif kind == "cell":
                view = self.cells.get((data.case, data.model))
                if view is not None:
                    view.live.discard(data.repeat)
                    self._set_result(view, data)
                    changed.add(data.case)
            elif kind == "end":
                outcome, results, summary = data
                self._ended(outcome, results, summary)
            elif kind == "error":
                self.problem = data
                self.notify(f"The run stopped on an internal error: {data}",
                            severity="error", timeout=10)
        if self._covered():
            # Textual draws the screen beneath the top one even when the top one hides
            # it, and repaints on the top screen what changed here: with a running case
            # open, a whole repaint of its panes at every poll. Drawn once shown again.
            self._unseen |= changed
            return
        if self._unseen:
            changed |= self._unseen
            self._unseen = set()
        if changed:
            self._refresh_rows(changed)
            self._update_models()
        self._update_progress()

    def _covered(self) -> bool:
        """Whether an opaque screen is above this one (a dialog lets it show through)."""
        for screen in reversed(self.app.screen_stack):
            if screen is self:
                return False
            if screen.styles.background.a >= 1:
                return True
        return True  # (not on the stack: not shown at all)

    def on_screen_resume(self) -> None:
        if self.is_attached:
            self._poll()  # what changed meanwhile, drawn with the screen's first frame

    def _ended(self, outcome: RunOutcome, results: list[CellResult],
               summary: RunSummary) -> None:
        self.summary, self.results = summary, results
        self.app.suite_results = results  # type: ignore[attr-defined]  # eval --tui's status
        prepared = self.prepared
        from anoman_tui.report.suite_files import write_files

        files = self.files
        written = results
        if files is not None and files.need_answers:
            from anoman_tui.report.answers import with_answers

            # Read back from the history, the results hold no answer: JUnit carries it.
            written = with_answers(results, prepared.store, prepared.request.suite.models,
                                   outcome.results)
        if files is not None:
            write_files(files, prepared.request, written, summary, prepared.run_id,
                        prepared.created_at, outcome.stopped is None, outcome.stopped,
                        lambda line: self.notify(line, severity="error", timeout=10))
        for view in self.cells.values():
            view.live.clear()
        for result in results:
            found = self.cells.get((result.case, result.model))
            if found is not None:
                self._set_result(found, result)
        self._rebuild_rows()
        self._update_models()
        self._show_summary()
        self.refresh_bindings()
        if outcome.stopped == "interrupted":
            self.notify(f"Stopped; continue with: anoman-tui eval --resume "
                        f"{self.prepared.run_id} --tui", timeout=8)
        elif outcome.stopped == "cost_limit":
            self.notify("Stopped at the cost limit.", severity="warning", timeout=8)

    # -- the matrix ---------------------------------------------------------------

    def _visible(self, case_id: str) -> bool:
        if self.only_failures and not any(self.cells[(case_id, m)].failed
                                          for m in self.models):
            return False
        if self.filter_text:
            case = self._case(case_id)
            haystack = f"{case_id} {case.prompt if case else ''}".lower()
            return all(word in haystack for word in self.filter_text.lower().split())
        return True

    def _case(self, case_id: str) -> Case | None:
        return self._by_id.get(case_id)

    def _row(self, case_id: str) -> list[Text]:
        case = self._case(case_id)
        prompt = " ".join((case.prompt if case else "").split())
        label = Text(case_id, style="bold", no_wrap=True, overflow="ellipsis")
        label.append(f"  {prompt[:CASE_WIDTH]}", style="dim")
        return [label, *(self.cells[(case_id, m)].text() for m in self.models)]

    def _rebuild_rows(self) -> None:
        self._shown_rows = [c.id for c in self.cases if self._visible(c.id)]
        self.query_one("#suite-matrix", CaseMatrix).set_rows(self._shown_rows)

    def _refresh_rows(self, cases: Iterable[str]) -> None:
        matrix = self.query_one("#suite-matrix", CaseMatrix)
        matrix.refresh_rows(cases)
        if self.only_failures or self.filter_text:
            self._rebuild_rows()  # a row may come or go

    # -- figures ------------------------------------------------------------------

    def _set_result(self, view: CellView, result: CellResult) -> None:
        before = view.results.get(result.repeat)
        self._done += (result.status != NOT_RUN) - (
            before is not None and before.status != NOT_RUN)
        view.results[result.repeat] = result

    def history_status(self) -> str:
        """The history's field of the progress line: the run's own writes (they go
        through the command's store, `Prepared.pending`), else what the app says."""
        prepared = self.prepared
        pending = prepared.pending
        if pending is not None and pending.waiting:
            n = pending.waiting
            return f"{n} save{'s' if n != 1 else ''} waiting"
        if prepared.store is not None:
            return prepared.store.address or ""
        return app_services(self.app).history_status()

    def update_status(self) -> None:
        """(`AnomanApp.refresh_history_status`) The progress line, drawn again."""
        self._update_progress()

    def _waited_write(self, token: object, result: object) -> None:
        # (from the retrying thread) A result that waited for the server is written.
        with contextlib.suppress(RuntimeError):  # the app is closing
            self.app.call_from_thread(
                self.notify, f"{token or 'A save'} that waited for the history's server "
                "is saved.", title="History", timeout=4)

    def _update_progress(self) -> None:
        run = self.runner.run
        total = self.prepared.total
        done = self._done
        line = Text()
        if self.summary is not None:
            line.append("ended ", style="bold")
        elif self.runner.paused:
            line.append("PAUSED ", style="bold yellow")
        line.append(f"done {done}/{total}")
        if run is not None:
            progress = run.progress
            line.append(f" · running {progress.running}")
            line.append(f" · failed {progress.failed}",
                        style="bold red" if progress.failed else "")
            if progress.waiting_s > 0:
                line.append(f" · rate limited: waiting {progress.waiting_s:.0f} s",
                            style="yellow")
            eta = progress.eta_s()
            if eta is not None and self.summary is None:
                line.append(f" · ETA {eta:.0f} s")
            limit = self.prepared.request.options.max_cost
            spent = f"${progress.spent:.4f}" + ("~" if progress.cost_estimated else "")
            line.append(f" · cost {spent}" + (f" of ${limit}" if limit is not None else ""))
            if self.prepared.judge_slot is not None:
                line.append(f" · judge calls {progress.judge_calls}")
        if self.only_failures:
            line.append(" · showing failures only", style="italic")
        if self.filter_text:
            line.append(f" · filter: {self.filter_text}", style="italic")
        history = self.history_status()
        if history:
            trouble = history.startswith("unavailable") or history.endswith("waiting")
            line.append(f" · history: {history}", style="yellow" if trouble else "")
        if self.problem:
            line.append(f" · {self.problem}", style="bold red")
        self.progress_line = line.plain
        self._show(self.query_one("#suite-progress", Static), line)

    def _update_models(self) -> None:
        compact = self.size.width < SIDE_MIN_WIDTH  # under the matrix: a line a model
        text = Text(no_wrap=compact, overflow="ellipsis")
        for model in self.models:
            results = [r for case in self.cases
                       for r in self.cells[(case.id, model)].results.values()]
            text.append(model, style="bold")
            if any(r.simulated for r in results):
                text.append(" (simulated)", style="italic")
            parts = model_figures(results)
            if compact:
                text.append(": " + " · ".join(parts) + "\n")
            else:
                text.append("".join(f"\n  {part}" for part in parts) + "\n")
        if self.summary is not None and self.summary.ratings:
            text.append("judge ratings\n", style="bold")
            for rating in self.summary.ratings:
                text.append(f"  {rating.model}: {rating.rating:.0f} "
                            f"[{rating.ci[0]:.0f}–{rating.ci[1]:.0f}]\n")
        text.rstrip()  # (no blank line under the last model)
        self._show(self.query_one("#suite-models", Static), text)

    def _show(self, static: Static, text: Text) -> None:
        """`static.update(text)`, laying the screen out again only when the text's height
        may have changed: every poll updates these, and a layout of the whole screen
        costs more than drawing them."""
        width = max(1, static.content_region.width or self.size.width)
        lines = text.plain.split("\n")
        height = (len(lines) if text.no_wrap
                  else sum(max(1, -(-cell_len(line) // width)) for line in lines))
        before = self._heights.get(static.id or "")
        self._heights[static.id or ""] = height
        if before == height and self._shown.get(static.id or "") == text:
            return  # as shown: nothing to draw
        self._shown[static.id or ""] = text
        static.update(text, layout=before != height)

    def _show_summary(self) -> None:
        from anoman_tui.report.suite_print import model_table, pair_table
        from anoman_tui.report.suite_terminal import rich_table

        summary = self.summary
        if summary is None:
            return
        parts: list[Any] = [rich_table(model_table(summary))]
        if summary.pairs:
            parts.append(rich_table(pair_table(summary)))
        self.query_one("#suite-summary-text", Static).update(Group(*parts))
        figures = []
        for model in self.models:
            results = [r for case in self.cases
                       for r in self.cells[(case.id, model)].results.values()]
            figures.append((model, results, any(r.simulated for r in results)))
        simulated = {m for m, _, sim in figures if sim}
        ratings = [IntervalRow(r.model, r.rating, r.ci[0], r.ci[1], r.model in simulated)
                   for r in summary.ratings]
        self.query_one(SuitePictures).show(figures, ratings)
        # Ended: the summary takes most of the screen; the matrix stays above it.
        self.query_one("#suite-summary").display = True
        self._layout(self.size.width)

    # -- keys ---------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pause":
            return self.runner.running
        if action == "export":
            return True
        if action == "case_models":
            return len(self.prepared.slots) > 3
        if action == "retry_failed":
            return not self.runner.running and any(v.failed for v in self.cells.values())
        return True

    def action_export(self) -> None:
        """The run's report (HTML, JSON, JUnit, Markdown; once it has ended) or an SVG
        screenshot, to a file named after the run in the current directory."""
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        svg = self.app.export_screenshot()  # the screen as it is, before the dialog
        options: list[tuple[str, Text | str]] = [("svg", "SVG screenshot · the screen now")]
        if self.summary is not None:
            reports: list[tuple[str, Text | str]] = [
                ("html", "HTML · the self-contained report"),
                ("json", "JSON · the eval --json document"),
                ("junit", "JUnit XML · a testcase per case, model and repeat"),
                ("md", "Markdown · the summary and the failed cells")]
            options = [*reports, *options]

        def chosen(fmt: str | None) -> None:
            if fmt is not None:
                self.run_worker(self._export(fmt, svg), group="suite-export",
                                exit_on_error=False)

        self.app.push_screen(ChoiceScreen("Export the run as", options,
                                          options[0][0]), chosen)

    async def _export(self, fmt: str, svg: str) -> None:
        prepared, summary = self.prepared, self.summary
        ending = {"junit": "junit.xml", "md": "md"}.get(fmt, fmt)
        path = Path.cwd() / f"{prepared.run_id}.{ending}"
        n = 2
        while path.exists():
            path = Path.cwd() / f"{prepared.run_id}-{n}.{ending}"
            n += 1

        def content() -> bytes:
            if fmt == "svg" or summary is None:
                return svg.encode()
            request, results = prepared.request, self.results
            finished = self.runner.outcome is None or self.runner.outcome.stopped is None
            stopped = self.runner.outcome.stopped if self.runner.outcome else None
            if fmt == "html":
                from anoman_tui.report.suite_html import suite_html

                return suite_html(suite=request.suite, results=results, summary=summary,
                                  run_id=prepared.run_id, created_at=prepared.created_at,
                                  finished=finished, stopped=stopped).encode()
            if fmt == "json":
                import json

                from anoman_tui.report.suite_json import run_json

                return json.dumps(run_json(
                    run_id=prepared.run_id, suite=request.suite, results=results,
                    summary=summary, finished=finished, stopped=stopped,
                    skipped=request.suite.skipped, user=prepared.user),
                    ensure_ascii=False).encode()
            if fmt == "junit":
                from anoman_tui.report.suite_junit import junit_xml

                return junit_xml(suite=request.suite, results=results,
                                 run_id=prepared.run_id)
            from anoman_tui.report.suite_markdown import suite_markdown

            return suite_markdown(suite=request.suite, results=results, summary=summary,
                                  run_id=prepared.run_id, created_at=prepared.created_at,
                                  finished=finished, stopped=stopped).encode()

        try:
            data = await asyncio.to_thread(content)
            await asyncio.to_thread(path.write_bytes, data)
        except OSError as exc:
            self.notify(f"Cannot write {path}: {exc.strerror or exc}", severity="error",
                        timeout=8)
            return
        self.notify(f"Written: {path}", title="Export", timeout=6)

    def action_case_models(self) -> None:
        """Pick the three models a case opens with (the compare screen has three panes)."""
        from itertools import combinations

        from anoman_tui.ui.screens.pickers import ChoiceScreen

        names = [slot.spec for slot in self.prepared.slots]
        options: list[tuple[str, Text | str]] = []
        for trio in list(combinations(range(len(names)), 3))[:200]:
            options.append((",".join(map(str, trio)), " · ".join(names[i] for i in trio)))
        current = ",".join(map(str, self.case_slots))

        def chosen(choice: str | None) -> None:
            if choice:
                self.case_slots = [int(i) for i in choice.split(",")]
                self.notify("A case opens with " + ", ".join(
                    names[i] for i in self.case_slots) + ".", timeout=3)

        self.app.push_screen(ChoiceScreen("Open cases with these three models", options,
                                          current), chosen)

    def action_pause(self) -> None:
        if self.runner.paused:
            self.runner.resume()
            self.notify("Resumed.", timeout=2)
        else:
            self.runner.pause()
            self.notify("Paused: no new stream starts; those running go on.", timeout=3)
        self.set_timer(0.05, self._update_progress)

    def action_stop_or_back(self) -> None:
        filter_box = self.query_one("#suite-filter", Input)
        if filter_box.display:
            self._close_filter(clear=True)
            return
        if self.runner.running:
            now = time.monotonic()
            if now - self._stop_asked_at < 3.0:
                self.runner.stop()
                self.notify("Stopping: the streams in flight are aborted; the run can be "
                            "continued.", timeout=4)
                return
            self._stop_asked_at = now
            self.notify("Esc again within 3 s stops the run (it can be continued with "
                        f"anoman-tui eval --resume {self.prepared.run_id}).", timeout=3)
            return
        if self._back:
            self.dismiss()  # (`eval --tui`'s app connects its compare screen then)

    def action_failures(self) -> None:
        self.only_failures = not self.only_failures
        self._rebuild_rows()
        self._update_progress()

    def action_filter(self) -> None:
        box = self.query_one("#suite-filter", Input)
        box.display = True
        box.value = self.filter_text
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "suite-filter":
            self.filter_text = event.value.strip()
            self._rebuild_rows()
            self._update_progress()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "suite-filter":
            self._close_filter(clear=False)

    def _close_filter(self, *, clear: bool) -> None:
        box = self.query_one("#suite-filter", Input)
        if clear:
            self.filter_text = ""
            box.value = ""
            self._rebuild_rows()
        box.display = False
        self.query_one("#suite-matrix").focus()
        self._update_progress()

    def action_retry_failed(self) -> None:
        if self.runner.running:
            return
        failed = {(case, model) for (case, model), v in self.cells.items() if v.failed}
        cells = [c for c in self.prepared.all_cells
                 if (c.case.id, c.slot.spec) in failed
                 and (r := self.cells[(c.case.id, c.slot.spec)].results.get(c.repeat))
                 is not None and (r.failed or r.judge_errors)]
        if not cells:
            return
        store = self.prepared.store
        if store is not None:
            with contextlib.suppress(Exception):
                store.delete_cells(self.prepared.run_id, [c.key for c in cells])
                store.finish_run(self.prepared.run_id, finished=False, stopped=None)
        keys = {c.key for c in cells}
        self.prepared.before = [r for r in self.prepared.before if r.key not in keys]
        # What was read when the run was taken up no longer holds: finish() reads it back.
        self.prepared.saved = None
        self.prepared.todo = cells
        for cell in cells:
            view = self.cells[(cell.case.id, cell.slot.spec)]
            gone = view.results.pop(cell.repeat, None)
            if gone is not None and gone.status != NOT_RUN:
                self._done -= 1
        self.summary = None
        self.query_one("#suite-summary").display = False
        self._layout(self.size.width)
        self._rebuild_rows()
        self.runner = SuiteRunner(self.prepared, self.client, self._wake)
        self.runner.start(self.app, cells)
        self.refresh_bindings()
        self.notify(f"Running {len(cells)} failed cells again.", timeout=3)

    def on_case_matrix_selected(self, event: CaseMatrix.Selected) -> None:
        event.stop()
        self.action_open_case()

    def action_open_case(self) -> None:
        case_id = self.query_one("#suite-matrix", CaseMatrix).cursor_key
        if case_id is None:
            return
        store = self.prepared.store
        run = self.runner.run
        slots = [self.prepared.slots[i] for i in self.case_slots]  # the three panes
        views = [self.cells[(case_id, slot.spec)] for slot in slots]
        live_repeat = next((r for v in views for r in sorted(v.live)), None)
        if live_repeat is not None and run is not None and self.runner.loop is not None:
            if all(run.live.get((case_id, slot.spec, live_repeat)) for slot in slots):
                self._show_live(case_id, live_repeat, None)  # nothing to read first
            else:
                self.run_worker(self._open_live(case_id, live_repeat), exclusive=True,
                                group="open-case")
            return
        if store is None:
            self.notify("This run saves nothing (no history): its answers cannot be "
                        "opened once they have ended.", severity="warning")
            return
        repeat = next((r for v in views for r in sorted(v.results)
                       if v.results[r].comparison_id is not None), None)
        if repeat is None:
            self.notify(f"Case {case_id} has no answer yet.", timeout=3)
            return
        comparison_id = next(v.results[repeat].comparison_id for v in views
                             if repeat in v.results
                             and v.results[repeat].comparison_id is not None)
        self.run_worker(self._open(comparison_id), exclusive=True, group="open-case")

    async def _open(self, comparison_id: int | None) -> None:
        from anoman_tui.ui.screens.record import RecordScreen

        store = self.prepared.store
        if store is None or comparison_id is None:
            return
        record = await asyncio.to_thread(store.get, comparison_id)
        if record is None:
            self.notify("That comparison is no longer in the history.", severity="warning")
            return
        if len(self.prepared.slots) > 3:
            # The three models chosen (`m`), in that order, as panes 1-3.
            by_pane = {p.pane: p for p in record.panes}
            chosen = [by_pane[self.prepared.slots[i].pane] for i in self.case_slots
                      if self.prepared.slots[i].pane in by_pane]
            record = replace(record, panes=tuple(
                replace(p, pane=n) for n, p in enumerate(chosen, start=1)))
        compare = getattr(self.app, "compare", None)
        if compare is None:
            return
        await self.app.push_screen(RecordScreen(record, compare))

    async def _open_live(self, case_id: str, repeat: int) -> None:
        """The case's (case, repeat) on three panes: live where its cells stream, what was
        saved for the others (read from the history first)."""
        run, store = self.runner.run, self.prepared.store
        if run is None:
            return
        saved_record = None
        chosen = [self.prepared.slots[i] for i in self.case_slots]
        # Only the panes not streaming show what was saved (none: no history to read).
        if store is not None and not all(run.live.get((case_id, slot.spec, repeat))
                                         for slot in chosen):
            comparison_id = await asyncio.to_thread(
                store.run_comparison, self.prepared.run_id, case_id, repeat)
            if comparison_id is not None:
                saved_record = await asyncio.to_thread(store.get, comparison_id)
        self._show_live(case_id, repeat, saved_record)

    def _show_live(self, case_id: str, repeat: int,
                   saved_record: ComparisonRecord | None) -> None:
        """Load the case into the case screen and show it, all on this turn of the
        loop: when every cell shown streams, Enter comes here directly, and the screen's
        first frame is the next one (benchmarks/suite_screen.py)."""
        from anoman_tui.history import ComparisonRecord
        from anoman_tui.ui.screens.suite_case import CaseScreen, LiveStream, waiting_pane

        run, loop = self.runner.run, self.runner.loop
        compare = getattr(self.app, "compare", None)
        if run is None or loop is None or compare is None:
            return
        case = self._case(case_id)
        chosen = [self.prepared.slots[i] for i in self.case_slots]
        saved = {p.pane: p for p in saved_record.panes} if saved_record else {}
        panes, streams = [], {}
        for index, slot in enumerate(chosen, start=1):
            stream = run.live.get((case_id, slot.spec, repeat))
            if stream is not None:
                streams[index] = LiveStream(stream, loop)
            pane = saved.get(slot.pane) if stream is None else None
            if pane is not None:
                panes.append(replace(pane, pane=index))
            else:
                panes.append(waiting_pane(index, slot.model, slot.connection.base_url,
                                          slot.endpoint, slot.simulated))
        record = ComparisonRecord(
            prompt=case.prompt if case else "", panes=tuple(panes),
            system_prompt=self.prepared.request.suite.system or "",
            created_at=time.time(), source="eval", suite_run=self.prepared.run_id)
        title = f"case {case_id}" + (f" · repeat {repeat}" if self.cells[
            (case_id, self.models[0])].repeats > 1 else "")
        case_screen = self._case_screen
        if case_screen is None or case_screen.slots != self.case_slots:
            self._drop_case_screen()
            case_screen = self._case_screen = CaseScreen(record, compare, streams, title,
                                                         slots=list(self.case_slots))
            self.app.install_screen(case_screen, self._case_screen_name)
        else:
            case_screen.load(record, streams, title)
        self.app.push_screen(case_screen)
        if self.app.screen is case_screen and case_screen.is_running:
            # Its first frame now, not once the loop has come round to its resume
            # message and then to a frame (with 32 streams in flight: 10-30 ms).
            case_screen.resume_now()
            FrameClock.of(self.app).draw_now()

    @property
    def _case_screen_name(self) -> str:
        return f"suite-case-{id(self)}"

    def _drop_case_screen(self) -> None:
        if self._case_screen is not None:
            with contextlib.suppress(Exception):  # (on the stack: removed when popped)
                self.app.uninstall_screen(self._case_screen)
            self._case_screen = None

    async def _ready_case_screen(self) -> None:
        """Build the case screen while nothing is asked of it (after the first paint), so
        that Enter on a running case only loads it: its panes' text within a frame."""
        from anoman_tui.history import ComparisonRecord
        from anoman_tui.ui.screens.suite_case import CaseScreen, waiting_pane
        from anoman_tui.ui.textual_internals import mount_offstage

        compare = getattr(self.app, "compare", None)
        if compare is None or self._case_screen is not None or not self.is_attached:
            return
        panes = tuple(waiting_pane(index, slot.model, slot.connection.base_url,
                                   slot.endpoint, slot.simulated)
                      for index, slot in enumerate(
                          [self.prepared.slots[i] for i in self.case_slots], start=1))
        record = ComparisonRecord(prompt="", panes=panes, created_at=time.time(),
                                  source="eval", suite_run=self.prepared.run_id)
        screen = self._case_screen = CaseScreen(record, compare, {}, "",
                                                slots=list(self.case_slots))
        self.app.install_screen(screen, self._case_screen_name)

        def as_when_running() -> None:
            # The status line as a running case will have it: its height (one line or
            # two) then needs no layout of the screen when the case is shown.
            longest = max((case.id for case in self.cases), key=len, default="")
            repeats = max((cell.repeats for cell in self.cells.values()), default=1)
            screen.title_text = f"case {longest}" + (
                f" · repeat {repeats}" if repeats > 1 else "")
            if screen.query("ComparePane"):
                screen.release()  # the panes empty, as a case leaves them
                screen.update_status(running=len(self.case_slots))

        await mount_offstage(self.app, screen, as_when_running)
        # Its key bar builds its keys after a refresh: once they are there, lay the
        # screen out (and render it) again, so that showing it lays out nothing.
        bar = screen.query_one(KeyBar)
        for _ in range(100):
            if bar.query("FooterKey") or not screen.is_attached:
                break
            await asyncio.sleep(0.01)
        for _ in range(2):  # (the keys' own fitting comes after a refresh of their own)
            await asyncio.sleep(0.05)
            if not (screen.is_attached and self._case_screen is screen):
                break
            await mount_offstage(self.app, screen)

    def on_unmount(self) -> None:
        self.runner.stop()
        if self._case_screen is not None:
            self._case_screen.release()
            self._drop_case_screen()
        if self._stop_gateway or self._close_client:
            # Once the run has ended (its streams aborted, its end saved): a worker of
            # the app, since this screen's own are cancelled as it goes.
            self.app.run_worker(self._close(), name="suite-close", exit_on_error=False)

    async def _close(self) -> None:
        await self.runner.ended()
        if self._close_client:
            await self.client.aclose()
        if self._stop_gateway:
            await asyncio.to_thread(self.prepared.stop)
