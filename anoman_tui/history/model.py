"""One comparison turn as it ended, in plain data: what history stores and reports show.

Everything here is what a reader may see later: never an API key (a target is its
base URL only). Text is stored exactly as the model sent it; escaping is the job of
whoever writes it out (`anoman_tui.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from anoman_tui.streaming import StreamResult


@dataclass(frozen=True, slots=True)
class PaneRecord:
    """One pane (or one model of `compare`) of a comparison turn, as it ended."""

    pane: int
    """1-based, as shown."""
    model: str
    base_url: str
    """Where the request went: the target's base URL, never its key."""
    endpoint: str
    """The endpoint format: openai, anthropic or playground."""
    temperature: float | None = None
    max_tokens: int | None = None
    scenario: str = "none"
    """The local gateway's demo scenario the request carried ("none" for a real one)."""
    status: str = "completed"
    """completed | failed | cancelled."""
    committed: bool = True
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    failure: dict[str, Any] | None = None
    """`StreamFailure.to_json()`: kind, status, message, ..."""
    usage: dict[str, Any] | None = None
    """prompt_tokens, completion_tokens, total_tokens."""
    anoman: dict[str, Any] | None = None
    """The gateway's `_anoman` block exactly as sent."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """`StreamMetrics.to_json()`: ttft_s, e2e_s, output_tokens_per_s, chunks."""
    rate_series: tuple[float, ...] = ()
    """Tokens/s per 250 ms cell, oldest first: what the pane's sparkline drew."""
    cost_text: str = "—"
    """The cost as shown: the gateway's `$…`, an estimate `~$… (est.)`, or `—`."""


@dataclass(frozen=True, slots=True)
class ComparisonRecord:
    """A comparison turn: one prompt sent to every pane at once, and how each ended."""

    prompt: str
    panes: tuple[PaneRecord, ...]
    system_prompt: str = ""
    conversation: tuple[tuple[str, str], ...] = ()
    """(role, content) turns sent before this prompt (the first pane's, for one list)."""
    created_at: float = 0.0
    """Unix time the turn was saved."""
    source: str = "app"
    """Which command made it: app | compare."""
    id: int | None = None
    """The history's id once saved."""


def pane_record(
    pane: int,
    model: str,
    *,
    base_url: str,
    endpoint: str,
    result: StreamResult,
    temperature: float | None = None,
    max_tokens: int | None = None,
    scenario: str = "none",
    rate_series: tuple[float, ...] = (),
    cost_text: str = "—",
) -> PaneRecord:
    """The record of one pane from its stream's result."""
    usage = result.usage
    return PaneRecord(
        pane=pane,
        model=model,
        base_url=base_url,
        endpoint=endpoint,
        temperature=temperature,
        max_tokens=max_tokens,
        scenario=scenario,
        status=result.status,
        committed=result.committed,
        text=result.text,
        reasoning=result.reasoning,
        finish_reason=result.finish_reason,
        failure=result.failure.to_json() if result.failure else None,
        usage=usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
        if usage is not None else None,
        anoman=result.anoman_raw,
        metrics=result.metrics.to_json(),
        rate_series=rate_series,
        cost_text=cost_text,
    )
