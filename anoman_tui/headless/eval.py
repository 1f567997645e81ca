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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from anoman_tui.history import HistoryStore, HistoryUnavailable
from anoman_tui.streaming import EndpointFormat
from anoman_tui.suites.engine import (
    Cell,
    ModelSlot,
    Progress,
    RunOptions,
    SuiteRun,
    cells_of,
    missing_cells,
    with_model_info,
)
from anoman_tui.suites.judging import Judge
from anoman_tui.suites.model import NOT_RUN, CellResult, Suite
from anoman_tui.suites.summary import summarize
from anoman_tui.targets import Target, TargetConfig, connect, from_config, split_model

if TYPE_CHECKING:
    from anoman_tui.gateway.embedded import EmbeddedGateway

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_COST_LIMIT = 3
EXIT_INTERRUPTED = 130


class EvalRefused(Exception):
    """The run cannot start; `reason` is one line (exit status 2)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class EvalRequest:
    """What `eval` was asked to do, settings resolved."""

    suite: Suite
    targets: dict[str, Target]
    default_target: str
    endpoint: EndpointFormat
    options: RunOptions
    as_json: bool = False
    junit: Path | None = None
    html: Path | None = None
    min_pass_rate: float | None = None
    run_id: str | None = None
    """Set for `--resume` / `--retry-errors`: the run continued."""
    retry_errors: bool = False
    allow_self_judge: bool = False
    settings: dict[str, object] = field(default_factory=dict)
    """Stored with a new run, so a resume runs as it did."""


@dataclass
class Resolved:
    slots: list[ModelSlot]
    gateway: EmbeddedGateway | None
    judge: ModelSlot | None = None


def resolve_models(request: EvalRequest) -> Resolved:
    """Each suite model on its target; the local gateway started if one is on it.

    Raises `EvalRefused` for a target that does not exist, a `[simulate]` entry for a
    model that is not on the local gateway, or an endpoint its target does not serve.
    """
    suite = request.suite
    targets = dict(request.targets)
    for name, base_url, key_env in suite.targets:
        targets[name] = from_config(name, TargetConfig(base_url=base_url,
                                                       api_key_env=key_env or None))
    wanted: list[tuple[str, Target, str]] = []
    for spec in suite.models:
        prefix, model = split_model(spec, targets)
        target_name = prefix or request.default_target
        if target_name not in targets:
            raise EvalRefused(f"model {spec!r}: no target {target_name!r}")
        wanted.append((spec, targets[target_name], model))
    judge_wanted: tuple[str, Target, str] | None = None
    needs_judge = suite.rubrics or suite.pairwise
    if needs_judge and suite.judge is None:
        what = "llm-rubric assertions need" if suite.rubrics else "pairwise needs"
        raise EvalRefused(f"{what} a judge: set judge = \"[TARGET:]MODEL\" in the suite, "
                          "or --judge MODEL (the local gateway's is anoman-judge)")
    if needs_judge and suite.judge is not None:
        prefix, model = split_model(suite.judge, targets)
        target_name = prefix or request.default_target
        if target_name not in targets:
            raise EvalRefused(f"judge {suite.judge!r}: no target {target_name!r}")
        judge_wanted = (suite.judge, targets[target_name], model)
        if self_judging(suite, wanted, judge_wanted) and not request.allow_self_judge:
            raise EvalRefused(f"the judge {suite.judge} is one of the models under test: a "
                              "judge favours its own answers; choose another judge, or "
                              "--allow-self-judge")
    for spec, _scenario in suite.simulate:
        if not any(s == spec for s, _, _ in wanted):
            raise EvalRefused(f"[simulate] names {spec!r}, which is not one of the models")
    gateway = None
    if any(t.is_local for _, t, _ in wanted) or (judge_wanted is not None
                                                and judge_wanted[1].is_local):
        from anoman_tui.gateway.config import GatewayConfig
        from anoman_tui.gateway.embedded import EmbeddedGateway

        # Its per-key limit (600 a minute) is there to show a 429 on the compare screen;
        # a suite of thousands of cells would only wait on it.
        gateway = EmbeddedGateway(GatewayConfig(rate_limit_rpm=1_000_000)).start()
    local = (gateway.base_url, gateway.api_key) if gateway is not None else None
    endpoint: EndpointFormat = suite.endpoint or request.endpoint  # type: ignore[assignment]
    slots = []
    for pane, (spec, target, model) in enumerate(wanted, start=1):
        if suite.endpoint and target.path_for(endpoint) is None:
            if gateway is not None:
                gateway.stop()
            raise EvalRefused(f"model {spec!r}: {target.name} does not serve the "
                              f"{endpoint} endpoint format")
        slots.append(ModelSlot(spec=spec, model=model, pane=pane,
                               connection=connect(target, local=local),
                               endpoint=target.default_endpoint(endpoint),
                               scenario=suite.simulated_scenario(spec)))
    judge = None
    if judge_wanted is not None:
        spec, target, model = judge_wanted
        judge = ModelSlot(spec=spec, model=model, pane=0,
                          connection=connect(target, local=local),
                          endpoint=target.default_endpoint(request.endpoint))
    return Resolved(slots, gateway, judge)


def _self_judge(slots: Sequence[ModelSlot], judge: ModelSlot | None) -> bool:
    return judge is not None and any(
        s.model == judge.model and s.target_name == judge.target_name for s in slots)


def self_judging(suite: Suite, wanted: Sequence[tuple[str, Target, str]],
                 judge: tuple[str, Target, str] | None) -> bool:
    """The judge is one of the models under test: the same model on the same target."""
    if judge is None:
        return False
    return any(model == judge[2] and target.name == judge[1].name
               for _, target, model in wanted)


def check_simulated_faults(slots: Sequence[ModelSlot]) -> None:
    """A `[simulate]` scenario only for a model the local gateway serves (the embedded
    one, or one at a URL whose model list marks it simulated): a real provider ignores
    the header, and the run would measure something else than the suite says."""
    for slot in slots:
        if slot.scenario and not (slot.connection.target.is_local or slot.simulated):
            raise EvalRefused(
                f"[simulate] {slot.spec} = {slot.scenario!r}: simulated faults need the local "
                f"gateway; {slot.spec} streams from {slot.connection.label()}, which does "
                "not say its models are simulated")


def _from_saved(rows: Sequence[dict[str, object]]) -> list[CellResult]:
    found = []
    for row in rows:
        try:
            found.append(CellResult.from_json(dict(row)))
        except (KeyError, TypeError, ValueError):
            continue  # a hand-edited row: left out, not fatal
    return found


class ProgressView:
    """The bar on a terminal; one line per finished cell otherwise."""

    def __init__(self, console: Console, progress: Progress, *, live: bool,
                 max_cost: Decimal | None, done_before: int, total: int) -> None:
        self.console = console
        self.progress = progress
        self.live = live
        self.max_cost = max_cost
        self.done_before = done_before
        self.total = total

    def cell(self, result: CellResult) -> None:
        if not self.live:
            from anoman_tui.report.suite_text import cell_line

            self.console.print(Text(cell_line(result)), soft_wrap=True)

    def __rich__(self) -> Group:
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


def run_eval(request: EvalRequest, store: HistoryStore | None, *,
             out: IO[str] | None = None) -> int:
    """Run (or continue) the suite; print and write its reports; the exit status."""
    from anoman_tui.suites.engine import new_run_id

    out = out or sys.stdout
    prog = "anoman-tui eval"
    suite = request.suite
    try:
        resolved = resolve_models(request)
    except EvalRefused as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        return EXIT_USAGE
    try:
        judge_slots = [resolved.judge] if resolved.judge is not None else []
        infos = asyncio.run(with_model_info([*resolved.slots, *judge_slots]))
        slots, judge_slot = infos[:len(resolved.slots)], (
            infos[-1] if resolved.judge is not None else None)
        try:
            check_simulated_faults(slots)
        except EvalRefused as exc:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            return EXIT_USAGE
        all_cells = cells_of(suite, slots)
        saved: list[dict[str, object]] = []
        run_id = request.run_id or new_run_id()
        created_at = time.time()
        if store is not None:
            try:
                if request.run_id is not None:
                    stored = store.run(request.run_id)
                    assert stored is not None  # the command line checked it
                    saved, created_at = list(stored.results), stored.created_at
                    run_id = stored.run_id
                    if request.retry_errors:
                        todo = missing_cells(all_cells, saved, failed_only=True)
                        store.delete_cells(run_id, [c.key for c in todo])
                        keys = {c.key for c in todo}
                        saved = [r for r in saved
                                 if (r["case"], r["model"], r["repeat"]) not in keys]
                    store.finish_run(run_id, finished=False, stopped=None)
                else:
                    store.create_run(run_id, name=suite.name, suite=suite.to_json(),
                                     settings={**request.settings,
                                               "self_judge": _self_judge(slots, judge_slot),
                                               "judge_simulated": bool(
                                                   judge_slot and judge_slot.simulated)},
                                     models=list(suite.models),
                                     cells=len(all_cells), created_at=created_at)
            except HistoryUnavailable as exc:
                print(f"{prog}: results not saved to the history: {exc.reason}",
                      file=sys.stderr)
                store = None
        todo = missing_cells(all_cells, saved) if request.run_id is not None else all_cells
        before = _from_saved([r for r in saved if r.get("status") != NOT_RUN])
        return _run_and_report(request, store, slots, todo, before, run_id, created_at,
                               len(all_cells), out, judge_slot)
    finally:
        if resolved.gateway is not None:
            resolved.gateway.stop()


def _run_and_report(request: EvalRequest, store: HistoryStore | None,
                    slots: list[ModelSlot], todo: list[Cell], before: list[CellResult],
                    run_id: str, created_at: float, total: int, out: IO[str],
                    judge_slot: ModelSlot | None = None) -> int:
    suite = request.suite
    prog = "anoman-tui eval"
    console = Console(file=out, highlight=False, soft_wrap=not request.as_json)
    err = Console(stderr=True, highlight=False)
    view_console = err if request.as_json else console
    live = view_console.is_terminal
    spent = sum((r.cost.usd for r in before if r.cost.usd is not None), Decimal(0))
    view: ProgressView | None = None
    # With a history, the results are read back from it at the end (_all_results).
    options = replace(request.options, keep_results=store is None)
    spent += sum((r.judge_cost_usd for r in before if r.judge_cost_usd is not None),
                 Decimal(0))
    judge = None if judge_slot is None else Judge(
        judge_slot, concurrency=suite.judge_concurrency, retries=options.retries,
        idle_timeout=options.idle_timeout, headers=options.headers,
        rubric_template=suite.judge_prompt, pairwise_template=suite.pairwise_prompt)
    run = SuiteRun(suite, slots, run_id=run_id, options=options, store=store,
                   on_cell=lambda cell: view.cell(cell) if view is not None else None,
                   spent=spent, judge=judge)
    if suite.pairwise and judge is not None and store is not None and request.run_id:
        with contextlib.suppress(HistoryUnavailable):
            run.resume_pairs(*_saved_pair_state(store, run_id, slots, before))
    view = ProgressView(view_console, run.progress, live=live,
                        max_cost=request.options.max_cost, done_before=total - len(todo),
                        total=total)
    if not request.as_json and not live:
        print(f"{suite.name}: {len(todo)} of {total} cells to run ({len(suite.cases)} cases × "
              f"{len(slots)} models × {suite.repeat} repeats), run {run_id}", file=out)

    async def go() -> object:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, run.stop)
            loop.add_signal_handler(signal.SIGTERM, run.stop)
        try:
            if live:
                with Live(view, console=view_console, refresh_per_second=4, transient=True):
                    return await run.run(todo)
            return await run.run(todo)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
                loop.remove_signal_handler(signal.SIGTERM)

    from anoman_tui.suites.engine import RunOutcome

    outcome = asyncio.run(go())
    assert isinstance(outcome, RunOutcome)
    if outcome.unsaved:
        print(f"{prog}: results stopped being saved to the history: {outcome.unsaved}",
              file=sys.stderr)
    results, pairs = _all_results(store, run_id, before, outcome.results, run.pairs)
    finished = outcome.stopped is None
    if store is not None and not outcome.unsaved:
        with contextlib.suppress(HistoryUnavailable):
            store.finish_run(run_id, finished=finished, stopped=outcome.stopped)
    results = suite.in_order(results)
    summary = summarize(suite.models, results, judge=judge_slot.spec if judge_slot else None,
                        self_judge=_self_judge(slots, judge_slot),
                        pairwise=pairs,
                        judge_simulated=bool(judge_slot and judge_slot.simulated))
    _report(request, results, summary, run_id, created_at, finished, outcome.stopped,
            console, out)
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
        print(f"{prog}: stopped at the cost limit (${request.options.max_cost}): {not_run} "
              f"cells not run; raise --max-cost and continue with: anoman-tui eval --resume "
              f"{run_id} --max-cost USD", file=sys.stderr)
        return EXIT_COST_LIMIT
    return exit_status(results, request.min_pass_rate)


def _all_results(store: HistoryStore | None, run_id: str, before: list[CellResult],
                 new: list[CellResult], new_pairs: list[dict[str, object]]
                 ) -> tuple[list[CellResult], list[dict[str, object]]]:
    """Every result and pairwise verdict of the run: read back from the history (one read)
    when it is kept there, so a resumed run reports exactly what an uninterrupted one
    would, with any in hand that could not be saved; else those in hand."""
    if store is not None:
        with contextlib.suppress(HistoryUnavailable):
            stored = store.run(run_id, CellResult.from_json)
            if stored is not None:
                saved: list[CellResult] = stored.results
                known = {r.key for r in saved}
                results = [*saved, *(r for r in [*before, *new] if r.key not in known)]
                return results, [*stored.pairs, *new_pairs]  # a later verdict of a pair wins
    return [*before, *new], list(new_pairs)


def _saved_pair_state(store: HistoryStore, run_id: str, slots: Sequence[ModelSlot],
                      before: Sequence[CellResult]
                      ) -> tuple[dict[tuple[str, int], dict[str, str | None]],
                                 set[tuple[str, int, str, str]]]:
    """For a resumed pairwise run: the answers its saved cells gave (from their
    comparisons; None for a failed stream) and the pairs already judged."""
    stored = store.run(run_id)
    judged = set()
    for pair in stored.pairs if stored is not None else ():
        with contextlib.suppress(KeyError, TypeError, ValueError):
            judged.add((str(pair["case"]), int(pair["repeat"]), str(pair["a"]),
                        str(pair["b"])))
    pane_of = {slot.spec: slot.pane for slot in slots}
    answers: dict[tuple[str, int], dict[str, str | None]] = {}
    comparisons: dict[int, dict[int, str]] = {}
    for result in before:
        if result.model not in pane_of:
            continue
        text: str | None = None
        if result.completed and result.comparison_id is not None:
            if result.comparison_id not in comparisons:
                record = store.get(result.comparison_id)
                comparisons[result.comparison_id] = {} if record is None else {
                    p.pane: p.text for p in record.panes}
            text = comparisons[result.comparison_id].get(pane_of[result.model])
        answers.setdefault((result.case, result.repeat), {})[result.model] = text
    return answers, judged


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


def _report(request: EvalRequest, results: list[CellResult], summary: object, run_id: str,
            created_at: float, finished: bool, stopped: str | None, console: Console,
            out: IO[str]) -> None:
    from anoman_tui.report.suite_html import suite_html
    from anoman_tui.report.suite_json import run_json
    from anoman_tui.report.suite_junit import junit_xml
    from anoman_tui.report.suite_text import print_summary
    from anoman_tui.suites.model import RunSummary

    assert isinstance(summary, RunSummary)
    suite = request.suite
    if suite.skipped:
        print(f"anoman-tui eval: skipped (unsupported): {'; '.join(suite.skipped)}",
              file=sys.stderr)
    if request.junit is not None:
        _write(request.junit, junit_xml(suite=suite, results=results, run_id=run_id))
    if request.html is not None:
        _write(request.html, suite_html(suite=suite, results=results, summary=summary,
                                        run_id=run_id, created_at=created_at,
                                        finished=finished, stopped=stopped).encode())
    if request.as_json:
        document = run_json(run_id=run_id, suite=suite, results=results, summary=summary,
                            finished=finished, stopped=stopped, skipped=suite.skipped)
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        out.flush()
    else:
        print_summary(console, suite=suite, results=results, summary=summary, run_id=run_id,
                      finished=finished, stopped=stopped, skipped=suite.skipped)


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        print(f"anoman-tui eval: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
