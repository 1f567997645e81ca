"""`anoman-tui eval` without the TUI: from a loaded suite to an exit status.

Resolves the suite's models to targets (starting the local gateway when one of them is
on it), reads what each target lists about them (prices, whether simulated), runs the
cells (`anoman_tui.suites.engine`), shows progress (a bar on a terminal, one line per
finished cell when piped), then the summary, the `--json` document and the JUnit and
HTML files asked for. `runs` shows saved runs.

The command line (`anoman_tui.cli.eval`) reads the suite and opens the history; this
never opens it itself. Imports the stream core, the suites and Rich; never Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import IO, TYPE_CHECKING

from anoman_tui.history import HistoryStore
from anoman_tui.history.pending import PendingSaves
from anoman_tui.report.suite_files import ReportFiles, write_files
from anoman_tui.secrets_in_use import secrets_in_use
from anoman_tui.streaming import StreamClient
from anoman_tui.streaming.safe_text import mask_secrets, masked, masked_stream
from anoman_tui.suites.engine import Cell, Progress, RunOutcome, SuiteRun
from anoman_tui.suites.model import NOT_RUN, CellResult
from anoman_tui.suites.prepare import (
    EvalRefused,
    EvalRequest,
    Prepared,
    prepare_run,
)
from anoman_tui.targets import LocalGateway

# The exit status of `eval` (a public contract: scripts and CI read it).
EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_COST_LIMIT = 3
EXIT_INTERRUPTED = 130


def exit_status(results: Sequence[CellResult], min_pass_rate: float | None) -> int:
    """0 when every judged result passed (or the pass rate reached `min_pass_rate`, or
    nothing was judged); 1 otherwise."""
    judged = [r for r in results if r.passed is not None]
    if not judged:
        return EXIT_PASSED
    passed = sum(1 for r in judged if r.passed)
    if min_pass_rate is not None:
        return EXIT_PASSED if passed / len(judged) >= min_pass_rate - 1e-12 else EXIT_FAILED
    return EXIT_PASSED if passed == len(judged) else EXIT_FAILED


if TYPE_CHECKING:  # Rich loads only to draw on a terminal: `eval --json` piped never does
    from rich.console import Console, Group


class ProgressView:
    """The bar on a terminal; one line per finished cell otherwise."""

    def __init__(self, console: Console | None, progress: Progress, *, live: bool,
                 max_cost: Decimal | None, done_before: int, total: int,
                 file: IO[str] | None = None) -> None:
        self.console = console
        # Where a piped run's lines go: the console's file, or (`--json` piped, no
        # console) the masked stderr it would have had.
        self.file = file if file is not None else console.file if console else sys.stderr
        self.progress = progress
        self.live = live
        self.max_cost = max_cost
        self.done_before = done_before
        self.total = total

    def cell(self, result: CellResult) -> None:
        if not self.live:
            from anoman_tui.report.suite_text import cell_line, strip_control_codes

            # What `console.print(Text(line), soft_wrap=True)` writes for a one-line text
            # off a terminal (Text drops the same control codes), without Rich's render:
            # 0.27 ms a line, ~2% of a piped run's CPU (benchmarks/eval_load.py).
            file = self.file
            file.write(strip_control_codes(cell_line(result)) + "\n")
            file.flush()

    def __rich__(self) -> Group:
        from rich.console import Group
        from rich.text import Text

        p = self.progress
        done = self.done_before + p.done + p.not_run
        width = 30
        filled = int(width * done / self.total) if self.total else width
        # Filled and empty are different characters: the bar reads without colour too.
        bar = Text("━" * filled, style="green") + Text("╌" * (width - filled), style="grey50")
        parts = [f"{p.running} running", f"{p.failed} failed"]
        if p.waiting_s > 0:
            parts.append(f"rate limit: waiting {p.waiting_s:.0f} s")
        if p.retries:
            parts.append(f"{p.retries} retried")
        cost = f"${p.spent:.4f}" + ("~" if p.cost_estimated else "")
        if self.max_cost is not None:
            cost += f" of ${self.max_cost}"
        parts.append(cost)
        eta = p.eta_s()
        if eta is not None:
            parts.append(f"ETA {_duration(eta)}")
        # Two lines: the figures fit 80 columns under the bar.
        return Group(bar + Text(f"  {done}/{self.total} cells done"),
                     Text(" · ".join(parts), overflow="fold"))


def _duration(value: float) -> str:
    seconds = round(value)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def start_embedded() -> LocalGateway:
    """The local gateway in this process, for a run whose models are on it."""
    from anoman_tui.gateway.config import GatewayConfig
    from anoman_tui.gateway.embedded import EmbeddedGateway

    # Its per-key limit (600 a minute) is there to show a 429 on the compare screen; a
    # suite of thousands of cells would only wait on it.
    return EmbeddedGateway(GatewayConfig(rate_limit_rpm=1_000_000)).start()


def run_eval(request: EvalRequest, store: HistoryStore | None, *, as_json: bool = False,
             out: IO[str] | None = None, pending: PendingSaves | None = None,
             files: ReportFiles | None = None) -> int:
    """Run (or continue) the suite; print and write its reports; the exit status.
    `as_json`: one JSON document on `out`, progress on stderr (`--json`); `pending`: the
    writes through `store`, waiting for its server when it goes away; `files`: the
    `--junit` and `--html` files to write.

    One event loop and one HTTP pool for all of it: the models' lists, the cells'
    streams and the judge's calls."""
    # No key leaves: a server may echo one into an answer or an error (`_report`).
    files = files or ReportFiles()
    secrets = suite_secrets(request)
    out = masked_stream(out or sys.stdout, secrets)
    from anoman_tui.report.suite_text import may_be_terminal

    err_file = masked_stream(sys.stderr, secrets)
    console: Console | None = None
    view_console: Console | None = None
    if not as_json or may_be_terminal(err_file):
        from rich.console import Console

        from anoman_tui.report.suite_terminal import output_console

        # Piped with no COLUMNS (a CI log), the summary is laid out for a fixed width.
        console = output_console(out, soft_wrap=not as_json)
        view_console = Console(file=err_file, highlight=False) if as_json else console

    async def go() -> tuple[Prepared, SuiteRun, RunOutcome] | int:
        prepared: Prepared | None = None
        try:
            async with SuiteRun.client_of(request.suite, request.options) as client:
                prepared = await prepare_or_refuse(request, store, pending, client)
                if prepared is None:
                    return EXIT_USAGE
                run, outcome = await _run(prepared, client, out, view_console,
                                          err_file, as_json=as_json)
                return prepared, run, outcome
        except BaseException:
            if prepared is not None:
                prepared.stop()
            raise

    ran = asyncio.run(go())
    if isinstance(ran, int):
        return ran
    prepared, run, outcome = ran
    try:
        return _report_run(prepared, run, outcome, console, out, files, as_json=as_json)
    finally:
        prepared.stop()


async def prepare_or_refuse(request: EvalRequest, store: HistoryStore | None,
                            pending: PendingSaves | None, client: StreamClient
                            ) -> Prepared | None:
    """`prepare_run` for `eval` and `eval --tui`: a refusal (None) and each warning one
    line on stderr, with no key in it."""
    secrets = suite_secrets(request)
    try:
        prepared = await prepare_run(request, store, start_embedded, client)
    except EvalRefused as exc:
        print(f"anoman-tui eval: {mask_secrets(exc.reason, secrets)}", file=sys.stderr)
        return None
    if prepared.store is not None:
        prepared.pending = pending
    for line in prepared.warnings:
        print(f"anoman-tui eval: {mask_secrets(line, secrets)}", file=sys.stderr)
    return prepared


def suite_secrets(request: EvalRequest) -> tuple[str, ...]:
    """The secrets to mask in a run's output: the settings', and its targets' keys."""
    return secrets_in_use([t.key() for t in request.targets.values()])


async def _run(prepared: Prepared, client: StreamClient, out: IO[str],
               view_console: Console | None, err_file: IO[str], *,
               as_json: bool) -> tuple[SuiteRun, RunOutcome]:
    """The cells run on this loop through `client`, with the bar or a line a cell."""
    request = prepared.request
    suite = request.suite
    todo, total = prepared.todo, prepared.total
    live = view_console is not None and view_console.is_terminal
    view: ProgressView | None = None
    run = prepared.make_run(lambda cell: view.cell(cell) if view is not None else None)
    run.on_wait = _announce_wait
    view = ProgressView(view_console, run.progress, live=live,
                        max_cost=request.options.max_cost, done_before=total - len(todo),
                        total=total, file=err_file if as_json else None)
    if not as_json and not live:
        print(f"{suite.name}: {len(todo)} of {total} cells to run ({len(suite.cases)} cases × "
              f"{len(prepared.slots)} models × {suite.repeat} repeats), run "
              f"{prepared.run_id}", file=out)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, run.stop)
        loop.add_signal_handler(signal.SIGTERM, run.stop)
    try:
        if live:
            from rich.live import Live

            with Live(view, console=view_console, refresh_per_second=4, transient=True):
                return run, await run.run(todo, client)
        return run, await run.run(todo, client)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)


def _report_run(prepared: Prepared, run: SuiteRun, outcome: RunOutcome,
                console: Console | None, out: IO[str], files: ReportFiles, *,
                as_json: bool) -> int:
    """The run's reports and its exit status."""
    request, store = prepared.request, prepared.store
    suite = request.suite
    run_id, total = prepared.run_id, prepared.total
    prog = "anoman-tui eval"
    if outcome.unsaved:
        print(f"{prog}: results stopped being saved to the history: {outcome.unsaved}",
              file=sys.stderr)
    results, summary = prepared.finish(run, outcome)
    if as_json or files.need_answers:
        from anoman_tui.report.answers import with_answers

        # Read back from the history, the results hold no answer: the reports carry it.
        results = with_answers(results, store, suite.models, outcome.results)
    finished = outcome.stopped is None
    _report(request, results, summary, run_id, prepared.created_at, finished, outcome.stopped,
            console, out, prepared.user, files, saved=store is not None, as_json=as_json)
    if outcome.stopped == "interrupted":
        done = sum(1 for r in results if r.status != NOT_RUN)
        if store is not None:
            print(f"{prog}: stopped: {done} of {total} cells done and saved; continue with: "
                  f"anoman-tui eval --resume {run_id}", file=sys.stderr)
        else:
            print(f"{prog}: stopped: {done} of {total} cells done (not saved: no history)",
                  file=sys.stderr)
        return EXIT_INTERRUPTED
    if outcome.stopped == "cost_limit":
        not_run = sum(1 for r in results if r.status == NOT_RUN)
        if store is not None:
            then = (f"raise --max-cost and continue with: anoman-tui eval --resume {run_id} "
                    "--max-cost USD")
        else:  # nothing was saved: there is no run to take up again
            then = "not saved (the history is off): run the suite again with a higher --max-cost"
        print(f"{prog}: stopped at the cost limit (${request.options.max_cost}): {not_run} "
              f"cells not run; {then}", file=sys.stderr)
        return EXIT_COST_LIMIT
    return exit_status(results, request.min_pass_rate)


def _announce_wait(cell: Cell, wait: float, asked: float | None) -> None:
    """A cell about to wait out a rate limit for long: said on stderr, with the cap."""
    from anoman_tui.streaming.safe_text import terminal_safe

    capped = f" (the server asked for {asked:g} s; --max-retry-after caps it)" \
        if asked is not None and asked > wait else ""
    print(f"anoman-tui eval: {terminal_safe(cell.slot.spec)} is rate limited (429): waiting "
          f"{wait:.0f} s before sending again{capped}", file=sys.stderr, flush=True)


def _report(request: EvalRequest, results: list[CellResult], summary: object, run_id: str,
            created_at: float, finished: bool, stopped: str | None, console: Console | None,
            out: IO[str], user: str, files: ReportFiles, *, saved: bool,
            as_json: bool) -> None:
    from anoman_tui.report.suite_json import run_json
    from anoman_tui.suites.model import RunSummary

    assert isinstance(summary, RunSummary)
    suite = request.suite
    secrets = suite_secrets(request)
    results, summary = masked(results, secrets), masked(summary, secrets)
    if suite.skipped:
        print(f"anoman-tui eval: skipped (unsupported): {'; '.join(suite.skipped)}",
              file=sys.stderr)
    write_files(files, request, results, summary, run_id, created_at, finished, stopped)
    if as_json:
        document = masked(run_json(run_id=run_id, suite=suite, results=results,
                                   summary=summary, finished=finished, stopped=stopped,
                                   skipped=suite.skipped, user=user), secrets)
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        out.flush()
    else:
        from anoman_tui.report.suite_terminal import print_summary

        assert console is not None  # made for every run that prints its summary
        print_summary(console, suite=suite, results=results, summary=summary, run_id=run_id,
                      finished=finished, stopped=stopped, skipped=suite.skipped, user=user,
                      saved=saved)
