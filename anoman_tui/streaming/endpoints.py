"""The endpoint formats the stream core speaks, and the path of each.

Kept apart from `request.py` (pydantic) so that reading a recording or a history, and
the settings before the first paint, import no validation library.
docs/wire-contract.md describes each format.
"""

from __future__ import annotations

from typing import Literal

EndpointFormat = Literal["openai", "anthropic", "playground"]
ENDPOINT_FORMATS: tuple[EndpointFormat, ...] = ("openai", "anthropic", "playground")

ENDPOINT_PATHS: dict[EndpointFormat, str] = {
    "openai": "/v1/chat/completions",
    "anthropic": "/anthropic/v1/messages",
    "playground": "/anoman/v1/playground/run",
}


def normalize_base_url(url: str) -> str:
    """The gateway root: no trailing slash, and a trailing `/v1` (as SDKs take it) dropped."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url
