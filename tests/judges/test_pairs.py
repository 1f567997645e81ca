"""The position swap in model terms, the judgement's JSON, and the bias figures against a
hand count and against a restatement of their definitions written independently."""

from __future__ import annotations

import itertools
import random

import pytest

from anoman_tui.judges import BiasFigures, PairJudgement, bias_figures
from anoman_tui.judges.parse import Verdict


def pj(ab: Verdict | None, ba: Verdict | None, *, case: str = "c1", repeat: int = 0,
       a: str = "m1", b: str = "m2", len_a: int = 10, len_b: int = 20) -> PairJudgement:
    return PairJudgement(case=case, repeat=repeat, a=a, b=b, ab=ab, ba=ba,
                         len_a=len_a, len_b=len_b)


# --- the swap ---------------------------------------------------------------------------


@pytest.mark.parametrize(("ab", "ba", "winner"), [
    # ab's A is model a; ba's A is model b.
    ("A", "B", "a"),   # both orders pick a
    ("B", "A", "b"),   # both orders pick b
    ("C", "C", "tie"),
    ("A", "A", "tie"),  # the first position won twice: the orders disagree
    ("B", "B", "tie"),  # the second position won twice
    ("A", "C", "tie"),  # a, then a tie: disagree
    ("C", "B", "tie"),
    ("B", "C", "tie"),
    ("C", "A", "tie"),
    (None, "A", None),
    ("A", None, None),
    (None, None, None),
])
def test_the_winner_after_the_swap(ab: Verdict | None, ba: Verdict | None,
                                   winner: str | None) -> None:
    assert pj(ab, ba).winner == winner


def test_json_round_trip() -> None:
    judged = PairJudgement(case="capital", repeat=2, a="gpt", b="claude", ab="A", ba="B",
                           len_a=120, len_b=80)
    data = judged.to_json()
    assert data == {"case": "capital", "repeat": 2, "a": "gpt", "b": "claude", "ab": "A",
                    "ba": "B", "winner": "a", "len_a": 120, "len_b": 80, "errors": []}
    assert PairJudgement.from_json(data) == judged
    error = "the judge's reply has no verdict [[A]], [[B]] or [[C]]"
    failed = PairJudgement(case="x", repeat=0, a="m1", b="m2", ab=None, ba="C", len_a=1,
                           len_b=2, errors=(error,))
    assert failed.to_json()["winner"] is None
    assert PairJudgement.from_json(failed.to_json()) == failed
    with pytest.raises(ValueError, match="verdict"):
        PairJudgement.from_json({**data, "ab": "D"})


# --- bias figures -----------------------------------------------------------------------


def test_a_judge_that_always_answers_a() -> None:
    judgements = [pj("A", "A", case=f"c{i}", len_a=10 + i, len_b=30 - i) for i in range(12)]
    assert all(j.winner == "tie" for j in judgements)
    figures = bias_figures(judgements)
    assert figures == BiasFigures(position_consistency=0.0, first_position_wins=1.0,
                                  longer_wins=None, pairs=12)


def test_a_consistent_judge_that_prefers_the_longer_answer() -> None:
    # m1's answer is longer in the first three pairs, m2's in the last; equal in one.
    judgements = [
        pj("A", "B", len_a=50, len_b=10),  # a wins, longer
        pj("A", "B", len_a=50, len_b=10),  # a wins, longer
        pj("B", "A", len_a=50, len_b=10),  # b wins, shorter
        pj("B", "A", len_a=10, len_b=50),  # b wins, longer
        pj("A", "B", len_a=30, len_b=30),  # a wins, equal lengths: left out
        pj("C", "C"),                      # tie: consistent, not decided
    ]
    figures = bias_figures(judgements)
    assert figures.position_consistency == 1.0
    # Picks: A,B, A,B, B,A, B,A, A,B = 10 picks, 5 of them A; the C,C pair picked none.
    assert figures.first_position_wins == 0.5
    assert figures.longer_wins == 3 / 4
    assert figures.pairs == 6


def test_errors_count_where_their_definitions_say() -> None:
    judgements = [
        pj("A", None),  # one order read: counts for first_position_wins only
        pj(None, None),
        pj("A", "B", len_a=5, len_b=9),  # a wins, shorter
    ]
    figures = bias_figures(judgements)
    assert figures.position_consistency == 1.0  # one pair with both orders, consistent
    assert figures.first_position_wins == 2 / 3  # A, A, B
    assert figures.longer_wins == 0.0
    assert figures.pairs == 3


def test_no_judgements_give_no_figures() -> None:
    assert bias_figures([]) == BiasFigures(None, None, None, 0)
    assert bias_figures([pj(None, None)]) == BiasFigures(None, None, None, 1)
    assert bias_figures([pj("C", "C")]) == BiasFigures(1.0, None, None, 1)


def _reference(judgements: list[PairJudgement]) -> tuple[float | None, ...]:
    """The three figures restated from their definitions, by position rather than by
    model: the answer shown first in the swapped order is model b."""
    def shown_first(j: PairJudgement, order: str) -> str:
        return j.a if order == "ab" else j.b

    def picked_model(j: PairJudgement, order: str) -> str | None:
        verdict = j.ab if order == "ab" else j.ba
        if verdict == "C":
            return None
        first = shown_first(j, order)
        return first if verdict == "A" else ({j.a, j.b} - {first}).pop()

    read = [j for j in judgements if j.ab is not None and j.ba is not None]
    agree = [j for j in read if picked_model(j, "ab") == picked_model(j, "ba")]
    picks = [(j, o) for j in judgements for o in ("ab", "ba")
             if (j.ab if o == "ab" else j.ba) in ("A", "B")]
    firsts = [1 for j, o in picks if picked_model(j, o) == shown_first(j, o)]
    decided = [j for j in agree if picked_model(j, "ab") is not None and j.len_a != j.len_b]
    longer = [1 for j in decided
              if picked_model(j, "ab") == (j.a if j.len_a > j.len_b else j.b)]

    def share(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    return (share(len(agree), len(read)), share(len(firsts), len(picks)),
            share(len(longer), len(decided)))


def test_the_figures_match_their_definitions_on_random_judgements() -> None:
    rng = random.Random(7)
    choices: list[Verdict | None] = ["A", "B", "C", None]
    for _ in range(200):
        judgements = [
            pj(rng.choice(choices), rng.choice(choices), case=f"c{k}",
               a=a, b=b, len_a=rng.randint(1, 4), len_b=rng.randint(1, 4))
            for k in range(rng.randint(0, 15))
            for a, b in itertools.combinations(["x", "y", "z"], 2)
        ]
        figures = bias_figures(judgements)
        assert (figures.position_consistency, figures.first_position_wins,
                figures.longer_wins) == pytest.approx(_reference(judgements))
        assert figures.pairs == len(judgements)
