"""Configuration of the local Anoman-compatible gateway.

One pydantic-settings model, ``GatewayConfig``, read from a TOML file (see
``GatewayConfig.load``) and from ``ANOMAN_GATEWAY_*`` environment variables.
Every knob the gateway has lives here: keys and their policies, region, the
ledger path, rate limits, guardrail actions, per-model fault defaults, body
size and the non-streaming timeout.

Imports pydantic / pydantic-settings and the standard library only.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

GuardrailAction = Literal["pass", "flag", "block"]

# Every option with its default, except where noted; `anoman-tui serve --config`.
EXAMPLE_CONFIG_TOML = """\
api_keys = ["anm-sk-local-demo-key"]   # --api-key adds more; none at all: one is generated
region = "id"                          # routing.region in every Anoman block
db_path = "~/.local/share/anoman-tui/usage.sqlite3"   # default: $XDG_DATA_HOME/anoman-tui/
rate_limit_rpm = 600                   # per key, sliding minute -> 429 + Retry-After
max_concurrent_streams = 32            # per key
max_body_bytes = 4194304               # 4 MiB -> 413
non_stream_timeout_s = 100.0           # -> 504 (streams are not bound by it)
body_timeout_s = 10.0                  # a request body not received in time -> 408
cache_enabled = true                   # false (or serve --no-cache): no cache reads or writes
cache_max_entries = 512
time_scale = 1.0                       # < 1 makes every simulated model faster (tests)

[guardrails.injection]                 # score in [0, 1]
flag_at = 0.4
block_at = 0.8
[guardrails.pii]                       # pass | flag | block per kind
email = "flag"
phone = "flag"
card = "block"
nik = "flag"
[guardrails.moderation]
flag_at = 0.5
block_at = 0.9
[guardrails.policy]
action = "block"

[key_policies."anm-sk-local-demo-key"] # optional, per key (not a default)
allowed_models = ["anoman-lite", "claude-sonnet-4-6"]
max_tokens = 4096
rpm = 60
max_concurrent_streams = 3

[models."deepseek-r1"]                 # demo faults per model (not a default)
simulate = "ttft=4,rate=20"
[models."claude-opus-4-6"]
simulate = "interrupt-after=120"
"""

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


def default_db_path() -> Path:
    """The ledger's default location: $XDG_DATA_HOME/anoman-tui/usage.sqlite3."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "anoman-tui" / "usage.sqlite3"


class ScoredCheck(BaseModel):
    """Thresholds for a check that yields a score in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    flag_at: float = 0.4
    block_at: float = 0.8

    def action_for(self, score: float) -> GuardrailAction:
        if score >= self.block_at:
            return "block"
        if score >= self.flag_at:
            return "flag"
        return "pass"


class PiiActions(BaseModel):
    """What to do when each kind of personal data is found in a prompt."""

    model_config = ConfigDict(extra="forbid")

    email: GuardrailAction = "flag"
    phone: GuardrailAction = "flag"
    card: GuardrailAction = "block"
    nik: GuardrailAction = "flag"


class PolicyCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: GuardrailAction = "block"


class GuardrailSettings(BaseModel):
    """Per-check actions; the defaults block injection >= 0.8 and card numbers."""

    model_config = ConfigDict(extra="forbid")

    injection: ScoredCheck = Field(default_factory=lambda: ScoredCheck(flag_at=0.4, block_at=0.8))
    pii: PiiActions = Field(default_factory=PiiActions)
    moderation: ScoredCheck = Field(default_factory=lambda: ScoredCheck(flag_at=0.5, block_at=0.9))
    policy: PolicyCheck = Field(default_factory=PolicyCheck)


class KeyPolicy(BaseModel):
    """Limits attached to one API key (the `policy` guardrail and rate limits)."""

    model_config = ConfigDict(extra="forbid")

    allowed_models: list[str] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    rpm: int | None = Field(default=None, ge=1)
    max_concurrent_streams: int | None = Field(default=None, ge=1)


class ModelDefaults(BaseModel):
    """Per-model demo settings: faults in `X-Anoman-Simulate` syntax."""

    model_config = ConfigDict(extra="forbid")

    simulate: str = ""


class GatewayConfig(BaseSettings):
    """Everything the gateway can be told. Defaults are a sensible local setup."""

    model_config = SettingsConfigDict(env_prefix="ANOMAN_GATEWAY_", extra="forbid")

    api_keys: list[str] = Field(default_factory=list)
    key_policies: dict[str, KeyPolicy] = Field(default_factory=dict)
    region: str = "id"
    db_path: Path | None = None
    rate_limit_rpm: int = Field(default=600, ge=1)
    max_concurrent_streams: int = Field(default=32, ge=1)
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)
    non_stream_timeout_s: float = Field(default=100.0, gt=0)
    body_timeout_s: float = Field(default=10.0, gt=0)  # a request body slower than this: 408
    cache_enabled: bool = True
    cache_max_entries: int = Field(default=512, ge=0)
    guardrails: GuardrailSettings = Field(default_factory=GuardrailSettings)
    models: dict[str, ModelDefaults] = Field(default_factory=dict)
    # Scales every simulated model's TTFT and token interval; tests use < 1.
    time_scale: float = Field(default=1.0, gt=0)

    @classmethod
    def load(cls, path: Path | None) -> GatewayConfig:
        """Read a TOML file if ``path`` is given, else defaults (+ environment)."""
        data: dict[str, Any] = {}
        if path is not None:
            with Path(path).expanduser().open("rb") as fh:
                data = tomllib.load(fh)
        return cls(**data)

    def resolved_db_path(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else default_db_path()
