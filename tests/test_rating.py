"""The arena's scoreboard arithmetic (anoman_tui.arena.rating).

The ratings are checked against a maximum-likelihood fit written independently here
(plain gradient ascent on the Elo-scale likelihood, with the pairwise outcomes of each
round spelled out again), and against votes simulated from known strengths.
"""

from __future__ import annotations

import math
import random
import statistics
from itertools import combinations

import pytest

from anoman_tui.arena import (
    INITIAL,
    MAX_STABLE_INTERVAL,
    MIN_STABLE_ROUNDS,
    PRIOR_GAMES,
    Vote,
    fit_ratings,
    scoreboard,
)


def win(models: str, winner: str, failed: str = "") -> Vote:
    return Vote(tuple(models), winner, "win", frozenset(failed))


def tie(models: str, failed: str = "") -> Vote:
    return Vote(tuple(models), None, "tie", frozenset(failed))


def bad(models: str, failed: str = "") -> Vote:
    return Vote(tuple(models), None, "bad", frozenset(failed))


# -- the independent computation ---------------------------------------------------------

def pairwise_records(votes: list[Vote]) -> list[tuple[str, str, float]]:
    """(a, b, a's score) for every comparison the votes imply, from the rules as stated:
    the winner beats everyone else, any answer beats a failed pane, answers of a tie or
    an all-bad round tie each other."""
    records = []
    for vote in votes:
        answered = [m for m in vote.models if m not in vote.failed]
        for loser in vote.failed:
            records += [(m, loser, 1.0) for m in answered]
        if vote.outcome == "win":
            records += [(vote.winner, m, 1.0) for m in answered if m != vote.winner]
        else:
            records += [(a, b, 0.5) for a, b in combinations(answered, 2)]
    return records


def rounds_of(votes: list[Vote]) -> dict[str, int]:
    rounds: dict[str, int] = {}
    for vote in votes:
        for model in vote.models:
            rounds[model] = rounds.get(model, 0) + 1
    return rounds


def centred(ratings: dict[str, float], rounds: dict[str, int]) -> dict[str, float]:
    """Shifted so that the mean rating of a pane over the votes is 1000."""
    mean = sum(r * rounds[m] for m, r in ratings.items()) / sum(rounds[m] for m in ratings)
    return {m: r - mean + INITIAL for m, r in ratings.items()}


def gradient_ascent_elo(records: list[tuple[str, str, float]], prior: float,
                        ) -> dict[str, float]:
    """Maximise sum s*log P(a beats b) + (1-s)*log P(b beats a), P = 1/(1+10^((Rb-Ra)/400)),
    each model also drawing `prior` games against a reference pinned at 1000."""
    models = sorted({m for a, b, _ in records for m in (a, b)})
    k = math.log(10) / 400
    ratings = dict.fromkeys(models, 1000.0)
    games = dict.fromkeys(models, prior)
    for a, b, _ in records:
        games[a] += 1
        games[b] += 1
    rate = 1 / (0.5 * k * k * max(games.values()))
    for _ in range(200_000):
        grad = {m: prior * k * (0.5 - 1 / (1 + 10 ** ((1000 - ratings[m]) / 400)))
                for m in models}
        for a, b, s in records:
            p = 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
            grad[a] += k * (s - p)
            grad[b] -= k * (s - p)
        for m in models:
            ratings[m] += rate * grad[m]
        if max(abs(rate * g) for g in grad.values()) < 1e-7:
            break
    else:
        raise AssertionError("gradient ascent did not converge")
    return ratings


FIXED_VOTES = [
    win("abc", "a"), win("abc", "a"), win("abc", "b"), win("bcd", "b"),
    win("acd", "c"), win("abd", "d"), win("abd", "a", failed="d"),
    tie("abc"), tie("bcd", failed="b"), bad("acd"), bad("abd"),
    win("ab", "b"), win("cd", "c"), win("bd", "d"), tie("ad"),
    win("abc", "c", failed="ab"), win("acd", "a"), win("bcd", "c"),
]


@pytest.mark.parametrize("prior", [PRIOR_GAMES, 0.2])
def test_ratings_match_an_independent_maximum_likelihood_fit(prior: float) -> None:
    expected = centred(gradient_ascent_elo(pairwise_records(FIXED_VOTES), prior),
                       rounds_of(FIXED_VOTES))
    board = scoreboard(FIXED_VOTES, prior=prior)
    got = {row.model: row.rating for row in board.models}
    assert got.keys() == expected.keys()
    for model, rating in expected.items():
        assert got[model] == pytest.approx(rating, abs=1.0), (model, got, expected)
    # The data is not degenerate: the fit separates the models.
    assert max(got.values()) - min(got.values()) > 50


def test_pairs_of_a_round_follow_the_rules() -> None:
    for vote in FIXED_VOTES:
        mine = sorted((a, b, s) if a < b else (b, a, 1 - s) for a, b, s in vote.pairs())
        theirs = sorted((a, b, s) if a < b else (b, a, 1 - s)
                        for a, b, s in pairwise_records([vote]))
        assert mine == theirs, vote


def test_fit_ratings_on_scores_and_the_anchor() -> None:
    scores = {("a", "b"): 7.0, ("b", "a"): 3.0, ("b", "c"): 6.5, ("c", "b"): 3.5}
    ratings = fit_ratings(["a", "b", "c"], scores)
    assert sum(ratings.values()) / 3 == pytest.approx(INITIAL)
    assert ratings["a"] > ratings["b"] > ratings["c"]
    anchored = fit_ratings(["a", "b", "c"], scores, anchor="b")
    assert anchored["b"] == pytest.approx(INITIAL)
    # Anchoring only shifts: the differences are the same.
    assert anchored["a"] - anchored["c"] == pytest.approx(ratings["a"] - ratings["c"])
    with pytest.raises(ValueError, match="anchor"):
        fit_ratings(["a", "b"], {}, anchor="z")


# -- simulated votes from a known ranking --------------------------------------------------

TRUE_ELO = {"m1": 1230.0, "m2": 1150.0, "m3": 1080.0, "m4": 1010.0, "m5": 950.0,
            "m6": 860.0}


def simulate(rounds: int, seed: int, two_way: float = 0.2) -> list[Vote]:
    """Rounds of three or (a `two_way` share) two models; the winner drawn with probability
    proportional to 10^(R/400), i.e. Bradley–Terry for every pair of the round."""
    rng = random.Random(seed)
    names = list(TRUE_ELO)
    votes = []
    for _ in range(rounds):
        drawn = rng.sample(names, 3 if rng.random() < 1 - two_way else 2)
        weights = [10 ** (TRUE_ELO[m] / 400) for m in drawn]
        votes.append(Vote(tuple(drawn), rng.choices(drawn, weights)[0], "win", frozenset()))
    return votes


def test_simulated_votes_recover_the_known_ranking() -> None:
    votes = simulate(5000, seed=7)
    board = scoreboard(votes, seed=3)
    order = [row.model for row in board.models]
    assert order == sorted(TRUE_ELO, key=lambda m: -TRUE_ELO[m])  # Spearman = 1
    truth = centred(TRUE_ELO, rounds_of(votes))
    inside = 0
    for row in board.models:
        true = truth[row.model]
        assert row.rating == pytest.approx(true, abs=40), row
        assert row.ci_low < row.rating < row.ci_high
        inside += row.ci_low <= true <= row.ci_high
        assert not row.unstable
    assert inside >= 5, board.models


def test_intervals_cover_the_truth_in_most_simulations() -> None:
    misses = 0
    checked = 0
    for seed in range(8):
        votes = simulate(1500, seed=100 + seed)
        truth = centred(TRUE_ELO, rounds_of(votes))
        board = scoreboard(votes, seed=seed)
        for row in board.models:
            checked += 1
            misses += not row.ci_low <= truth[row.model] <= row.ci_high
    # 95% intervals: about 2 or 3 misses in 48 expected; 8 would mean they are too narrow.
    assert misses <= 7, misses
    assert checked == 48


def _interval_widths(votes: list[Vote], resamples: int, seed: int) -> float:
    """Mean width of the 95% intervals (relative to m4) from resampling the votes
    directly: whole rounds drawn with replacement, each resample refitted."""
    rng = random.Random(seed)
    names = sorted(TRUE_ELO)
    replicates: dict[str, list[float]] = {m: [] for m in names if m != "m4"}
    for _ in range(resamples):
        scores: dict[tuple[str, str], float] = {}
        for vote in rng.choices(votes, k=len(votes)):
            for a, b, s in vote.pairs():
                scores[(a, b)] = scores.get((a, b), 0.0) + s
                scores[(b, a)] = scores.get((b, a), 0.0) + 1 - s
        for model, rating in fit_ratings(names, scores, anchor="m4").items():
            if model != "m4":
                replicates[model].append(rating)
    widths = []
    for values in replicates.values():
        cuts = statistics.quantiles(values, n=40, method="inclusive")  # 2.5% ... 97.5%
        widths.append(cuts[-1] - cuts[0])
    return sum(widths) / len(widths)


def test_the_bootstrap_resamples_whole_rounds() -> None:
    """A three-model round's two outcomes go together (a winner beats both others at
    once): the intervals match a direct resampling of the rounds, and are wider than a
    resampling of pairwise outcomes one by one would make them."""
    votes = simulate(600, seed=21, two_way=0)
    direct = _interval_widths(votes, resamples=600, seed=21)

    def mean_width(board_votes: list[Vote]) -> float:
        rows = scoreboard(board_votes, bootstrap=600, anchor="m4", seed=21).models
        return sum(r.ci_high - r.ci_low for r in rows if r.model != "m4") / (len(rows) - 1)

    assert 0.92 < mean_width(votes) / direct < 1.08
    one_by_one = [Vote((a, b), a if s == 1 else b, "win", frozenset())
                  for vote in votes for a, b, s in vote.pairs()]
    assert mean_width(one_by_one) / direct < 0.9


# -- counts and what a vote may be ---------------------------------------------------------

def test_counts_for_hand_made_votes() -> None:
    votes = [
        win("abc", "a"),           # a wins, b and c lose
        tie("abc", failed="c"),    # a and b tie, c failed: a loss
        bad("abc"),                # all three tie, all bad
        win("bc", "c", failed="b"),
    ]
    rows = {row.model: row for row in scoreboard(votes).models}
    got = {m: (r.rounds, r.wins, r.ties, r.losses, r.bad) for m, r in rows.items()}
    assert got == {"a": (3, 1, 2, 0, 1), "b": (4, 0, 2, 2, 1), "c": (4, 1, 1, 2, 1)}
    assert rows["a"].win_rate == pytest.approx(1 / 3)
    assert rows["b"].win_rate == 0
    assert rows["c"].win_rate == pytest.approx(1 / 4)
    assert sorted(tie("abc", failed="c").pairs()) == [
        ("a", "b", 0.5), ("a", "c", 1.0), ("b", "c", 1.0)]
    # Two panes that did not win are not compared; two failed ones neither.
    assert win("abc", "a").pairs() == (("a", "b", 1.0), ("a", "c", 1.0))
    assert win("abc", "a", failed="bc").pairs() == (("a", "b", 1.0), ("a", "c", 1.0))
    assert scoreboard(votes).votes == 4


def test_a_failed_pane_never_wins() -> None:
    with pytest.raises(ValueError, match="a failed pane cannot win"):
        win("abc", "b", failed="b")
    with pytest.raises(ValueError, match="every pane failed"):
        tie("abc", failed="abc")
    with pytest.raises(ValueError, match="every pane failed"):
        bad("ab", failed="ab")
    rows = {row.model: row for row in scoreboard(
        [win("abc", "a", failed="bc"), tie("abc", failed="c"), bad("bc", failed="c")]).models}
    assert rows["c"].wins == 0 and rows["c"].ties == 0 and rows["c"].losses == 3


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Vote(("a",), "a", "win", frozenset()), "at least two models"),
    (lambda: Vote(("a", "a"), "a", "win", frozenset()), "distinct"),
    (lambda: Vote(("a", "b"), "c", "win", frozenset()), "not in the round"),
    (lambda: Vote(("a", "b"), None, "win", frozenset()), "not in the round"),
    (lambda: Vote(("a", "b"), "a", "tie", frozenset()), "has no winner"),
    (lambda: Vote(("a", "b"), None, "draw", frozenset()), "unknown outcome"),  # type: ignore[arg-type]
    (lambda: Vote(("a", "b"), None, "tie", frozenset("z")), "not in the round"),
    (lambda: Vote(("a", ""), None, "tie", frozenset()), "non-empty"),
])
def test_invalid_votes_say_why(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


# -- the unstable flag, the seed, edge cases -----------------------------------------------

def test_unstable_for_few_rounds_or_a_wide_interval() -> None:
    rng = random.Random(5)
    votes = [win("ab", rng.choice("ab")) for _ in range(400)]
    votes += [win("abc", "c"), win("abc", "a"), tie("bc"), win("ac", "a"), win("bc", "b")]
    votes += [win("ad", "d" if n % 2 else "a") for n in range(12)]
    rows = {row.model: row for row in scoreboard(votes).models}
    assert rows["c"].rounds < MIN_STABLE_ROUNDS and rows["c"].unstable
    wide = rows["d"]
    assert wide.rounds >= MIN_STABLE_ROUNDS
    assert wide.ci_high - wide.ci_low > MAX_STABLE_INTERVAL and wide.unstable
    for model in "ab":
        row = rows[model]
        assert row.rounds > 400 and row.ci_high - row.ci_low < MAX_STABLE_INTERVAL
        assert not row.unstable


def test_a_seed_makes_the_intervals_reproducible() -> None:
    votes = simulate(600, seed=11)
    first = scoreboard(votes, seed=42)
    assert scoreboard(votes, seed=42) == first
    other = scoreboard(votes, seed=43)
    assert [r.rating for r in other.models] == [r.rating for r in first.models]
    assert [(r.ci_low, r.ci_high) for r in other.models] != [
        (r.ci_low, r.ci_high) for r in first.models]
    # Vote order does not matter either.
    assert scoreboard(list(reversed(votes)), seed=42) == first


def test_sorted_by_rating_and_the_anchor_option() -> None:
    votes = simulate(800, seed=12)
    board = scoreboard(votes)
    ratings = [row.rating for row in board.models]
    assert ratings == sorted(ratings, reverse=True)
    # The mean rating of a pane over the votes (2.8 panes a round) is 1000.
    panes = sum(len(v.models) for v in votes)
    assert sum(r.rating * r.rounds for r in board.models) / panes == pytest.approx(INITIAL)
    anchored = scoreboard(votes, anchor="m4")
    row = next(r for r in anchored.models if r.model == "m4")
    assert row.rating == pytest.approx(INITIAL)
    assert row.ci_low == pytest.approx(INITIAL) and row.ci_high == pytest.approx(INITIAL)
    assert anchored.anchor == "m4" and board.anchor is None
    with pytest.raises(ValueError, match="anchor 'nobody'"):
        scoreboard(votes, anchor="nobody")


def test_no_votes() -> None:
    board = scoreboard([])
    assert board.models == () and board.votes == 0


def test_one_model_only() -> None:
    assert fit_ratings(["solo"], {}) == {"solo": INITIAL}
    # Only one model ever answers: the other always failed, so it never wins a pair.
    board = scoreboard([win("ab", "a", failed="b")] * 3)
    rows = {row.model: row for row in board.models}
    assert rows["a"].wins == 3 and rows["b"].losses == 3
    assert rows["a"].unstable and rows["b"].unstable


def test_a_model_that_never_lost_has_a_finite_rating() -> None:
    votes = [win("ab", "a")] * 20 + [win("bc", "b"), win("bc", "c")] * 10
    board = scoreboard(votes)
    rows = {row.model: row for row in board.models}
    assert rows["a"].losses == 0
    for row in board.models:
        assert all(math.isfinite(x) for x in (row.rating, row.ci_low, row.ci_high))
    # The prior's one drawn game keeps an unbeaten record finite: 20 out of 20 is worth
    # several hundred points, not an unbounded gap.
    assert 300 < rows["a"].rating - rows["b"].rating < 1000
    assert abs(rows["b"].rating - rows["c"].rating) < 20  # 10-10 between them


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        scoreboard([win("ab", "a")], bootstrap=0)
    with pytest.raises(ValueError, match="prior"):
        scoreboard([win("ab", "a")], prior=0)
