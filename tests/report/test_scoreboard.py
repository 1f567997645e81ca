"""The scoreboard's rows: a simulated model is named as such in its cells and JSON."""

from __future__ import annotations

from anoman_tui.history import ModelNumbers, VotedRound
from anoman_tui.report.scoreboard import build, cells


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
