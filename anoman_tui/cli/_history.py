"""The one place a subcommand opens the user's history, and the one way it turns the
history's refusal (`HistoryUnavailable`) into one line on stderr and an exit status.

The history's modules are imported only when a command opens it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anoman_tui.history import HistoryStore


class CommandExit(Exception):
    """Ends the subcommand with `status`; what went wrong is already on stderr.
    (`anoman_tui.cli.main` returns the status.)"""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


@contextmanager
def command_history(prog: str, *, create: bool = False,
                    required: bool = True) -> Iterator[HistoryStore | None]:
    """The user's history for one command, closed when the block ends.

    None when there is no history file yet, unless `create`. A history that refuses
    (cannot be opened, or fails while in use) ends the command: `PROG: reason` on
    stderr and exit status 1 (`CommandExit`). With `required` off, one it cannot open
    is left out instead (`PROG: history disabled: reason`, and None): the command runs
    without saving.
    """
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path

    path = default_path()
    if not create and not path.exists():
        yield None
        return
    refused = None
    try:
        store = HistoryStore.open(path)
    except HistoryUnavailable as exc:
        if required:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            raise CommandExit(1) from None
        refused = exc.reason
    if refused is not None:
        print(f"{prog}: history disabled: {refused}", file=sys.stderr)
        yield None
        return
    try:
        with store:
            yield store
    except HistoryUnavailable as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        raise CommandExit(1) from None
