"""Settings: where to send requests, which models, keys, keymap and theme.

Read, highest priority first, from `anoman-tui` flags, `ANOMAN_*` environment
variables, and the TOML config file (`$ANOMAN_CONFIG` or
`~/.config/anoman-tui/config.toml`). The API key is a `SecretStr`: it never
appears in a repr, a log line or on screen. Choices made in the app (the
theme) are written back to the file by editing only their own line, so the
user's comments and layout survive.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from anoman_tui.locations import config_file
from anoman_tui.streaming.request import EndpointFormat


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ANOMAN_", extra="ignore")

    base_url: str | None = Field(
        default=None, description="remote gateway root; unset = start the local gateway"
    )
    api_key: SecretStr | None = None
    models: list[str] = Field(default_factory=list, description="up to three, one per pane")
    endpoint: EndpointFormat = "openai"
    theme: str = "anoman-dark"
    keymap: dict[str, str] = Field(default_factory=dict, description="binding id → keys")
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    idle_timeout: float = Field(default=60.0, gt=0)

    @field_validator("models", mode="before")
    @classmethod
    def _models_from_text(cls, value: Any) -> Any:
        # ANOMAN_MODELS="a,b,c" is friendlier than JSON in an environment variable.
        if isinstance(value, str):
            return [m.strip() for m in value.split(",") if m.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=config_file()),
        )


def load_settings(**overrides: Any) -> Settings:
    """Settings from every source; `overrides` (flags) win. Unset flags are ignored."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


def check_config_file(path: Path | None = None) -> str | None:
    """A sentence describing what is wrong with the config file, or None if it reads."""
    path = path or config_file()
    if not path.exists():
        return None
    try:
        tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"cannot read {path}: {exc}"
    return None


def persist_setting(key: str, value: str | int | float | bool, path: Path | None = None) -> None:
    """Set one top-level key in the config file, rewriting only that line."""
    path = path or config_file()
    line = f"{key} = {json.dumps(value)}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(rf"^{re.escape(key)}\s*=.*$", re.MULTILINE)
    # Only the part before the first table header holds top-level keys.
    header = re.search(r"^\[", text, re.MULTILINE)
    top, rest = (text[: header.start()], text[header.start() :]) if header else (text, "")
    if pattern.search(top):
        top = pattern.sub(line, top, count=1)
    else:
        top = (top.rstrip("\n") + "\n" if top.strip() else "") + line + "\n"
        if rest:
            top += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(top + rest, encoding="utf-8")
