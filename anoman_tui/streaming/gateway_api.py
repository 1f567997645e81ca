"""The gateway's plain JSON endpoints: `GET /v1/models` and `GET /anoman/v1/usage`.

They live beside the stream core so the UI never touches httpx; both go
through the caller's shared `httpx.AsyncClient` (see `StreamClient`).

Their failures have their own sentences, not the stream badges' words
(`describe_failure`): a 404 here means the address is not a gateway (or not
this kind), never that a model name is wrong, and every sentence names the
URL that was tried, since the user has to fix that address.
"""

from __future__ import annotations

from typing import Any

import httpx

from anoman_tui.streaming.failures import clean_excerpt, http_failure, transport_reason
from anoman_tui.streaming.gateway_answers import GatewayRequestError, ModelInfo
from anoman_tui.streaming.request import normalize_base_url


def _not_a_gateway(root: str, path: str, answered: str) -> GatewayRequestError:
    return GatewayRequestError(
        f"the base URL {root} does not look like an Anoman or OpenAI-compatible gateway "
        f"(GET {path} answered {answered})"
    )


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
