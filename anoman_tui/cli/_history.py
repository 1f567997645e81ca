"""The one place a subcommand opens the user's history, and the one way it turns the
history's refusal (`HistoryUnavailable`) into one line on stderr and an exit status.

Which history: the SQLite file under the data directory, or a team's PostgreSQL
database when `--history-url` (`select_history_url`, from the parsed command line),
$ANOMAN_HISTORY_URL or the config file's `history_url` names one
(`config.configured_history_url`). A URL is shown only without its password
(`history_label`).

The history's modules are imported only when a command opens it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from anoman_tui.history import HistoryStore

_flag_url: str | None = None
"""--history-url as given on the command line (`select_history_url`)."""


def select_history_url(url: str | None) -> None:
    """Remember the command line's --history-url (None: not given)."""
    global _flag_url
    _flag_url = url


def history_location(prog: str) -> Path | str:
    """The history this command uses: the SQLite file's path or the PostgreSQL URL. A
    bad `history_url` ends the command (one line naming where it was set, status 2)."""
    from anoman_tui.config import ConfigError, configured_history_url
    from anoman_tui.history import default_path

    try:
        url = configured_history_url(_flag_url)
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise CommandExit(2) from None
    return url if url is not None else default_path()


def history_label(location: Path | str) -> str:
    """The history as a message may name it: the file, or the URL without a password."""
    from anoman_tui.history.engines import describe_url, is_url

    return describe_url(location) if isinstance(location, str) and is_url(location) \
        else str(location)


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

    None when there is no history file yet, unless `create` (a PostgreSQL history is
    always opened: its tables are made on first use). A history that refuses
    (cannot be opened, or fails while in use) ends the command: `PROG: reason` on
    stderr and exit status 1 (`CommandExit`). With `required` off, one it cannot open
    is left out instead (`PROG: history disabled: reason`, and None): the command runs
    without saving.
    """
    from anoman_tui.history import HistoryStore, HistoryUnavailable

    location = history_location(prog)
    if not create and not isinstance(location, str) and not location.exists():
        yield None
        return
    refused = None
    try:
        store = HistoryStore.open(location)
    except HistoryUnavailable as exc:
        if required:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            raise CommandExit(1) from None
        refused = exc.reason
    if refused is not None:
        print(f"{prog}: history disabled: {refused}", file=sys.stderr)
        yield None
        return
    from anoman_tui.config import ConfigError, configured_user

    try:
        store.user = configured_user()
    except ConfigError as exc:
        store.close()
        print(f"{prog}: {exc}", file=sys.stderr)
        raise CommandExit(2) from None
    try:
        with store:
            yield store
    except HistoryUnavailable as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        raise CommandExit(1) from None
