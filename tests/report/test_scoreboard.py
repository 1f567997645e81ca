"""The scoreboard's rows: a simulated model is named as such in its cells and JSON."""

from __future__ import annotations

from anoman_tui.history import ModelNumbers, VotedRound
from anoman_tui.report.scoreboard import (
    agreement_json,
    agreement_line,
    agreement_of,
    build,
    cells,
)


def test_a_simulated_model_is_marked_in_every_view_of_the_scoreboard() -> None:
    rounds = [VotedRound(("anoman-lite", "gpt-4o"), frozenset(), "win", "anoman-lite", True,
                         count=3),
              VotedRound(("anoman-lite", "gpt-4o"), frozenset(), "win", "gpt-4o", True,
                         count=2)]
    numbers = {"anoman-lite": ModelNumbers(answers=5, simulated_answers=5),
               "gpt-4o": ModelNumbers(answers=5)}
    rows = {r.model: r for r in build(rounds, numbers, bootstrap=10)}
    assert rows["anoman-lite"].simulated and not rows["gpt-4o"].simulated
    assert cells(rows["anoman-lite"])[0] == "anoman-lite (simulated)"
    assert cells(rows["gpt-4o"])[0] == "gpt-4o"
    assert rows["anoman-lite"].to_json()["simulated"] is True
    assert rows["gpt-4o"].to_json()["simulated"] is False


def _kappa_by_matrix(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa from a numpy confusion matrix (independent of judges.agreement)."""
    import numpy as np

    labels = sorted({x for pair in pairs for x in pair})
    matrix = np.zeros((len(labels), len(labels)))
    for human, judge in pairs:
        matrix[labels.index(human), labels.index(judge)] += 1
    matrix /= matrix.sum()
    observed = np.trace(matrix)
    expected = float(matrix.sum(axis=1) @ matrix.sum(axis=0))
    return float((observed - expected) / (1 - expected))


def test_the_raters_and_the_agreement_of_people_and_the_judge() -> None:
    three = ("m-a", "m-b", "m-c")
    rounds = [
        # people and the judge both pick m-a (5 rounds)
        VotedRound(three, frozenset(), "win", "m-a", True, "win", "m-a", count=5),
        # people m-b, the judge m-a (2)
        VotedRound(three, frozenset(), "win", "m-b", True, "win", "m-a", count=2),
        # people "all bad", the judge a tie: the same best, "tie" (3)
        VotedRound(three, frozenset(), "bad", None, True, "tie", None, count=3),
        # people a tie, the judge m-c (1)
        VotedRound(three, frozenset(), "tie", None, True, "win", "m-c", count=1),
        # not judged (no judge, or its verdict failed): left out of the agreement (4)
        VotedRound(three, frozenset(), "win", "m-c", True, count=4),
    ]
    found = agreement_of(rounds)
    pairs = ([("m-a", "m-a")] * 5 + [("m-b", "m-a")] * 2 + [("tie", "tie")] * 3
             + [("tie", "m-c")])
    assert found.rounds == 11
    assert found.same_best == 8 / 11
    assert found.kappa is not None and abs(found.kappa - _kappa_by_matrix(pairs)) < 1e-12
    assert agreement_json(found) == {"rounds": 11, "same_best": round(8 / 11, 4),
                                     "kappa": round(_kappa_by_matrix(pairs), 4)}
    assert "11 rounds rated by both" in agreement_line(found)
    assert "no round rated by both" in agreement_line(agreement_of(rounds[-1:]))

    numbers: dict[str, ModelNumbers] = {}
    people = {r.model: r for r in build(rounds, numbers, bootstrap=10)}
    judge = {r.model: r for r in build(rounds, numbers, rater="judge", bootstrap=10)}
    both = {r.model: r for r in build(rounds, numbers, rater="all", bootstrap=10)}
    assert (people["m-a"].wins, people["m-b"].wins, people["m-c"].wins) == (5, 2, 4)
    assert people["m-a"].rounds == 15
    # The judge's verdicts as votes: its best wins, its tie is a tie; 11 rounds judged.
    assert (judge["m-a"].wins, judge["m-b"].wins, judge["m-c"].wins) == (7, 0, 1)
    assert judge["m-a"].rounds == 11 and judge["m-b"].ties == 3
    assert both["m-a"].rounds == 26 and both["m-a"].wins == 12
