"""Agreement between people and the judge: Cohen's kappa against a textbook example and a
confusion-matrix computation written independently, and the judge's best of a round."""

from __future__ import annotations

import random

import numpy as np
import pytest

from anoman_tui.judges import Agreement, PairJudgement, agreement, best_after_swap
from anoman_tui.judges.parse import Verdict


def kappa_by_confusion_matrix(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa from the normalised confusion matrix: trace vs. outer product of
    its margins (the usual textbook layout, with floats)."""
    labels = sorted({label for pair in pairs for label in pair})
    where = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)))
    for human, judge in pairs:
        matrix[where[human], where[judge]] += 1
    matrix /= matrix.sum()
    observed = float(np.trace(matrix))
    expected = float(matrix.sum(axis=1) @ matrix.sum(axis=0))
    return (observed - expected) / (1 - expected)


def table(a: int, b: int, c: int, d: int) -> list[tuple[str, str]]:
    """A 2x2 table as rounds: a both "m1", b human m1 / judge m2, c the reverse, d both m2."""
    return ([("m1", "m1")] * a + [("m1", "m2")] * b + [("m2", "m1")] * c
            + [("m2", "m2")] * d)


def test_the_textbook_two_by_two_example() -> None:
    # n = 50, p_o = 35/50 = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, kappa = 0.2/0.5 = 0.4.
    result = agreement(table(20, 5, 10, 15))
    assert result.rounds == 50
    assert result.same_best == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)


def test_against_the_confusion_matrix_on_random_rounds() -> None:
    rng = random.Random(3)
    labels = ["gpt", "claude", "llama", "tie"]
    for _ in range(300):
        rounds = []
        for _ in range(rng.randint(1, 40)):
            human = rng.choice(labels)
            rounds.append((human, human if rng.random() < 0.4 else rng.choice(labels)))
        result = agreement(rounds)
        assert result.rounds == len(rounds)
        assert result.same_best == pytest.approx(sum(h == j for h, j in rounds) / len(rounds))
        if len(set(rounds)) == 1 and rounds[0][0] == rounds[0][1]:
            assert result.kappa == 1.0  # p_e = 1: see below
        else:
            assert result.kappa == pytest.approx(kappa_by_confusion_matrix(rounds))


def test_full_chance_and_worse_than_chance_agreement() -> None:
    assert agreement(table(10, 0, 0, 10)).kappa == 1.0
    assert agreement(table(5, 5, 5, 5)).kappa == pytest.approx(0.0)
    assert agreement(table(0, 10, 10, 0)).kappa == pytest.approx(-1.0)


def test_one_category_used_by_both_for_every_round_is_full_agreement() -> None:
    # p_e = 1 makes (p_o - p_e) / (1 - p_e) 0/0; both said "tie" every time: kappa 1.0.
    assert agreement([("tie", "tie")] * 4) == Agreement(rounds=4, same_best=1.0, kappa=1.0)


def test_each_rater_always_using_a_different_single_category() -> None:
    # p_e = 0 here (no shared category), p_o = 0: kappa 0.
    assert agreement([("m1", "tie")] * 3) == Agreement(rounds=3, same_best=0.0, kappa=0.0)


def test_no_rounds() -> None:
    assert agreement([]) == Agreement(rounds=0, same_best=None, kappa=None)
    assert agreement(iter([("a", "a")])).rounds == 1  # any iterable, read once


# --- the judge's best of a round --------------------------------------------------------


def pj(a: str, b: str, ab: Verdict | None, ba: Verdict | None, repeat: int = 0,
       ) -> PairJudgement:
    return PairJudgement(case="round", repeat=repeat, a=a, b=b, ab=ab, ba=ba,
                         len_a=1, len_b=1)


def test_the_model_that_won_all_its_pairs_is_best() -> None:
    round_ = [pj("x", "y", "A", "B"), pj("x", "z", "A", "B"), pj("y", "z", "C", "C")]
    assert best_after_swap(["x", "y", "z"], round_) == "x"
    # The winner may be either side of its pairs.
    round_ = [pj("x", "y", "B", "A"), pj("z", "y", "B", "A"), pj("x", "z", "A", "B")]
    assert best_after_swap(["x", "y", "z"], round_) == "y"


@pytest.mark.parametrize("round_", [
    [pj("x", "y", "A", "B"), pj("x", "z", "C", "C"), pj("y", "z", "A", "B")],  # x tied z
    [pj("x", "y", "A", "B"), pj("x", "z", "A", "A"), pj("y", "z", "A", "B")],  # swap disagreed
    [pj("x", "y", "A", "B"), pj("x", "z", "A", None), pj("y", "z", "A", "B")],  # an error
    [pj("x", "y", "A", "B"), pj("y", "z", "A", "B")],  # x never met z
    [pj("x", "y", "A", "B"), pj("x", "z", "A", "B"), pj("x", "y", "B", "A", repeat=1)],
    [],
])
def test_otherwise_the_round_is_a_tie(round_: list[PairJudgement]) -> None:
    assert best_after_swap(["x", "y", "z"], round_) == "tie"


def test_two_models() -> None:
    assert best_after_swap(["x", "y"], [pj("x", "y", "B", "A")]) == "y"
    assert best_after_swap(["x", "y"], [pj("x", "y", "C", "C")]) == "tie"


@pytest.mark.parametrize(("models", "round_"), [
    (["x"], []),
    (["x", "x"], []),
    (["x", "tie"], []),
    (["x", "y"], [pj("x", "w", "A", "B")]),
])
def test_a_round_that_makes_no_sense_is_refused(models: list[str],
                                                round_: list[PairJudgement]) -> None:
    with pytest.raises(ValueError):
        best_after_swap(models, round_)
