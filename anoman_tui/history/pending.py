"""Saves that wait for the history's server: a shared (PostgreSQL) history whose server
goes away mid-session loses nothing the app saves meanwhile.

`PendingSaves.save(record)` saves at once when it can. When the store refuses with a
transient failure (`HistoryUnavailable.transient`: the server cannot be reached), the
record is kept in memory, in order, and a background thread tries again, oldest first,
every `retry_s` seconds (doubling to `max_retry_s`) until the server is back; each save
that waited calls `on_written(token, id)` once written, from that thread. Later saves
queue behind the waiting ones, so the history keeps their order. A refusal that waiting
will not cure (a file that is full, a statement refused) is raised at once, or, for one
that had waited, reported through `on_failed(token, reason)`.

A record still waiting when the app closes is lost with the process: `close` tries once
more and returns how many were left.

May import: the standard library, the rest of `anoman_tui.history`. No Textual: the app
turns the callbacks into notifications.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from anoman_tui.history.model import ComparisonRecord
from anoman_tui.history.store import HistoryStore, HistoryUnavailable


class PendingSaves:
    """The saves of one session through one store, waiting for its server when needed."""

    def __init__(self, store: HistoryStore, *,
                 on_written: Callable[[Any, int], None] | None = None,
                 on_failed: Callable[[Any, str], None] | None = None,
                 retry_s: float = 1.0, max_retry_s: float = 15.0) -> None:
        self.store = store
        self._on_written = on_written
        self._on_failed = on_failed
        self._retry_s = retry_s
        self._max_retry_s = max_retry_s
        self._queue: deque[tuple[ComparisonRecord, Any]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._flushing = threading.Lock()
        """One flush at a time (the thread's, or `close`'s last one): none saved twice."""
        self._closed = False
        self._thread: threading.Thread | None = None
        self.last_problem = ""
        """Why the oldest waiting save is waiting ("" when none is)."""

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._queue)

    def save(self, record: ComparisonRecord, token: Any = None) -> int | None:
        """Save now (the new id), or keep it until the server is back (None; the id goes
        to `on_written(token, id)`). Raises `HistoryUnavailable` for a lasting refusal."""
        with self._lock:
            if self._queue:  # behind the waiting ones, in order
                self._queue.append((record, token))
                return None
        try:
            return self.store.save(record)
        except HistoryUnavailable as exc:
            if not exc.transient:
                raise
            with self._lock:
                self._queue.append((record, token))
                self.last_problem = exc.reason
                self._start()
            return None

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._retry, name="history-pending",
                                            daemon=True)
            self._thread.start()

    def _retry(self) -> None:
        delay = self._retry_s
        while True:
            # The server's own pace: not a test's sleep, the backoff between attempts.
            self._wake.wait(delay)
            self._wake.clear()
            if not self._flush_one_by_one():
                if self._closed:
                    return
                delay = min(delay * 2, self._max_retry_s)
                continue
            return  # the queue is empty

    def _flush_one_by_one(self) -> bool:
        """Write the waiting saves, oldest first; whether none is left."""
        with self._flushing:
            return self._flush()

    def _flush(self) -> bool:
        while True:
            with self._lock:
                if not self._queue:
                    self.last_problem = ""
                    return True
                record, token = self._queue[0]
            try:
                new_id = self.store.save(record)
            except HistoryUnavailable as exc:
                if exc.transient:
                    self.last_problem = exc.reason
                    return False
                with self._lock:
                    self._queue.popleft()
                if self._on_failed is not None:
                    self._on_failed(token, exc.reason)
                continue
            with self._lock:
                self._queue.popleft()
            if self._on_written is not None:
                self._on_written(token, new_id)

    def retry_now(self) -> None:
        """Try the waiting saves at once (the user asked, or the server is known back)."""
        self._wake.set()

    def close(self) -> int:
        """Stop retrying after one last attempt; how many saves were left unwritten."""
        self._closed = True
        if self.waiting:
            self._flush_one_by_one()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=30)
        return self.waiting
