"""The top-level `--help`: the subcommands listed under what a user wants to do
(compare; suites; history and reports; arena; the local gateway) instead of argparse's one
flat list. argparse has no grouping of subcommands, so the parser draws these
sections itself, from each subcommand module's `GROUP`, `NAME` and `HELP`.

argparse only: imported on every start-up.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from anoman_tui.cli.arguments import SecretScrubbingParser

COMPARE = "compare"
SUITES = "suites"
HISTORY_AND_REPORTS = "history and reports"
ARENA = "arena"
LOCAL_GATEWAY = "the local gateway"
GROUPS = (COMPARE, SUITES, HISTORY_AND_REPORTS, ARENA, LOCAL_GATEWAY)
"""The headings, in the order `--help` shows them."""


class GroupedCommandsParser(SecretScrubbingParser):
    """A parser whose help shows its subcommands under `command_groups`' headings (each
    with its one-line help), before the options; everything else is argparse's."""

    command_groups: Sequence[tuple[str, Sequence[tuple[str, str]]]] = ()
    """(heading, ((command, one-line help), ...)), in the order shown."""

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for heading, commands in self.command_groups:
            formatter.start_section(heading)
            # Drawn as positionals: aligned with the options' help column.
            formatter.add_arguments([argparse.Action([], dest=name, metavar=name, help=help)
                                     for name, help in commands])
            formatter.end_section()
        for group in self._action_groups:
            formatter.start_section(group.title)
            formatter.add_text(group.description)
            # The flat COMMAND list: already drawn above, grouped.
            formatter.add_arguments([a for a in group._group_actions
                                     if not isinstance(a, argparse._SubParsersAction)])
            formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()
