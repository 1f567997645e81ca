"""The answer cache ("semantic-ish"): exact match on model, parameters and
normalized messages.

Entries are written when a stream completes (never for failed, cancelled or
fault-injected requests) and read before a request starts. A hit answers with
JSON even for `stream: true` (docs/wire-contract.md §6). Bounded LRU, in memory, used from the
event loop only.

A hit gives back the one answer drawn before, also for a request whose answer varies
(temperature above 0, no seed); a request sent with `Cache-Control: no-cache` neither
reads an entry nor is held to one, so it gets a fresh draw (app.py).

Imports only the standard library.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    text: str
    reasoning: str
    finish_reason: str  # OpenAI spelling: "stop" | "length"
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int


def normalize_text(text: str) -> str:
    # Whitespace differences should not defeat the cache.
    return " ".join(text.split())


def cache_key(model: str, params: Mapping[str, object], messages: list[tuple[str, str]]) -> str:
    canonical = json.dumps(
        {
            "model": model,
            # Unset parameters are left out so the same request via either format matches.
            "params": {k: v for k, v in params.items() if v is not None},
            "messages": [[role, normalize_text(text)] for role, text in messages],
        },
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class AnswerCache:
    """Bounded LRU of completed answers."""

    def __init__(self, max_entries: int) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, CachedAnswer] = OrderedDict()

    def get(self, key: str) -> CachedAnswer | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: str, answer: CachedAnswer) -> None:
        if self._max <= 0:
            return
        self._entries[key] = answer
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
