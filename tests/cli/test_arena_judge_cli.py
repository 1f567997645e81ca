"""The arena judge from the command line: `[arena] judge` gives its verdict on a blind
round only after `vote`, `vote --json` carries it, the history keeps it with the round,
and `scoreboard --rater` / `agreement` read it. Real CLI, real local gateway (its
simulated judge, `anoman-judge`), a history file in a temporary data directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from tests.cli.helpers import FAST, KEY, cli, history_file

JUDGE = '[arena]\njudge = "anoman-judge"\n'
THREE = ("anoman-lite", "claude-sonnet-4-6", "deepseek-r1")


def env(gateway: EmbeddedGateway) -> dict[str, str]:
    # `vote` reaches the judge on the default target, here the fixture's gateway.
    return {"ANOMAN_API_KEY": KEY, "ANOMAN_BASE_URL": gateway.base_url}


def blind_round(data_home: Path, gateway: EmbeddedGateway, prompt: str, *models: str,
                config: str = JUDGE) -> tuple[dict[str, Any], str]:
    args = [a for m in models for a in ("-m", m)]
    result = cli(data_home, "compare", prompt, "--blind", "--json", "-H", FAST, *args,
                 env=env(gateway), config=config)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stdout + result.stderr


def vote(data_home: Path, gateway: EmbeddedGateway, round_id: int, choice: str,
         config: str = JUDGE) -> dict[str, Any]:
    result = cli(data_home, "vote", str(round_id), choice, "--json", env=env(gateway),
                 config=config)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_the_judge_gives_its_verdict_after_the_vote_and_it_is_kept(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    doc, output = blind_round(data_home, gateway,
                              "How should I size a Postgres connection pool?", *THREE)
    # Before the vote: nothing of the judge anywhere, and no verdict in the history.
    assert "judge" not in output
    with HistoryStore.open(history_file(data_home)) as store:
        assert store.round_judgement(doc["id"]) is None
        models = [p.model for p in store.get(doc["id"]).panes]  # type: ignore[union-attr]
    listed = cli(data_home, "history", "--json")
    assert "judge" not in listed.stdout

    reveal = vote(data_home, gateway, doc["id"], "A")
    judge = reveal["judge"]
    assert judge["model"] == "anoman-judge" and judge["simulated"] is True
    assert judge["errors"] == [] and judge["calls"] == 6  # 3 pairs x 2 orders
    pairs = judge["verdicts"]
    assert len(pairs) == 3
    assert {(p["a"], p["b"]) for p in pairs} == {
        (models[0], models[1]), (models[0], models[2]), (models[1], models[2])}
    for pair in pairs:
        assert pair["ab"] in ("A", "B", "C") and pair["ba"] in ("A", "B", "C")
    # Its best: the model that won each of its pairs after the swap, else "tie".
    winners = {}
    for pair in pairs:
        first = {"A": pair["a"], "B": pair["b"], "C": None}[pair["ab"]]
        second = {"A": pair["b"], "B": pair["a"], "C": None}[pair["ba"]]
        winners[(pair["a"], pair["b"])] = first if first == second else None
    unbeaten = [m for m in models
                if all(w == m for (a, b), w in winners.items() if m in (a, b))]
    assert judge["best"] == (unbeaten[0] if unbeaten else "tie")
    # The local judge ranks claude-sonnet-4-6 > deepseek-r1 > anoman-lite, and the
    # first never loses a pair (docs/local-gateway.md): it is the best or there is none.
    assert judge["best"] in ("claude-sonnet-4-6", "tie"), judge
    assert all(w in (None, "claude-sonnet-4-6") for (a, b), w in winners.items()
               if "claude-sonnet-4-6" in (a, b)), winners

    with HistoryStore.open(history_file(data_home)) as store:
        kept = store.round_judgement(doc["id"])
    assert kept is not None and kept.judge == "anoman-judge"
    assert (kept.outcome, kept.best) == (("win", judge["best"]) if judge["best"] != "tie"
                                         else ("tie", None))
    assert kept.data["verdicts"] == pairs

    # The text form says it in one line beside the vote.
    doc, _ = blind_round(data_home, gateway, "Explain TCP slow start.", *THREE)
    text = cli(data_home, "vote", str(doc["id"]), "tie", env=env(gateway), config=JUDGE)
    assert text.returncode == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if x.startswith("judge "))
    assert "anoman-judge (simulated)" in line and "6 calls" in line
    assert ("agrees with your vote" in line) == ("a tie after the position swap" in line)


def test_without_a_judge_or_with_a_broken_one_the_vote_stands(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    doc, _ = blind_round(data_home, gateway, "Explain WAL", *THREE, config="")
    assert vote(data_home, gateway, doc["id"], "B", config="")["judge"] is None

    # A judge that does not answer: the vote is kept, the judge has no verdict.
    missing = '[arena]\njudge = "no-such-judge"\n'
    doc, _ = blind_round(data_home, gateway, "Explain WAL", *THREE, config=missing)
    reveal = vote(data_home, gateway, doc["id"], "C", config=missing)
    assert reveal["winner"] == "C"
    assert reveal["judge"]["best"] is None and "404" in reveal["judge"]["errors"][0]
    text = cli(data_home, "vote", "1", "A", env=env(gateway), config=missing)
    assert text.returncode == 2 and "already voted" in text.stderr
    with HistoryStore.open(history_file(data_home)) as store:
        assert store.get(doc["id"]).vote is not None  # type: ignore[union-attr]
        kept = store.round_judgement(doc["id"])
    assert kept is not None and kept.outcome == "none"


def test_a_judge_in_the_round_is_refused_and_never_drawn(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    judge = '[arena]\njudge = "anoman-lite"\n'
    # Drawn from a pool that holds the judge: the judge is left out of the draw.
    pool = judge + 'pool = ["anoman-lite", "qwen3-coder", "deepseek-r1"]\n'
    doc, _ = blind_round(data_home, gateway, "hi", config=pool)
    assert len(doc["panels"]) == 2
    with HistoryStore.open(history_file(data_home)) as store:
        drawn = {p.model for p in store.get(doc["id"]).panes}  # type: ignore[union-attr]
    assert drawn == {"qwen3-coder", "deepseek-r1"}
    # Given with -m too, it is left out of the pool.
    doc, _ = blind_round(data_home, gateway, "hi", *THREE, config=judge)
    assert len(doc["panels"]) == 2
    # A round drawn before it became the judge: it does not judge its own answers.
    doc, _ = blind_round(data_home, gateway, "hi", *THREE, config="")
    reveal = vote(data_home, gateway, doc["id"], "A", config=judge)
    assert reveal["judge"]["best"] is None
    assert "one of the round's models" in reveal["judge"]["errors"][0]


def _kappa(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa from the confusion matrix, written out independently."""
    labels = sorted({x for pair in pairs for x in pair})
    n = len(pairs)
    matrix = [[sum(1 for h, j in pairs if (h, j) == (a, b)) for b in labels] for a in labels]
    observed = sum(matrix[i][i] for i in range(len(labels))) / n
    expected = sum(sum(matrix[i]) * sum(row[i] for row in matrix)
                   for i in range(len(labels))) / n / n
    return (observed - expected) / (1 - expected)


def test_the_scoreboard_by_rater_and_the_agreement(
        data_home: Path, gateway: EmbeddedGateway) -> None:
    human_and_judge = []
    for n, choice in enumerate(["A", "B", "tie", "bad"]):
        doc, _ = blind_round(data_home, gateway, f"Compare B-trees and LSM trees, take {n}",
                             *THREE)
        reveal = vote(data_home, gateway, doc["id"], choice)
        human = reveal["reveal"][choice]["model"] if choice in "ABC" else "tie"
        human_and_judge.append((human, reveal["judge"]["best"]))
    assert all(j is not None for _, j in human_and_judge)

    def board(*args: str) -> dict[str, Any]:
        result = cli(data_home, "scoreboard", "--json", *args)
        assert result.returncode == 0, result.stderr
        document: dict[str, Any] = json.loads(result.stdout)
        return document

    people, judge, both = board(), board("--rater", "judge"), board("--rater", "all")
    assert (people["rater"], judge["rater"], both["rater"]) == ("human", "judge", "all")
    for document in (people, judge, both):
        agreement = document["agreement"]
        assert agreement["rounds"] == 4
        same = sum(h == j for h, j in human_and_judge) / 4
        assert agreement["same_best"] == round(same, 4)
        if len({x for pair in human_and_judge for x in pair}) > 1:
            assert abs(agreement["kappa"] - round(_kappa(human_and_judge), 4)) < 1e-9
    rounds = {m["model"]: m["rounds"] for m in people["models"]}
    assert rounds == dict.fromkeys(THREE, 4)
    # The judge's board counts its verdicts as votes; "all" counts both.
    judge_wins = {m["model"]: m["wins"] for m in judge["models"]}
    for model in THREE:
        assert judge_wins[model] == sum(j == model for _, j in human_and_judge)
    assert {m["model"]: m["rounds"] for m in both["models"]} == dict.fromkeys(THREE, 8)

    text = cli(data_home, "scoreboard", "--rater", "judge")
    assert "Scoreboard (the judge's verdicts)" in text.stdout
    assert "agreement of people and the judge: 4 rounds rated by both" in text.stdout
    bad = cli(data_home, "scoreboard", "--rater", "robot")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
