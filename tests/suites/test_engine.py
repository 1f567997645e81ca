"""The suite engine over real sockets: every cell one stream through the stream core
against the local gateway, checked, saved to a real history file as it finishes; rate
limits, transport retries, the cost limit, a stop and a resume."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import SecretStr

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from anoman_tui.judging.calls import Judge
from anoman_tui.streaming import StreamClient
from anoman_tui.streaming.retry import RetryPolicy
from anoman_tui.suites.engine import (
    RunOptions,
    SuiteRun,
    cells_of,
    missing_cells,
)
from anoman_tui.suites.model import Assertion, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize
from anoman_tui.targets import (
    Connection,
    ModelSlot,
    TargetConfig,
    from_config,
    gateway_target,
    with_model_info,
)
from tests.helpers import LocalGateways
from tests.suites.judge_scripts import slot_at


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    return make_module_gateway(rate_limit_rpm=100_000)


def slot(gateway: EmbeddedGateway, model: str, pane: int, scenario: str | None = None,
         spec: str | None = None) -> ModelSlot:
    target = gateway_target(gateway.base_url, SecretStr(gateway.api_key))
    return ModelSlot(spec=spec or model, model=model, pane=pane,
                     connection=Connection(target=target, base_url=gateway.base_url,
                                           api_key=SecretStr(gateway.api_key)),
                     scenario=scenario)


def suite(*cases: Case, models: tuple[str, ...] = ("anoman-lite", "claude-sonnet-4-6"),
          repeat: int = 1) -> Suite:
    # Temperature 0: the simulated answers, so the assertions' outcomes, are fixed.
    return Suite(name="engine test", models=models, cases=cases, repeat=repeat,
                 temperature=0.0)


def run(the_suite: Suite, slots: list[ModelSlot], store: HistoryStore | None, run_id: str,
        **options: object) -> tuple[SuiteRun, list[CellResult], str | None]:
    slots = asyncio.run(with_model_info(slots))
    engine = SuiteRun(the_suite, slots, run_id=run_id, store=store,
                      options=RunOptions(**options))  # type: ignore[arg-type]
    if store is not None and store.run(run_id) is None:
        store.create_run(run_id, name=the_suite.name, suite=the_suite.to_json(), settings={},
                         models=list(the_suite.models),
                         cells=len(the_suite.cases) * len(slots) * the_suite.repeat)
    outcome = asyncio.run(engine.run(cells_of(the_suite, slots)))
    return engine, outcome.results, outcome.stopped


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    with HistoryStore.open(tmp_path / "history.sqlite3") as opened:
        yield opened


def test_every_cell_streams_once_and_is_saved_as_a_pane_of_its_case(
        gateway: EmbeddedGateway, store: HistoryStore) -> None:
    cases = (Case("kettle", "How do I get a refund for a broken kettle?",
                  asserts=(Assertion("icontains", "kettle"),)),
             Case("2", "Explain what a palindrome is."))
    the_suite = suite(*cases, repeat=2)
    slots = [slot(gateway, "anoman-lite", 1), slot(gateway, "claude-sonnet-4-6", 2)]
    _, results, stopped = run(the_suite, slots, store, "run-a")
    assert stopped is None
    assert sorted(r.key for r in results) == sorted(
        (c.id, m, r) for c in cases for m in the_suite.models for r in (1, 2))
    assert all(r.status == "completed" and r.ttft_s and r.e2e_s for r in results)
    # Judged where there are assertions; recorded, not judged, where there are none.
    assert {r.passed for r in results if r.case == "kettle"} == {True}
    assert {r.passed for r in results if r.case == "2"} == {None}
    # One comparison per (case, repeat), the models' answers its panes, in suite order.
    groups = {(r.case, r.repeat): r.comparison_id for r in results}
    assert len(set(groups.values())) == 4
    for (case_id, _repeat), comparison_id in groups.items():
        assert comparison_id is not None
        record = store.get(comparison_id)
        assert record is not None and record.source == "eval"
        assert [p.model for p in record.panes] == ["anoman-lite", "claude-sonnet-4-6"]
        assert record.prompt == next(c.prompt for c in cases if c.id == case_id)
        assert all(p.simulated for p in record.panes)
        # Recorded, so each case can be replayed like any comparison.
        assert set(store.recordings(comparison_id)) == {1, 2}
    stored = store.run("run-a")
    assert stored is not None and len(stored.results) == 8
    # Independent repeats: the gateway was asked not to answer from its cache.
    assert not any(r.cache_hit for r in results)


def test_a_failed_stream_fails_its_case_whatever_the_assertions(
        gateway: EmbeddedGateway, store: HistoryStore) -> None:
    case = Case("c", "Say something about kettles.",
                asserts=(Assertion("equals", "x", negate=True),))
    slots = [slot(gateway, "anoman-lite", 1), slot(gateway, "claude-sonnet-4-6", 2,
                                                    scenario="interrupt-after=3")]
    _, results, _ = run(suite(case), slots, store, "run-fail")
    by_model = {r.model: r for r in results}
    assert by_model["anoman-lite"].passed is True
    failed = by_model["claude-sonnet-4-6"]
    assert failed.status == "stream_error" and failed.passed is False
    assert failed.failure and failed.assertions == ()


def test_the_scenario_names_of_the_compare_screen_work_in_a_suite(
        gateway: EmbeddedGateway) -> None:
    case = Case("c", "Hello")
    slots = [slot(gateway, "anoman-lite", 1, scenario="guardrail")]
    _, results, _ = run(suite(case, models=("anoman-lite",)), slots, None, "run-named")
    assert results[0].status == "http_error" and "BLOCKED" in (results[0].failure or "")


def test_the_cost_limit_starts_nothing_more_and_lists_the_rest_as_not_run(
        gateway: EmbeddedGateway, store: HistoryStore) -> None:
    cases = tuple(Case(str(i), f"Question {i} about refunds") for i in range(1, 6))
    slots = [slot(gateway, "claude-sonnet-4-6", 1)]
    engine, results, stopped = run(suite(*cases, models=("claude-sonnet-4-6",)), slots,
                                   store, "run-cost", concurrency=1,
                                   max_cost=Decimal("0.0000001"))
    assert stopped == "cost_limit"
    ran = [r for r in results if r.status == "completed"]
    not_run = [r for r in results if r.status == "not_run"]
    assert len(ran) == 1 and len(not_run) == 4
    assert ran[0].cost.usd is not None and ran[0].cost.usd > 0
    assert engine.progress.spent == ran[0].cost.usd
    stored = store.run("run-cost")
    assert stored is not None and len(stored.results) == 5
    # A resume runs the cells that never started.
    assert len(missing_cells(cells_of(suite(*cases, models=("claude-sonnet-4-6",)), slots),
                             stored.results)) == 4


class _RateLimitedServer(ThreadingHTTPServer):
    """An OpenAI-format server that answers 429 (Retry-After: 0.2) to its first
    `refusals` requests, then streams a short answer."""

    refusals = 2
    seen = 0


class _Handler(BaseHTTPRequestHandler):
    server: _RateLimitedServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.seen += 1
        if self.server.seen <= self.server.refusals:
            body = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
            self.send_response(429)
            self.send_header("content-type", "application/json")
            self.send_header("retry-after", "0.2")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        frames = (b'data: {"choices":[{"index":0,"delta":{"content":"a refund"}}]}\n\n'
                  b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
                  b"data: [DONE]\n\n")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(frames)))
        self.end_headers()
        self.wfile.write(frames)


@pytest.fixture
def limited_server() -> Iterator[_RateLimitedServer]:
    server = _RateLimitedServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _plain_slot(base_url: str, model: str = "m") -> ModelSlot:
    target = from_config("plain", TargetConfig(base_url=base_url))
    return ModelSlot(spec=f"plain:{model}", model=model, pane=1,
                     connection=Connection(target=target, base_url=target.base_url or ""))


def test_a_429_is_waited_out_then_the_cell_streams(limited_server: _RateLimitedServer) -> None:
    url = f"http://127.0.0.1:{limited_server.server_address[1]}"
    case = Case("c", "refund?", asserts=(Assertion("icontains", "refund"),))
    engine, results, _ = run(suite(case, models=("plain:m",)), [_plain_slot(url)], None,
                             "run-429")
    assert results[0].status == "completed" and results[0].passed is True
    assert results[0].retries == 2 and engine.progress.rate_limited == 2
    assert limited_server.seen == 3


def test_a_server_that_cannot_be_reached_is_retried_then_reported(
        unused_tcp_port: int) -> None:
    url = f"http://127.0.0.1:{unused_tcp_port}"
    engine, results, _ = run(suite(Case("c", "hi"), models=("plain:m",)), [_plain_slot(url)],
                             None, "run-down", retry=RetryPolicy(retries=2))
    assert results[0].status == "transport_error" and results[0].retries == 2
    assert engine.progress.retries == 2


def test_a_stopped_run_resumes_to_the_figures_of_an_uninterrupted_one(
        gateway: EmbeddedGateway, store: HistoryStore) -> None:
    cases = tuple(Case(str(i), f"Tell me about topic number {i}",
                       asserts=(Assertion("icontains", f"{i}"),)) for i in range(1, 9))
    the_suite = suite(*cases)
    slots = [slot(gateway, "anoman-lite", 1), slot(gateway, "claude-sonnet-4-6", 2)]
    all_cells = cells_of(the_suite, slots)
    store.create_run("run-stop", name="s", suite=the_suite.to_json(), settings={},
                     models=list(the_suite.models), cells=len(all_cells))
    finished: list[CellResult] = []
    engine: SuiteRun

    def on_cell(cell: CellResult) -> None:
        finished.append(cell)
        if len(finished) == 5:
            engine.stop()

    engine = SuiteRun(the_suite, slots, run_id="run-stop", store=store,
                      options=RunOptions(concurrency=2), on_cell=on_cell)
    outcome = asyncio.run(engine.run(all_cells))
    assert outcome.stopped == "interrupted"
    stored = store.run("run-stop")
    assert stored is not None
    saved = len(stored.results)
    assert 5 <= saved < len(all_cells)
    todo = missing_cells(all_cells, stored.results)
    assert len(todo) == len(all_cells) - saved
    again = SuiteRun(the_suite, slots, run_id="run-stop", store=store,
                     options=RunOptions(concurrency=2))
    assert asyncio.run(again.run(todo)).stopped is None
    stored = store.run("run-stop")
    assert stored is not None
    resumed = [CellResult.from_json(r) for r in stored.results]
    assert sorted(r.key for r in resumed) == sorted(c.key for c in all_cells)
    # The same cells run straight through give the same verdicts and counts.
    _, straight, _ = run(the_suite, slots, None, "run-straight")
    a, b = summarize(the_suite.models, resumed), summarize(the_suite.models, straight)
    for left, right in zip(a.models, b.models, strict=True):
        assert (left.passed, left.judged, left.results, left.failures) == \
            (right.passed, right.judged, right.results, right.failures)
    assert [(p.a_only, p.b_only, p.p_value) for p in a.pairs] == \
        [(p.a_only, p.b_only, p.p_value) for p in b.pairs]


def test_streams_in_flight_never_exceed_the_concurrency(gateway: EmbeddedGateway) -> None:
    cases = tuple(Case(str(i), f"Question {i}") for i in range(1, 13))
    the_suite = suite(*cases)
    slots = [slot(gateway, "anoman-lite", 1), slot(gateway, "claude-sonnet-4-6", 2)]
    engine = SuiteRun(the_suite, slots, run_id="run-c", options=RunOptions(concurrency=3))
    most = 0

    async def go() -> None:
        nonlocal most
        task = asyncio.create_task(engine.run(cells_of(the_suite, slots)))
        while not task.done():
            most = max(most, engine.progress.running)
            await asyncio.sleep(0.001)
        await task

    asyncio.run(go())
    assert engine.progress.done == 24
    assert 2 <= most <= 3


async def test_cancelling_the_judge_ends_its_retry_after_wait_and_sends_nothing_more(
        gateway: EmbeddedGateway) -> None:
    """The judge waiting out a 429 (`Retry-After: 100000`, capped at 60 s) stops waiting
    when cancelled (Ctrl+C), and sends no request after it."""
    judge = Judge(slot_at(gateway.base_url, gateway.api_key, "anoman-lite", 0),
                  concurrency=1, policy=RetryPolicy(retries=0), idle_timeout=10,
                  headers=(("X-Anoman-Simulate", "status=429,retry-after=100000"),))
    before = gateway.state.ledger.count()
    async with StreamClient() as client:
        asking = asyncio.create_task(judge.ask(client, "Is this right?"))
        deadline = asyncio.get_running_loop().time() + 30
        while gateway.state.ledger.count() == before and not asking.done() \
                and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        assert not asking.done()
        judge.cancel()
        call = await asyncio.wait_for(asking, 5)
    assert call.error is not None and not call.answered
    assert gateway.state.ledger.count() == before + 1
