"""`anoman-tui import`: a recording from `export --format recording` added to the
history. (`import` is a keyword, hence the module's name.)"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anoman_tui.cli._history import command_history
from anoman_tui.cli.help import HISTORY_AND_REPORTS

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = HISTORY_AND_REPORTS
NAME = "import"
HELP = "add a comparison recording (from export --format recording) to the history"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Read a file written by `anoman-tui export ID --format recording` (perhaps on "
            "another machine), check it strictly and add it to the history, from where it "
            "can be reopened and replayed. Exit status 2 for a file that is refused, 1 "
            "when the history cannot be used."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the recording ('-' for stdin)")


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from anoman_tui.history import HistoryUnavailable, VoteRefused
    from anoman_tui.history.portable import PortableRefused, read_comparison_document
    from anoman_tui.streaming.safe_text import terminal_safe

    name = "-" if args.file == "-" else terminal_safe(args.file)
    prog = "anoman-tui import"
    try:
        record = read_comparison_document(_import_bytes(args.file))
    except OSError as exc:
        print(f"{prog}: {name}: cannot read it: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except PortableRefused as exc:
        print(f"{prog}: {name}: {exc.reason}", file=sys.stderr)
        return 2
    record = replace(record, source="import")
    with command_history(prog, create=True) as store:
        assert store is not None  # created when absent
        # The same comparison imported twice (or migrated, then imported) is one: it
        # would count twice on the scoreboard.
        held = store.find_uid(record.uid) if record.uid else None
        if held is None:
            try:
                new_id = store.save(record, uid=record.uid)
            except HistoryUnavailable as exc:
                # Another import of the same file (two at once) saved it between the
                # look-up and this save: the uid is held now, and it is the same
                # comparison, not a broken history.
                held = None if exc.transient or not record.uid else store.find_uid(record.uid)
                if held is None:
                    raise
        if held is not None:
            print(f"already in the history as comparison {held}: nothing imported")
            return 0
        if record.vote is not None:
            vote = record.vote
            try:
                store.cast_vote(new_id, vote.outcome, vote.winner_pane, blind=vote.blind,
                                voted_at=vote.voted_at)
            except VoteRefused as exc:  # a comparison just saved: not expected
                print(f"{prog}: {name}: imported without its vote: {exc.reason}",
                      file=sys.stderr)
    prompt = " ".join(terminal_safe(record.prompt).split())
    if len(prompt) > 60:
        prompt = prompt[:59] + "…"
    count = len(record.panes)
    print(f"imported as comparison {new_id}: {prompt} ({count} pane{'' if count == 1 else 's'}, "
          "recorded)")
    return 0


def _import_bytes(file: str) -> bytes:
    """The file's bytes ('-': stdin), never more than the limit + 1 of them in memory (a
    bigger file is refused anyway; a regular one before a byte of it is read)."""
    import os

    from anoman_tui.history import portable

    limit = portable.MAX_FILE_BYTES
    if file == "-":
        return sys.stdin.buffer.read(limit + 1)
    with open(file, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise portable.too_large()
        return handle.read(limit + 1)
