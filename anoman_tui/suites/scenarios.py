"""The local gateway's demo scenarios by name: what each asks of it in its
`X-Anoman-Simulate` header (docs/wire-contract.md §9, docs/local-gateway.md).

One table for the compare screen's scenario picker and a suite's `[simulate]` table.
It lives in `suites`, the lowest layer that uses it (the UI above imports it from
here). Standard library only: it imports nothing else of the package.
"""

from __future__ import annotations

from typing import Literal

Scenario = Literal[
    "none", "interrupt", "drop", "stall", "malformed", "guardrail", "rate_limit", "slow_thinking"
]

SCENARIO_HEADERS: dict[Scenario, str] = {
    "none": "",
    "interrupt": "interrupt-after=40",
    "drop": "drop-after=40",
    "stall": "stall-after=30",
    "malformed": "malformed-after=25",
    "guardrail": "status=403",
    "rate_limit": "status=429",
    "slow_thinking": "ttft=4,rate=12",
}


def simulate_header(value: str) -> str:
    """The header value for a scenario's name, or `value` itself (already a header
    value such as `interrupt-after=40, ttft=0.5`)."""
    return SCENARIO_HEADERS.get(value, value)  # type: ignore[call-overload,no-any-return]
