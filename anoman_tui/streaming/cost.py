"""What an answer cost: an amount in USD (exact, as a decimal) or unknown, and its source.

A cost is computed once, from what the stream ended with (`cost_of`), kept as this
value by the history and the reports, and turned into text only where it is shown
(`Cost.shown`). Nothing reads a shown cost back: a stored one is its amount and source.

Sources, in the order `cost_of` tries them (docs/wire-contract.md §7):
- `gateway`: the Anoman block's `cost_usd`, as the gateway billed it;
- `provider`: the server's own figure (LiteLLM's and OpenRouter's `usage.cost`);
- `estimate`: the listed prices of `GET /v1/models`, else the price library for the
  model's name, times the usage counts; always labelled as an estimate;
- `unknown`: none of these (shown as `—`, never as a made-up zero).

May import: the standard library and the rest of `anoman_tui.streaming`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from anoman_tui.streaming.prices import estimate_from_price_library

if TYPE_CHECKING:
    # Types only, so that reading costs from the history does not import pydantic.
    from anoman_tui.wire import AnomanBlock, Usage


class ListedPrices(Protocol):
    """What a model list says of a model's prices (`gateway_answers.ModelInfo`)."""

    @property
    def id(self) -> str: ...

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None: ...


CostSource = Literal["gateway", "provider", "estimate", "unknown", "hidden"]
"""Where the amount came from; `hidden` is a blind round's cost before its vote."""
COST_SOURCES: tuple[str, ...] = get_args(CostSource)
DASH = "—"


@dataclass(frozen=True, slots=True)
class Cost:
    """An answer's cost: `usd` None when unknown (or hidden), else exact."""

    usd: Decimal | None = None
    source: CostSource = "unknown"

    def __post_init__(self) -> None:
        if (self.usd is None) != (self.source in ("unknown", "hidden")):
            raise ValueError(f"a {self.source} cost {'needs' if self.usd is None else 'has no'} "
                             "amount")

    @property
    def known(self) -> bool:
        return self.usd is not None

    @property
    def estimated(self) -> bool:
        return self.source == "estimate"

    def shown(self) -> str:
        """The cost as every view writes it: `$0.000041` (the gateway's), `$0.000060
        (provider)`, `~$0.000038 (est.)`, `—` when unknown."""
        if self.source == "hidden":
            return "hidden until the vote"
        if self.usd is None:
            return DASH
        if self.source == "gateway":
            return f"${self.usd}"  # as the gateway wrote it, its digits kept
        if self.source == "provider":
            return f"${_usd(self.usd)} (provider)"
        return f"~${self.usd} (est.)"

    def to_json(self) -> dict[str, str | None]:
        """`{"usd": "0.000041" | null, "source": ...}`: the amount as a decimal string, so
        no float rounding creeps in between the server and a reader."""
        return {"usd": None if self.usd is None else str(self.usd), "source": self.source}

    @classmethod
    def from_json(cls, value: Any) -> Cost:
        """A cost written by `to_json`; ValueError (one sentence) for anything else."""
        if not isinstance(value, dict):
            raise ValueError("a cost is an object with usd and source")
        source, usd = value.get("source"), value.get("usd")
        if source not in COST_SOURCES:
            raise ValueError(f"a cost's source is one of {', '.join(COST_SOURCES)}")
        amount = None if usd is None else decimal_or_none(usd)
        if usd is not None and (amount is None or not amount.is_finite() or amount < 0):
            raise ValueError("a cost's usd is a non-negative decimal string or null")
        try:
            return cls(amount, source)
        except ValueError as exc:
            raise ValueError(str(exc)) from None


UNKNOWN = Cost()
HIDDEN = Cost(None, "hidden")


def cost_of(
    block: AnomanBlock | None,
    usage: Usage | None,
    info: ListedPrices | None,
    provider_cost: Decimal | None = None,
    *,
    model: str | None = None,
    provider: str | None = None,
) -> Cost:
    """A stream's cost: a figure a server gave, else an estimate, else unknown.

    `model` names the model for the price library (else `info.id`); `provider` is a
    hint such as "openai" or "anthropic".
    """
    if block is not None and block.cost_usd is not None:
        return Cost(block.cost_usd, "gateway")
    if provider_cost is not None:
        return Cost(provider_cost, "provider")
    if usage is None:
        return UNKNOWN
    if info is not None:
        estimate = info.estimate_cost(usage.prompt_tokens, usage.completion_tokens)
        if estimate is not None:
            return Cost(estimate, "estimate")
    name = model or (info.id if info is not None else None)
    if name:
        estimate = estimate_from_price_library(
            name, usage.prompt_tokens, usage.completion_tokens, provider)
        if estimate is not None:
            return Cost(estimate, "estimate")
    return UNKNOWN


def decimal_or_none(value: Any) -> Decimal | None:
    """A number or numeric string as an exact decimal; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _usd(value: Decimal) -> str:
    """Six decimals, as the gateway's figures; a cost below a micro-dollar keeps two digits."""
    rounded = value.quantize(Decimal("0.000001"))
    if rounded == 0 and value != 0:
        return f"{value:.2g}"
    return f"{rounded:f}"
