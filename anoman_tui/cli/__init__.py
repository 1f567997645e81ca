"""The `anoman-tui` command: the compare screen by default, and its subcommands.

One module per subcommand (`compare`, `eval`, `runs`, `serve`, `usage`, `history`, `vote`,
`scoreboard`, `export`, `import_`, `replay`), each with its `NAME`, its `GROUP` (the
heading `--help` lists it under, `help.GROUPS`), its one-line `HELP`,
`add_parser(commands, argv)` and `run(args) -> int`; `tui` is the compare screen (no
command); `common` and `arguments` hold what they share; `logs` is the app's log file.

Heavy imports (the stream core, Rich, the gateway, Textual) happen inside the
subcommand that needs them, so `anoman-tui --help` and start-up stay quick.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from anoman_tui.cli import (
    compare,
    eval_,
    export,
    history,
    import_,
    replay,
    runs,
    scoreboard,
    serve,
    tui,
    usage,
    vote,
)
from anoman_tui.cli._history import CommandExit, select_history_url
from anoman_tui.cli.arguments import SecretScrubbingParser, VersionAction
from anoman_tui.cli.common import Command, add_history_url_argument, settings_from_args
from anoman_tui.cli.help import GROUPS, GroupedCommandsParser

__all__ = ["build_parser", "main", "settings_from_args"]

# In the order argparse lists them (its "invalid choice" message names them so).
COMMANDS: tuple[Command, ...] = (compare, eval_, runs, serve, usage, history, vote,
                                 scoreboard, export, import_, replay)
# The subcommands that never touch the history (the gateway and its ledger).
_WITHOUT_HISTORY = frozenset({serve.NAME, usage.NAME})


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = GroupedCommandsParser(
        prog="anoman-tui",
        description=(
            "Compare LLMs side by side while they stream, through an Anoman gateway. "
            "With no command, opens the three-pane compare screen."
        ),
    )
    parser.add_argument("--version", action=VersionAction,
                        help="print the version and exit")
    tui.add_arguments(parser)
    # Each subcommand's own help is argparse's: only the top level groups commands.
    commands: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=SecretScrubbingParser)
    for command in COMMANDS:
        command.add_parser(commands, argv)
        sub = commands.choices[command.NAME]
        if command.NAME not in _WITHOUT_HISTORY and "--history-url" not in \
                sub._option_string_actions:
            add_history_url_argument(sub)
    parser.command_groups = [
        (group, [(c.NAME, c.HELP) for c in COMMANDS if group == c.GROUP]) for group in GROUPS]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    select_history_url(getattr(args, "history_url", None))
    try:
        for command in COMMANDS:
            if args.command == command.NAME:
                return command.run(args)
        return tui.run(args, parser)
    except CommandExit as exc:  # its line is on stderr already
        return exc.status
