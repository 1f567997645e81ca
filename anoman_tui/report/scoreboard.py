"""The scoreboard: per model, what the votes say (rating, wins) beside what the history
knows (speed, cost, how often it fails).

The rating and its interval come from `anoman_tui.arena` over the voted rounds (blind
ones, unless sighted votes are asked for too), rated by people (the votes), by the
arena's judge (its verdicts, read as votes) or by both; the rest from every answer the model
gave in the history (`HistoryStore.model_numbers`). Cost per win is what a winning
answer costs on average: the mean cost of an answer times the rounds played, over the
wins (None without a win).

Only what the models did counts (`anoman_tui.history.left_out_reason`): answers under a
demo scenario or refused for their request (a 4xx other than 408 and 429) are left out of
failure rates and speed figures, cache hits out of speed figures. In a voted round, a
pane that failed for such a reason does not lose (it was not the model's failure) and a
cache hit is not rated again (an earlier answer, maybe rated before): each is taken out
of the round, and the whole vote is left out when it named that pane best or fewer than
two panes that count are left. `left_out_lines` says how many and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from anoman_tui.arena import Scoreboard, Vote, scoreboard
from anoman_tui.history import LEFT_OUT_REASONS, LeftOut, ModelNumbers, VotedRound

if TYPE_CHECKING:
    from anoman_tui.judges import Agreement

Rater = Literal["human", "judge", "all"]
RATERS: tuple[Rater, ...] = ("human", "judge", "all")
RATER_WORDS = {"human": "blind votes", "judge": "the judge's verdicts",
               "all": "blind votes and the judge's verdicts"}

# The failure kinds the scoreboard counts, in words (docs/wire-contract.md §8).
FAILURE_WORDS = {
    "http_error": "refused before streaming",
    "stream_error": "error frame",
    "truncated": "truncated",
    "stalled": "stalled",
    "protocol_error": "protocol error",
}


@dataclass(frozen=True)
class ScoreRow:
    model: str
    rounds: int
    wins: int
    ties: int
    losses: int
    win_rate: float
    rating: float
    ci_low: float
    ci_high: float
    unstable: bool
    answers: int
    ttft_p50: float | None
    ttft_p95: float | None
    rate_p50: float | None
    mean_cost: float | None
    cost_per_win: float | None
    failure_rates: dict[str, float] = field(default_factory=dict)
    """Share of the model's answers that failed, by kind (keys of `FAILURE_WORDS`)."""
    simulated: bool = False
    """Some of its answers came from a simulated model (the local gateway's): its rating
    rates the simulation, not the real model of that name."""

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "rounds": self.rounds, "wins": self.wins,
            "ties": self.ties, "losses": self.losses, "win_rate": round(self.win_rate, 4),
            "rating": round(self.rating, 1), "ci_95": [round(self.ci_low, 1),
                                                       round(self.ci_high, 1)],
            "unstable": self.unstable, "answers": self.answers,
            "ttft_p50_s": _round(self.ttft_p50), "ttft_p95_s": _round(self.ttft_p95),
            "tokens_per_s_p50": _round(self.rate_p50, 1),
            "mean_cost_usd": _round(self.mean_cost, 6),
            "cost_per_win_usd": _round(self.cost_per_win, 6),
            "failure_rates": {k: round(v, 4) for k, v in self.failure_rates.items()},
            "simulated": self.simulated,
        }


# The scoreboard's columns, as `anoman-tui scoreboard` and the scoreboard screen show them.
COLUMNS = (("model", "left"), ("rating (95% CI)", "right"), ("rounds", "right"),
           ("W/T/L", "right"), ("win rate", "right"), ("TTFT p50/p95", "right"),
           ("tok/s p50", "right"), ("cost/answer", "right"), ("cost/win", "right"),
           ("failures", "left"))


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:.6f}"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def model_cell(row: ScoreRow) -> str:
    """The model as the scoreboard names it: `anoman-lite (simulated)` for a simulated one."""
    return f"{row.model} (simulated)" if row.simulated else row.model


def cells(row: ScoreRow) -> tuple[str, ...]:
    """A row's cells in `COLUMNS` order; the model's name is the first (with "(simulated)"
    for a simulated model), without its "(few rounds)" mark (each view marks
    `row.unstable` its own way)."""
    failures = ", ".join(f"{FAILURE_WORDS[k]} {v:.0%}" for k, v in row.failure_rates.items()
                         if v) or "none"
    return (model_cell(row), f"{row.rating:.0f} ({row.ci_low:.0f}–{row.ci_high:.0f})",
            str(row.rounds), f"{row.wins}/{row.ties}/{row.losses}", f"{row.win_rate:.0%}",
            f"{_seconds(row.ttft_p50)} / {_seconds(row.ttft_p95)}",
            "—" if row.rate_p50 is None else f"{row.rate_p50:.1f}", _money(row.mean_cost),
            _money(row.cost_per_win), failures)


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _cast(rounds: list[VotedRound], rater: Rater
          ) -> tuple[dict[Vote, int], dict[str, int]]:
    """The votes a rater cast: people's, the judge's verdicts read as votes (its best
    wins, a tie is a tie), or both (a round rated by both counts twice); and how many
    were left out, by the reason of a pane left out of their round."""
    votes: dict[Vote, int] = {}
    left_out: dict[str, int] = {}
    for r in rounds:
        # (a pane that completed under a demo scenario still answered: it stays rated)
        gone = {m: why for m, why in r.left_out if why == "cache_hit" or m in r.failed}
        models = tuple(m for m in r.models if m not in gone)
        failed = r.failed - set(gone)
        cast: list[tuple[str | None, str]] = []
        if rater in ("human", "all"):
            cast.append((r.winner if r.outcome == "win" else None, r.outcome))
        if rater in ("judge", "all") and r.judge_outcome in ("win", "tie"):
            cast.append((r.judge_winner, r.judge_outcome))
        for winner, outcome in cast:
            if gone and (winner in gone or len(models) < 2 or not set(models) - failed):
                why = min(gone.values(), key=LEFT_OUT_REASONS.index)
                left_out[why] = left_out.get(why, 0) + r.count
                continue
            if not set(models) - failed:
                continue  # every pane failed: not a vote
            vote = Vote(models, winner, outcome, failed)  # type: ignore[arg-type]
            votes[vote] = votes.get(vote, 0) + r.count
    return votes, left_out


def votes_left_out(rounds: list[VotedRound], rater: Rater = "human") -> dict[str, int]:
    """How many of a rater's votes the ratings leave out, by reason (`_cast`)."""
    return _cast(rounds, rater)[1]


# Why answers were left out, in words (`anoman_tui.history.left_out_reason`).
LEFT_OUT_WORDS = {
    "scenario": "under a demo scenario (X-Anoman-Simulate)",
    "request": "refused for the request itself (a 4xx such as 400, not 408 or 429)",
    "cache_hit": "answered from the gateway's cache",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def left_out_lines(left: LeftOut, votes: dict[str, int]) -> list[str]:
    """What the scoreboard leaves out and why, as the command prints it and the screen
    shows it; nothing when nothing is left out."""
    lines = []
    parts = [f"{_plural(left.rounds[why], 'round')} {LEFT_OUT_WORDS[why]}, "
             f"{_plural(left.answers.get(why, 0), 'answer')}"
             for why in ("scenario", "request") if left.rounds.get(why)]
    if parts:
        lines.append("Left out of failure rates and speed figures, not the models' doing: "
                     + "; ".join(parts) + ".")
    if left.answers.get("cache_hit"):
        lines.append("Cache hits are never in speed figures: "
                     f"{_plural(left.answers['cache_hit'], 'answer')} "
                     f"{LEFT_OUT_WORDS['cache_hit']}.")
    if any(votes.values()):
        parts = [f"{_plural(votes[why], 'vote')} whose round had a pane "
                 f"{LEFT_OUT_WORDS[why].split(' (')[0]}"
                 for why in LEFT_OUT_REASONS if votes.get(why)]
        lines.append("Left out of the ratings: " + "; ".join(parts) + ".")
    return lines


def left_out_json(left: LeftOut, votes: dict[str, int]) -> dict[str, Any]:
    """`left_out` of `scoreboard --json`: by reason, the rounds and answers left out of
    the figures and the votes left out of the ratings."""
    return {why: {"rounds": left.rounds.get(why, 0), "answers": left.answers.get(why, 0),
                  "votes": votes.get(why, 0)} for why in LEFT_OUT_REASONS}


def agreement_of(rounds: list[VotedRound]) -> Agreement:
    """How far the judge picked the best a person picked, over the rounds both rated
    (`anoman_tui.judges.agreement`): a person's tie or "all bad" is a tie."""
    from anoman_tui.judges.agreement import TIE, agreement

    both: list[tuple[str, str]] = []
    for r in rounds:
        if r.judge_outcome not in ("win", "tie"):
            continue
        human = r.winner if r.outcome == "win" and r.winner else TIE
        judge = r.judge_winner if r.judge_outcome == "win" and r.judge_winner else TIE
        both.extend([(human, judge)] * r.count)
    return agreement(both)


def agreement_json(found: Agreement) -> dict[str, Any]:
    """`agreement` of `scoreboard --json`."""
    return {"rounds": found.rounds,
            "same_best": None if found.same_best is None else round(found.same_best, 4),
            "kappa": None if found.kappa is None else round(found.kappa, 4)}


def agreement_line(found: Agreement) -> str:
    """The agreement in words, as the scoreboard prints and shows it."""
    if not found.rounds:
        return ("agreement of people and the judge: no round rated by both yet "
                "([arena] judge gives a verdict after each vote)")
    assert found.same_best is not None and found.kappa is not None
    return (f"agreement of people and the judge: {found.rounds} round"
            f"{'s' if found.rounds != 1 else ''} rated by both · same best answer "
            f"{found.same_best:.0%} · Cohen's kappa {found.kappa:.2f}")


def build(rounds: list[VotedRound], numbers: dict[str, ModelNumbers], *,
          rater: Rater = "human", bootstrap: int = 100, seed: int = 0) -> list[ScoreRow]:
    """The scoreboard rows, best rating first, from the votes of `rater`. A round where
    every pane failed is not a vote and is left out."""
    votes = _cast(rounds, rater)[0]
    if not votes:
        return []
    board: Scoreboard = scoreboard(votes, bootstrap=bootstrap, seed=seed)
    rows = []
    for score in board.models:
        known = numbers.get(score.model, ModelNumbers())
        mean_cost = known.mean_cost
        rows.append(ScoreRow(
            model=score.model, rounds=score.rounds, wins=score.wins, ties=score.ties,
            losses=score.losses, win_rate=score.win_rate, rating=score.rating,
            ci_low=score.ci_low, ci_high=score.ci_high, unstable=score.unstable,
            answers=known.answers,
            ttft_p50=known.percentiles.get(("ttft_s", 50.0)),
            ttft_p95=known.percentiles.get(("ttft_s", 95.0)),
            rate_p50=known.percentiles.get(("tokens_per_s", 50.0)),
            mean_cost=mean_cost,
            cost_per_win=(mean_cost * score.rounds / score.wins
                          if mean_cost is not None and score.wins else None),
            failure_rates={kind: known.failures.get(kind, 0) / known.answers
                           for kind in FAILURE_WORDS if known.answers},
            simulated=known.simulated_answers > 0,
        ))
    rows.sort(key=lambda r: r.rating, reverse=True)
    return rows
