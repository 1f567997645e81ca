"""A rerun against its original: what changed, pane by pane, as figures and words.

A comparison sent again from the history (`rerun_of` in its record) is read beside the
one it repeats: for each pane, the original pane in the same position, and the change
in time to first token, tokens/s, cost and outcome. Everything here is computed from the
two saved records (`PaneRecord`), so the live screen and a reopened rerun say the same.

Better and worse are said with ▲ (better) and ▼ (worse), and in words where there is
room: a lower TTFT and cost are better, a higher tokens/s is. The screens draw the line
(`anoman_tui.ui.render.rerun`); `anoman-tui compare --rerun` prints the same figures as a table
and as JSON (`PaneDelta.to_json`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from anoman_tui.streaming import StreamFailure

if TYPE_CHECKING:
    # Only named in annotations: the history (SQLite, its models) stays off the path
    # to the compare screen's first paint.
    from anoman_tui.history import PaneRecord

MINUS = "−"
BETTER, WORSE = "▲", "▼"
DASH = "—"

CostKind = Literal["reported", "estimate", "mixed", "unknown"]
"""Both figures reported by a server, both estimated from prices, one of each, or a
figure missing (then no difference is computed)."""

DELTA_HELP = (
    "This rerun against the original comparison, pane by pane:\n"
    "TTFT: change in time to first token (lower is better).\n"
    "tok/s: change in output tokens per second (higher is better).\n"
    "cost: change in USD; — when either is unknown or one is an estimate (est.) and\n"
    "the other a figure the server reported.\n"
    "▲ better · ▼ worse · was → now: the outcome, when it changed."
)


@dataclass(frozen=True, slots=True)
class PaneDelta:
    """One pane of a rerun against the pane in the same position of its original."""

    original_id: int
    original_model: str | None
    """The original pane's model when it is not the rerun's, else None."""
    ttft_ms: int | None
    """Rerun minus original, in milliseconds; None when either has no first token."""
    rate: float | None
    """Rerun minus original, in output tokens per second; None when either is unknown."""
    rate_pct: float | None
    """`rate` as a percentage of the original's rate; None when that was zero or unknown."""
    cost: Decimal | None
    """Rerun minus original, in USD; None unless both are reported or both estimated."""
    cost_kind: CostKind
    was: str | None
    """The original's outcome ("failed: stalled"), when the rerun's differs; else None."""
    now: str | None
    """The rerun's outcome, when it differs from the original's; else None."""
    pane: int = 0
    outcome_was: str = ""
    outcome_now: str = ""
    """Both outcomes, changed or not."""

    def to_json(self) -> dict[str, Any]:
        """What `compare --rerun --json` gives each panel as `vs_original`."""
        return {
            "original_id": self.original_id,
            "model_was": self.original_model,
            "ttft_ms": self.ttft_ms,
            "output_tokens_per_s": None if self.rate is None else round(self.rate, 2),
            "output_tokens_per_s_pct": None if self.rate_pct is None
            else round(self.rate_pct, 1),
            "cost_usd": None if self.cost is None else str(self.cost),
            "cost_kind": self.cost_kind,
            "outcome_was": self.outcome_was,
            "outcome": self.outcome_now,
        }

    def cells(self) -> tuple[str, str, str]:
        """TTFT, tokens/s and cost changes as a table shows them, each with ▲/▼ and a word."""
        return tuple(  # type: ignore[return-value]
            field.long + (f" {BETTER if field.verdict == 'better' else WORSE} {field.word}"
                          if field.verdict in ("better", "worse") else "")
            for field in delta_fields(self))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


_FAILURE_WORDS = {
    "stream_error": "interrupted",
    "truncated": "truncated",
    "stalled": "stalled",
    "protocol_error": "protocol error",
    "transport_error": "unreachable",
    "cancelled": "cancelled",
}
_HTTP_WORDS = {401: "unauthorized", 403: "forbidden", 404: "not found", 413: "too large",
               429: "rate limit"}


def outcome(pane: PaneRecord) -> str:
    """How a pane ended, in a few words: `done`, `cancelled`, `failed: stalled`."""
    if pane.status == "completed":
        hit = isinstance(pane.anoman, dict) and isinstance(pane.anoman.get("cache"), dict) \
            and pane.anoman["cache"].get("hit") is True
        return "done (cache hit)" if hit else "done"
    if pane.status == "cancelled":
        return "cancelled"
    failure = StreamFailure.from_json(pane.failure)
    if failure is None:
        return "failed"
    if failure.kind == "http_error":
        if failure.status == 403 and failure.blocking_guardrail is not None:
            return "failed: guardrail block"
        status = failure.status or 0
        why = _HTTP_WORDS.get(status) or (f"HTTP {status}" if status else "HTTP error")
        return f"failed: {why}"
    return f"failed: {_FAILURE_WORDS.get(failure.kind, failure.kind.replace('_', ' '))}"


def pane_delta(new: PaneRecord, old: PaneRecord, original_id: int) -> PaneDelta:
    """The rerun's pane `new` against the original's pane `old`."""
    new_ttft, old_ttft = _number(new.metrics.get("ttft_s")), _number(old.metrics.get("ttft_s"))
    ttft_ms = round((new_ttft - old_ttft) * 1000) if new_ttft is not None \
        and old_ttft is not None else None
    new_rate = _number(new.metrics.get("output_tokens_per_s"))
    old_rate = _number(old.metrics.get("output_tokens_per_s"))
    rate = rate_pct = None
    if new_rate is not None and old_rate is not None:
        rate = new_rate - old_rate
        rate_pct = rate / old_rate * 100 if old_rate > 0 else None
    cost: Decimal | None = None
    kind: CostKind = "unknown"
    if new.cost.usd is not None and old.cost.usd is not None:
        if new.cost.estimated != old.cost.estimated:
            kind = "mixed"
        else:
            kind = "estimate" if new.cost.estimated else "reported"
            cost = new.cost.usd - old.cost.usd
    was, now = outcome(old), outcome(new)
    changed = was != now
    return PaneDelta(
        original_id=original_id,
        original_model=old.model if old.model != new.model else None,
        ttft_ms=ttft_ms, rate=rate, rate_pct=rate_pct, cost=cost, cost_kind=kind,
        was=was if changed else None, now=now if changed else None,
        pane=new.pane, outcome_was=was, outcome_now=now,
    )


def rerun_deltas(new: Sequence[PaneRecord], old: Sequence[PaneRecord], original_id: int
                 ) -> dict[int, PaneDelta]:
    """Pane number -> its delta, for each pane of the rerun with one in the same position
    in the original."""
    by_pane = {p.pane: p for p in old}
    return {p.pane: pane_delta(p, by_pane[p.pane], original_id)
            for p in new if p.pane in by_pane}


# -- words ------------------------------------------------------------------------

Verdict = Literal["better", "worse", "same", "unknown"]


def _signed(value: float, digits: int = 0) -> str:
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return "±" + text
    return ("+" if value > 0 else MINUS) + text


def _usd(value: Decimal) -> str:
    """`+$0.000012`, `−$1.25`: six decimals at most, two at least."""
    size = abs(value).quantize(Decimal("0.000001"))
    if size == 0:
        return "±$0"
    digits = format(size, "f").rstrip("0")
    whole, _, cents = digits.partition(".")
    text = f"${whole}.{cents.ljust(2, '0')}"
    return ("+" if value > 0 else MINUS) + text


def _verdict(change: float | Decimal | None, lower_is_better: bool) -> Verdict:
    if change is None:
        return "unknown"
    if change == 0:
        return "same"
    return "better" if (change < 0) == lower_is_better else "worse"


@dataclass(frozen=True, slots=True)
class DeltaField:
    name: str
    long: str  # "−120 ms"
    short: str  # "−120ms"
    verdict: Verdict
    word: str  # "faster", said where there is room


def delta_fields(delta: PaneDelta) -> list[DeltaField]:
    fields = []
    if delta.ttft_ms is None:
        fields.append(DeltaField("TTFT", DASH, DASH, "unknown", ""))
    else:
        ms = _signed(delta.ttft_ms)
        if abs(delta.ttft_ms) < 1:
            verdict: Verdict = "same"
        else:
            verdict = _verdict(delta.ttft_ms, lower_is_better=True)
        fields.append(DeltaField("TTFT", f"{ms} ms", f"{ms}ms", verdict,
                             {"better": "faster", "worse": "slower"}.get(verdict, "")))
    if delta.rate is None:
        fields.append(DeltaField("tok/s", DASH, DASH, "unknown", ""))
    else:
        change = _signed(delta.rate, 1)
        pct = None
        if delta.rate_pct is not None:  # "+15%", "−0.3%": a small change keeps a decimal
            pct = _signed(delta.rate_pct, 1 if abs(delta.rate_pct) < 9.95 else 0) + "%"
        # (judged on what the short form shows: no ▲ beside a change that reads ±0.0%)
        same = pct.startswith("±") if pct is not None else change.startswith("±")
        verdict = "same" if same else _verdict(delta.rate, lower_is_better=False)
        fields.append(DeltaField("tok/s", f"{change} ({pct})" if pct else change, pct or change,
                             verdict, {"better": "faster", "worse": "slower"}.get(verdict, "")))
    if delta.cost is not None:
        money = _usd(delta.cost)
        verdict = "same" if money.startswith("±") else _verdict(delta.cost, lower_is_better=True)
        est = delta.cost_kind == "estimate"
        fields.append(DeltaField("cost", f"~{money} (est.)" if est else money,
                             f"~{money} est." if est else money, verdict,
                             {"better": "cheaper", "worse": "dearer"}.get(verdict, "")))
    elif delta.cost_kind == "mixed":
        fields.append(DeltaField("cost", f"{DASH} (est. vs reported)", f"{DASH} est./reported",
                             "unknown", ""))
    else:
        fields.append(DeltaField("cost", DASH, DASH, "unknown", ""))
    return fields
