"""What the gateway's JSON endpoints answer, apart from how they are asked: an entry of
`GET /v1/models` (`ModelInfo`) and the one-sentence error of a request that failed
(`GatewayRequestError`).

Apart from `gateway_api.py` (which asks, through httpx) because the screens name these
before anything is asked: the compare screen's first paint imports no HTTP stack.

May import: the standard library and `anoman_tui.streaming.safe_text`. Never httpx or Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from anoman_tui.streaming.safe_text import redact_urls


class GatewayRequestError(Exception):
    """A JSON endpoint failed; the message is one sentence, safe to show.

    `retryable` is True when asking again later may succeed: nothing answered, or the
    gateway answered with a server error. A wrong address or key stays wrong.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(redact_urls(message))  # it names the URL: never its password
        self.retryable = retryable


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One entry of `GET /v1/models`, with Anoman's price and weight when it sends them."""

    id: str
    owned_by: str | None = None
    weight: int | None = None
    input_usd_per_mtok: Decimal | None = None
    output_usd_per_mtok: Decimal | None = None
    description: str = ""
    thinking: bool = False
    simulated: bool = False
    """The server says the model's answers are simulated (the local gateway's
    `anoman.simulated`); False for any server that does not say so."""
    judge: bool = False
    """The server lists it as a judge (`anoman.role: "judge"`, the local gateway's
    `anoman-judge`): it grades answers rather than answering, so no pool draws it."""

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """Cost from the listed prices, for gateways that send no Anoman block.

        Labelled as an estimate wherever it is shown (docs/wire-contract.md §7).
        """
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        raw = (
            prompt_tokens * self.input_usd_per_mtok + completion_tokens * self.output_usd_per_mtok
        ) / Decimal(1_000_000)
        return raw.quantize(Decimal("0.000001"))

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> ModelInfo:
        extra = entry.get("anoman") if isinstance(entry.get("anoman"), dict) else {}
        assert isinstance(extra, dict)
        pricing = extra.get("pricing") if isinstance(extra.get("pricing"), dict) else {}
        assert isinstance(pricing, dict)
        weight = extra.get("weight")
        return cls(
            id=str(entry["id"]),
            owned_by=str(entry["owned_by"]) if entry.get("owned_by") is not None else None,
            weight=weight if isinstance(weight, int) else None,
            input_usd_per_mtok=_decimal(pricing.get("input_usd_per_mtok")),
            output_usd_per_mtok=_decimal(pricing.get("output_usd_per_mtok")),
            description=str(extra.get("description") or ""),
            thinking=bool(extra.get("thinking")),
            simulated=extra.get("simulated") is True,
            judge=extra.get("role") == "judge",
        )


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None
