"""Costs that files written before cost became a value kept only as shown text.

A history of schema 7 or older, and a portable file without a `cost` object, hold a
pane's cost as a view wrote it (`$0.0012`, `$0.0012 (provider)`, `~$0.0001 (est.)`,
`—`). They are read here once, when the file is migrated or imported; nothing else
reads a shown cost back.

May import: the standard library and `anoman_tui.streaming.cost`.
"""

from __future__ import annotations

import re
from decimal import Decimal

from anoman_tui.streaming.cost import UNKNOWN, Cost

_SHOWN = re.compile(
    r"^(?P<tilde>~)?\$(?P<usd>[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
    r"(?P<tail> \(provider\)| \(est\.\))?$")


def legacy_cost(text: str | None) -> Cost:
    """The cost a shown text stood for; unknown for `—` and anything not written so."""
    found = _SHOWN.match((text or "").strip())
    if found is None:
        return UNKNOWN
    usd, tail = Decimal(found["usd"]), found["tail"]
    if found["tilde"]:
        return Cost(usd, "estimate") if tail == " (est.)" else UNKNOWN
    if tail == " (provider)":
        return Cost(usd, "provider")
    return Cost(usd, "gateway") if tail is None else UNKNOWN
