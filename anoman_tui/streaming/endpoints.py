"""The endpoint formats the stream core speaks, and the path of each.

Kept apart from `request.py` (pydantic) so that reading a recording or a history
imports no validation library. docs/wire-contract.md describes each format.
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
