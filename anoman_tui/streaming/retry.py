"""The one retry policy of every request sent again on its own: a suite's cells, its
judge's calls and the arena's judge (docs/suites.md, "Rate limits and retries").

- A 429 (`http_error` with status 429) is waited out, at most `max_rate_limit_waits`
  times a request: its `Retry-After` up to `max_retry_after` seconds (a server asking
  for a day is not obeyed for a day), else an exponential back-off with jitter.
- A transport error (the server could not be reached, docs/wire-contract.md §8) is
  sent again up to `retries` times, after a short back-off of its own.
- Any other failure is the request's result.

`ConcurrencyLimit` is the other half: the requests one server may have in flight,
halved on a 429 and raised again after a window of successes (additive increase,
multiplicative decrease, as TCP and most API clients do), with the moment the server
may be asked again. The engine's dispatcher reads it without waiting (`can_start`);
a judge's calls wait for it (`held`).

One policy object, as inspect_ai's model retries are one: the numbers live here only.
Imports the standard library and the stream core's failure vocabulary only.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from anoman_tui.streaming.vocabulary import StreamFailure

MAX_RETRY_AFTER_S = 60.0
"""The longest one 429's `Retry-After` is waited out unless the run says otherwise
(`--max-retry-after`)."""
LONG_WAIT_S = 10.0
"""A rate-limit wait this long or longer is announced (the views say so)."""

Jitter = Callable[[float, float], float]
"""`random.uniform`, or a fixed stand-in in tests."""

Decision = Literal["rate_limited", "retry", "final"]


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed request is sent again: when, how often, after how long."""

    retries: int = 2
    """Transport errors sent again (`--retries`)."""
    max_retry_after: float = MAX_RETRY_AFTER_S
    """The cap on one `Retry-After`, in seconds (`--max-retry-after`)."""
    max_rate_limit_waits: int = 5
    """429s a request waits out before its last one becomes its result."""
    backoff_first_s: float = 1.0
    backoff_max_s: float = 30.0
    """A 429 without `Retry-After`: 1, 2, 4 … s in a row, at most this, ±20%."""
    retry_first_s: float = 0.25
    retry_max_s: float = 5.0
    """A transport error: 0.25, 0.5, 1 … s, at most this."""

    def decide(self, failure: StreamFailure | None, *, retries: int, waits: int) -> Decision:
        """What to do after a request ended with `failure` (None: it completed), having
        been sent again `retries` times after transport errors and having waited out
        `waits` 429s."""
        if failure is None:
            return "final"
        if failure.kind == "http_error" and failure.status == 429 \
                and waits < self.max_rate_limit_waits:
            return "rate_limited"
        if failure.kind == "transport_error" and retries < self.retries:
            return "retry"
        return "final"

    def rate_limit_wait(self, retry_after_s: float | None, in_a_row: int,
                        jitter: Jitter = random.uniform) -> float:
        """Seconds to wait out the `in_a_row`-th 429 in a row (1-based): the server's
        `Retry-After` capped at `max_retry_after`, else the back-off (requests backing
        off together spread out by the jitter)."""
        if retry_after_s is not None and retry_after_s >= 0:
            return min(retry_after_s, max(0.0, self.max_retry_after))
        wait = min(self.backoff_max_s, self.backoff_first_s * 2.0 ** max(0, in_a_row - 1))
        return wait * jitter(0.8, 1.2)

    def retry_wait(self, retries: int) -> float:
        """Seconds before sending again after the `retries`-th transport error (1-based)."""
        return min(self.retry_max_s, self.retry_first_s * 2.0 ** max(0, retries - 1))


class ConcurrencyLimit:
    """How many requests one server may have in flight now, and until when it waits."""

    WINDOW = 8
    """Successes in a row after which a lowered limit goes up by one."""

    def __init__(self, ceiling: int, policy: RetryPolicy | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.policy = policy or RetryPolicy()
        self.running = 0
        self.resume_at = 0.0
        self.successes = 0
        self.limited_in_a_row = 0
        self._clock = clock
        self._freed: asyncio.Event | None = None

    def can_start(self, now: float) -> bool:
        return self.running < self.limit and now >= self.resume_at

    def rate_limited(self, retry_after_s: float | None, now: float,
                     jitter: Jitter = random.uniform) -> float:
        """A 429: halve the limit (at least 1) and wait; returns the wait in seconds
        (`RetryPolicy.rate_limit_wait`)."""
        self.limit = max(1, min(self.limit, max(self.running, 1)) // 2)
        self.successes = 0
        self.limited_in_a_row += 1
        wait = self.policy.rate_limit_wait(retry_after_s, self.limited_in_a_row, jitter)
        self.resume_at = max(self.resume_at, now + wait)
        return wait

    def succeeded(self) -> None:
        self.limited_in_a_row = 0
        if self.limit >= self.ceiling:
            return
        self.successes += 1
        if self.successes >= self.WINDOW:
            self.limit += 1
            self.successes = 0

    @asynccontextmanager
    async def held(self, stopped: asyncio.Event) -> AsyncIterator[bool]:
        """A place among the requests in flight, once the limit and any rate-limit wait
        allow; yields False at once when `stopped` is (or becomes) set."""
        if self._freed is None:
            self._freed = asyncio.Event()
        freed = self._freed
        # One loop, no lock: nothing runs between the check and the count going up.
        while not stopped.is_set() and not self.can_start(self._clock()):
            freed.clear()
            timeout = None if self.running >= self.limit else \
                max(0.0, self.resume_at - self._clock())
            waiters = {asyncio.ensure_future(freed.wait()),
                       asyncio.ensure_future(stopped.wait())}
            try:
                await asyncio.wait(waiters, timeout=timeout,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
        if stopped.is_set():
            yield False
            return
        self.running += 1
        try:
            yield True
        finally:
            self.running -= 1
            freed.set()
