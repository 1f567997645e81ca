"""A suite run made ready: its request made from the settings (`eval_request`, the one
place: flags, what a continued run stored, the suite, the settings), its models
resolved to targets (the local gateway started if one is on it), what their targets
list about them, its cells, and the run created in the history or taken up from it;
then, at its end, every result read back and summarised. Shared by `anoman-tui eval`
(`anoman_tui.headless.eval`, which keeps the exit statuses) and the suite screen
(`anoman_tui.ui.screens.suite`).

Imports the stream core, the history, the targets, the judge's calls and the rest of
the suites; no Rich, no Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from anoman_tui.history import HistoryStore, HistoryUnavailable
from anoman_tui.history.pending import PendingSaves, finish_write
from anoman_tui.history.runs import RunRefused

if TYPE_CHECKING:
    from anoman_tui.config import Settings
from anoman_tui.judging.calls import Judge
from anoman_tui.streaming import EndpointFormat, GatewayRequestError, ModelInfo, StreamClient
from anoman_tui.streaming.retry import RetryPolicy
from anoman_tui.suites.engine import (
    Cell,
    CellListener,
    RunOptions,
    RunOutcome,
    SuiteRun,
    cells_of,
    missing_cells,
)
from anoman_tui.suites.model import NOT_RUN, CellResult, RunSummary, Suite
from anoman_tui.suites.scenarios import simulate_header
from anoman_tui.suites.summary import summarize
from anoman_tui.targets import (
    LocalGateway,
    ModelSlot,
    Target,
    TargetConfig,
    connect,
    from_config,
    split_model,
    unknown_target,
)


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
    min_pass_rate: float | None = None
    run_id: str | None = None
    """Set for `--resume` / `--retry-errors`: the run continued."""
    retry_errors: bool = False
    allow_self_judge: bool = False
    user: str = ""
    """Who runs it (the `user` setting), for a run not kept in a history."""

    def stored_settings(self) -> dict[str, object]:
        """What a new run stores of its settings, so a resume runs as it did (read back
        by `eval_request`)."""
        options = self.options
        return {"concurrency": options.concurrency, "retries": options.retry.retries,
                "max_cost": None if options.max_cost is None else str(options.max_cost),
                "min_pass_rate": self.min_pass_rate,
                "record": options.record_limit is not None,
                "idle_timeout": options.idle_timeout,
                "headers": [list(h) for h in options.headers],
                "allow_self_judge": self.allow_self_judge}


@dataclass
class Resolved:
    slots: list[ModelSlot]
    gateway: LocalGateway | None
    judge: ModelSlot | None = None


def eval_request(settings: Settings, suite: Suite, *, run_id: str | None = None,
                 stored: Mapping[str, object] | None = None,
                 concurrency: int | None = None, retries: int | None = None,
                 max_retry_after: float | None = None, max_cost: Decimal | None = None,
                 min_pass_rate: float | None = None, allow_self_judge: bool | None = None,
                 headers: Sequence[tuple[str, str]] = (), retry_errors: bool = False,
                 idle_timeout: float | None = None) -> EvalRequest:
    """The one way an eval's request is made from the settings (the command line's, the
    app's Ctrl+P → *Run a suite…* and the history's): a value given here wins, then what
    run `run_id` stored (`EvalRequest.stored_settings`), then the suite's, then the
    settings' or the default."""
    stored = stored or {}

    def chosen(given: object, key: str, default: object) -> object:
        if given is not None:
            return given
        value = stored.get(key)
        return default if value is None else value

    cost = chosen(max_cost, "max_cost", suite.max_cost)
    rate = chosen(min_pass_rate, "min_pass_rate", None)
    record = bool(chosen(None, "record", settings.record))
    raw_headers = stored.get("headers")
    if not headers and isinstance(raw_headers, list):
        headers = tuple((str(h[0]), str(h[1])) for h in raw_headers
                        if isinstance(h, list) and len(h) == 2)
    policy = RetryPolicy(retries=int(str(chosen(retries, "retries", 2))))
    if max_retry_after is not None:
        policy = replace(policy, max_retry_after=max_retry_after)
    targets = settings.all_targets()
    options = RunOptions(
        concurrency=int(str(chosen(concurrency, "concurrency", suite.concurrency))),
        retry=policy, max_cost=None if cost is None else Decimal(str(cost)),
        idle_timeout=float(str(chosen(idle_timeout, "idle_timeout", settings.idle_timeout))),
        record_limit=int(settings.record_limit_mb * 1_000_000) if record else None,
        target_limits={name: t.max_concurrency for name, t in targets.items()
                       if t.max_concurrency is not None},
        headers=tuple(headers))
    return EvalRequest(
        suite=suite, targets=targets, default_target=settings.default_target,
        endpoint=settings.endpoint, options=options,
        min_pass_rate=None if rate is None else float(str(rate)), run_id=run_id,
        retry_errors=retry_errors,
        allow_self_judge=bool(chosen(allow_self_judge, "allow_self_judge", False)),
        user=settings.author())


def resolve_models(request: EvalRequest, start_local: Callable[[], LocalGateway]
                   ) -> Resolved:
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
    for what, spec in [*(("model", m) for m in suite.models),
                       *([("judge", suite.judge)] if suite.judge else [])]:
        problem = unknown_target(spec, targets, request.default_target)
        if problem:
            raise EvalRefused(f"{what} {spec!r}: {problem}")
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
        gateway = start_local()
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


ModelLists = dict[str, "list[ModelInfo] | str"]
"""Target name -> the models it lists, or why it lists none."""


async def model_lists(slots: Sequence[ModelSlot], client: StreamClient) -> ModelLists:
    """What each slot's target lists (`GET /v1/models` or its `models_path`), once per
    target; where it cannot be listed, the reason."""
    lists: ModelLists = {}
    for connection in {s.connection.name: s.connection for s in slots}.values():
        base_url, key, headers, path = connection.list_models_args()
        try:
            lists[connection.name] = await client.list_models(base_url, key, headers, path)
        except GatewayRequestError as exc:
            lists[connection.name] = str(exc)
    return lists


def _listed_info(lists: ModelLists, slot: ModelSlot) -> ModelInfo | None:
    listed = lists.get(slot.target_name)
    if isinstance(listed, str) or listed is None:
        return None
    return next((m for m in listed if m.id == slot.model), None)


def check_listed(slots: Sequence[ModelSlot], judge: ModelSlot | None,
                 lists: ModelLists) -> list[str]:
    """Refuse (`EvalRefused`) a model, or the judge, that its target's list does not
    hold: a misspelt model would otherwise fail every one of its cells, and be counted
    as that model failing. A target that lists no models cannot be checked: one warning
    line each, returned."""
    warnings = []
    named = [("model", s) for s in slots] + ([("judge", judge)] if judge is not None else [])
    for what, slot in named:
        listed = lists.get(slot.target_name)
        where = slot.connection.label()
        if isinstance(listed, str) or not listed:
            reason = f": {listed}" if isinstance(listed, str) else ""
            line = (f"{where} lists no models{reason}; {what} {slot.spec!r} is not checked "
                    "before sending")
            if line not in warnings:
                warnings.append(line)
            continue
        ids = [m.id for m in listed]
        if slot.model not in ids:
            shown = ", ".join(ids[:8]) + (", …" if len(ids) > 8 else "")
            raise EvalRefused(f"{what} {slot.spec!r}: {slot.model!r} is not a model "
                              f"{where} lists ({shown}); nothing was sent")
    return warnings


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


@dataclass
class Prepared:
    """A run ready to start: its models resolved, its cells, and what a resume keeps.

    Made by `prepare()`, for the headless command and the suite screen alike; `stop()`
    stops the local gateway it may have started."""

    request: EvalRequest
    store: HistoryStore | None
    slots: list[ModelSlot]
    judge_slot: ModelSlot | None
    all_cells: list[Cell]
    todo: list[Cell]
    before: list[CellResult]
    """Results saved by an earlier stretch of the run (not_run ones left out)."""
    run_id: str
    created_at: float
    gateway: LocalGateway | None
    warnings: list[str] = field(default_factory=list)
    """One line each for stderr (or a notice): e.g. the history refused the run."""
    saved: tuple[list[CellResult], list[dict[str, object]]] | None = None
    """A resumed run's results (not_run ones too) and pairwise verdicts as read when it
    was taken up: its whole record when nothing is left to do."""
    user: str = ""
    """Who started the run: as the history keeps it (a resumed run stays its starter's),
    else the request's."""
    pending: PendingSaves | None = None
    """The run's writes to `store`, waiting for its server when it cannot be reached (a
    shared history): given by whoever opened the store (`eval`, the suite screen)."""

    @property
    def total(self) -> int:
        return len(self.all_cells)

    @property
    def self_judge(self) -> bool:
        return _self_judge(self.slots, self.judge_slot)

    def make_run(self, on_cell: CellListener | None = None, *, keep_events: bool = False
                 ) -> SuiteRun:
        """The engine's run over `todo` (with the judge, the cost already spent, and a
        pairwise resume's state)."""
        request, store, before = self.request, self.store, self.before
        suite = request.suite
        spent = sum((r.cost.usd for r in before if r.cost.usd is not None), Decimal(0))
        spent += sum((r.judge_cost_usd for r in before if r.judge_cost_usd is not None),
                     Decimal(0))
        # With a history, the results are read back from it at the end (`results()`);
        # a shared one's server may be away by then: they are kept in hand too.
        options = replace(request.options,
                          keep_results=store is None or store.address is not None,
                          keep_events=keep_events)
        judge_slot = self.judge_slot
        judge = None if judge_slot is None else Judge(
            judge_slot, concurrency=suite.judge_concurrency, policy=options.retry,
            idle_timeout=options.idle_timeout, headers=options.headers,
            simulate=simulate_header(judge_slot.scenario) if judge_slot.scenario else "",
            rubric_template=suite.judge_prompt, pairwise_template=suite.pairwise_prompt)
        run = SuiteRun(suite, self.slots, run_id=self.run_id, options=options, store=store,
                       on_cell=on_cell, spent=spent, judge=judge, pending=self.pending)
        if suite.pairwise and judge is not None and store is not None and request.run_id:
            with contextlib.suppress(HistoryUnavailable):
                run.resume_pairs(*_saved_pair_state(store, self.run_id, self.slots, before))
        return run

    def finish(self, run: SuiteRun, outcome: RunOutcome
               ) -> tuple[list[CellResult], RunSummary]:
        """Every result of the run in suite order (read back from the history), the run
        marked finished or stopped there, and its summary."""
        if self.saved is not None and not self.todo and not run.pairs \
                and not outcome.results:
            # Nothing was left to run (a finished run reopened): what was read when it
            # was taken up is all of it, and a second read of thousands of cells would
            # only delay the summary.
            results, pairs = list(self.saved[0]), list(self.saved[1])
        else:
            results, pairs = _all_results(self.store, self.run_id, self.before,
                                          outcome.results, run.pairs)
        if not outcome.unsaved:
            self.record_end(outcome.stopped)
        suite = self.request.suite
        results = suite.in_order(results)
        judge_slot = self.judge_slot
        summary = summarize(suite.models, results,
                            judge=judge_slot.spec if judge_slot else None,
                            self_judge=self.self_judge, pairwise=pairs,
                            judge_simulated=bool(judge_slot and judge_slot.simulated))
        return results, summary

    def record_end(self, stopped: str | None) -> None:
        """The run marked finished (`stopped` None) or stopped, and why, in the history."""
        if self.store is None:
            return
        with contextlib.suppress(HistoryUnavailable, RunRefused):
            if self.pending is not None:
                self.pending.write(finish_write(self.run_id, finished=stopped is None,
                                                stopped=stopped), "A suite run's end")
            else:
                self.store.finish_run(self.run_id, finished=stopped is None, stopped=stopped)

    def stop(self) -> None:
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None


def prepare(request: EvalRequest, store: HistoryStore | None,
            start_local: Callable[[], LocalGateway]) -> Prepared:
    """`prepare_run` on a loop and a client of its own, for a script with no loop of
    its own running (benchmarks, screenshots). `eval`, `eval --tui` and the app prepare
    on the loop the run then runs on, through its client."""

    async def prepared() -> Prepared:
        async with StreamClient() as client:
            return await prepare_run(request, store, start_local, client)

    return asyncio.run(prepared())


async def prepare_run(request: EvalRequest, store: HistoryStore | None,
                      start_local: Callable[[], LocalGateway], client: StreamClient
                      ) -> Prepared:
    """Resolve the suite's models (starting the local gateway if one is on it), read what
    their targets list through `client` (the run's own, in `eval`), and create the run in
    the history (or take up the one `request.run_id` names). Raises `EvalRefused`
    (nothing started is left running).

    What blocks (starting the local gateway, the history's reads and writes) runs in a
    thread: on the app's loop, the screen goes on answering meanwhile."""
    from anoman_tui.suites.engine import new_run_id

    suite = request.suite
    resolved = await asyncio.to_thread(resolve_models, request, start_local)
    try:
        judge_slots = [resolved.judge] if resolved.judge is not None else []
        lists = await model_lists([*resolved.slots, *judge_slots], client)
        infos = [replace(slot, info=_listed_info(lists, slot))
                 for slot in [*resolved.slots, *judge_slots]]
        slots, judge_slot = infos[:len(resolved.slots)], (
            infos[-1] if resolved.judge is not None else None)
        unlisted = check_listed(resolved.slots, resolved.judge, lists)
        check_simulated_faults(slots)
        all_cells = cells_of(suite, slots)
        saved: list[dict[str, object]] = []
        saved_pairs: list[dict[str, object]] | None = None
        run_id = request.run_id or new_run_id()
        created_at = time.time()
        warnings = unlisted
        user = request.user

        def take_up() -> None:
            nonlocal saved, saved_pairs, run_id, created_at, user, store
            if store is None:
                return
            try:
                if request.run_id is not None:
                    stored = store.run(request.run_id)
                    assert stored is not None  # the command line checked it
                    saved, created_at = list(stored.results), stored.created_at
                    saved_pairs = list(stored.pairs)
                    run_id, user = stored.run_id, stored.user
                    if request.retry_errors:
                        failed = missing_cells(all_cells, saved, failed_only=True)
                        store.delete_cells(run_id, [c.key for c in failed])
                        keys = {c.key for c in failed}
                        saved = [r for r in saved
                                 if (r["case"], r["model"], r["repeat"]) not in keys]
                    store.finish_run(run_id, finished=False, stopped=None)
                else:
                    store.create_run(run_id, name=suite.name, suite=suite.to_json(),
                                     settings={**request.stored_settings(),
                                               "self_judge": _self_judge(slots, judge_slot),
                                               "judge_simulated": bool(
                                                   judge_slot and judge_slot.simulated)},
                                     models=list(suite.models),
                                     cells=len(all_cells), created_at=created_at)
                    user = store.user
            except HistoryUnavailable as exc:
                warnings.append(f"results not saved to the history: {exc.reason}")
                store = None

        await asyncio.to_thread(take_up)
        todo = missing_cells(all_cells, saved) if request.run_id is not None else all_cells
        every_saved = _from_saved(saved)
        before = [r for r in every_saved if r.status != NOT_RUN]
    except BaseException:
        if resolved.gateway is not None:
            resolved.gateway.stop()
        raise
    return Prepared(request=request, store=store, slots=slots, judge_slot=judge_slot,
                    all_cells=all_cells, todo=todo, before=before, run_id=run_id,
                    created_at=created_at, gateway=resolved.gateway, warnings=warnings,
                    user=user,
                    saved=None if saved_pairs is None or store is None
                    else (every_saved, saved_pairs))


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

