"""`anoman-tui history`: the saved comparisons, newest first; `history migrate` copies a
local SQLite history into a team's shared one (history/transfer.py)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from anoman_tui.cli._history import command_history
from anoman_tui.cli.arguments import positive_int
from anoman_tui.cli.help import HISTORY_AND_REPORTS

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = HISTORY_AND_REPORTS
NAME = "history"
HELP = "list the saved comparisons, newest first"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "List the comparisons saved to the history (by the compare screen and by "
            "`compare`), newest first: id, time, prompt, and each model's status and cost."
        ),
    )
    parser.add_argument("--search", metavar="TEXT", default=None,
                         help="only comparisons whose prompt or a model matches every word")
    parser.add_argument("--limit", type=positive_int, default=50, metavar="N",
                         help="how many (default 50)")
    parser.add_argument("--user", metavar="NAME", default=None,
                        help="only the comparisons NAME ran (default: everyone's)")
    parser.add_argument("--json", action="store_true",
                         help="one JSON object per line instead of a table")
    actions = parser.add_subparsers(dest="history_action", metavar="ACTION")
    migrate = actions.add_parser(
        "migrate", help="copy a local SQLite history into another (a team's PostgreSQL)",
        description=(
            "Copy a local SQLite history (default: the usual file) into the history at "
            "--to: comparisons with their recordings, votes (blind rounds not voted on "
            "stay so), the arena judge's verdicts and suite runs. Run it again to copy "
            "what is new: nothing is copied twice."))
    migrate.add_argument("--to", required=True, metavar="URL_OR_FILE",
                         help="where to copy: postgresql://user@host:port/database (the "
                         "password from PGPASSWORD or ~/.pgpass), or another SQLite file")
    migrate.add_argument("--from", dest="source", metavar="FILE", default=None,
                         help="the SQLite history to copy (default: the usual file)")


def run(args: argparse.Namespace) -> int:
    if getattr(args, "history_action", None) == "migrate":
        return _migrate(args)
    import shutil
    from datetime import datetime

    from anoman_tui.cli._history import history_label, history_location
    from anoman_tui.secrets_in_use import secrets_in_use
    from anoman_tui.streaming.safe_text import masked, terminal_safe

    location = history_location("anoman-tui history")
    exists = isinstance(location, str) or location.exists()
    records = []
    with command_history("anoman-tui history") as store:
        if store is not None:
            records = store.recent(args.limit, args.search, user=args.user)
    if not records:
        what = (f"no saved comparison matches {args.search!r}" if args.search and exists
                else "no comparisons saved yet (the history lives in "
                f"{history_label(location)})")
        print(what[0].upper() + what[1:], file=sys.stderr if args.json else sys.stdout)
        return 0
    width = shutil.get_terminal_size().columns
    secrets = secrets_in_use()
    for record in records:
        when = datetime.fromtimestamp(record.created_at).astimezone()
        hidden = record.hidden
        # A blind round shows its labels until its vote; no key shows (`secrets_in_use`).
        record = masked(record.masked(), secrets)
        if args.json:
            entry: dict[str, Any] = {
                "id": record.id,
                "time": when.isoformat(timespec="seconds"),
                "prompt": record.prompt,
                "panes": [{"pane": p.pane, "model": None if hidden else p.model,
                           "simulated": p.simulated,
                           "status": p.status, "cost": None if hidden else p.cost_text}
                          | ({"label": p.label} if record.blind else {})
                          for p in record.panes],
            }
            if record.blind:
                entry["blind"] = True
                entry["voted"] = not hidden
            entry["user"] = record.user
            if record.vote is not None:
                entry["voted_by"] = record.vote.user
            print(json.dumps(entry, ensure_ascii=False))
            continue
        head = f"{record.id:>5}  {when:%Y-%m-%d %H:%M}  "
        tail = "  " + "  ·  ".join(
            f"{p.model}{' (simulated)' if p.simulated else ''} {p.status} {p.cost_text}"
            for p in record.panes)
        prompt = " ".join(terminal_safe(record.prompt).split())
        room = max(20, width - len(head) - len(tail))
        if len(prompt) > room:
            prompt = prompt[: room - 1] + "…"
        print(f"{head}{prompt:<{room}}{terminal_safe(tail)}".rstrip())
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from anoman_tui.cli._history import history_label
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.history.engines import is_url
    from anoman_tui.history.transfer import copy_history

    prog = "anoman-tui history migrate"
    source_path = Path(args.source) if args.source else default_path()
    target = args.to if is_url(args.to) else Path(args.to)
    if not source_path.is_file():
        print(f"{prog}: there is no history at {source_path}", file=sys.stderr)
        return 2
    if isinstance(target, Path) and target.resolve() == source_path.resolve():
        print(f"{prog}: --to names the history being copied", file=sys.stderr)
        return 2
    try:
        with HistoryStore.open(source_path) as source, HistoryStore.open(target) as into:
            progress = Progress(TextColumn("copying comparisons"), BarColumn(),
                                MofNCompleteColumn(), transient=True,
                                console=_stderr_console())
            with progress:
                task = progress.add_task("copy", total=None)
                counts = copy_history(source, into, lambda done, total: progress.update(
                    task, completed=done, total=total))
    except HistoryUnavailable as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        return 1
    print(f"Copied {counts.comparisons} comparisons ({counts.already} copied before), "
          f"{counts.votes} votes and {counts.runs} suite runs ({counts.runs_already} copied "
          f"before) from {source_path} to {history_label(target)}.")
    return 0


def _stderr_console() -> Any:
    from rich.console import Console

    # The bar on stderr (drawn only on a terminal): stdout keeps the one summary line.
    return Console(stderr=True)
