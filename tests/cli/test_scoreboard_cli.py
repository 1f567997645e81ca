"""`anoman-tui scoreboard` counts the models' failures only: a comparison under a demo
scenario (`-H "X-Anoman-Simulate: ..."`, a real `compare` against the local gateway) and
one the gateway refused for its request (three 400s, as `compare hi --temperature 9`
left them in the history) are in no failure rate nor speed figure, and the scoreboard
says how many rounds were left out and why, in its table's words and in `--json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord
from tests.cli.helpers import KEY, cli, history_file
from tests.helpers import LocalGateways

MODELS = ("anoman-lite", "qwen3-coder")


def pane(n: int, model: str, *, failure: dict[str, Any] | None = None) -> PaneRecord:
    return PaneRecord(pane=n, model=model, base_url="http://127.0.0.1:1", endpoint="openai",
                      status="failed" if failure else "completed", committed=not failure,
                      text="" if failure else "an answer", failure=failure,
                      label="ABC"[n - 1], metrics={} if failure else {
                          "ttft_s": 0.3 * n, "output_tokens_per_s": 80.0})


def test_a_scenario_and_a_refused_request_are_left_out_and_said_so(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    history_file(data_home).parent.mkdir(parents=True)
    with HistoryStore.open(history_file(data_home)) as store:
        for n in range(6):  # blind rounds, voted: anoman-lite wins two in three
            cid = store.save(ComparisonRecord(prompt=f"round {n}", blind=True, panes=tuple(
                pane(i, m) for i, m in enumerate(MODELS, start=1))))
            store.cast_vote(cid, "win", 1 if n % 3 else 2, blind=True)
        # `compare hi --temperature 9` as the history kept it: three 400s.
        refused = {"kind": "http_error", "status": 400, "type": "invalid_request_error",
                   "code": "invalid_value", "message": "✗ 400 BAD REQUEST"}
        store.save(ComparisonRecord(prompt="hi", source="compare", panes=tuple(
            pane(i, m, failure=refused)
            for i, m in enumerate((*MODELS, "claude-sonnet-4-6"), start=1))))
    # A demo scenario on purpose: both streams interrupted after 2 tokens.
    demo = cli(data_home, "compare", "explain WAL", "-m", MODELS[0], "-m", MODELS[1],
               "--base-url", gateway.base_url, "-H",
               "X-Anoman-Simulate: ttft=0,rate=4000,interrupt-after=2",
               env={"ANOMAN_API_KEY": KEY})
    assert demo.returncode != 0 and "STREAM INTERRUPTED" in demo.stdout, demo.stdout

    board = cli(data_home, "scoreboard", "--json")
    assert board.returncode == 0, board.stderr
    document = json.loads(board.stdout)
    rows = {m["model"]: m for m in document["models"]}
    assert set(rows) == set(MODELS)
    for model in MODELS:
        assert rows[model]["answers"] == 6  # the voted rounds' answers only
        assert set(rows[model]["failure_rates"].values()) == {0.0}, rows[model]
    assert rows["anoman-lite"]["ttft_p50_s"] == 0.3  # nothing from the demo's ttft=0
    assert document["left_out"] == {
        "scenario": {"rounds": 1, "answers": 2, "votes": 0},
        "request": {"rounds": 1, "answers": 3, "votes": 0},
        "cache_hit": {"rounds": 0, "answers": 0, "votes": 0},
    }

    table = cli(data_home, "scoreboard")
    assert table.returncode == 0, table.stderr
    words = " ".join(table.stdout.split())
    assert "refused before streaming" not in words and "error frame" not in words
    assert ("Left out of failure rates and speed figures, not the models' doing: 1 round "
            "under a demo scenario (X-Anoman-Simulate), 2 answers; 1 round refused for the "
            "request itself (a 4xx such as 400, not 408 or 429), 3 answers.") in words


@pytest.fixture(scope="module")
def quick(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """A gateway at a twentieth of its models' pace, its cache on (no demo scenario is
    sent to it: a request with one never reads the cache)."""
    return make_module_gateway(time_scale=0.05, api_key=KEY, rate_limit_rpm=100_000)


def test_a_blind_round_repeated_is_never_answered_from_the_cache(
        data_home: Path, quick: EmbeddedGateway) -> None:
    # The same prompt to the same two models twice (no demo scenario: the gateway's
    # cache is on): the second round would be two cache hits without `no-cache`.
    ids = []
    for _ in range(2):
        run = cli(data_home, "compare", "Explain the blind cache", "--blind", "--json",
                  "-m", MODELS[0], "-m", MODELS[1], "--base-url", quick.base_url,
                  env={"ANOMAN_API_KEY": KEY})
        assert run.returncode == 0, run.stderr
        ids.append(json.loads(run.stdout)["id"])
    with HistoryStore.open(history_file(data_home)) as store:
        for round_id in ids:
            record = store.get(round_id)
            assert record is not None and len(record.panes) == 2
            assert all(p.anoman is not None and p.anoman["cache"]["hit"] is False
                       for p in record.panes)
