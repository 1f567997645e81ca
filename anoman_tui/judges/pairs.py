"""Pairwise judgements with the positions swapped, the judge's biases, and ratings.

Judges favour the answer shown first (or second), and longer answers. MT-bench's remedy,
used here: every pair of answers is judged twice, once in each order. Read in model terms
(which MODEL won, not which position), two orders that agree give their winner; two that
disagree give a tie. A pair whose judge failed in either order has no winner and is left
out of the ratings.

The bias figures measure what the swap corrects (definitions in `BiasFigures`); the
ratings are the arena's Bradley–Terry fit (`anoman_tui.arena.rating`) on the post-swap
winners, with a bootstrap that resamples whole cases, since the pairs and repeats of one
case share its question and are not independent draws.

Pure: the standard library, numpy and the arena's rating code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from anoman_tui.arena.rating import INITIAL, PRIOR_GAMES, fit_strengths, strengths_to_elo
from anoman_tui.judges.parse import Verdict

Winner = Literal["a", "b", "tie"]
"""A pair's outcome in model terms: its first model, its second, or a tie."""

_VERDICTS: tuple[Verdict, ...] = ("A", "B", "C")
_RESULT = {1.0: 0, 0.5: 1, 0.0: 2}  # a model's score in a pair -> wins, ties, losses


def _as_verdict(value: object) -> Verdict | None:
    if value is None:
        return None
    for verdict in _VERDICTS:
        if value == verdict:
            return verdict
    raise ValueError(f"a verdict is A, B, C or null, got {value!r}")


@dataclass(frozen=True)
class PairJudgement:
    """Models `a` and `b` judged on one case and repeat, in both orders.

    `ab` is the verdict with a's answer shown as A; `ba` the verdict with b's answer shown
    as A (so its "A" means model b). None: the judge failed in that order (`errors` says
    why). `len_a` and `len_b` are the answers' lengths in characters.
    """

    case: str
    repeat: int
    a: str
    b: str
    ab: Verdict | None
    ba: Verdict | None
    len_a: int
    len_b: int
    errors: tuple[str, ...] = ()

    @property
    def winner(self) -> Winner | None:
        """The winner after the swap; None when either order has no verdict."""
        if self.ab is None or self.ba is None:
            return None
        first, second = _model_winner(self.ab, swapped=False), _model_winner(self.ba, swapped=True)
        return first if first == second else "tie"

    def to_json(self) -> dict[str, Any]:
        """The judgement as JSON data; `winner` is derived, written for readers."""
        return {
            "case": self.case, "repeat": self.repeat, "a": self.a, "b": self.b,
            "ab": self.ab, "ba": self.ba, "winner": self.winner,
            "len_a": self.len_a, "len_b": self.len_b, "errors": list(self.errors),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairJudgement:
        """Read back `to_json`'s data (`winner` is recomputed; lengths default to 0)."""
        return cls(
            case=str(data["case"]), repeat=int(data["repeat"]),
            a=str(data["a"]), b=str(data["b"]),
            ab=_as_verdict(data.get("ab")), ba=_as_verdict(data.get("ba")),
            len_a=int(data.get("len_a", 0)), len_b=int(data.get("len_b", 0)),
            errors=tuple(str(e) for e in data.get("errors") or ()),
        )


def _model_winner(verdict: Verdict, *, swapped: bool) -> Winner:
    """One order's verdict in model terms (`swapped`: model b was shown as A)."""
    if verdict == "C":
        return "tie"
    shown_first_won = verdict == "A"
    return ("b" if swapped else "a") if shown_first_won else ("a" if swapped else "b")


@dataclass(frozen=True)
class BiasFigures:
    """How the judge leans, each figure a share in 0..1, None when nothing was counted.

    - `position_consistency`: among the pairs judged in both orders, the share whose two
      orders gave the same winner in model terms (a tie in both counts as agreeing);
    - `first_position_wins`: among the single-order verdicts that picked an answer (A or
      B, not C), the share that picked the one shown first (A); 0.5 is no lean;
    - `longer_wins`: among the pairs decided after the swap (winner a or b, not a tie),
      the share won by the answer with more characters (pairs of equal lengths left out);
    - `pairs`: the pair judgements counted (all given, errored ones included).
    """

    position_consistency: float | None
    first_position_wins: float | None
    longer_wins: float | None
    pairs: int


def bias_figures(judgements: Iterable[PairJudgement]) -> BiasFigures:
    """The judge's bias figures over `judgements` (definitions in `BiasFigures`)."""
    pairs = both = consistent = picked = first = decided = longer = 0
    for j in judgements:
        pairs += 1
        for verdict in (j.ab, j.ba):
            if verdict in ("A", "B"):
                picked += 1
                first += verdict == "A"
        if j.ab is not None and j.ba is not None:
            both += 1
            consistent += (_model_winner(j.ab, swapped=False)
                           == _model_winner(j.ba, swapped=True))
        winner = j.winner
        if winner in ("a", "b") and j.len_a != j.len_b:
            decided += 1
            longer += (winner == "a") == (j.len_a > j.len_b)
    return BiasFigures(
        position_consistency=_share(consistent, both),
        first_position_wins=_share(first, picked),
        longer_wins=_share(longer, decided),
        pairs=pairs,
    )


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


@dataclass(frozen=True)
class JudgeRating:
    """A model's rating from the judge's pairwise verdicts (Elo scale, 95% interval)."""

    model: str
    rating: float
    ci: tuple[float, float]
    wins: int
    ties: int
    losses: int

    def to_json(self) -> dict[str, Any]:
        """As `eval --json` gives it under `ratings`, keyed by the model."""
        return {"rating": self.rating, "ci": list(self.ci), "wins": self.wins,
                "ties": self.ties, "losses": self.losses}


def judge_ratings(models: Sequence[str], judgements: Sequence[PairJudgement], *,
                  bootstrap: int = 1000, seed: int = 0) -> dict[str, JudgeRating]:
    """Bradley–Terry ratings of `models` from the post-swap winners of `judgements`.

    A win scores 1, a tie 0.5 each way; pairs without a winner are left out. The fit is
    the arena's (`anoman_tui.arena.rating.fit_ratings`: one drawn virtual game per model
    against a reference, the plain mean of the ratings at 1000), so a model with no
    judged pair is rated 1000 and the same scores give the same ratings. The 95% interval
    is the 2.5th to 97.5th percentile over `bootstrap` resamples of the CASES with
    replacement (every pair and repeat of a drawn case together; a case with no winner
    in any pair is not drawn, it adds nothing), seeded by `seed`.
    """
    if bootstrap < 1:
        raise ValueError(f"bootstrap must be at least 1 resample, got {bootstrap}")
    index = {m: i for i, m in enumerate(models)}
    if len(index) != len(models):
        raise ValueError(f"models must be distinct, got {list(models)}")
    size = len(index)
    tallies = {m: [0, 0, 0] for m in models}  # wins, ties, losses
    per_case: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
    for j in judgements:
        if j.a not in index or j.b not in index or j.a == j.b:
            raise ValueError(f"pair {(j.a, j.b)} is not two of the models {list(models)}")
        winner = j.winner
        if winner is None:
            continue  # the judge failed in an order: not an outcome
        score = {"a": 1.0, "b": 0.0, "tie": 0.5}[winner]
        i, k = index[j.a], index[j.b]
        cells = per_case.setdefault(j.case, np.zeros(size * size))
        cells[i * size + k] += score
        cells[k * size + i] += 1.0 - score
        tallies[j.a][_RESULT[score]] += 1
        tallies[j.b][_RESULT[1.0 - score]] += 1
    if not models:
        return {}

    # One row per case, in a fixed order, so the same judgements give the same resamples.
    cases = sorted(per_case)
    rows = (np.stack([per_case[c] for c in cases]) if cases
            else np.zeros((0, size * size)))
    totals = rows.sum(axis=0).reshape(1, size, size)
    point = strengths_to_elo(fit_strengths(totals, PRIOR_GAMES), None)[0]
    if cases:
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(len(cases), np.full(len(cases), 1.0 / len(cases)),
                                size=bootstrap).astype(np.float64)
        resampled = (draws @ rows).reshape(bootstrap, size, size)
        boot = strengths_to_elo(fit_strengths(resampled, PRIOR_GAMES), None)
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    else:
        low = high = np.full(size, INITIAL)

    return {
        m: JudgeRating(model=m, rating=float(point[i]), ci=(float(low[i]), float(high[i])),
                       wins=tallies[m][0], ties=tallies[m][1], losses=tallies[m][2])
        for m, i in index.items()
    }
