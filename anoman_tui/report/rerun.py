"""What changed between a comparison and its rerun, pane by pane: pure data and words.

A rerun sends a saved comparison's prompt (and each pane's conversation) again; pane N
of the rerun is read against pane N of the original, whatever model each had. TTFT,
tokens/s and cost are differences (new minus original); a cost difference is given
only when both costs are known, and is called an estimate when either one was.
`anoman-tui compare --rerun` prints these; the screens show the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from anoman_tui.history import ComparisonRecord, PaneRecord


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def cost_of(cost_text: str) -> tuple[float | None, bool]:
    """(dollars, estimated) from a cost as shown: `$0.0012`, `~$0.0001 (est.)`, `—`."""
    text = cost_text.strip()
    estimated = text.startswith("~") or "est." in text
    digits = text.lstrip("~").split(" ", 1)[0]
    if not digits.startswith("$"):
        return None, estimated
    try:
        return float(digits[1:]), estimated
    except ValueError:
        return None, estimated


def outcome(pane: PaneRecord) -> str:
    """`completed`, `cancelled`, or `failed: KIND`."""
    if pane.status == "failed":
        kind = pane.failure.get("kind") if isinstance(pane.failure, dict) else None
        return f"failed: {kind}" if isinstance(kind, str) and kind else "failed"
    return pane.status


@dataclass(frozen=True, slots=True)
class PaneDelta:
    """Pane `pane` of a rerun against the same pane of its original."""

    pane: int
    model_was: str
    model_now: str
    ttft_s: float | None
    """Seconds, new minus original (negative: the first token came sooner)."""
    tokens_per_s: float | None
    tokens_per_s_pct: float | None
    cost_usd: float | None
    cost_estimated: bool
    outcome_was: str
    outcome_now: str

    @property
    def outcome_changed(self) -> bool:
        return self.outcome_was != self.outcome_now

    def to_json(self) -> dict[str, Any]:
        return {
            "panel": self.pane,
            "model_was": self.model_was,
            "model": self.model_now,
            "ttft_s": _rounded(self.ttft_s, 4),
            "output_tokens_per_s": _rounded(self.tokens_per_s, 2),
            "output_tokens_per_s_pct": _rounded(self.tokens_per_s_pct, 1),
            "cost_usd": _rounded(self.cost_usd, 8),
            "cost_estimated": self.cost_estimated,
            "outcome_was": self.outcome_was,
            "outcome": self.outcome_now,
        }

    def cells(self) -> tuple[str, str, str]:
        """TTFT, tokens/s and cost differences for a table (`—`: unknown)."""
        ttft = "—" if self.ttft_s is None else f"{_signed(self.ttft_s * 1000, 0)} ms"
        rate = "—" if self.tokens_per_s is None else _signed(self.tokens_per_s, 1) + (
            "" if self.tokens_per_s_pct is None else f" ({_signed(self.tokens_per_s_pct, 0)}%)")
        cost = "—" if self.cost_usd is None else (
            _dollars(self.cost_usd) + (" est." if self.cost_estimated else ""))
        return ttft, rate, cost

    def words(self) -> list[str]:
        """The changes as short phrases: `TTFT −120 ms (sooner)`, `tok/s +8.2 (+12%)`,
        `cost +$0.000100`, `was failed: stalled → now completed`."""
        parts = []
        if self.ttft_s is not None:
            ms = self.ttft_s * 1000
            parts.append(f"TTFT {_signed(ms, 0)} ms" + _judged(-ms, "sooner", "later"))
        if self.tokens_per_s is not None:
            pct = "" if self.tokens_per_s_pct is None else f", {_signed(self.tokens_per_s_pct, 0)}%"
            parts.append(f"tok/s {_signed(self.tokens_per_s, 1)}{pct}"
                         + _judged(self.tokens_per_s, "faster", "slower"))
        if self.cost_usd is not None:
            est = " est." if self.cost_estimated else ""
            parts.append(f"cost {_dollars(self.cost_usd)}{est}"
                         + _judged(-self.cost_usd, "cheaper", "dearer"))
        if self.outcome_changed:
            parts.append(f"was {self.outcome_was} → now {self.outcome_now}")
        return parts


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _signed(value: float, digits: int) -> str:
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return f"±{text}"
    return ("−" if value < 0 else "+") + text


def _dollars(value: float) -> str:
    signed = _signed(value, 6)
    return f"{signed[0]}${signed[1:]}"


def _judged(better_by: float, good: str, bad: str) -> str:
    if abs(better_by) < 1e-12:
        return ""
    return f" ({good})" if better_by > 0 else f" ({bad})"


def pane_delta(original: PaneRecord, new: PaneRecord) -> PaneDelta:
    was_ttft = _number(original.metrics.get("ttft_s"))
    now_ttft = _number(new.metrics.get("ttft_s"))
    was_rate = _number(original.metrics.get("output_tokens_per_s"))
    now_rate = _number(new.metrics.get("output_tokens_per_s"))
    was_cost, was_est = cost_of(original.cost_text)
    now_cost, now_est = cost_of(new.cost_text)
    rate = None if was_rate is None or now_rate is None else now_rate - was_rate
    return PaneDelta(
        pane=new.pane,
        model_was=original.model,
        model_now=new.model,
        ttft_s=None if was_ttft is None or now_ttft is None else now_ttft - was_ttft,
        tokens_per_s=rate,
        tokens_per_s_pct=(rate / was_rate * 100) if rate is not None and was_rate else None,
        cost_usd=None if was_cost is None or now_cost is None else now_cost - was_cost,
        cost_estimated=was_est or now_est,
        outcome_was=outcome(original),
        outcome_now=outcome(new),
    )


def rerun_deltas(original: ComparisonRecord, new: ComparisonRecord) -> list[PaneDelta]:
    """One delta per pane of `new` that the original also had (matched by pane number)."""
    before = {p.pane: p for p in original.panes}
    return [pane_delta(before[p.pane], p) for p in new.panes if p.pane in before]
