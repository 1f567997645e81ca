"""The q-th percentile of values already sorted, as numpy.percentile's default method
computes it (linear interpolation between closest ranks), to the last bit.

Shared by the suites' statistics (`anoman_tui.suites.stats`) and the pictures drawn in
the terminal (`anoman_tui.ui.render.charts`), which must not load numpy to draw.
May import: the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def sorted_percentile(ordered: Sequence[float], q: float) -> float:
    """`ordered` (non-empty, ascending) at percentile `q` (0 ≤ q ≤ 100)."""
    position = (len(ordered) - 1) * (q / 100.0)  # numpy's order of operations
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    low, high = ordered[below], ordered[above]
    # numpy's form (a + (b - a)·t, switched to b - (b - a)·(1 - t) past the middle) keeps
    # the result within [a, b] and equal to numpy's to the last bit.
    if fraction >= 0.5:
        return high - (high - low) * (1.0 - fraction)
    return low + (high - low) * fraction
