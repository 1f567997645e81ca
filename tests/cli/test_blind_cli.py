"""Blind rounds from the command line: `compare --blind --json` names the panes A, B, C
and nothing else that identifies them; `vote ID ...` records the vote and reveals;
`history` and `export` show a round's models only after its vote. Real CLI, real
local gateway, a history file in a temporary data directory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from tests.cli.helpers import FAST, KEY, cli, history_file

POOL = list(CATALOGUE)


def names_in(text: str) -> list[str]:
    """Which of the gateway's model names appear in `text`."""
    return [name for name in POOL if name in text]


def blind(data_home: Path, gateway: EmbeddedGateway, *models: str, prompt: str = "Explain WAL",
          config: str = "") -> tuple[int, dict[str, Any], str]:
    args = [a for m in models for a in ("-m", m)]
    result = cli(data_home, "compare", prompt, "--blind", "--json", "--base-url",
                 gateway.base_url, "-H", FAST, *args, env={"ANOMAN_API_KEY": KEY},
                 config=config)
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, document, result.stdout + result.stderr


def test_a_blind_round_names_its_panes_a_b_c_and_nothing_else(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    code, doc, output = blind(data_home, gateway)  # the pool: every model listed
    assert code == 0, output
    assert doc["blind"] is True and isinstance(doc["id"], int)
    assert [p["panel"] for p in doc["panels"]] == ["A", "B", "C"]
    for pane in doc["panels"]:
        assert pane["status"] == "completed" and pane["text"]
        assert not {"model", "target", "anoman", "provider_cost_usd"} & set(pane)
    assert names_in(output) == [], output
    # The history knows which was which; its listing and exports do not say, yet.
    with HistoryStore.open(history_file(data_home)) as store:
        record = store.get(doc["id"])
    assert record is not None and record.blind and record.vote is None
    models = [p.model for p in record.panes]
    assert len(set(models)) == 3 and set(models) <= set(POOL)
    listed = cli(data_home, "history", "--json")
    entry = json.loads(listed.stdout.splitlines()[0])
    assert entry["blind"] is True and entry["voted"] is False
    assert [p["model"] for p in entry["panes"]] == [None] * 3
    assert names_in(listed.stdout) == []
    assert names_in(cli(data_home, "history").stdout) == []
    for fmt in ("md", "html", "json"):
        exported = cli(data_home, "export", str(doc["id"]), "--format", fmt, "-o", "-")
        assert exported.returncode == 0 and names_in(exported.stdout) == [], fmt
    # Searching by a model's name must not tell which rounds it is in.
    searched = cli(data_home, "history", "--search", models[0], "--json")
    assert searched.stdout.strip() == ""

    # The vote reveals; after it the history shows the models and finds them.
    voted = cli(data_home, "vote", str(doc["id"]), "B", "--json")
    assert voted.returncode == 0, voted.stderr
    reveal = json.loads(voted.stdout)
    assert reveal["winner"] == "B" and reveal["outcome"] == "win"
    assert [reveal["reveal"][label]["model"] for label in "ABC"] == models
    listed = cli(data_home, "history", "--json")
    entry = json.loads(listed.stdout.splitlines()[0])
    assert entry["voted"] is True and [p["model"] for p in entry["panes"]] == models
    found = cli(data_home, "history", "--search", models[0], "--json")
    assert json.loads(found.stdout.splitlines()[0])["id"] == doc["id"]
    with HistoryStore.open(history_file(data_home)) as store:
        vote = store.get(doc["id"]).vote  # type: ignore[union-attr]
    assert vote is not None and (vote.blind, vote.outcome, vote.winner_pane) == (True, "win", 2)


def test_a_vote_is_refused_with_exit_two_and_one_line(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    # The pool given with -m; one of its models does not exist: that pane fails.
    code, doc, output = blind(data_home, gateway, "anoman-lite", "no-such-model", "qwen3-coder")
    assert code == 1 and doc["blind"], output  # one pane failed
    failed = next(p["panel"] for p in doc["panels"] if p["status"] == "failed")
    assert "no-such-model" not in output  # its 404 names the label, not the model
    round_id = str(doc["id"])
    cases = [
        (("vote", "999", "A"), "no comparison 999"),
        (("vote", round_id, failed), "a failed pane cannot win"),
    ]
    for args, words in cases:
        result = cli(data_home, *args)
        assert result.returncode == 2, (args, result.stdout)
        assert words in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert cli(data_home, "vote", round_id, "tie").returncode == 0
    again = cli(data_home, "vote", round_id, "A")
    assert again.returncode == 2 and "already voted" in again.stderr

    # A comparison that is not a blind round, and a round where every pane failed.
    plain = cli(data_home, "compare", "hi", "--json", "--base-url", gateway.base_url,
                "-m", "anoman-lite", "-H", FAST, env={"ANOMAN_API_KEY": KEY})
    result = cli(data_home, "vote", str(json.loads(plain.stdout)["id"]), "A")
    assert result.returncode == 2 and "not a blind round" in result.stderr
    code, doc, output = blind(data_home, gateway, "nope-1", "nope-2")
    result = cli(data_home, "vote", str(doc["id"]), "bad")
    assert result.returncode == 2 and "nothing to vote on" in result.stderr


@pytest.mark.parametrize(("args", "config", "words"), [
    (("--no-history",), "", "--blind needs the history"),
    (("-m", "anoman-lite"), "", "at least two distinct models"),
    ((), '[arena]\npool = ["anoman-lite", "anoman-lite"]\n', "at least two distinct models"),
])
def test_a_blind_round_that_cannot_be_drawn_exits_two(
        data_home: Path, gateway: EmbeddedGateway, args: tuple[str, ...], config: str,
        words: str) -> None:
    result = cli(data_home, "compare", "hi", "--blind", "--json", "--base-url",
                 gateway.base_url, *args, env={"ANOMAN_API_KEY": KEY}, config=config)
    assert result.returncode == 2 and words in result.stderr, result.stderr


def test_the_arena_pool_from_the_config_file(data_home: Path, gateway: EmbeddedGateway) -> None:
    config = '[arena]\npool = ["anoman-lite", "qwen3-coder"]\n'
    code, doc, output = blind(data_home, gateway, config=config)
    assert code == 0 and len(doc["panels"]) == 2, output
    with HistoryStore.open(history_file(data_home)) as store:
        record = store.get(doc["id"])
    assert record is not None
    assert sorted(p.model for p in record.panes) == ["anoman-lite", "qwen3-coder"]
    assert [p.label for p in record.panes] == ["A", "B"]
    assert re.search(r"\bA\b", json.dumps(doc))


def test_the_scoreboard_ranks_by_the_blind_votes_beside_the_history(
        data_home: Path) -> None:
    from decimal import Decimal

    from anoman_tui.history import ComparisonRecord, PaneRecord
    from anoman_tui.streaming.cost import Cost

    def pane(n: int, model: str, status: str = "completed", cost: str = "0.001000",
             ttft: float = 0.5) -> PaneRecord:
        failure = {"kind": "truncated", "message": "cut"} if status == "failed" else None
        return PaneRecord(pane=n, model=model, base_url="http://x", endpoint="openai",
                          status=status, committed=status == "completed", text="t",
                          failure=failure, label="ABC"[n - 1],
                          cost=Cost(Decimal(cost), "gateway"),
                          metrics={"ttft_s": ttft, "output_tokens_per_s": 100.0 * n})

    history_file(data_home).parent.mkdir(parents=True)
    with HistoryStore.open(history_file(data_home)) as store:
        def round_(winner: int | None, outcome: str = "win", *, blind: bool = True,
                   third: str = "completed") -> None:
            record = ComparisonRecord(prompt="p", blind=blind, panes=(
                pane(1, "strong", cost="0.002000", ttft=0.2), pane(2, "middle"),
                pane(3, "weak", status=third)))
            store.cast_vote(store.save(record), outcome, winner, blind=blind)

        for _ in range(12):
            round_(1)
        for _ in range(6):
            round_(2)
        round_(None, "tie")
        round_(None, "bad", third="failed")
        for _ in range(15):
            round_(3, blind=False)  # sighted: left out unless asked for
    result = cli(data_home, "scoreboard", "--json")
    assert result.returncode == 0, result.stderr
    board = {m["model"]: m for m in json.loads(result.stdout)["models"]}
    assert list(board) == ["strong", "middle", "weak"]  # best rating first
    strong, weak = board["strong"], board["weak"]
    assert (strong["rounds"], strong["wins"], strong["ties"], strong["losses"]) == (
        20, 12, 2, 6)
    assert strong["ci_95"][0] <= strong["rating"] <= strong["ci_95"][1]
    assert strong["cost_per_win_usd"] == pytest.approx(0.002 * 20 / 12, abs=1e-6)
    assert weak["wins"] == 0 and weak["cost_per_win_usd"] is None
    assert weak["failure_rates"]["truncated"] == pytest.approx(1 / 35, abs=1e-4)
    assert strong["ttft_p50_s"] == 0.2 and board["middle"]["tokens_per_s_p50"] == 200.0
    sighted = cli(data_home, "scoreboard", "--json", "--include-sighted")
    with_sighted = {m["model"]: m for m in json.loads(sighted.stdout)["models"]}
    assert with_sighted["weak"]["wins"] == 15 and with_sighted["weak"]["rounds"] == 35
    table = cli(data_home, "scoreboard")
    assert table.returncode == 0 and "strong" in table.stdout and "rating" in table.stdout
    empty = cli(data_home.parent / "other", "scoreboard")
    assert empty.returncode == 0 and "No votes yet" in empty.stdout
