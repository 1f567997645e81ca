"""A `[targets.NAME]` table of the config file, validated (pydantic).

Apart from `targets.py`, which the first paint needs (the built-in targets) and which
imports no validation library: this is imported only when a config names targets of
its own (`anoman_tui.targets.TargetConfig` is this class, imported on first use).

May import: the standard library and pydantic.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

TargetKind = Literal["anoman", "openai-compatible", "anthropic"]


class TargetConfig(BaseModel):
    """A `[targets.NAME]` table of the config file, as written (paths optional)."""

    model_config = ConfigDict(extra="forbid")

    kind: TargetKind = "openai-compatible"
    base_url: str
    api_key_env: str | None = None
    api_key: SecretStr | None = None
    """Accepted, but warned about: a key in a file is easily shared by mistake."""
    headers: dict[str, str] = Field(default_factory=dict)
    chat_path: str | None = None
    messages_path: str | None = None
    playground_path: str | None = None
    models_path: str | None = None
    usage_path: str | None = None
    include_usage: bool = True
    """Ask an OpenAI-format stream for its usage (`stream_options.include_usage`)."""
    max_concurrency: int | None = Field(default=None, ge=1)
    """The most streams a suite run keeps in flight on it (None: the run's own limit)."""

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        value = value.strip()
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("chat_path", "messages_path", "playground_path", "models_path",
                     "usage_path")
    @classmethod
    def _slash(cls, value: str | None) -> str | None:
        if value is not None and value and not value.startswith("/"):
            raise ValueError("a path starts with /")
        return value or None

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must be the name of an environment variable, not a key")
        return value
