"""Arena votes to a scoreboard: counts, Bradley–Terry ratings and bootstrap intervals.

A `Vote` is one arena round. What a round implies, pair by pair (`Vote.pairs`):

- a winner beats every other pane of the round; two panes that did not win are not
  compared with each other (as Chatbot Arena counts a round);
- "tie" and "bad" (all answers bad) are a tie between every two panes that did not fail,
  counted as half a win each way; "bad" is kept apart in the counts (`ModelScore.bad`)
  but rates exactly like a tie;
- a failed pane cannot win and loses to every pane of the round that did not fail,
  whatever the outcome; two failed panes are not compared. A round where every pane
  failed is not a vote (`ValueError`).

Per model (`Vote.results`): a win for the winner, a tie for each pane that did not fail
in a "tie" or "bad" round, a loss otherwise (a failed pane always loses), so
rounds = wins + ties + losses; `win_rate` = wins / rounds (a tie is not a win).

The rating is the Bradley–Terry model on the Elo scale as Chatbot Arena reports it:
P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)), fitted by maximum likelihood on the
pairwise outcomes (Newton's method on the aggregated win matrix). Two rules make it
well defined:

- Prior: every model plays `prior` (default 1) virtual game against a fixed reference,
  drawn (half a win each way). Without it a model that never lost, or one that never
  won, has no finite maximum-likelihood rating; one game among the hundreds a rated
  model plays moves its rating by a few points at most, and pulls an unbeaten model's
  rating to a finite value (20 wins out of 20 against one opponent: about 690 points
  above it).
- Scale: ratings are shifted so that the mean rating of a pane over all the votes is
  1000, i.e. the mean of the models' ratings weighted by their rounds (with equal rounds,
  the plain mean); or, with `anchor=MODEL`, so that that model is at 1000 (its interval
  is then 1000 to 1000, and the others' intervals are relative to it). Weighting by
  rounds keeps a model new to the pool, whose rating is still uncertain, from widening
  every other model's interval through the centre.

The 95% interval is a bootstrap: the votes are resampled with replacement `bootstrap`
times (default 100), each resample refitted and shifted the same way, and the interval
is the 2.5th to 97.5th percentile of a model's ratings. A round is resampled as a unit
(its two or three pairwise outcomes together), which is a multinomial draw over the
distinct vote patterns: that draw and the refits run on small arrays, so 100,000 votes
with 100 resamples take well under a second. `seed` makes the intervals reproducible.
On simulated votes (1,500 rounds over 6 models, 200 boards) the true strength fell inside
the interval 92% of the time with 100 resamples and 94% with 1,000: a percentile taken
from 100 resamples is a little short at the ends; pass `bootstrap=1000` for a report.

`unstable`: a model with fewer than 10 rounds, or whose interval is wider than 200
points, is marked unstable (too few rounds for its place on the board to mean much).

The fit itself is public for the judges' ratings (`anoman_tui.judges.pairs`), which feed
it their own win matrices: `fit_strengths` (win matrices to strengths) and
`strengths_to_elo` (strengths to points on this scale).

May import: the standard library and numpy. Never Textual, never the rest of the package.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

Outcome = Literal["win", "tie", "bad"]
Result = Literal["win", "tie", "loss"]
OUTCOMES: tuple[Outcome, ...] = ("win", "tie", "bad")

SCALE = 400.0  # Elo points per factor of BASE in the odds
BASE = 10.0
INITIAL = 1000.0  # the mean rating, or the anchor's
PRIOR_GAMES = 1.0  # virtual drawn games per model against a fixed reference
BOOTSTRAP_ROUNDS = 100
MIN_STABLE_ROUNDS = 10
MAX_STABLE_INTERVAL = 200.0  # Elo points between the interval's ends

_ELO_PER_NAT = SCALE / math.log(BASE)
_MAX_NEWTON_STEPS = 100
_TOLERANCE = 1e-10  # on the largest Newton step, in natural-log strength

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Vote:
    """One arena round: the models in it, the ones that failed, and the outcome.

    `winner` names a model of the round for "win" and is None for "tie" and "bad".
    Built with anything else, it is a ValueError that says why.
    """

    models: tuple[str, ...]
    winner: str | None
    outcome: Outcome
    failed: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        # Accept any iterables, store hashable ones: votes are counted by value.
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "failed", frozenset(self.failed))
        models = self.models
        if len(models) < 2:
            raise ValueError(f"a vote compares at least two models, got {list(models)}")
        if any(not isinstance(m, str) or not m for m in models):
            raise ValueError(f"model names must be non-empty strings, got {list(models)}")
        if len(set(models)) != len(models):
            raise ValueError(f"a round's models must be distinct, got {list(models)}")
        if not self.failed <= set(models):
            extra = sorted(self.failed - set(models))
            raise ValueError(f"failed models {extra} are not in the round {list(models)}")
        if self.failed == set(models):
            raise ValueError("every pane failed: such a round asks for no vote")
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}; one of: {', '.join(OUTCOMES)}")
        if self.outcome == "win":
            if self.winner not in models:
                raise ValueError(f"winner {self.winner!r} is not in the round {list(models)}")
            if self.winner in self.failed:
                raise ValueError(f"winner {self.winner!r} failed: a failed pane cannot win")
        elif self.winner is not None:
            raise ValueError(f"a {self.outcome!r} vote has no winner, got {self.winner!r}")

    def results(self) -> dict[str, Result]:
        """Each model's result in this round (a failed pane always loses)."""
        out: dict[str, Result] = {}
        for model in self.models:
            if model in self.failed:
                out[model] = "loss"
            elif self.outcome == "win":
                out[model] = "win" if model == self.winner else "loss"
            else:
                out[model] = "tie"
        return out

    def pairs(self) -> tuple[tuple[str, str, float], ...]:
        """The pairwise outcomes this round implies: (a, b, a's score: 1, 0.5 or 0)."""
        out: list[tuple[str, str, float]] = []
        models = self.models
        for n, a in enumerate(models):
            for b in models[n + 1:]:
                a_failed, b_failed = a in self.failed, b in self.failed
                if a_failed and b_failed:
                    continue
                if a_failed or b_failed:
                    out.append((a, b, 0.0 if a_failed else 1.0))
                elif self.outcome != "win":
                    out.append((a, b, 0.5))
                elif a == self.winner:
                    out.append((a, b, 1.0))
                elif b == self.winner:
                    out.append((a, b, 0.0))
        return tuple(out)


@dataclass(frozen=True)
class ModelScore:
    """One line of the scoreboard."""

    model: str
    rounds: int
    wins: int
    ties: int  # "tie" and "bad" rounds
    losses: int
    bad: int  # of the ties, the rounds voted "all bad"
    win_rate: float  # wins / rounds
    rating: float  # maximum-likelihood Bradley–Terry rating, Elo scale
    ci_low: float  # 95% bootstrap interval
    ci_high: float
    unstable: bool  # fewer than MIN_STABLE_ROUNDS or interval wider than MAX_STABLE_INTERVAL


@dataclass(frozen=True)
class Scoreboard:
    """Every model that took part in a vote, best rating first (ties by name)."""

    models: tuple[ModelScore, ...]
    votes: int
    bootstrap: int
    seed: int
    anchor: str | None  # None: the mean rating of a pane over the votes is INITIAL


def scoreboard(
    votes: Iterable[Vote],
    *,
    bootstrap: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
    anchor: str | None = None,
    prior: float = PRIOR_GAMES,
) -> Scoreboard:
    """The scoreboard of `votes` (see the module's docstring for every rule): votes one
    by one, or a mapping of each distinct vote to how many times it was cast."""
    if bootstrap < 1:
        raise ValueError(f"bootstrap must be at least 1 resample, got {bootstrap}")
    if not prior > 0:
        raise ValueError(f"prior must be positive, got {prior}")
    distinct = Counter(votes)
    total = sum(distinct.values())
    tallies: dict[str, list[int]] = {}  # model -> [rounds, wins, ties, losses, bad]
    for vote, count in distinct.items():
        for model, result in vote.results().items():
            tally = tallies.setdefault(model, [0, 0, 0, 0, 0])
            tally[0] += count
            tally[{"win": 1, "tie": 2, "loss": 3}[result]] += count
            if vote.outcome == "bad" and result == "tie":
                tally[4] += count
    models = sorted(tallies)
    if anchor is not None and anchor not in tallies:
        raise ValueError(f"anchor {anchor!r} is not a model of these votes")
    if not models:
        return Scoreboard(models=(), votes=0, bootstrap=bootstrap, seed=seed, anchor=anchor)

    cells, weights = _patterns(distinct, {m: i for i, m in enumerate(models)}, len(models))
    anchor_index = None if anchor is None else models.index(anchor)
    played = np.array([tallies[m][0] for m in models], dtype=np.float64)
    wins = (weights @ cells).reshape(1, len(models), len(models))
    rating = strengths_to_elo(fit_strengths(wins, prior), anchor_index, played)[0]

    rng = np.random.default_rng(seed)
    resampled = rng.multinomial(total, weights / total, size=bootstrap).astype(np.float64)
    boot_wins = (resampled @ cells).reshape(bootstrap, len(models), len(models))
    boot = strengths_to_elo(fit_strengths(boot_wins, prior), anchor_index, played)
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)

    rows = []
    for i, model in enumerate(models):
        rounds, won, tied, lost, bad = tallies[model]
        lo, hi = float(low[i]), float(high[i])
        rows.append(ModelScore(
            model=model, rounds=rounds, wins=won, ties=tied, losses=lost, bad=bad,
            win_rate=won / rounds, rating=float(rating[i]), ci_low=lo, ci_high=hi,
            unstable=rounds < MIN_STABLE_ROUNDS or hi - lo > MAX_STABLE_INTERVAL,
        ))
    rows.sort(key=lambda row: (-row.rating, row.model))
    return Scoreboard(models=tuple(rows), votes=total, bootstrap=bootstrap, seed=seed,
                      anchor=anchor)


def fit_ratings(
    models: Sequence[str],
    wins: Mapping[tuple[str, str], float],
    *,
    prior: float = PRIOR_GAMES,
    anchor: str | None = None,
) -> dict[str, float]:
    """Bradley–Terry ratings (Elo scale, mean or `anchor` at 1000) from summed scores.

    `wins[(a, b)]` is a's total score against b (1 per win, 0.5 per tie); pairs may be
    given either way round and are added up. A model with no games keeps the strength
    of the reference the prior ties every model to.
    """
    if not prior > 0:
        raise ValueError(f"prior must be positive, got {prior}")
    index = {m: i for i, m in enumerate(models)}
    if len(index) != len(models):
        raise ValueError(f"models must be distinct, got {list(models)}")
    if anchor is not None and anchor not in index:
        raise ValueError(f"anchor {anchor!r} is not one of the models")
    if not models:
        return {}
    matrix = np.zeros((1, len(models), len(models)))
    for (a, b), score in wins.items():
        if a not in index or b not in index or a == b:
            raise ValueError(f"pair {(a, b)} is not two of the models")
        if score < 0:
            raise ValueError(f"a score is never negative, got {score} for {(a, b)}")
        matrix[0, index[a], index[b]] += score
    anchor_index = None if anchor is None else index[anchor]
    rating = strengths_to_elo(fit_strengths(matrix, prior), anchor_index)[0]
    return {m: float(rating[i]) for i, m in enumerate(models)}


def _patterns(
    distinct: Mapping[Vote, int], index: Mapping[str, int], size: int
) -> tuple[FloatArray, FloatArray]:
    """Distinct vote patterns as rows of scores (flattened size x size) and their counts.

    Votes that imply the same pairwise outcomes (the same models in another pane order,
    say) share a row: merging cells of a multinomial does not change its law.
    """
    rows: dict[tuple[tuple[int, int, float], ...], int] = {}
    for vote, count in distinct.items():
        key = []
        for a, b, score in vote.pairs():
            i, j = index[a], index[b]
            key.append((i, j, score) if i < j else (j, i, 1.0 - score))
        pattern = tuple(sorted(key))
        rows[pattern] = rows.get(pattern, 0) + count
    # Sorted, so that the same votes in any order draw the same resamples from a seed.
    patterns = sorted(rows)
    cells = np.zeros((len(patterns), size * size))
    for k, pattern in enumerate(patterns):
        for i, j, score in pattern:
            cells[k, i * size + j] += score
            cells[k, j * size + i] += 1.0 - score
    return cells, np.array([rows[p] for p in patterns], dtype=np.float64)


def fit_strengths(wins: FloatArray, prior: float) -> FloatArray:
    """Maximum-likelihood Bradley–Terry strengths (natural log), one row per win matrix
    of the batch (shape (batch, models, models)).

    `wins[b, i, j]` is i's score against j (a win 1, a tie 0.5). Each model also has
    `prior` games against a reference of strength 0, half won: the log-likelihood is then
    strictly concave, so Newton's method, with the step halved until the likelihood does
    not fall, converges from zero for every batch member at once.
    """
    batch, size, _ = wins.shape
    games = wins + wins.transpose(0, 2, 1)
    theta: FloatArray = np.zeros((batch, size))
    eye = np.eye(size)
    current = _loglik(theta, wins, prior)
    for _ in range(_MAX_NEWTON_STEPS):
        diff = theta[:, :, None] - theta[:, None, :]
        p = _sigmoid(diff)  # P(i beats j)
        p_ref = _sigmoid(theta)
        grad = (wins - games * p).sum(axis=2) + prior * (0.5 - p_ref)
        curvature = games * p * (1.0 - p)
        # -Hessian: positive definite thanks to the prior's diagonal term.
        neg_hessian = (eye * (curvature.sum(axis=2) + prior * p_ref * (1.0 - p_ref))[:, :, None]
                       - curvature)
        step = np.linalg.solve(neg_hessian, grad[:, :, None])[:, :, 0]
        scale: FloatArray = np.ones(batch)
        for _halving in range(40):
            trial = _loglik(theta + scale[:, None] * step, wins, prior)
            worse = trial < current - 1e-12 * np.abs(current)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta = theta + scale[:, None] * step
        current = _loglik(theta, wins, prior)
        if np.abs(scale[:, None] * step).max() < _TOLERANCE:
            break
    return theta


def _loglik(theta: FloatArray, wins: FloatArray, prior: float) -> FloatArray:
    diff = theta[:, :, None] - theta[:, None, :]
    pairs = -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
    reference = -0.5 * prior * (np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)).sum(axis=1)
    result: FloatArray = pairs + reference
    return result


def _sigmoid(x: FloatArray) -> FloatArray:
    result: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return result


def strengths_to_elo(theta: FloatArray, anchor: int | None,
                     weights: FloatArray | None = None) -> FloatArray:
    """`fit_strengths`'s strengths to Elo points, row by row: the model at index `anchor`,
    or with no anchor the mean of the models (weighted by `weights` if given), at
    INITIAL."""
    elo = theta * _ELO_PER_NAT
    centre = elo[:, anchor] if anchor is not None else np.average(elo, axis=1, weights=weights)
    result: FloatArray = elo - centre[:, None] + INITIAL
    return result
