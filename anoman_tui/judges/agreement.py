"""How far the judge agrees with people, on arena rounds both have rated.

Two figures over the rounds rated by a person and by the judge, each rating a "best": a
model name, or "tie" when no single model was best:

- `same_best`: the share of rounds where both named the same best;
- `kappa`: Cohen's kappa over the categories (each model name, "tie"): the agreement
  beyond what two raters with these marginal frequencies would reach by chance,
  (p_o - p_e) / (1 - p_e). It is 1 for full agreement, 0 for chance level, below 0 for
  less than chance. When p_e is 1 (both raters put every round in one and the same
  category) kappa is undefined as a fraction; it is given as 1.0, since they then agree
  on every round.

`best_after_swap` turns one round's pairwise judgements into the judge's best.

Pure: the standard library only (exact integer arithmetic, no rounding until the end).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from anoman_tui.judges.pairs import PairJudgement

TIE = "tie"
"""The best of a round where no single model was best."""


@dataclass(frozen=True)
class Agreement:
    """Agreement over `rounds` rounds; both figures None when there is no round."""

    rounds: int
    same_best: float | None
    kappa: float | None


def agreement(pairs: Iterable[tuple[str, str]]) -> Agreement:
    """`same_best` and Cohen's kappa of (human_best, judge_best), one item per round."""
    human: Counter[str] = Counter()
    judge: Counter[str] = Counter()
    rounds = same = 0
    for human_best, judge_best in pairs:
        rounds += 1
        same += human_best == judge_best
        human[human_best] += 1
        judge[judge_best] += 1
    if rounds == 0:
        return Agreement(rounds=0, same_best=None, kappa=None)
    # kappa = (p_o - p_e) / (1 - p_e), each term multiplied by rounds² to stay exact:
    # p_o·n² = same·n, p_e·n² = Σ_k human_k·judge_k.
    chance = sum(count * judge[label] for label, count in human.items())
    whole = rounds * rounds
    kappa = 1.0 if chance == whole else (same * rounds - chance) / (whole - chance)
    return Agreement(rounds=rounds, same_best=same / rounds, kappa=kappa)


def best_after_swap(models: Sequence[str], judgements: Sequence[PairJudgement]) -> str:
    """The judge's best of one arena round: the model that won every one of its pairs
    against each other model of `models` (every repeat, after the swap); else "tie".
    Also "tie" when any pair has no verdict: the judge did not see the whole round."""
    if len(set(models)) != len(models) or len(models) < 2:
        raise ValueError(f"a round compares at least two distinct models, got {list(models)}")
    if TIE in models:
        raise ValueError(f'a model named "{TIE}" cannot be told from a tie')
    known = set(models)
    for j in judgements:
        if j.a not in known or j.b not in known or j.a == j.b:
            raise ValueError(f"pair {(j.a, j.b)} is not two of the models {list(models)}")
    if any(j.winner is None for j in judgements):
        return TIE
    for model in models:
        beaten: set[str] = set()
        unbeaten = True
        for j in judgements:
            if model not in (j.a, j.b):
                continue
            won = j.winner == ("a" if j.a == model else "b")
            if not won:
                unbeaten = False
                break
            beaten.add(j.b if j.a == model else j.a)
        if unbeaten and beaten == known - {model}:
            return model
    return TIE
