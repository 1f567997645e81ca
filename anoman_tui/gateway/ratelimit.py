"""Per-key rate limits: requests per minute and concurrent streams.

``KeyRateLimiter`` is used from the gateway's event loop only (no locks).
A refusal carries the number of seconds the client should wait, which the
app sends as `Retry-After`.

Imports only the standard library.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field

_WINDOW_S = 60.0


@dataclass(slots=True)
class _KeyWindow:
    stamps: deque[float] = field(default_factory=deque)
    streams: int = 0


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    retry_after_s: int = 0
    reason: str = ""


class KeyRateLimiter:
    """Sliding one-minute window per key plus a count of open streams."""

    def __init__(self) -> None:
        self._keys: dict[str, _KeyWindow] = {}

    def admit(self, key: str, *, rpm: int, max_streams: int, stream: bool,
              now: float | None = None) -> RateDecision:
        """Count one request for ``key`` if the limits allow it."""
        now = time.monotonic() if now is None else now
        window = self._keys.setdefault(key, _KeyWindow())
        stamps = window.stamps
        while stamps and now - stamps[0] >= _WINDOW_S:
            stamps.popleft()
        if len(stamps) >= rpm:
            wait = _WINDOW_S - (now - stamps[0])
            return RateDecision(False, max(1, math.ceil(wait)), "requests_per_minute")
        if stream and window.streams >= max_streams:
            # A stream slot frees when any open stream ends; one second is a fair guess.
            return RateDecision(False, 1, "concurrent_streams")
        stamps.append(now)
        if stream:
            window.streams += 1
        return RateDecision(True)

    def release_stream(self, key: str) -> None:
        window = self._keys.get(key)
        if window is not None and window.streams > 0:
            window.streams -= 1

    def open_streams(self, key: str) -> int:
        window = self._keys.get(key)
        return window.streams if window else 0
