"""The one rule for an axis's ticks, in every chart: the HTML reports' SVG charts and the
terminal's pictures (`anoman_tui.ui.render.charts`) alike.

A step is a round number, 1, 2, 2.5 or 5 times a power of ten, the smallest giving at
most the intervals asked for; an axis's ends widen to a multiple of the step unless the
caller fixes them (a pass rate stops at 0 and 100%), and its ticks are the step's
multiples between them, rounded so no float noise reaches a label.

May import: the standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

STEP_FACTORS = (1.0, 2.0, 2.5, 5.0)
"""The round steps, times a power of ten."""


def nice_step(span: float, intervals: int) -> float:
    """The round step that cuts `span` into at most `intervals` intervals (`span` > 0)."""
    raw = span / max(1, intervals)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in STEP_FACTORS:
        if factor * magnitude >= raw * (1 - 1e-9):
            return factor * magnitude
    return 10.0 * magnitude


@dataclass(frozen=True, slots=True)
class Ticks:
    """An axis from `low` to `high` with its tick `values`, `step` apart."""

    low: float
    high: float
    step: float
    values: tuple[float, ...]


def nice_ticks(low: float, high: float, intervals: int, *, fix_low: bool = False,
               fix_high: bool = False) -> Ticks:
    """The axis over `low`..`high` (`high` > `low`) with round ticks: each end widened to
    a multiple of the step unless fixed, so no figure falls off an end."""
    step = nice_step(high - low, intervals)
    a = low if fix_low else math.floor(low / step + 1e-9) * step
    b = high if fix_high else math.ceil(high / step - 1e-9) * step
    first, last = math.ceil(a / step - 1e-9), math.floor(b / step + 1e-9)
    digits = max(0, -math.floor(math.log10(step))) + 3
    values = tuple(round(i * step, digits) + 0.0 for i in range(first, last + 1))
    return Ticks(a, b, step, values)
