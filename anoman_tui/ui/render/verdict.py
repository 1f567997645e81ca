"""Which pane wins what, once every pane of a turn has ended: pure Python, no Textual.

The compare screen marks the fastest first token, the highest output rate and the
cheapest answer on their panes, in words, so the verdict on the numbers needs no
reading pane by pane. Only completed answers compete (a failed or cancelled stream's
figures describe a different amount of work), and only when at least two completed;
a figure is awarded only when at least two of them know it. Ties mark every tied pane.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TypeVar

FASTEST_FIRST_TOKEN = "fastest first token"
HIGHEST_RATE = "highest tokens/s"
CHEAPEST = "cheapest"
MARK = "★"

_V = TypeVar("_V", float, Decimal)


@dataclass(frozen=True, slots=True)
class PaneFigures:
    """One pane's figures for its latest turn."""

    index: int
    completed: bool
    ttft_s: float | None = None
    tokens_per_s: float | None = None
    cost_usd: Decimal | None = None  # the gateway's figure, else the listed-price estimate


def verdict(figures: Sequence[PaneFigures]) -> dict[int, list[str]]:
    """The marks each pane earns, by pane index; panes that earn none are left out."""
    done = [f for f in figures if f.completed]
    if len(done) < 2:
        return {}
    marks: dict[int, list[str]] = {f.index: [] for f in done}

    def award(label: str, value: Callable[[PaneFigures], _V | None], lowest: bool) -> None:
        known = [(f.index, v) for f in done if (v := value(f)) is not None]
        if len(known) < 2:
            return
        values = [v for _, v in known]
        best = min(values) if lowest else max(values)
        for index, v in known:
            if v == best:
                marks[index].append(label)

    award(FASTEST_FIRST_TOKEN, lambda f: f.ttft_s, lowest=True)
    award(HIGHEST_RATE, lambda f: f.tokens_per_s, lowest=False)
    award(CHEAPEST, lambda f: f.cost_usd, lowest=True)
    return {index: labels for index, labels in marks.items() if labels}


def marks_line(labels: Sequence[str]) -> str:
    """`★ fastest first token · ★ cheapest`."""
    return " · ".join(f"{MARK} {label}" for label in labels)
