"""`anoman-tui replay`: a recorded comparison streamed again on the compare screen,
offline."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anoman_tui.cli._history import command_history
from anoman_tui.cli.arguments import positive_float, positive_int
from anoman_tui.cli.common import settings_from_args
from anoman_tui.cli.help import HISTORY_AND_REPORTS

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = HISTORY_AND_REPORTS
NAME = "replay"
HELP = "replay a recorded comparison on the compare screen, offline"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Open the compare screen and stream the comparison with this id again from its "
            "recording, at the recorded pace: the same text, footers and failures. No "
            "network, no gateway, no key. Exit status 2 for an unknown id or a comparison "
            "that cannot be replayed, 1 when the history cannot be read."
        ),
    )
    parser.add_argument("id", type=positive_int, help="the comparison's id")
    parser.add_argument("--speed", type=_speed, default=1.0, metavar="X",
                        help="pace: 2 twice as fast, 0.5 half as fast (default 1)")


def run(args: argparse.Namespace) -> int:
    """Refuse what cannot be replayed with one line, before the screen opens."""
    from anoman_tui.cli._history import history_label, history_location
    from anoman_tui.streaming.recording import RecordingError

    settings = settings_from_args(args, "anoman-tui replay")
    if settings is None:
        return 2
    path = history_label(history_location("anoman-tui replay"))
    record, recordings = None, {}
    try:
        with command_history("anoman-tui replay") as store:
            if store is not None:
                record = store.get(args.id)
                if record is not None and not record.hidden:
                    recordings = store.recordings(args.id)
    except RecordingError as exc:
        print(f"anoman-tui replay: comparison {args.id}'s recording is damaged: {exc.reason}",
              file=sys.stderr)
        return 2
    problem = (f"no comparison {args.id} in the history ({path}); `anoman-tui history` "
               "lists the ids" if record is None else
               f"comparison {args.id} is a blind round not voted on yet: its recording would "
               "name the models; vote first (anoman-tui vote ID)" if record.hidden else
               f"comparison {args.id} was saved without recordings (recording off, or over "
               "record_limit_mb): there is nothing to replay" if not recordings else None)
    if problem:
        print(f"anoman-tui replay: {problem}", file=sys.stderr)
        return 2
    assert record is not None
    from anoman_tui.cli.logs import setup_file_logging
    from anoman_tui.ui.app import AnomanApp

    setup_file_logging()
    app = AnomanApp(settings, replay=(record, recordings, args.speed))
    app.run()
    return app.return_code or 0


def _speed(value: str) -> float:
    number = positive_float(value)
    if number == float("inf"):
        raise argparse.ArgumentTypeError("must be a finite number")
    return number
