"""Fault injection: the `X-Anoman-Simulate` header and per-model demo faults.

A ``FaultPlan`` says how one request should misbehave or be paced:
``interrupt-after=N`` (the error frame of docs/wire-contract.md §3 after N tokens, then the
terminator), ``drop-after=N`` (close the connection, no terminator),
``stall-after=N`` (stop sending, keep the connection open),
``malformed-after=N`` (one invalid frame), ``status=CODE`` (that pre-call
error), ``retry-after=SECONDS`` (the `Retry-After` a 429, 503 or 529 asks for; 1 when
not set), ``ttft=SECONDS``, ``rate=TOKENS_PER_S`` and ``tokens=N``.

Imports only the standard library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

_AFTER_KEYS = ("interrupt_after", "drop_after", "stall_after", "malformed_after")
# Codes `status=` may ask for: the pre-call errors of docs/wire-contract.md §3.
SIMULATABLE_STATUS = frozenset({400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504,
                                529})


class FaultSyntaxError(ValueError):
    """The header (or config value) does not parse; the message says why."""


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Faults and pacing overrides for one request; ``None`` means "not set"."""

    interrupt_after: int | None = None
    drop_after: int | None = None
    stall_after: int | None = None
    malformed_after: int | None = None
    status: int | None = None
    ttft: float | None = None
    rate: float | None = None
    tokens: int | None = None
    retry_after: int | None = None

    @property
    def is_empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    def overlay(self, other: FaultPlan) -> FaultPlan:
        """``other``'s settings win where set (header over per-model config)."""
        changes = {f.name: getattr(other, f.name) for f in fields(other)
                   if getattr(other, f.name) is not None}
        return replace(self, **changes)

    @classmethod
    def parse(cls, text: str | None) -> FaultPlan:
        """Parse ``"interrupt-after=5, ttft=0.1"``; raise ``FaultSyntaxError`` if invalid."""
        if not text or not text.strip():
            return cls()
        values: dict[str, int | float] = {}
        for raw in text.split(","):
            item = raw.strip()
            if not item:
                continue
            key, sep, value = item.partition("=")
            name = key.strip().lower().replace("-", "_")
            value = value.strip()
            if not sep or not value:
                raise FaultSyntaxError(f"expected key=value, got {item!r}")
            if name in (*_AFTER_KEYS, "tokens", "retry_after"):
                values[name] = _int(name, value, minimum=0 if name != "tokens" else 1)
            elif name == "status":
                code = _int(name, value, minimum=400)
                if code not in SIMULATABLE_STATUS:
                    raise FaultSyntaxError(f"status={code} is not a simulatable error status")
                values[name] = code
            elif name == "ttft":
                values[name] = _float(name, value, minimum=0.0, maximum=600.0)
            elif name == "rate":
                values[name] = _float(name, value, minimum=0.001, maximum=1_000_000.0)
            else:
                raise FaultSyntaxError(f"unknown fault {key.strip()!r}")
        return cls(**values)  # type: ignore[arg-type]


def _int(name: str, value: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise FaultSyntaxError(f"{name} needs an integer, got {value!r}") from None
    if number < minimum or number > 10_000_000:
        raise FaultSyntaxError(f"{name}={number} is out of range")
    return number


def _float(name: str, value: str, minimum: float, maximum: float) -> float:
    try:
        number = float(value)
    except ValueError:
        raise FaultSyntaxError(f"{name} needs a number, got {value!r}") from None
    if not math.isfinite(number) or not minimum <= number <= maximum:
        raise FaultSyntaxError(f"{name}={value} is out of range")
    return number
