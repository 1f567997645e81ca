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

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from anoman_tui.history import HistoryStore
    from anoman_tui.history.pending import PendingSaves

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


DEFAULT_SAVE_WAIT_S = 30.0


def add_save_wait(parser: argparse.ArgumentParser) -> None:
    """--save-wait SECONDS: how long a command waits for a shared history's server that
    went away before it keeps its unsaved writes in the spool and exits 1."""
    from anoman_tui.cli.arguments import non_negative_float

    parser.add_argument(
        "--save-wait", type=non_negative_float, metavar="SECONDS",
        default=DEFAULT_SAVE_WAIT_S,
        help="when the shared history's server goes away mid-run, wait this long for it "
             "(retrying), then keep the unsaved writes in pending-saves.jsonl for the next "
             f"start and exit 1 (default {DEFAULT_SAVE_WAIT_S:g})")


@contextmanager
def command_writes(prog: str, store: HistoryStore | None,
                   save_wait: float) -> Iterator[PendingSaves | None]:
    """The command's writes through `store`, waiting for its server when it goes away.

    First the writes an earlier run kept in the spool for this store (a shared history)
    are written. At the end, what still waits is given `save_wait` seconds; then it is
    kept in the spool, one line says how many and where, and the command exits 1
    (`CommandExit`). None for no history.
    """
    if store is None:
        yield None
        return
    from anoman_tui.history.pending import PendingSaves
    from anoman_tui.history.spool import replay

    replayed = replay(store)
    for problem in replayed.problems:
        print(f"{prog}: {problem}", file=sys.stderr)
    if replayed.written:
        print(f"{prog}: {_saves(replayed.written)} kept from an earlier run "
              f"{'was' if replayed.written == 1 else 'were'} written to the history",
              file=sys.stderr)

    def failed(token: object, reason: str) -> None:
        print(f"{prog}: {token or 'a save'} could not be saved: {reason}", file=sys.stderr)

    pending = PendingSaves(store, on_failed=failed, retry_s=0.5, max_retry_s=2.0)
    pending.patience = save_wait
    try:
        yield pending
    finally:
        settle(prog, pending, save_wait)


def settle(prog: str, pending: PendingSaves, save_wait: float) -> None:
    """Wait up to `save_wait` seconds for the writes still waiting; those left go to the
    spool, with one line on stderr, and the command exits 1."""
    from anoman_tui.history.spool import spool, spool_path

    if pending.waiting and not pending.timed_out:
        pending.wait_written(save_wait)
    left = pending.close()
    if not left:
        return
    address = pending.store.address
    assert address is not None  # (a file's writes never wait)
    try:
        where = spool(spool_path(), address, pending.take_left())
    except OSError as exc:
        print(f"{prog}: the history's server did not answer within {save_wait:g} s and "
              f"{_saves(left)} could not be kept: {exc.strerror or exc}", file=sys.stderr)
        raise CommandExit(1) from None
    print(f"{prog}: the history's server did not answer within {save_wait:g} s: "
          f"{_saves(left)} kept in {where}, written at the next start", file=sys.stderr)
    raise CommandExit(1)


def _saves(n: int) -> str:
    return f"{n} save{'s' if n != 1 else ''}"
