"""The blind arena's arithmetic: votes in, a scoreboard of ratings out.

`rating.py` turns arena votes into per-model counts and Bradley–Terry ratings on the
Elo scale with bootstrap confidence intervals; pure functions over plain data, so the
scoreboard screen and `anoman-tui scoreboard` share them.

May import: the standard library and numpy. Never Textual, never the UI.
"""

from anoman_tui.arena.rating import (
    BOOTSTRAP_ROUNDS,
    INITIAL,
    MAX_STABLE_INTERVAL,
    MIN_STABLE_ROUNDS,
    OUTCOMES,
    PRIOR_GAMES,
    ModelScore,
    Outcome,
    Scoreboard,
    Vote,
    fit_ratings,
    scoreboard,
)

__all__ = [
    "BOOTSTRAP_ROUNDS",
    "INITIAL",
    "MAX_STABLE_INTERVAL",
    "MIN_STABLE_ROUNDS",
    "OUTCOMES",
    "PRIOR_GAMES",
    "ModelScore",
    "Outcome",
    "Scoreboard",
    "Vote",
    "fit_ratings",
    "scoreboard",
]
