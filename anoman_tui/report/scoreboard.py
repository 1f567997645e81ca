"""The scoreboard: per model, what the votes say (rating, wins) beside what the history
knows (speed, cost, how often it fails).

The rating and its interval come from `anoman_tui.arena` over the voted rounds (blind
ones, unless sighted votes are asked for too); the rest from every answer the model
gave in the history (`HistoryStore.model_numbers`). Cost per win is what a winning
answer costs on average: the mean cost of an answer times the rounds played, over the
wins (None without a win).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from anoman_tui.arena import Scoreboard, Vote, scoreboard
from anoman_tui.history import ModelNumbers, VotedRound

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


def build(rounds: list[VotedRound], numbers: dict[str, ModelNumbers], *,
          bootstrap: int = 100, seed: int = 0) -> list[ScoreRow]:
    """The scoreboard rows, best rating first. A round where every pane failed is not a
    vote and is left out."""
    votes: dict[Vote, int] = {}
    for r in rounds:
        if set(r.models) - r.failed:
            vote = Vote(r.models, r.winner if r.outcome == "win" else None,
                        r.outcome, r.failed)  # type: ignore[arg-type]
            votes[vote] = votes.get(vote, 0) + r.count
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
