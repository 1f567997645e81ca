"""A suite's judge over real sockets: `llm-rubric` assertions decided by a judge model
whose replies are scripted byte for byte (tests/replay_server.py), while the models
under test stream from the local gateway.

What is checked: a verdict passes only with `pass` true and a score at its threshold; a
reply the judge's parse refuses (no JSON, no `pass`, a score outside 0..1) and a judge
stream that fails are judge errors (the assertion and the case undecided, never a pass
or a fail of the model), counted with the judge's calls and cost apart from the models'.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.judging.calls import Judge
from anoman_tui.streaming.retry import RetryPolicy
from anoman_tui.suites.engine import (
    RunOptions,
    SuiteRun,
    cells_of,
)
from anoman_tui.suites.model import Assertion, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize
from anoman_tui.targets import with_model_info
from tests.helpers import LocalGateways
from tests.replay_server import ReplayServer, Script
from tests.suites.judge_scripts import reply, slot_at


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    return make_module_gateway(rate_limit_rpm=100_000)


async def judged(gateway: EmbeddedGateway, replay: ReplayServer, judge_model: str,
                 *asserts: Assertion, threshold: float | None = None,
                 models: tuple[str, ...] = ("anoman-lite",)) -> tuple[list[CellResult],
                                                                       SuiteRun]:
    case = Case("kettle", "How do I descale a kettle?", asserts=asserts, threshold=threshold)
    the_suite = Suite(name="judged", models=models, cases=(case,), judge=judge_model)
    slots = await with_model_info([slot_at(gateway.base_url, gateway.api_key, m, i)
                                   for i, m in enumerate(models, start=1)])
    judge = Judge(slot_at(replay.base_url, "sk-judge", judge_model, 0), concurrency=2,
                  policy=RetryPolicy(retries=0), idle_timeout=10)
    engine = SuiteRun(the_suite, slots, run_id="run-judged", options=RunOptions(),
                      judge=judge)
    outcome = await engine.run(cells_of(the_suite, slots))
    assert outcome.stopped is None
    return outcome.results, engine


RUBRIC = Assertion("llm-rubric", "Explains how to descale a kettle")


async def test_a_verdict_passes_with_pass_true_and_a_score_at_its_threshold(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = reply('Looks right.\n{"pass": true, "score": 0.8, '
                                    '"reason": "covers descaling"}')
    results, engine = await judged(gateway, replay, "judge", RUBRIC,
                                   Assertion("llm-rubric", "Is short", threshold=0.9))
    (cell,) = results
    first, second = cell.assertions
    assert (first.passed, first.judge_pass, first.judge_score) == (True, True, 0.8)
    assert first.judge_reason == "covers descaling"
    # pass true but 0.8 < 0.9: the assertion fails, and so does the case (all must pass).
    assert second.passed is False and second.judge_pass is True
    assert cell.passed is False
    assert cell.judge_calls == 2 and cell.judge_errors == 0
    assert cell.judge_cost_usd == Decimal("0.000020")
    assert engine.progress.judge_calls == 2
    # The judge was asked once per rubric, with the answer and the rubric in its prompt.
    asked = [r for r in replay.requests if r.body.get("model") == "judge"]
    assert len(asked) == 2
    prompt = str(asked[0].body["messages"][-1]["content"])  # type: ignore[index]
    assert "How do I descale a kettle?" in prompt and cell.answer[:40] in prompt
    assert asked[0].headers.get("cache-control") == "no-cache"
    as_json = cell.to_json()["assertions"][0]
    assert as_json["judge_pass"] is True and as_json["judge_score"] == 0.8


@pytest.mark.parametrize(("text", "error"), [
    ("I think it is fine.", "no JSON object"),
    ('{"score": 0.9, "reason": "no pass field"}', "pass"),
    ('{"pass": true, "score": 1.4}', "1.4"),
    ('{"pass": "yes", "score": 0.9}', "pass"),
])
async def test_a_reply_that_cannot_be_read_is_a_judge_error_not_a_pass_nor_a_fail(
        gateway: EmbeddedGateway, replay: ReplayServer, text: str, error: str) -> None:
    replay.scripts["judge"] = reply(text)
    results, engine = await judged(gateway, replay, "judge", RUBRIC,
                                   Assertion("icontains", "kettle"))
    (cell,) = results
    rubric, mechanical = cell.assertions
    assert rubric.passed is None and rubric.judge_error is not None
    assert error in rubric.judge_error
    assert mechanical.passed is True
    # The case depends on the undecided rubric: neither passed nor failed.
    assert cell.passed is None
    assert (cell.judge_calls, cell.judge_errors) == (1, 1)
    assert engine.progress.judge_errors == 1
    document = cell.to_json()
    assert document["pass"] is None and document["assertions"][0]["pass"] is None
    assert error in document["assertions"][0]["judge_error"]
    summary = summarize(("anoman-lite",), results, judge="judge")
    assert summary.judge is not None
    assert (summary.judge.calls, summary.judge.errors) == (1, 1)
    # Not counted as judged: the pass rate does not move either way.
    assert summary.models[0].judged == 0


async def test_an_undecided_rubric_does_not_undecide_a_case_the_rest_decides(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = reply("no verdict here")
    results, _ = await judged(gateway, replay, "judge", RUBRIC,
                              Assertion("icontains", "kettle", weight=3.0), threshold=0.75)
    # 3 of 4 weight passed: the threshold is met whatever the judge would have said.
    assert results[0].passed is True
    results, _ = await judged(gateway, replay, "judge", RUBRIC,
                              Assertion("icontains", "no such word", weight=3.0),
                              threshold=0.5)
    # 3 of 4 weight failed: no verdict of the judge could make it pass.
    assert results[0].passed is False


async def test_a_failed_judge_stream_is_a_judge_error_with_its_kind(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = Script(
        status=500, content_type="application/json",
        body=[json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode()],
        chunked=False)
    results, engine = await judged(gateway, replay, "judge", RUBRIC)
    (cell,) = results
    assert cell.status == "completed"  # the model's answer is fine
    assert cell.passed is None
    (rubric,) = cell.assertions
    assert rubric.passed is None and rubric.judge_error is not None
    assert "http_error" in rubric.judge_error
    assert (cell.judge_calls, cell.judge_errors) == (0, 1)
    assert engine.progress.judge_errors == 1


async def test_not_llm_rubric_passes_when_the_judge_says_it_does_not_hold(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = reply('{"pass": false, "score": 0.1, "reason": "rude"}')
    results, _ = await judged(gateway, replay, "judge",
                              Assertion("llm-rubric", "Is rude to the user", negate=True))
    (rubric,) = results[0].assertions
    assert rubric.passed is True and rubric.judge_pass is False
    assert results[0].passed is True


async def run_pairwise(gateway: EmbeddedGateway, replay: ReplayServer, cases: int,
                       models: tuple[str, ...]) -> tuple[SuiteRun, list[CellResult]]:
    the_cases = tuple(Case(str(i), f"Question {i}: how do I descale a kettle?")
                      for i in range(1, cases + 1))
    the_suite = Suite(name="pairwise", models=models, cases=the_cases, judge="judge",
                      pairwise=True)
    slots = await with_model_info([slot_at(gateway.base_url, gateway.api_key, m, i)
                                   for i, m in enumerate(models, start=1)])
    judge = Judge(slot_at(replay.base_url, "sk-judge", "judge", 0), concurrency=4,
                  policy=RetryPolicy(retries=0), idle_timeout=10)
    engine = SuiteRun(the_suite, slots, run_id="run-pairwise", options=RunOptions(),
                      judge=judge)
    outcome = await engine.run(cells_of(the_suite, slots))
    assert outcome.stopped is None
    return engine, outcome.results


MODELS3 = ("anoman-lite", "claude-sonnet-4-6", "qwen3-coder")


async def test_a_judge_that_always_answers_a_is_caught_by_the_swap(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    # Its own reasoning quotes [[B]]; only its last verdict counts.
    replay.scripts["judge"] = reply("B might be better [[B]]... no. Final verdict: [[A]]")
    engine, results = await run_pairwise(gateway, replay, 2, MODELS3)
    # Every pair of every case, judged twice, once in each order.
    assert len(engine.pairs) == 2 * 3
    assert engine.progress.judge_calls == 12
    asked = [r for r in replay.requests if r.body.get("model") == "judge"]
    assert len(asked) == 12
    summary = summarize(MODELS3, results, judge="judge", pairwise=engine.pairs)
    judge = summary.judge
    assert judge is not None and (judge.calls, judge.errors) == (12, 0)
    assert judge.cost_usd == Decimal("0.000120")
    assert judge.position_consistency == 0.0
    assert judge.first_position_wins == 1.0
    assert judge.longer_wins is None  # no pair was decided after the swap
    assert {row["winner"] for row in summary.pairwise} == {"tie"}
    assert [r.model for r in summary.ratings] == list(MODELS3)
    assert all(r.ties == 4 and r.wins == r.losses == 0 for r in summary.ratings)
    assert all(abs(r.rating - 1000) < 1e-6 for r in summary.ratings)


async def test_the_prompt_shows_answer_a_before_b_and_swaps_them(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = reply("[[C]]")
    engine, results = await run_pairwise(gateway, replay, 1, MODELS3[:2])
    answers = {r.model: r.answer for r in results}
    prompts = [str(r.body["messages"][-1]["content"])  # type: ignore[index]
               for r in replay.requests if r.body.get("model") == "judge"]
    assert len(prompts) == 2
    first_a = [p for p in prompts if p.index("Assistant A") < p.index("Assistant B")]
    assert len(first_a) == 2  # A's block always comes first...
    orders = sorted((p.find(answers[MODELS3[0]][:30]) < p.find(answers[MODELS3[1]][:30]))
                    for p in prompts)
    assert orders == [False, True]  # ...and each model is shown first once
    (pair,) = engine.pairs
    assert (pair["ab"], pair["ba"], pair["winner"]) == ("C", "C", "tie")


async def test_an_unreadable_pairwise_reply_is_a_judge_error_and_no_winner(
        gateway: EmbeddedGateway, replay: ReplayServer) -> None:
    replay.scripts["judge"] = reply("Both are fine, I cannot choose.")
    engine, results = await run_pairwise(gateway, replay, 1, MODELS3[:2])
    (pair,) = engine.pairs
    assert pair["winner"] is None and pair["ab"] is None and pair["ba"] is None
    assert len(pair["errors"]) == 2 and "verdict" in pair["errors"][0]
    summary = summarize(MODELS3[:2], results, judge="judge", pairwise=engine.pairs)
    assert summary.judge is not None and summary.judge.errors == 2
    assert summary.judge.position_consistency is None
    assert all(r.wins == r.ties == r.losses == 0 for r in summary.ratings)
