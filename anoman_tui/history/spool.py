"""The spool: writes to a shared history that were still waiting for its server when the
app closed or a command gave up, kept in `pending-saves.jsonl` beside the SQLite history
(the data directory) until the next start writes them.

One JSON object a line: `{"format": "anoman-pending-save", "version": 1, "store":
"host:port/db", "kind": ..., "key": ..., "data": {...}}` (`pending.Write`). `store`
names the server and database a write is for, never a user or password; a start writes
only its own store's lines, oldest first, and leaves the others in the file. A file that
is not such a spool (corrupt, or someone else's) is reported in one sentence and left as
it is: nothing is deleted that this module cannot read.

May import: the standard library, the rest of `anoman_tui.history`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from anoman_tui import locations
from anoman_tui.history.pending import LASTING, Write, apply, refusal
from anoman_tui.history.store import HistoryStore, HistoryUnavailable

FILE_NAME = "pending-saves.jsonl"
FORMAT = "anoman-pending-save"
VERSION = 1


def spool_path() -> Path:
    return locations.data_dir() / FILE_NAME


class SpoolUnreadable(Exception):
    """A spool file that is not one (or not readable); `reason` is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_spool(path: Path) -> list[tuple[str, Write]]:
    """(store, write) of each line, in order; [] for no file. Raises `SpoolUnreadable`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise SpoolUnreadable(f"the saves kept in {path} cannot be read "
                              f"({getattr(exc, 'strerror', None) or exc}); the file is "
                              "left as it is") from None
    found: list[tuple[str, Write]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or item.get("format") != FORMAT \
                    or item.get("version") != VERSION or not isinstance(item.get("store"), str):
                raise ValueError("not a pending save")
            found.append((item["store"], Write.from_json(item)))
        except (ValueError, RecursionError):
            raise SpoolUnreadable(f"{path} is not a file of saves kept for the history "
                                  f"(line {number}); it is left as it is") from None
    return found


def _line(store: str, w: Write) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION, "store": store, **w.to_json()},
                      ensure_ascii=False, separators=(",", ":"))


def _rewrite(path: Path, items: Iterable[tuple[str, Write]]) -> None:
    lines = [_line(store, w) for store, w in items]
    if not lines:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)  # whole or not at all: a kill never leaves half a file


def spool(path: Path, store: str, writes: list[Write]) -> Path:
    """Keep `writes` for `store` after what the file holds already; the file written
    (beside a spool that cannot be read, a new one: never over it). Raises OSError."""
    try:
        held = read_spool(path)
    except SpoolUnreadable:
        path = path.with_name(f"pending-saves-{os.getpid()}.jsonl")
        held = []
    _rewrite(path, [*held, *((store, w) for w in writes)])
    return path


@dataclass(frozen=True, slots=True)
class Replayed:
    written: int = 0
    left: int = 0
    """This store's writes still in the file (its server went away again)."""
    problems: tuple[str, ...] = ()
    """One sentence each: the file unreadable, a write refused for good."""


def replay(store: HistoryStore, path: Path | None = None) -> Replayed:
    """Write the spooled writes meant for `store` (a shared history), oldest first, then
    rewrite the file without them (removed once empty). A write refused for good is
    dropped and named; the server going away again keeps the rest for next time."""
    if store.address is None:
        return Replayed()
    path = path or spool_path()
    try:
        held = read_spool(path)
    except SpoolUnreadable as exc:
        return Replayed(problems=(exc.reason,))
    mine = [w for where, w in held if where == store.address]
    if not mine:
        return Replayed()
    done: set[int] = set()
    problems: list[str] = []
    refused = 0
    for index, (where, w) in enumerate(held):
        if where != store.address:
            continue
        try:
            apply(store, w)
        except HistoryUnavailable as exc:
            if exc.transient:
                break
            problems.append(f"{w.describe()} kept in {path} could not be written: "
                            f"{exc.reason}")
            refused += 1
        except LASTING as exc:
            problems.append(f"{w.describe()} kept in {path} could not be written: "
                            f"{refusal(exc)}")
            refused += 1
        done.add(index)
    try:
        _rewrite(path, [item for index, item in enumerate(held) if index not in done])
    except OSError as exc:
        problems.append(f"{path} could not be rewritten ({exc.strerror or exc}): its saves "
                        "may be written again next time")
    written = len(done) - refused
    return Replayed(written, len(mine) - len(done), tuple(problems))
