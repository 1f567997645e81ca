"""The gateway's plain JSON endpoints: `GET /v1/models` and `GET /anoman/v1/usage`.

They live beside the stream core so the UI never touches httpx; both go
through the caller's shared `httpx.AsyncClient` (see `StreamClient`).

Their failures have their own sentences, not the stream badges' words
(`describe_failure`): a 404 here means the address is not a gateway (or not
this kind), never that a model name is wrong, and every sentence names the
URL that was tried, since the user has to fix that address.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx

from anoman_tui.streaming.failures import clean_excerpt, http_failure, transport_reason
from anoman_tui.streaming.request import normalize_base_url
from anoman_tui.streaming.safe_text import redact_urls


class GatewayRequestError(Exception):
    """A JSON endpoint failed; the message is one sentence, safe to show.

    `retryable` is True when asking again later may succeed: nothing answered, or the
    gateway answered with a server error. A wrong address or key stays wrong.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(redact_urls(message))  # it names the URL: never its password
        self.retryable = retryable


def _not_a_gateway(root: str, path: str, answered: str) -> GatewayRequestError:
    return GatewayRequestError(
        f"the base URL {root} does not look like an Anoman or OpenAI-compatible gateway "
        f"(GET {path} answered {answered})"
    )


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


async def _get_json(
    http: httpx.AsyncClient,
    base_url: str,
    api_key: str,
    path: str,
    params: dict[str, Any],
    extra_headers: tuple[tuple[str, str], ...] = (),
) -> Any:
    root = normalize_base_url(base_url)
    url = root + path
    headers = {"Accept": "application/json", **dict(extra_headers)}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        response = await http.get(url, headers=headers, params=params, timeout=15.0)
    except httpx.TimeoutException as exc:
        raise GatewayRequestError(
            f"cannot reach {root} (no answer: {type(exc).__name__})", retryable=True
        ) from None
    except httpx.HTTPError as exc:
        raise GatewayRequestError(
            f"cannot reach {root} ({transport_reason(exc)})", retryable=True
        ) from None
    if response.status_code in (404, 405):
        if path != "/v1/models":
            # An OpenAI-compatible server without this Anoman route (e.g. the usage
            # ledger on a LiteLLM proxy): say which route, not that the address is wrong.
            raise GatewayRequestError(
                f"{root}: GET {path} is not served by this server ({response.status_code}); "
                "it is not an Anoman gateway"
            )
        # Nothing serves the model list here: the address is not a gateway of this kind.
        raise _not_a_gateway(root, path, str(response.status_code))
    if response.status_code != 200:
        failure = http_failure(response.status_code, dict(response.headers), response.content,
                               route=f"GET {path}")
        message = f"{root}: {failure.message}"
        if api_key:
            message = message.replace(api_key, "…" + api_key[-4:])
        raise GatewayRequestError(message, retryable=response.status_code >= 500)
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        what = "HTML" if "html" in kind or response.text.lstrip()[:1] == "<" else "not JSON"
        raise _not_a_gateway(
            root, path, f"{what}: {clean_excerpt(response.text, 40)!r}"
        ) from None


async def list_models(
    http: httpx.AsyncClient,
    base_url: str,
    api_key: str,
    extra_headers: tuple[tuple[str, str], ...] = (),
    path: str = "/v1/models",
) -> list[ModelInfo]:
    payload = await _get_json(http, base_url, api_key, path, {}, extra_headers)
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        root = normalize_base_url(base_url)
        raise _not_a_gateway(root, path, "JSON without a model list")
    return [ModelInfo.from_json(e) for e in entries if isinstance(e, dict) and "id" in e]


async def fetch_usage(
    http: httpx.AsyncClient, base_url: str, api_key: str, limit: int = 100
) -> list[dict[str, Any]]:
    payload = await _get_json(http, base_url, api_key, "/anoman/v1/usage", {"limit": limit})
    rows = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(rows, list):
        raise GatewayRequestError("/anoman/v1/usage did not return rows")
    return [r for r in rows if isinstance(r, dict)]
