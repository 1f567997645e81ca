"""The judge's Bradley–Terry ratings: the arena's fit on the post-swap winners (checked
against `fit_ratings` and against the likelihood maximised by SciPy), and intervals from
a bootstrap that resamples whole cases."""

from __future__ import annotations

import itertools
import math
import random
import time

import numpy as np
import pytest

from anoman_tui.arena.rating import PRIOR_GAMES, fit_ratings
from anoman_tui.judges import JudgeRating, PairJudgement, judge_ratings
from anoman_tui.judges.parse import Verdict

# SciPy takes a second to import: the tests comparing against it import it themselves,
# so collecting this module stays cheap.

ELO_PER_NAT = 400 / math.log(10)
SWAP: dict[Verdict, Verdict] = {"A": "B", "B": "A", "C": "C"}


def judged(case: str, repeat: int, a: str, b: str, winner: str | None) -> PairJudgement:
    """A pair whose two orders agree on `winner` ("a", "b", "tie"); None: an error."""
    ab: Verdict | None = {"a": "A", "b": "B", "tie": "C", None: None}[winner]  # type: ignore[assignment]
    ba = None if ab is None else SWAP[ab]
    return PairJudgement(case=case, repeat=repeat, a=a, b=b, ab=ab, ba=ba, len_a=5, len_b=5)


def simulate(strength: dict[str, float], cases: int, repeats: int, seed: int,
             ) -> list[PairJudgement]:
    """A judge that reads each order separately: P(the stronger answer) by Bradley–Terry,
    a tie 20% of the time, and a pull towards the first position."""
    rng = random.Random(seed)
    out = []
    for case in range(cases):
        for a, b in itertools.combinations(strength, 2):
            for repeat in range(repeats):
                p_a = 1 / (1 + math.exp(strength[b] - strength[a]))

                out.append(PairJudgement(
                    case=f"case-{case}", repeat=repeat, a=a, b=b,
                    ab=_read(rng, p_a), ba=_read(rng, 1 - p_a),
                    len_a=rng.randint(50, 500), len_b=rng.randint(50, 500)))
    return out


def _read(rng: random.Random, p_first: float) -> Verdict:
    """One order's verdict, the answer shown first being better with `p_first`."""
    if rng.random() < 0.2:
        return "C"
    return "A" if rng.random() < min(1.0, p_first + 0.1) else "B"


def scores(judgements: list[PairJudgement]) -> dict[tuple[str, str], float]:
    """Summed scores as `fit_ratings` takes them, from the winners (ties half each way)."""
    wins: dict[tuple[str, str], float] = {}
    for j in judgements:
        if j.winner is None:
            continue
        score = {"a": 1.0, "b": 0.0, "tie": 0.5}[j.winner]
        wins[(j.a, j.b)] = wins.get((j.a, j.b), 0.0) + score
        wins[(j.b, j.a)] = wins.get((j.b, j.a), 0.0) + 1.0 - score
    return wins


MODELS = ["alpha", "bravo", "charlie", "delta"]
STRENGTH = {"alpha": 1.2, "bravo": 0.6, "charlie": 0.0, "delta": -0.4}


def test_the_ratings_are_fit_ratings_on_the_same_scores() -> None:
    judgements = simulate(STRENGTH, cases=40, repeats=2, seed=3)
    judgements += [PairJudgement("broken", 0, "alpha", "delta", None, "A", 1, 2,
                                 errors=("the judge's reply has no JSON object",))]
    ratings = judge_ratings(MODELS, judgements, bootstrap=50)
    expected = fit_ratings(MODELS, scores(judgements))
    for model in MODELS:
        assert ratings[model].rating == pytest.approx(expected[model], abs=1e-6)


def test_the_ratings_maximise_the_bradley_terry_likelihood() -> None:
    # Restated from the model, independently of the arena's Newton solver: each pair's
    # score w_ij enters as w_ij·log σ(θi − θj), and each model ties `prior` games with a
    # reference of strength 0.
    from scipy import optimize

    judgements = simulate(STRENGTH, cases=25, repeats=1, seed=11)
    wins = scores(judgements)
    index = {m: i for i, m in enumerate(MODELS)}

    def negative_loglik(theta: np.ndarray) -> float:
        total = 0.0
        for (a, b), w in wins.items():
            total += w * -np.logaddexp(0.0, theta[index[b]] - theta[index[a]])
        total += 0.5 * PRIOR_GAMES * float(
            np.sum(-np.logaddexp(0.0, -theta) - np.logaddexp(0.0, theta)))
        return -total

    best = optimize.minimize(negative_loglik, np.zeros(len(MODELS)), method="BFGS",
                             options={"gtol": 1e-10}).x
    elo = best * ELO_PER_NAT
    elo = elo - elo.mean() + 1000.0
    ratings = judge_ratings(MODELS, judgements, bootstrap=10)
    for model, i in index.items():
        assert ratings[model].rating == pytest.approx(elo[i], abs=1e-3)


def test_a_stronger_model_rates_higher_and_intervals_hold_the_estimate() -> None:
    ratings = judge_ratings(MODELS, simulate(STRENGTH, cases=150, repeats=1, seed=5),
                            bootstrap=300, seed=1)
    ordered = sorted(MODELS, key=lambda m: -ratings[m].rating)
    assert ordered == MODELS
    for rating in ratings.values():
        low, high = rating.ci
        assert low < rating.rating < high
        assert high - low < 150  # 150 cases pin a rating to within tens of points


def test_counts_are_pair_outcomes_and_errors_are_left_out() -> None:
    judgements = [
        judged("q1", 0, "x", "y", "a"),
        judged("q1", 1, "x", "y", "tie"),
        judged("q2", 0, "y", "x", "a"),  # y beats x
        judged("q2", 0, "x", "z", None),
        PairJudgement("q3", 0, "x", "y", "A", "A", 3, 4),  # disagreeing orders: a tie
    ]
    ratings = judge_ratings(["x", "y", "z", "unused"], judgements, bootstrap=20)
    assert (ratings["x"].wins, ratings["x"].ties, ratings["x"].losses) == (1, 2, 1)
    assert (ratings["y"].wins, ratings["y"].ties, ratings["y"].losses) == (1, 2, 1)
    assert (ratings["z"].wins, ratings["z"].ties, ratings["z"].losses) == (0, 0, 0)
    without_error = judge_ratings(["x", "y", "z", "unused"],
                                  [j for j in judgements if j.winner is not None],
                                  bootstrap=20)
    assert ratings == without_error


def test_every_model_gets_a_rating_even_without_a_judged_pair() -> None:
    judgements = [judged(f"q{i}", 0, "x", "y", "a") for i in range(5)]
    ratings = judge_ratings(["x", "y", "lonely"], judgements, bootstrap=30)
    assert set(ratings) == {"x", "y", "lonely"}
    lonely = ratings["lonely"]
    assert (lonely.model, lonely.wins, lonely.ties, lonely.losses) == ("lonely", 0, 0, 0)
    expected = fit_ratings(["x", "y", "lonely"], scores(judgements))["lonely"]
    assert lonely.rating == pytest.approx(expected, abs=1e-6)
    nothing = judge_ratings(["x", "y"], [judged("q", 0, "x", "y", None)], bootstrap=30)
    assert nothing["x"] == JudgeRating("x", 1000.0, (1000.0, 1000.0), 0, 0, 0)
    assert judge_ratings([], []) == {}


def test_the_bootstrap_is_seeded_and_ignores_input_order() -> None:
    judgements = simulate(STRENGTH, cases=30, repeats=2, seed=9)
    first = judge_ratings(MODELS, judgements, bootstrap=200, seed=4)
    shuffled = list(judgements)
    random.Random(0).shuffle(shuffled)
    assert judge_ratings(MODELS, shuffled, bootstrap=200, seed=4) == first
    other = judge_ratings(MODELS, judgements, bootstrap=200, seed=5)
    assert [other[m].ci for m in MODELS] != [first[m].ci for m in MODELS]


def test_a_case_is_resampled_whole_two_cases() -> None:
    # Case q1: x won all three repeats; case q2: y won all three. A case bootstrap draws
    # {q1, q1} a quarter of the time (x 6-0), {q2, q2} a quarter (x 0-6): the interval's
    # ends are exactly those two fits. Resampling repeats one by one would almost never
    # reach 6-0 and put the ends well inside.
    judgements = [judged(case, r, "x", "y", "a" if case == "q1" else "b")
                  for case in ("q1", "q2") for r in range(3)]
    ratings = judge_ratings(["x", "y"], judgements, bootstrap=1000, seed=0)
    x_sweeps = fit_ratings(["x", "y"], {("x", "y"): 6.0})["x"]
    y_sweeps = fit_ratings(["x", "y"], {("y", "x"): 6.0})["x"]
    assert ratings["x"].ci == pytest.approx((y_sweeps, x_sweeps), abs=1e-6)
    assert ratings["x"].rating == pytest.approx(1000.0)
    # The same six outcomes as six cases of one repeat: 6-0 needs six draws out of the
    # three x-wins, (1/2)^6 = 1.6% of resamples, so the 97.5th percentile stays below it.
    apart = [judged(f"q{k}", 0, "x", "y", j.winner) for k, j in enumerate(judgements)]
    high = judge_ratings(["x", "y"], apart, bootstrap=1000, seed=0)["x"].ci[1]
    assert high < x_sweeps - 10


def test_the_interval_runs_from_the_2_5th_to_the_97_5th_percentile() -> None:
    # One case of ten went to x. In a resample of ten cases, x's wins k follow
    # Binomial(10, 0.1): P(k = 0) = 0.35, P(k <= 2) = 0.93, P(k <= 3) = 0.987. So the
    # 2.5th percentile is the fit of x 0-10, the 97.5th that of x 3-7 (a 90th would be 2-8).
    judgements = [judged(f"q{c}", 0, "x", "y", "a" if c == 0 else "b") for c in range(10)]
    ci = judge_ratings(["x", "y"], judgements, bootstrap=1000, seed=0)["x"].ci

    def x_with(wins: int) -> float:
        return fit_ratings(["x", "y"], {("x", "y"): wins, ("y", "x"): 10 - wins})["x"]

    assert ci == pytest.approx((x_with(0), x_with(3)), abs=1e-6)


def test_repeats_of_a_case_move_together() -> None:
    # 20 cases, each repeated 10 times with the same winner. Resampled by case, the
    # interval reflects 20 independent outcomes; were each repeat its own case, it would
    # reflect 200 and be about sqrt(10) ≈ 3 times narrower.
    rng = random.Random(2)
    outcomes = ["a" if rng.random() < 0.6 else "b" for _ in range(20)]
    by_case = [judged(f"q{c}", r, "x", "y", w) for c, w in enumerate(outcomes) for r in range(10)]
    as_if_independent = [judged(f"q{c}-{r}", 0, "x", "y", w)
                         for c, w in enumerate(outcomes) for r in range(10)]
    together = judge_ratings(["x", "y"], by_case, bootstrap=1000)["x"]
    apart = judge_ratings(["x", "y"], as_if_independent, bootstrap=1000)["x"]
    assert together.rating == pytest.approx(apart.rating)
    width = together.ci[1] - together.ci[0]
    assert width > 2 * (apart.ci[1] - apart.ci[0])


@pytest.mark.parametrize(("models", "judgements", "message"), [
    (["x", "x"], [], "distinct"),
    (["x", "y"], [judged("q", 0, "x", "w", "a")], "not two of the models"),
    (["x", "y"], [judged("q", 0, "x", "x", "a")], "not two of the models"),
])
def test_bad_input_is_refused(models: list[str], judgements: list[PairJudgement],
                              message: str) -> None:
    with pytest.raises(ValueError, match=message):
        judge_ratings(models, judgements)


def test_bootstrap_needs_a_resample() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        judge_ratings(["x", "y"], [], bootstrap=0)


def test_300_cases_3_pairs_3_repeats_with_1000_resamples_is_quick() -> None:
    judgements = simulate({"m1": 0.5, "m2": 0.0, "m3": -0.5}, cases=300, repeats=3, seed=1)
    assert len(judgements) == 2700
    started = time.perf_counter()
    ratings = judge_ratings(["m1", "m2", "m3"], judgements, bootstrap=1000)
    assert time.perf_counter() - started < 5.0  # about 0.05 s when measured
    assert ratings["m1"].rating > ratings["m2"].rating > ratings["m3"].rating
