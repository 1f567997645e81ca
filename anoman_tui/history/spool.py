"""The spool: writes to a shared history that were still waiting for its server when the
app closed or a command gave up, kept in `pending-saves.jsonl` beside the SQLite history
(the data directory) until the next start writes them.

One JSON object a line: `{"format": "anoman-pending-save", "version": 1, "store":
"host:port/db", "kind": ..., "key": ..., "data": {...}}` (`pending.Write`). `store`
names the server and database a write is for, never a user or password; a start writes
only its own store's lines, oldest first, and leaves the others in the file. A file that
is not such a spool (corrupt, or someone else's) is reported in one sentence and left as
it is: nothing is deleted that this module cannot read.

Several processes may spool and replay at once (two apps closing together, a command
starting while another gives up): every change to the file is made holding an OS lock on
`pending-saves.jsonl.lock` (`flock`; `msvcrt.locking` on Windows), through a temporary
file of the process's own, fsynced and renamed into place, before "kept" is said. A
replay reads under the lock, writes without it (the server may be slow; the writes are
idempotent, so two replays writing one line double nothing), then removes under the lock
only the lines it wrote, from the file as it is then.

May import: the standard library, the rest of `anoman_tui.history`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
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


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the spool's lock (beside it: the spool itself is replaced, the lock file is
    not) for the block, across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt
            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s; the holder is still busy
                    continue
            try:
                yield
            finally:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def read_spool(path: Path) -> list[tuple[str, Write]]:
    """(store, write) of each line, in order; [] for no file. Raises `SpoolUnreadable`."""
    return [(store, w) for _, store, w in _read(path)]


def _read(path: Path) -> list[tuple[str, str, Write]]:
    """(line as written, store, write) of each line, in order."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise SpoolUnreadable(f"the saves kept in {path} cannot be read "
                              f"({getattr(exc, 'strerror', None) or exc}); the file is "
                              "left as it is") from None
    found: list[tuple[str, str, Write]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or item.get("format") != FORMAT \
                    or item.get("version") != VERSION or not isinstance(item.get("store"), str):
                raise ValueError("not a pending save")
            found.append((line, item["store"], Write.from_json(item)))
        except (ValueError, RecursionError):
            raise SpoolUnreadable(f"{path} is not a file of saves kept for the history "
                                  f"(line {number}); it is left as it is") from None
    return found


def _line(store: str, w: Write) -> str:
    return json.dumps({"format": FORMAT, "version": VERSION, "store": store, **w.to_json()},
                      ensure_ascii=False, separators=(",", ":"))


def _rewrite(path: Path, lines: list[str]) -> None:
    """Replace the file by `lines` (removed when none). Call holding `_locked(path)`."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    # A temporary name of this process's own: one shared name let two processes write
    # into one file and rename each other's (lines lost).
    fd, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
            out.write("\n".join(lines) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)  # whole or not at all: a kill never leaves half a file
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """The rename itself made durable, before "kept" is said (POSIX; a no-op elsewhere)."""
    if sys.platform == "win32":  # pragma: no cover
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _held_lines(path: Path) -> list[str]:
    """The file's lines as they are (each checked by `read_spool`)."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line.strip()]


def spool(path: Path, store: str, writes: list[Write]) -> Path:
    """Keep `writes` for `store` after what the file holds already; the file written
    (beside a spool that cannot be read, a new one: never over it). Returns once the
    file is on disk; raises OSError."""
    with _locked(path):
        try:
            read_spool(path)
        except SpoolUnreadable:
            path = path.with_name(f"pending-saves-{os.getpid()}.jsonl")
            if path.exists():
                # (A process of the same id before this one: keep its lines too.)
                fd, name = tempfile.mkstemp(prefix="pending-saves-", suffix=".jsonl",
                                            dir=path.parent)
                os.close(fd)
                path = Path(name)
            _rewrite(path, [_line(store, w) for w in writes])
            return path
        _rewrite(path, [*_held_lines(path), *(_line(store, w) for w in writes)])
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
        if not path.exists():
            return Replayed()
        with _locked(path):
            held = _read(path)
    except SpoolUnreadable as exc:
        return Replayed(problems=(exc.reason,))
    except OSError as exc:
        return Replayed(problems=(f"the saves kept in {path} cannot be read "
                                  f"({exc.strerror or exc}); the file is left as it is",))
    mine = [w for _, where, w in held if where == store.address]
    if not mine:
        return Replayed()
    done: list[str] = []
    """The lines written (or refused for good): removed from the file afterwards."""
    problems: list[str] = []
    refused = 0
    for line, where, w in held:
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
        done.append(line)
    try:
        with _locked(path):
            # The file as it is now: other processes may have spooled meanwhile, or
            # another replay removed what it wrote. Remove only this replay's lines, each
            # as many times as it wrote it.
            left = Counter(done)
            kept: list[str] = []
            for now_held in _held_lines(path):
                if left[now_held] > 0:
                    left[now_held] -= 1
                else:
                    kept.append(now_held)
            _rewrite(path, kept)
    except OSError as exc:
        problems.append(f"{path} could not be rewritten ({exc.strerror or exc}): its saves "
                        "may be written again next time")
    written = len(done) - refused
    return Replayed(written, len(mine) - len(done), tuple(problems))
