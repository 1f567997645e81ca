"""Running a suite: every (case, model, repeat) one stream through the stream core.

The run is a dispatcher over the cells, in suite order (case by case, each case's
repeats, each repeat's models), so a case's comparison completes early and a killed run
leaves whole cases behind. It starts a cell when

- fewer than `concurrency` streams are in flight in all,
- its target has room (its `max_concurrency`, lowered on a 429 and raised again after
  a window of successes: `anoman_tui.streaming.retry.ConcurrencyLimit`), and is not
  waiting out a rate limit (`Retry-After`, else an exponential back-off),
- and the spent cost has not reached `max_cost` (cells never started are `not_run`).

A failed cell is sent again as the run's `RetryPolicy` says (`RunOptions.retry`, the
same policy as the judge's calls): a 429 puts the cell back at the head of its target's
queue, its `Retry-After` waited out up to `max_retry_after` seconds
(`--max-retry-after`: a server asking for a day is not obeyed for a day), and a wait of
`LONG_WAIT_S` or more is told to `on_wait` (the views say so); a transport error (the
server could not be reached: `transport_error`, docs/wire-contract.md §8) is sent again
up to `retries` times; any other failure is the cell's result. Stopping (Ctrl+C,
SIGTERM) ends every wait at once, and no request starts after it. Every request asks the
gateway not to answer from its cache (`Cache-Control: no-cache`, as a rerun does): the
repeats are independent measurements. An answer that comes back as a cache hit anyway
is marked and left out of the latency figures.

Each finished cell is checked (`assertions`), then saved at once (`HistoryStore.
save_cell`: the cell's result, and its answer as one pane of the (case, repeat)'s
comparison, with its recording): a SIGKILL loses only the streams in flight.

Imports the stream core, the history and the rest of `anoman_tui.suites`; no Rich, no
Textual (the views are `anoman_tui.headless.eval` and, later, the suite screen).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from anoman_tui.history import GroupInfo, HistoryStore, HistoryUnavailable
from anoman_tui.history.builder import PaneTurn, comparison_record, for_history
from anoman_tui.history.pending import PendingSaves, cell_write, pair_write
from anoman_tui.judges.pairs import PairJudgement
from anoman_tui.judging.calls import Judge
from anoman_tui.streaming import (
    ChatTurn,
    ModelStream,
    StreamClient,
    StreamRequest,
    StreamResult,
)
from anoman_tui.streaming.cost import Cost, cost_of
from anoman_tui.streaming.retry import LONG_WAIT_S, ConcurrencyLimit, RetryPolicy
from anoman_tui.suites.assertions import Answer, case_verdict, check, rubric_result
from anoman_tui.suites.model import NOT_RUN, Case, CellResult, Suite
from anoman_tui.suites.scenarios import simulate_header
from anoman_tui.targets import ModelSlot, stream_request

QUEUED = object()
"""What `PendingSaves.write` returns here for a write that waits for the server."""

log = logging.getLogger(__name__)

CellKey = tuple[str, str, int]
"""(case id, model as written, repeat)."""

READ_GAP_S = 0.05
"""Once a stream's answer has begun, its socket is read at most this often: a provider
sends an event per token, and each read costs the same however much it brings (at 32
streams of 100 tok/s, reading every event as it came took 56% of a core,
benchmarks/eval_load.py). The first answer token (TTFT) is stamped on arrival; a later
one, and so the end of the stream, up to this late (docs/suites.md, "Cells")."""
READ_GRID = (READ_GAP_S, 0.0)
"""(grid, lead) of those reads: every stream is read on the same multiples of
`READ_GAP_S`, so one pass of the event loop reads all that are talking instead of waking
once for each (at 32 streams, −20% of the run's CPU, benchmarks/eval_load.py)."""
READ_MIN_GAP_S = 0.001
"""The gap paced reads need besides the grid (the grid alone spaces them)."""
KEEP_ALIVE = 32
"""Idle connections the models' streams keep open (a judge's room comes on top)."""


def new_run_id(now: float | None = None) -> str:
    """`run-20261203-071233-3fa1`: sortable by time, unique enough to be typed."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    return f"run-{stamp}-{uuid.uuid4().hex[:4]}"


@dataclass(frozen=True)
class Cell:
    case: Case
    slot: ModelSlot
    repeat: int
    order: int
    """Its place in the suite's order (the dispatcher starts the lowest first)."""

    @property
    def key(self) -> CellKey:
        return (self.case.id, self.slot.spec, self.repeat)


def cells_of(suite: Suite, slots: Sequence[ModelSlot]) -> list[Cell]:
    """Every cell of the suite, in the order they are started."""
    cells: list[Cell] = []
    for case in suite.cases:
        for repeat in range(1, suite.repeat + 1):
            for slot in slots:
                cells.append(Cell(case, slot, repeat, len(cells)))
    return cells


@dataclass(frozen=True)
class RunOptions:
    concurrency: int = 4
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How a failed cell, and a judge's call, is sent again (`--retries`,
    `--max-retry-after`)."""
    max_cost: Decimal | None = None
    idle_timeout: float = 60.0
    record_limit: int | None = 16_000_000
    """Record each stream for replay when its comparison's streams fit this many bytes
    (None: not recorded)."""
    target_limits: dict[str, int] = field(default_factory=dict)
    """Target name -> its `max_concurrency`."""
    headers: tuple[tuple[str, str], ...] = ()
    keep_events: bool = False
    """Each stream keeps its events (`ModelStream.events`), so a view can open a running
    cell and show its answer so far (the suite screen); headless runs need not pay."""
    keep_results: bool = True
    """Keep every result in memory for `RunOutcome.results`. Off when the caller reads
    them back from the history: results held to the end pin the memory allocated between
    them, and the process grew with the number of cells (100 -> 1,000 cases x 3 models:
    72 -> 99 MB kept, 71 -> 84 MB not; benchmarks/eval_load.py)."""


@dataclass
class Progress:
    """What a view shows while the run goes on."""

    total: int
    done: int = 0
    failed: int = 0
    """Cells whose stream did not complete."""
    passed: int = 0
    judged: int = 0
    running: int = 0
    not_run: int = 0
    retries: int = 0
    """Transport errors retried."""
    rate_limited: int = 0
    """429s waited out."""
    judge_calls: int = 0
    """Requests the judge answered."""
    judge_errors: int = 0
    """Verdicts the judge could not give (a failed stream, a reply that could not be read)."""
    waiting_until: float = 0.0
    """monotonic: when the last target waiting out a rate limit may start again."""
    spent: Decimal = Decimal(0)
    cost_estimated: bool = False
    started_at: float = field(default_factory=time.monotonic)

    @property
    def waiting_s(self) -> float:
        return max(0.0, self.waiting_until - time.monotonic())

    def eta_s(self) -> float | None:
        """Seconds left at the pace so far; None until a cell has finished."""
        if not self.done:
            return None
        left = self.total - self.done - self.not_run
        return (time.monotonic() - self.started_at) / self.done * max(left, 0)


CellListener = Callable[[CellResult], None]


@dataclass(frozen=True)
class RunOutcome:
    results: list[CellResult]
    """This run's cells, in the order they finished (not_run ones at the end); with
    `keep_results` off, only those that could not be saved."""
    stopped: str | None
    """`cost_limit`, `interrupted`, or None when every cell ran."""
    unsaved: str | None = None
    """Why results could not be saved to the history, if they could not."""


class SuiteRun:
    """One run of a suite's cells (all of them, or what a resume still needs)."""

    def __init__(self, suite: Suite, slots: Sequence[ModelSlot], *, run_id: str,
                 options: RunOptions, store: HistoryStore | None = None,
                 on_cell: CellListener | None = None, spent: Decimal = Decimal(0),
                 judge: Judge | None = None, pending: PendingSaves | None = None) -> None:
        self.suite = suite
        self.judge = judge
        self.slots = list(slots)
        self.run_id = run_id
        self.options = options
        self.store = store
        self.pending = pending
        """Writes through `store` that wait for its server when it cannot be reached (a
        shared history); None: straight to `store`."""
        self._queued = False
        """A write waits for the server: results are kept in hand from then on."""
        self._on_cell = on_cell or (lambda cell: None)
        self._limits: dict[str, ConcurrencyLimit] = {}
        for slot in self.slots:
            name = slot.target_name
            if name not in self._limits:
                ceiling = options.target_limits.get(name) or options.concurrency
                self._limits[name] = ConcurrencyLimit(min(ceiling, options.concurrency),
                                                      options.retry)
        self.progress = Progress(total=0, spent=spent)
        self._streams: set[ModelStream] = set()
        self.live: dict[CellKey, ModelStream] = {}
        """The streams in flight by cell (read from another thread by a view: a dict's
        `get` is atomic)."""
        self.on_start: Callable[[Cell], None] = lambda cell: None
        """Told when a cell's stream starts (on the run's loop)."""
        self.on_wait: Callable[[Cell, float, float | None], None] = \
            lambda cell, wait, asked: None
        """Told when a cell is to wait out a rate limit for `LONG_WAIT_S` or more: (the
        cell, the wait in seconds, the `Retry-After` the server asked, if it did)."""
        self._stopped: asyncio.Event | None = None
        """Set by `stop()`: every wait in the run ends on it."""
        self._paused = False
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._rate_waits: dict[CellKey, int] = {}
        self._unsaved: str | None = None
        self._save_lock = asyncio.Lock()
        # Pairwise: each (case, repeat)'s answers as its cells finish (None: its stream
        # failed), the pairs already judged, and the judging under way.
        self._answers: dict[tuple[str, int], dict[str, str | None]] = {}
        self._judged_pairs: set[tuple[str, int, str, str]] = set()
        self._pair_tasks: set[asyncio.Task[None]] = set()
        self._client: StreamClient | None = None
        """The run's client, the judge's requests' too (None before the run starts)."""
        self.pairs: list[dict[str, Any]] = []
        """The pairwise verdicts of this run (`PairJudgement.to_json()` with the judge's
        `calls` and `cost_usd`), in the order judged."""

    # -- control ---------------------------------------------------------------

    def stop(self) -> None:
        """Ctrl+C: start nothing more and abort the streams in flight (their cells stay
        missing, for `--resume`)."""
        self._stopping = True
        if self._stopped is not None:
            self._stopped.set()  # the cells waiting out a 429 or a back-off stop waiting
        if self._wake is not None:
            self._wake.set()  # (a paused run waits for nothing else)
        for stream in list(self._streams):
            stream.cancel()
        if self.judge is not None:
            self.judge.cancel()

    def pause(self) -> None:
        """Start no new stream until `resume()`; those in flight go on to their end."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        if self._wake is not None:
            self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    def resume_pairs(self, answers: dict[tuple[str, int], dict[str, str | None]],
                     judged: Iterable[tuple[str, int, str, str]]) -> None:
        """What an earlier stretch of the run left: the saved answers of its (case,
        repeat)s and the pairs already judged; the pairs still missing are judged as soon
        as their (case, repeat) has every answer (at the start, for those that have)."""
        for group, by_model in answers.items():
            self._answers.setdefault(group, {}).update(by_model)
        self._judged_pairs.update(judged)

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def _keeping(self) -> bool:
        """Results are kept when asked, and once they can no longer be saved."""
        return (self.options.keep_results or self.store is None or self._unsaved is not None
                or self._queued)

    def _cost_reached(self) -> bool:
        limit = self.options.max_cost
        return limit is not None and self.progress.spent >= limit

    # -- the dispatcher ----------------------------------------------------------

    @staticmethod
    def client_of(suite: Suite, options: RunOptions) -> StreamClient:
        """A client as a run reads its streams (paced on a shared grid), with one pool
        for the models' streams and the judge's calls: room for both kept alive, or
        each judge call would close a kept connection and open another (for ~40% of
        requests, benchmarks/eval_judge.py)."""
        judging = suite.judge_concurrency if suite.judge is not None else 0
        return StreamClient(read_gap=READ_MIN_GAP_S, read_grid=READ_GRID,
                            pace_reasoning=False, keep_events=options.keep_events,
                            max_keepalive=KEEP_ALIVE + judging)

    async def run(self, cells: Sequence[Cell], client: StreamClient | None = None
                  ) -> RunOutcome:
        """Run `cells` through `client` (None: one of `client_of`'s, for this run)."""
        progress = self.progress
        progress.total = len(cells)
        queues: dict[str, deque[Cell]] = {name: deque() for name in self._limits}
        for cell in sorted(cells, key=lambda c: c.order):
            queues[cell.slot.target_name].append(cell)
        results: list[CellResult] = []
        running: dict[asyncio.Task[CellResult | None], Cell] = {}
        stopped: str | None = None
        wake = self._wake = asyncio.Event()
        self._stopped = asyncio.Event()
        if self._stopping:
            self._stopped.set()
        async with contextlib.AsyncExitStack() as clients:
            if client is None:
                client = await clients.enter_async_context(
                    self.client_of(self.suite, self.options))
            self._client = client
            for group in list(self._answers):
                self._pairs_if_complete(group)
            try:
                while any(queues.values()) or running:
                    if self._stopping:
                        stopped = "interrupted"
                        break
                    if self._cost_reached() and any(queues.values()):
                        stopped = "cost_limit"
                        for queue in queues.values():
                            while queue:
                                cell = queue.popleft()
                                result = await self._save(cell, self._not_run(cell), None)
                                if self._keeping:
                                    results.append(result)
                        continue
                    # Streams in flight, not tasks: a cell whose answer is in and waits for
                    # its judge holds no slot an answer could stream in.
                    chosen = self._next(queues) \
                        if progress.running < self.options.concurrency \
                        and not self._paused else None
                    if chosen is not None:
                        limit = self._limits[chosen.slot.target_name]
                        limit.running += 1
                        progress.running += 1
                        task = asyncio.create_task(self._cell(client, chosen, queues, wake))
                        running[task] = chosen
                        continue
                    wake.clear()
                    timeout = self._next_resume()
                    waiters: set[asyncio.Future[Any]] = {*running,
                                                           asyncio.ensure_future(wake.wait())}
                    _, pending_waiters = await asyncio.wait(
                        waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                    for waiter in pending_waiters:
                        if waiter not in running:
                            waiter.cancel()
                    for task in [t for t in running if t.done()]:
                        running.pop(task)
                        finished = task.result()
                        if finished is not None and self._keeping:
                            results.append(finished)
                # The last pairs: their judge calls were started as their cases completed.
                while self._pair_tasks and not self._stopping:
                    await asyncio.wait(set(self._pair_tasks))
            finally:
                if self._pair_tasks:
                    # Only a stop or an error leaves judging behind (the normal end waited
                    # for it): its pairs stay missing, for --resume.
                    self._stopping = True
                    if self.judge is not None:
                        self.judge.cancel()
                    await asyncio.gather(*self._pair_tasks, return_exceptions=True)
                if running:
                    self.stop()
                    for task, _cell in list(running.items()):
                        with contextlib.suppress(asyncio.CancelledError):
                            finished = await task
                            # A cell that ended on its own while the rest were aborted.
                            if finished is not None and self._keeping:
                                results.append(finished)
                    if stopped is None and self._stopping:
                        stopped = "interrupted"
        if self._stopping and stopped is None:
            stopped = "interrupted"
        return RunOutcome(results, stopped, self._unsaved)

    def _next(self, queues: dict[str, deque[Cell]]) -> Cell | None:
        """The earliest queued cell whose target may start one now."""
        now = time.monotonic()
        best: Cell | None = None
        for name, queue in queues.items():
            if queue and self._limits[name].can_start(now) and (
                    best is None or queue[0].order < best.order):
                best = queue[0]
        if best is not None:
            queues[best.slot.target_name].popleft()
        return best

    def _next_resume(self) -> float | None:
        """Seconds until a target waiting out a rate limit may start again, if any."""
        now = time.monotonic()
        waits = [limit.resume_at - now for limit in self._limits.values()
                 if limit.resume_at > now]
        return max(0.01, min(waits)) if waits else None

    # -- one cell ----------------------------------------------------------------

    async def _cell(self, client: StreamClient, cell: Cell, queues: dict[str, deque[Cell]],
                    wake: asyncio.Event) -> CellResult | None:
        limit = self._limits[cell.slot.target_name]
        progress = self.progress
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                limit.running -= 1
                progress.running -= 1
                wake.set()

        try:
            retries = 0
            policy = self.options.retry
            while True:
                if self._stopping:
                    return None  # stopped while it waited: no request after a stop
                result = await self._stream(client, cell)
                failure = result.failure
                if self._stopping and result.status == "cancelled":
                    return None  # aborted by Ctrl+C: missing, for --resume
                decision = policy.decide(failure, retries=retries,
                                         waits=self._rate_waits.get(cell.key, 0))
                if decision == "rate_limited" and failure is not None:
                    self._rate_waits[cell.key] = self._rate_waits.get(cell.key, 0) + 1
                    progress.rate_limited += 1
                    wait = limit.rate_limited(failure.retry_after_s, time.monotonic())
                    if wait >= LONG_WAIT_S:
                        self.on_wait(cell, wait, failure.retry_after_s)
                    progress.waiting_until = max(progress.waiting_until,
                                                 time.monotonic() + wait)
                    if limit.running > limit.limit:
                        # Over the lowered limit: give the slot back and queue again at
                        # the head, so it runs as soon as the target has room.
                        queues[cell.slot.target_name].appendleft(cell)
                        return None
                    await self._pause(limit.resume_at - time.monotonic())
                    continue
                if decision == "retry" and not self._stopping:
                    retries += 1
                    progress.retries += 1
                    await self._pause(policy.retry_wait(retries))
                    continue
                break
            if result.committed:
                limit.succeeded()
            release()
            cell_result = self._checked(cell, result,
                                        retries + self._rate_waits.get(cell.key, 0))
            if self.judge is not None and result.committed and any(
                    a.judged_by_model for a in cell.case.asserts):
                judged = await self._judged(client, cell, cell_result)
                if judged is None:
                    return None  # judging aborted by Ctrl+C: missing, for --resume
                cell_result = judged
            progress.done += 1
            if not result.committed:
                progress.failed += 1
            if cell_result.passed is not None:
                progress.judged += 1
                progress.passed += int(cell_result.passed)
            if cell_result.cost.usd is not None:
                progress.spent += cell_result.cost.usd
                progress.cost_estimated |= cell_result.cost.estimated
            if cell_result.judge_cost_usd is not None:
                progress.spent += cell_result.judge_cost_usd
            saved = await self._save(cell, cell_result, result)
            self._on_cell(saved)
            if self.suite.pairwise and self.judge is not None:
                group = (cell.case.id, cell.repeat)
                self._answers.setdefault(group, {})[cell.slot.spec] = \
                    result.text if result.committed else None
                self._pairs_if_complete(group)
            return saved
        finally:
            release()

    async def _pause(self, seconds: float) -> None:
        """Wait `seconds`, or less: until the run is stopped."""
        if seconds <= 0 or self._stopped is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), seconds)

    def _pairs_if_complete(self, group: tuple[str, int]) -> None:
        """Once every model of a (case, repeat) has its answer, judge each pair of those
        that completed and are not judged yet (in the suite's model order: a before b)."""
        answers = self._answers.get(group, {})
        models = [slot.spec for slot in self.slots]
        if self.judge is None or self._client is None or self._stopping \
                or any(m not in answers for m in models):
            return
        case_id, repeat = group
        question = next(c.prompt for c in self.suite.cases if c.id == case_id)
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                key = (case_id, repeat, a, b)
                text_a, text_b = answers[a], answers[b]
                if key in self._judged_pairs or text_a is None or text_b is None:
                    continue
                self._judged_pairs.add(key)
                task = asyncio.create_task(self._judge_pair(
                    self._client, key, question, text_a, text_b))
                self._pair_tasks.add(task)
                task.add_done_callback(self._pair_tasks.discard)

    async def _judge_pair(self, client: StreamClient, key: tuple[str, int, str, str],
                          question: str, text_a: str, text_b: str) -> None:
        """One pair, judged in both orders at once (a's answer shown first, then b's),
        and saved; a pair Ctrl+C stopped is left missing, for --resume."""
        judge = self.judge
        assert judge is not None
        case_id, repeat, a, b = key
        both = await asyncio.gather(judge.pairwise(client, question, text_a, text_b),
                                    judge.pairwise(client, question, text_b, text_a))
        if self._stopping:
            self._judged_pairs.discard(key)
            return
        (ab, error_ab, cost_ab, answered_ab), (ba, error_ba, cost_ba, answered_ba) = both
        errors = tuple(f"{order}: {e}" for order, e in (("a first", error_ab),
                                                       ("b first", error_ba)) if e)
        judgement = PairJudgement(case=case_id, repeat=repeat, a=a, b=b, ab=ab, ba=ba,
                                  len_a=len(text_a), len_b=len(text_b), errors=errors)
        costs = [c for c in (cost_ab, cost_ba) if c is not None]
        data = {**judgement.to_json(), "calls": int(answered_ab) + int(answered_ba),
                "cost_usd": None if not costs else str(sum(costs, Decimal(0)))}
        progress = self.progress
        progress.judge_calls += data["calls"]
        progress.judge_errors += len(errors)
        if costs:
            progress.spent += sum(costs, Decimal(0))
        self.pairs.append(data)
        store = self.store
        if store is None or self._unsaved is not None:
            return
        try:
            async with self._save_lock:
                pending = self.pending
                if pending is None:
                    await asyncio.to_thread(store.save_pair, self.run_id, data)
                elif await asyncio.to_thread(pending.write, pair_write(self.run_id, data),
                                             "A pairwise verdict", queued=QUEUED) is QUEUED:
                    self._queued = True
        except HistoryUnavailable as exc:
            self._unsaved = exc.reason
            log.warning("suite run %s: results no longer saved: %s", self.run_id, exc.reason)

    async def _judged(self, client: StreamClient, cell: Cell,
                      cell_result: CellResult) -> CellResult | None:
        """The result with its `llm-rubric` assertions decided by the judge (all of a
        cell's at once, within the judge's own limit); None when Ctrl+C stopped it."""
        judge = self.judge
        assert judge is not None
        asserts = cell.case.asserts
        rubrics = [i for i, a in enumerate(asserts) if a.judged_by_model]
        outcomes = await asyncio.gather(*(
            judge.rubric(client, cell.case.prompt, _rubric(asserts[i].value),
                         cell_result.answer)
            for i in rubrics))
        if self._stopping:
            return None
        verdicts = list(cell_result.assertions)
        spent = Decimal(0)
        known = False
        calls = errors = 0
        for i, outcome in zip(rubrics, outcomes, strict=True):
            verdicts[i] = rubric_result(asserts[i], outcome.verdict, outcome.error)
            calls += int(outcome.answered)
            errors += int(outcome.verdict is None)
            if outcome.cost_usd is not None:
                spent += outcome.cost_usd
                known = True
        self.progress.judge_calls += calls
        self.progress.judge_errors += errors
        return replace(cell_result, assertions=tuple(verdicts),
                       passed=case_verdict(cell.case, verdicts, True),
                       judge_calls=calls, judge_errors=errors,
                       judge_cost_usd=spent if known else None)

    def _request(self, cell: Cell) -> StreamRequest:
        slot, suite = cell.slot, self.suite
        return stream_request(
            slot.connection, slot.endpoint, slot.model,
            (ChatTurn(role="user", content=cell.case.prompt),), system=suite.system,
            temperature=suite.temperature, max_tokens=suite.max_tokens,
            # Independent repeats: never an answer from the gateway's cache.
            headers=(*self.options.headers, ("Cache-Control", "no-cache")),
            simulate=simulate_header(slot.scenario) if slot.scenario else "",
            idle_timeout=self.options.idle_timeout,
            record=self.options.record_limit is not None and self.store is not None,
            compare_id=f"{self.run_id}/{cell.case.id}/{cell.repeat}", pane=slot.pane)

    async def _stream(self, client: StreamClient, cell: Cell) -> StreamResult:
        stream = client.stream(self._request(cell))
        self._streams.add(stream)
        self.live[cell.key] = stream
        self.on_start(cell)
        try:
            return await stream.wait()
        finally:
            self._streams.discard(stream)
            if self.live.get(cell.key) is stream:
                del self.live[cell.key]

    def cost(self, slot: ModelSlot, result: StreamResult) -> Cost:
        return cost_of(result.anoman, result.usage, slot.info, result.provider_cost,
                       model=slot.model, provider=slot.connection.target.price_provider)

    def _checked(self, cell: Cell, result: StreamResult, retries: int) -> CellResult:
        metrics = result.metrics
        cost = self.cost(cell.slot, result)
        answer = Answer(text=result.text, ttft_s=metrics.ttft_s, e2e_s=metrics.e2e_s,
                        cost_usd=cost.usd, completed=result.committed)
        verdicts = tuple(check(a, answer) for a in cell.case.asserts) \
            if result.committed else ()
        usage = result.usage
        return CellResult(
            case=cell.case.id, model=cell.slot.spec, repeat=cell.repeat,
            status="completed" if result.committed else
            (result.failure.kind if result.failure is not None else result.status),
            passed=case_verdict(cell.case, verdicts, result.committed),
            assertions=verdicts, ttft_s=metrics.ttft_s, e2e_s=metrics.e2e_s,
            output_tokens_per_s=metrics.output_tokens_per_s,
            output_tokens=usage.completion_tokens if usage is not None else None,
            cost=cost, cache_hit=result.cache_hit,
            failure=result.failure.message if result.failure is not None else None,
            retries=retries, simulated=cell.slot.simulated, answer=result.text,
        )

    def _not_run(self, cell: Cell) -> CellResult:
        self.progress.not_run += 1
        return CellResult(case=cell.case.id, model=cell.slot.spec, repeat=cell.repeat,
                          status=NOT_RUN, simulated=cell.slot.simulated)

    async def _save(self, cell: Cell, cell_result: CellResult,
                    result: StreamResult | None) -> CellResult:
        """Into the history at once (off the loop: a save with its recording takes a few
        milliseconds that 32 streams' reads should not wait for)."""
        store = self.store
        if store is None or self._unsaved is not None:
            return cell_result
        pane = None
        if result is not None:
            slot = cell.slot
            record = comparison_record(cell.case.prompt, [PaneTurn(
                pane=slot.pane, model=slot.model, result=result,
                base_url=slot.connection.base_url, endpoint=slot.endpoint,
                target=slot.target_name, temperature=self.suite.temperature,
                max_tokens=self.suite.max_tokens, scenario=slot.scenario or "none",
                cost=cell_result.cost, simulated=slot.simulated)], source="eval",
                system_prompt=self.suite.system or "")
            pane = for_history(record, self.options.record_limit).record.panes[0]
        group = GroupInfo(prompt=cell.case.prompt, system_prompt=self.suite.system or "",
                          created_at=time.time())
        try:
            async with self._save_lock:
                pending = self.pending
                if pending is None:
                    comparison_id = await asyncio.to_thread(
                        store.save_cell, self.run_id, cell_result.to_json(),
                        case_id=cell.case.id, model=cell.slot.spec, repeat=cell.repeat,
                        status=cell_result.status, passed=cell_result.passed, pane=pane,
                        group=group)
                else:
                    write = cell_write(self.run_id, cell_result.to_json(),
                                       case_id=cell.case.id, model=cell.slot.spec,
                                       repeat=cell.repeat, status=cell_result.status,
                                       passed=cell_result.passed, pane=pane, group=group)
                    comparison_id = await asyncio.to_thread(pending.write, write,
                                                            "A suite cell", queued=QUEUED)
                    if comparison_id is QUEUED:  # kept in hand until it is written
                        self._queued, comparison_id = True, None
        except HistoryUnavailable as exc:
            self._unsaved = exc.reason
            log.warning("suite run %s: results no longer saved: %s", self.run_id, exc.reason)
            return cell_result
        return replace(cell_result, comparison_id=comparison_id)


def _rubric(value: object) -> str:
    """An `llm-rubric` assertion's rubric (its value, when it is text)."""
    return value if isinstance(value, str) else ""


def missing_cells(cells: Iterable[Cell], saved: Iterable[dict[str, object]], *,
                  failed_only: bool = False) -> list[Cell]:
    """The cells a resume still runs: those with no saved result (a `not_run` one is
    missing too); with `failed_only` (`--retry-errors`), those whose stream failed."""
    status = {(str(r["case"]), str(r["model"]), int(str(r["repeat"]))): str(r["status"])
              for r in saved}
    if failed_only:
        return [c for c in cells if c.key in status
                and status[c.key] not in ("completed", NOT_RUN)]
    return [c for c in cells if status.get(c.key, NOT_RUN) == NOT_RUN]
