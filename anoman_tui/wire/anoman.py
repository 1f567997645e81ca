"""The `_anoman` block: guardrail verdicts, routing, cache, cost and weighted tokens."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import Field, field_validator

from anoman_tui.wire.base import WireModel


class GuardrailVerdict(WireModel):
    """One guardrail check's outcome: `pass`, `flag` or `block`, with its score.

    `category` says what a categorised check found (moderation: `violence`, `weapons`, ...).
    """

    status: str = "pass"
    score: float | None = None
    category: str | None = None


class RoutingInfo(WireModel):
    mode: str | None = None
    region: str | None = None


class CacheInfo(WireModel):
    hit: bool = False


class PlaygroundEcho(WireModel):
    """What `/anoman/v1/playground/run` echoes back so a stream can be tied to its pane."""

    compare_id: str | None = None
    panel: int | None = None


class AnomanBlock(WireModel):
    """The metadata frame a gateway sends second to last (docs/wire-contract.md §2).

    `cost_usd` travels as a decimal string so that no float rounding creeps
    into billing; it is parsed into a `Decimal` here.
    """

    guardrails: dict[str, GuardrailVerdict] = Field(default_factory=dict)
    routing: RoutingInfo | None = None
    cache: CacheInfo | None = None
    cost_usd: Decimal | None = None
    weighted_tokens: int | None = None
    playground: PlaygroundEcho | None = None

    @field_validator("cost_usd", mode="before")
    @classmethod
    def _cost_from_string(cls, value: Any) -> Any:
        # A float would carry binary rounding into the Decimal; go through str().
        if isinstance(value, float):
            return str(value)
        if isinstance(value, str):
            try:
                Decimal(value)
            except InvalidOperation:
                return None
        return value

    @field_validator("guardrails", mode="before")
    @classmethod
    def _only_verdict_objects(cls, value: Any) -> Any:
        # A check reported in a shape we do not know is dropped, not fatal.
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(v, dict)}

    @property
    def cache_hit(self) -> bool:
        return bool(self.cache and self.cache.hit)


class AnomanFailureInfo(WireModel):
    """The `_anoman` part of a mid-stream error frame."""

    failure_class: str | None = None
    completion_tokens: int | None = None
