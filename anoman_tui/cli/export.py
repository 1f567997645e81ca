"""`anoman-tui export`: a saved comparison as a Markdown, HTML or JSON report, or as
a portable recording (docs/recording-format.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from anoman_tui.cli._history import command_history
from anoman_tui.cli.arguments import positive_int
from anoman_tui.cli.help import HISTORY_AND_REPORTS

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands
    from anoman_tui.history import ComparisonRecord, HistoryStore

GROUP = HISTORY_AND_REPORTS
NAME = "export"
HELP = "write a saved comparison as a Markdown, HTML or JSON report, or a recording"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Write the comparison with this id (see `anoman-tui history`) as a report: "
            "Markdown, one self-contained HTML file (no scripts, no network), or JSON; or "
            "with --format recording, as one portable file with its recorded streams that "
            "`anoman-tui import` adds to another history (docs/recording-format.md). "
            "Exit status 2 for an unknown id or a comparison that cannot be shared."
        ),
    )
    parser.add_argument("id", type=positive_int, help="the comparison's id")
    parser.add_argument("--format", "-f", choices=("md", "html", "json", "recording"),
                        default="md", help="report format, or recording (default: md)")
    parser.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="where to write it ('-' for stdout; default: "
                        "comparison-ID.FORMAT in the current directory, "
                        "comparison-ID.anoman-recording.json for a recording, which a "
                        "FILE ending in .gz gets gzip-compressed)")


def run(args: argparse.Namespace) -> int:
    from anoman_tui.cli._history import history_label, history_location
    from anoman_tui.report import export
    from anoman_tui.secrets_in_use import secrets_in_use
    from anoman_tui.streaming.safe_text import mask_secrets, masked

    path = history_label(history_location("anoman-tui export"))
    record = None
    with command_history("anoman-tui export") as store:
        if store is not None:
            record = store.get(args.id)
            if record is not None and args.format == "recording":
                return _export_recording(args, store, record)
    if record is None:
        print(f"anoman-tui export: no comparison {args.id} in the history ({path}); "
              "`anoman-tui history` lists the ids", file=sys.stderr)
        return 2
    # A blind round: labels until its vote. No key: a server may have echoed one into an
    # answer or an error the history keeps as it came (and a URL its password).
    secrets = secrets_in_use()
    text = mask_secrets(export(masked(record.masked(), secrets), args.format), secrets)
    if args.output == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    target = Path(args.output or f"comparison-{args.id}.{args.format}")
    try:
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"anoman-tui export: cannot write {target}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0


def _export_recording(args: argparse.Namespace, store: HistoryStore,
                      record: ComparisonRecord) -> int:
    """`export --format recording`: the comparison with its streams, as one file."""
    from anoman_tui.history.portable import (
        FILE_SUFFIX,
        PortableRefused,
        comparison_document,
        dumps,
    )
    from anoman_tui.secrets_in_use import secrets_in_use
    from anoman_tui.streaming.recording import RecordingError

    prog = "anoman-tui export"
    try:
        recordings = {} if record.hidden else store.recordings(args.id)
        text = dumps(comparison_document(record, recordings, secrets_in_use()))
    except PortableRefused as exc:
        print(f"{prog}: comparison {args.id} cannot be exported as a recording: {exc.reason}",
              file=sys.stderr)
        return 2
    except RecordingError as exc:
        print(f"{prog}: comparison {args.id}'s recording is damaged: {exc.reason}",
              file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    target = Path(args.output or f"comparison-{args.id}{FILE_SUFFIX}")
    try:
        if target.suffix == ".gz":  # SSE compresses about tenfold; import reads either
            import gzip

            target.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
        else:
            target.write_text(text, encoding="ascii")
    except OSError as exc:
        print(f"{prog}: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0
