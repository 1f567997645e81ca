"""What every report says about a pane, in words: shared by the Markdown and HTML writers.

The `_anoman` block is read from the record's raw dict (exactly as the gateway sent
it), defensively: a field in a shape we do not know reads as absent, never as an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from anoman_tui.history import ComparisonRecord, PaneRecord

DASH = "—"
CUT_FINISH_REASONS = ("length", "max_tokens")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _seconds(value: Any) -> str:
    return f"{value:.2f} s" if isinstance(value, int | float) else DASH


SIMULATED = "simulated"


def model_name(pane: PaneRecord) -> str:
    """The pane's model as every report names it: `anoman-lite (simulated)` for a model
    its server said is simulated (the local gateway's), so no reader takes it for the
    real one."""
    return f"{pane.model} ({SIMULATED})" if pane.simulated else pane.model


def simulated_note(record: ComparisonRecord) -> str | None:
    """One sentence for the top of a report with simulated answers, else None."""
    names = [p.model for p in record.panes if p.simulated]
    if not names:
        return None
    which = "every answer" if len(names) == len(record.panes) else "the answers of " + \
        ", ".join(names)
    return (f"Simulated: {which} came from the local gateway's simulated models, "
            "generated on this machine, not from the real models of those names.")


def conversation(record: ComparisonRecord, pane: PaneRecord) -> tuple[tuple[str, str], ...]:
    """The (role, content) turns this pane sent before the prompt: its own (each model
    answered the earlier prompts its own way), else the comparison's when not recorded."""
    return pane.conversation if pane.conversation is not None else record.conversation


def created_iso(record: ComparisonRecord) -> str:
    """When the turn was saved, ISO 8601 in UTC (`2026-12-01T02:05:26Z`)."""
    moment = datetime.fromtimestamp(record.created_at, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def cut_at_max_tokens(pane: PaneRecord) -> bool:
    """OpenAI's "length" or Anthropic's "max_tokens": the answer stopped at the limit."""
    return pane.finish_reason in CUT_FINISH_REASONS


def failure_message(pane: PaneRecord) -> str:
    message = _dict(pane.failure).get("message")
    return message if isinstance(message, str) and message else ""


def cache_word(pane: PaneRecord) -> str:
    """`hit` / `miss` when the gateway said, `—` when it sent no `_anoman` block."""
    if pane.anoman is None:
        return DASH
    return "hit" if _dict(pane.anoman.get("cache")).get("hit") is True else "miss"


def routing_text(pane: PaneRecord) -> str:
    routing = _dict(_dict(pane.anoman).get("routing"))
    parts = [str(routing[k]) for k in ("mode", "region") if routing.get(k)]
    return " / ".join(parts) if parts else DASH


def guardrails_text(pane: PaneRecord) -> str:
    """`pii pass, toxicity flag 0.62 (violence)`; a blocked request's come from its failure."""
    checks = _dict(_dict(pane.anoman).get("guardrails")) or _dict(
        _dict(pane.failure).get("guardrails"))
    words = []
    for name, verdict in checks.items():
        verdict = _dict(verdict)
        word = f"{name} {verdict.get('status') or 'pass'}"
        score = verdict.get("score")
        if isinstance(score, int | float):
            word += f" {score:.2f}"
        if verdict.get("category"):
            word += f" ({verdict['category']})"
        words.append(word)
    return ", ".join(words) if words else DASH


def weighted_tokens_text(pane: PaneRecord) -> str:
    value = _dict(pane.anoman).get("weighted_tokens")
    return f"{value:,}" if isinstance(value, int) else DASH


def tokens_text(pane: PaneRecord) -> str:
    usage = _dict(pane.usage)
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if prompt is None and completion is None:
        return DASH
    sent = DASH if prompt is None else prompt
    got = DASH if completion is None else completion
    return f"{sent}→{got}"


def rate_text(pane: PaneRecord) -> str:
    rate = pane.metrics.get("output_tokens_per_s")
    return f"{rate:.1f}" if isinstance(rate, int | float) else DASH


def finite_series(pane: PaneRecord) -> list[float]:
    """The sparkline's cells, with anything not a finite non-negative number as 0."""
    return [v if isinstance(v, int | float) and math.isfinite(v) and v > 0 else 0.0
            for v in pane.rate_series]


@dataclass(frozen=True, slots=True)
class Badge:
    """A word on a pane, with the severity that picks its colour (never the only signal)."""

    text: str
    severity: str
    """error | warning | muted | success | info"""


def outcome_text(pane: PaneRecord) -> str:
    """`FAILED: <why>` for a pane that did not complete; the why alone when it says so."""
    word = pane.status.upper()
    why = failure_message(pane)
    if not why:
        return word
    return why if why.upper().startswith(word) else f"{word}: {why}"


def badges(pane: PaneRecord) -> list[Badge]:
    out: list[Badge] = []
    if pane.status == "failed":
        out.append(Badge(outcome_text(pane), "error"))
    elif pane.status == "cancelled":
        out.append(Badge(outcome_text(pane), "muted"))
    if not pane.committed:
        out.append(Badge("partial text, not committed", "warning"))
    if cut_at_max_tokens(pane):
        out.append(Badge("CUT at max tokens", "warning"))
    if cache_word(pane) == "hit":
        out.append(Badge("CACHE HIT", "info"))
    if pane.status == "completed" and not out:
        out.append(Badge("completed", "success"))
    return out


@dataclass(frozen=True, slots=True)
class MetricsRow:
    """One row of the metrics table, every cell already words."""

    pane: str
    model: str
    status: str
    ttft: str
    rate: str
    tokens: str
    cost: str
    weighted: str
    routing: str
    cache: str
    guardrails: str


METRICS_HEADERS = ("#", "model", "status", "TTFT", "tokens/s", "tokens in→out", "cost",
                   "weighted tokens", "routing", "cache", "guardrails")


def metrics_row(pane: PaneRecord) -> MetricsRow:
    status = pane.status
    if cut_at_max_tokens(pane):
        status += " (cut: max tokens)"
    return MetricsRow(
        pane=str(pane.pane),
        model=model_name(pane),
        status=status,
        ttft=_seconds(pane.metrics.get("ttft_s")),
        rate=rate_text(pane),
        tokens=tokens_text(pane),
        cost=pane.cost_text or DASH,
        weighted=weighted_tokens_text(pane),
        routing=routing_text(pane),
        cache=cache_word(pane),
        guardrails=guardrails_text(pane),
    )


def row_cells(row: MetricsRow) -> tuple[str, ...]:
    return (row.pane, row.model, row.status, row.ttft, row.rate, row.tokens, row.cost,
            row.weighted, row.routing, row.cache, row.guardrails)
