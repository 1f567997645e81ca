"""`anoman-tui scoreboard`: per model, the blind votes' rating and what the history
knows of its answers."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anoman_tui.cli._history import command_history
from anoman_tui.cli.help import ARENA

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = ARENA
NAME = "scoreboard"
HELP = "per model: the blind votes' rating, wins and what the history knows"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Per model, best first: rounds, wins, ties, losses, win rate and a "
            "Bradley-Terry rating on the Elo scale with its 95% bootstrap interval (from "
            "the blind votes), beside TTFT p50/p95, tokens/s p50, mean cost per answer, "
            "cost per win and failure rates by kind (from every answer in the history); "
            "then how far people and the arena's judge agree on the rounds both rated. "
            "Only what the models did counts: answers under a demo scenario or refused for "
            "the request itself (a 4xx other than 408 and 429) are left out of failure "
            "rates and speed figures, cache hits out of speed figures, and the scoreboard "
            "says how many were left out and why."
        ),
    )
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument("--include-sighted", action="store_true",
                       help="count votes cast with the names on screen too")
    parser.add_argument("--rater", choices=("human", "judge", "all"), default="human",
                        help="whose verdicts make the ratings: people's blind votes "
                        "(default), the arena judge's ([arena] judge), or both")
    parser.add_argument("--user", metavar="NAME", default=None,
                        help="count only NAME's votes (default: everyone's)")


def run(args: argparse.Namespace) -> int:
    from anoman_tui.history import LeftOut
    from anoman_tui.report.scoreboard import (
        RATER_WORDS,
        agreement_json,
        agreement_line,
        agreement_of,
        build,
        left_out_json,
        left_out_lines,
        votes_left_out,
    )

    rows = []
    rounds = []
    by_user: dict[str, int] = {}
    left = LeftOut()
    with command_history("anoman-tui scoreboard") as store:
        if store is not None:
            rounds = store.voted_rounds(include_sighted=args.include_sighted,
                                        user=args.user)
            rows = build(rounds, store.model_numbers(), rater=args.rater)
            left = store.left_out()
            by_user = store.votes_by_user(include_sighted=args.include_sighted)
            if args.user is not None:
                by_user = {args.user: by_user.get(args.user, 0)}
    agreement = agreement_of(rounds)
    votes_left = votes_left_out(rounds, args.rater)
    if args.json:
        print(json.dumps({"include_sighted": args.include_sighted, "rater": args.rater,
                          "models": [r.to_json() for r in rows],
                          "agreement": agreement_json(agreement),
                          "left_out": left_out_json(left, votes_left),
                          "user": args.user, "votes_by_user": by_user}, ensure_ascii=False))
        return 0
    if not rows:
        if args.rater == "judge":
            print("No judge verdicts yet: set [arena] judge in the config file; the judge "
                  "gives its verdict on each blind round after its vote.")
        else:
            print("No votes yet: run `anoman-tui compare --blind`, then `anoman-tui vote "
                  "ID`.")
        for line in left_out_lines(left, votes_left):
            print(line)
        return 0
    from rich.console import Console
    from rich.table import Table

    from anoman_tui.report.scoreboard import COLUMNS, cells

    words = RATER_WORDS[args.rater]
    if args.include_sighted and args.rater != "judge":
        words = words.replace("blind votes", "blind and sighted votes")
    table = Table(title=f"Scoreboard ({words})", title_justify="left")
    for name, justify in COLUMNS:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        name, *rest = cells(r)
        table.add_row(name + (" (few rounds)" if r.unstable else ""), *rest)
    console = Console(highlight=False)
    table.columns[0].no_wrap = True  # a cut name is another model
    if not console.is_terminal:  # a file or a pipe: as wide as it needs, never squeezed
        unbounded = console.options.update_width(10_000)
        console.width = max(console.width, console.measure(table, options=unbounded).maximum)
    console.print(table)
    console.print(agreement_line(agreement), markup=False)
    for line in left_out_lines(left, votes_left):
        console.print(line, markup=False)
    return 0
