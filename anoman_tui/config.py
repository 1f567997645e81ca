"""Settings: where to send requests, which models, keys, keymap and theme.

Read, highest priority first, from `anoman-tui` flags, `ANOMAN_*` environment
variables, and the TOML config file (`$ANOMAN_CONFIG` or
`~/.config/anoman-tui/config.toml`). Both the compare screen and `anoman-tui
compare` load them through `load_settings`, so precedence has one
implementation. A value that cannot be used raises `ConfigError`, one line
naming where the value came from. The API key is a `Secret`: it never
appears in a repr, a log line, an error or on screen. Choices made in the app
(the theme) are written back to the file by editing only their own line, so
the user's comments and layout survive.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import getpass
import json
import math
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from anoman_tui.locations import config_file
from anoman_tui.parameters import (
    MAX_TOKENS_RULE,
    TEMPERATURE_RULE,
    max_tokens_problem,
    temperature_problem,
)
from anoman_tui.streaming.endpoints import ENDPOINT_FORMATS, EndpointFormat
from anoman_tui.streaming.safe_text import Secret, redact_urls
from anoman_tui.targets import (
    BUILT_IN,
    LOCAL,
    NAME_PATTERN,
    Target,
    from_config,
    gateway_target,
    split_model,
    unknown_target,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

    from anoman_tui.target_config import TargetConfig


def _checked_temperature(value: float | None) -> float | None:
    # The one range every source shares (anoman_tui.parameters); the value is quoted
    # by `_describe`, so the problem is the rule alone.
    if value is not None and temperature_problem(value):
        raise ValueError(f"must be {TEMPERATURE_RULE}")
    return value


def _checked_max_tokens(value: int | None) -> int | None:
    if value is not None and max_tokens_problem(value):
        raise ValueError(f"must be {MAX_TOKENS_RULE}")
    return value


@dataclass(frozen=True)
class ArenaTable:
    """The `[arena]` table: what blind rounds draw their models from (`ArenaConfig`
    validates it as written)."""

    pool: list[str] = field(default_factory=list)
    """`MODEL` or `TARGET:MODEL`, at least two; empty: every model the default target
    lists."""
    judge: str | None = None
    """`[TARGET:]MODEL`: after each blind round's vote, this model judges the round
    (docs/judges.md); never drawn into a round itself."""


@dataclass(frozen=True)
class PaneSpec:
    """A pane (or one model of `compare`) as the settings give it, everything resolved."""

    target: Target
    model: str
    endpoint: EndpointFormat
    temperature: float | None
    max_tokens: int | None


# Every setting and its default, in the order error messages list them.
DEFAULTS: dict[str, Any] = {
    "base_url": None, "api_key": None, "models": [], "endpoint": "openai",
    "theme": "anoman-dark", "keymap": {}, "system_prompt": "", "temperature": None,
    "max_tokens": None, "idle_timeout": 60.0, "history": True, "user": None,
    "history_url": None, "record": True, "record_limit_mb": 16.0, "target": None,
    "targets": {}, "arena": None, "panes": [],
}


class Settings:
    """Every setting, validated. Built from keyword values (the flags), which win over
    `ANOMAN_*` variables, which win over the config file: `Settings(theme=...)` reads
    the other two as well (`_merged_sources`).

    Not a pydantic model, as the first paint needs the settings and pydantic costs more
    to import than the app takes to draw: values of the plain types a config file or a
    flag gives are checked here (`_plain_values`); anything else (a `[targets]`,
    `[arena]` or `[[panes]]` table, text from a variable to convert, a bad value) goes
    through the pydantic model (`_validated_values`), which converts it or raises its
    `ValidationError`, so either way the values and the messages are pydantic's.
    """

    model_fields: ClassVar[dict[str, Any]] = DEFAULTS
    """The settings' names (as pydantic names a model's fields)."""

    base_url: str | None
    api_key: Secret | None
    models: list[str]
    """Up to three, one per pane."""
    endpoint: EndpointFormat
    theme: str
    keymap: dict[str, str]
    """Binding id → keys."""
    system_prompt: str
    temperature: float | None
    max_tokens: int | None
    idle_timeout: float
    history: bool
    """Save every comparison to the history."""
    user: str | None
    """Who you are in a shared history (default: the login name)."""
    history_url: Secret | None
    """postgresql://user@host:port/db: a team's shared history on PostgreSQL; unset: the
    SQLite file under the data directory."""
    record: bool
    """Record each comparison's streams with their timing in the history, to replay them."""
    record_limit_mb: float
    """A comparison whose streams hold more than this many megabytes is saved without its
    recording."""
    target: str | None
    """The target a plain MODEL goes to (default: local, or the gateway at base_url)."""
    targets: dict[str, TargetConfig]
    """[targets.NAME] tables: servers panes stream from."""
    arena: ArenaTable
    """[arena] table: the pool blind rounds draw from."""
    panes: list[Any]
    """[[panes]] tables (`PaneConfig`): each pane's model, endpoint format and parameters
    (`models`, when given, wins)."""

    def __init__(self, **values: Any) -> None:
        merged = _merged_sources(values)
        checked = _plain_values(merged)
        if checked is None:
            checked = _validated_values(merged)
        self.__dict__.update(checked)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Settings:
        """A copy with `update`'s values, not validated (as pydantic's `model_copy`)."""
        copy = object.__new__(Settings)
        copy.__dict__.update(self.__dict__, **(update or {}))
        return copy

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and other.__dict__ == self.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, as a pydantic model

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in DEFAULTS)
        return f"Settings({fields})"

    def recording_limit(self) -> int | None:
        """The most bytes of streams a saved comparison keeps recorded; None: recording
        is off."""
        return int(self.record_limit_mb * 1_000_000) if self.record else None

    def all_targets(self) -> dict[str, Target]:
        """Every target by name: built in, `gateway` (when base_url is set), the file's."""
        targets = dict(BUILT_IN)
        if self.base_url is not None:
            targets["gateway"] = gateway_target(self.base_url, self.api_key)
        for name, config in self.targets.items():
            targets[name] = from_config(name, config)
        return targets

    @property
    def default_target(self) -> str:
        """Where a plain MODEL goes: `target`, else `gateway` with base_url, else local."""
        if self.target is not None:
            return self.target
        return "gateway" if self.base_url is not None else LOCAL

    def pane_targets(self) -> list[tuple[Target, str]]:
        """(target, model) for each entry of `models` (`TARGET:MODEL` or `MODEL`)."""
        targets = self.all_targets()
        out = []
        for spec in self.models:
            name, model = split_model(spec, targets)
            out.append((targets[name or self.default_target], model))
        return out

    def pane_specs(self) -> list[PaneSpec]:
        """Each pane's target, model, format and parameters: from `models` (the same
        format and parameters for all) when given, else from the `[[panes]]` tables."""
        targets = self.all_targets()

        def spec(model_spec: str, endpoint: EndpointFormat | None,
                 temperature: float | None, max_tokens: int | None) -> PaneSpec:
            name, model = split_model(model_spec, targets)
            target = targets[name or self.default_target]
            return PaneSpec(target, model, target.default_endpoint(endpoint or self.endpoint),
                            self.temperature if temperature is None else temperature,
                            self.max_tokens if max_tokens is None else max_tokens)

        if self.models:
            return [spec(m, None, None, None) for m in self.models]
        return [spec(p.model, p.endpoint, p.temperature, p.max_tokens) for p in self.panes]

    def inline_keys(self) -> list[str]:
        """Targets whose key is written in the config file (a warning, not an error)."""
        return [name for name, config in self.targets.items() if config.api_key is not None]

    def author(self) -> str:
        """Who the history records as running and voting: `user`, else the login name."""
        return self.user or login_name()


def _text(value: Any) -> bool:
    return type(value) is str and not not_utf8(value)


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _plain_values(merged: dict[str, Any]) -> dict[str, Any] | None:
    """The settings from `merged`, when every value is of the plain type it should be,
    checked here as the pydantic model would check it (the same result, by
    tests/test_settings.py); None for anything else: a table, text to convert (a
    variable's), or a value the model would refuse, which `_validated_values` then
    converts or refuses with pydantic's message."""
    values: dict[str, Any] = {**DEFAULTS, "models": [], "keymap": {}, "targets": {},
                              "panes": [], "arena": ArenaTable()}
    for key, value in merged.items():
        if key not in DEFAULTS:
            continue  # ignored, as the model ignores it (a file's unknown keys are refused)
        if value is None and key in ("base_url", "api_key", "temperature", "max_tokens",
                                     "user", "history_url", "target"):
            values[key] = None
        elif key in ("base_url", "api_key", "user", "history_url", "target",
                     "theme", "system_prompt", "endpoint"):
            if not _text(value):
                return None
            if key in ("theme", "system_prompt"):
                values[key] = value
                continue
            if key == "endpoint":
                if value not in ENDPOINT_FORMATS:
                    return None
                values[key] = value
                continue
            stripped = value.strip() or None  # blank: unset
            if stripped is not None and (
                    (key == "base_url" and not stripped.lower().startswith(
                        ("http://", "https://")))
                    or (key == "user" and user_problem(stripped))
                    or (key == "history_url" and history_url_problem(stripped))):
                return None
            if key in ("api_key", "history_url") and stripped is not None:
                values[key] = Secret(stripped)
            else:
                values[key] = stripped
        elif key == "models":
            if type(value) is str:
                value = [m.strip() for m in value.split(",") if m.strip()]
            if type(value) is not list or not all(_text(m) for m in value):
                return None
            values[key] = list(value)
        elif key == "keymap":
            if type(value) is not dict or not all(_text(k) and _text(v)
                                                  for k, v in value.items()):
                return None
            values[key] = dict(value)
        elif key == "temperature":
            if not _number(value) or temperature_problem(value):
                return None
            values[key] = float(value)
        elif key == "max_tokens":
            if type(value) is not int or max_tokens_problem(value):
                return None
            values[key] = value
        elif key in ("idle_timeout", "record_limit_mb"):
            if not _number(value) or value <= 0:
                return None
            values[key] = float(value)
        elif key in ("history", "record"):
            if type(value) is not bool:
                return None
            values[key] = value
        elif not (key in ("targets", "panes") and value in ({}, [])
                  and type(value) is type(DEFAULTS[key])):
            return None  # a table: the model validates it
    return values


def _validated_values(merged: dict[str, Any]) -> dict[str, Any]:
    """The settings from `merged` through the pydantic model (`ValidationError` for a
    value it refuses), as `Settings` holds them."""
    given = dict(merged)
    for key in ("api_key", "history_url"):
        if isinstance(given.get(key), Secret):
            given[key] = given[key].get_secret_value()
    if isinstance(given.get("arena"), ArenaTable):
        given["arena"] = dataclasses.asdict(given["arena"])
    model = _models().SettingsModel(**given)
    values = {name: getattr(model, name) for name in DEFAULTS}
    for key in ("api_key", "history_url"):
        if values[key] is not None:
            values[key] = Secret(values[key].get_secret_value())
    values["arena"] = ArenaTable(pool=list(model.arena.pool), judge=model.arena.judge)
    return values


@functools.cache
def _models() -> Any:
    """The pydantic models of the settings (`SettingsModel`) and of its `[[panes]]` and
    `[arena]` tables, made on first use: only a config with tables, a variable's text or
    a bad value needs them."""
    from typing import Annotated

    from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, field_validator

    from anoman_tui import target_config


    # A pane's and the settings' parameters: the same range, checked by the same validator.
    Temperature = Annotated[float | None, AfterValidator(_checked_temperature)]
    MaxTokens = Annotated[int | None, AfterValidator(_checked_max_tokens)]

    class PaneConfig(BaseModel):
        """One `[[panes]]` table: a pane's model (`TARGET:MODEL` or `MODEL`) and, if it
        differs from the rest, its endpoint format and parameters."""

        model_config = ConfigDict(extra="forbid")

        model: str = Field(min_length=1)
        endpoint: EndpointFormat | None = None
        temperature: Temperature = None
        max_tokens: MaxTokens = None

    class ArenaConfig(BaseModel):
        """The `[arena]` table as written (`ArenaTable` once validated)."""

        model_config = ConfigDict(extra="forbid")

        pool: list[str] = Field(default_factory=list)
        judge: str | None = Field(default=None, min_length=1)

    class SettingsModel(BaseModel):
        """Every setting, validated (`Settings` describes each)."""

        # `validate_default`: defaults pass the same validators as given values.
        model_config = ConfigDict(extra="ignore", validate_default=True)

        base_url: str | None = None
        api_key: SecretStr | None = None
        models: list[str] = Field(default_factory=list)
        endpoint: EndpointFormat = "openai"
        theme: str = "anoman-dark"
        keymap: dict[str, str] = Field(default_factory=dict)
        system_prompt: str = ""
        temperature: Temperature = None
        max_tokens: MaxTokens = None
        idle_timeout: float = Field(default=60.0, gt=0, allow_inf_nan=False)
        history: bool = True
        user: str | None = Field(default=None, max_length=64)
        history_url: SecretStr | None = None
        record: bool = True
        record_limit_mb: float = Field(default=16.0, gt=0, allow_inf_nan=False)
        target: str | None = None
        targets: dict[str, TargetConfig] = Field(default_factory=dict)
        arena: ArenaConfig = Field(default_factory=ArenaConfig)
        panes: list[PaneConfig] = Field(default_factory=list)

        @field_validator("targets")
        @classmethod
        def _target_names(cls, value: dict[str, TargetConfig]) -> dict[str, TargetConfig]:
            for name in value:
                if not NAME_PATTERN.match(name):
                    raise ValueError(f"target name {name!r}: letters, digits, . _ - only")
                if name == LOCAL:
                    raise ValueError("'local' is the embedded gateway and cannot be redefined")
            return value

        @field_validator("target")
        @classmethod
        def _target_name(cls, value: str | None) -> str | None:
            return value.strip() or None if isinstance(value, str) else value

        @field_validator("models", mode="before")
        @classmethod
        def _models_from_text(cls, value: Any) -> Any:
            # ANOMAN_MODELS="a,b,c" is friendlier than JSON in an environment variable.
            if isinstance(value, str):
                return [m.strip() for m in value.split(",") if m.strip()]
            return value

        @field_validator("base_url", "api_key", mode="before")
        @classmethod
        def _blank_is_unset(cls, value: Any) -> Any:
            # `ANOMAN_BASE_URL=` (or `--base-url ""`) means "none": the local gateway, no key.
            if isinstance(value, str) and not value.strip():
                return None
            return value.strip() if isinstance(value, str) else value

        @field_validator("history_url", mode="before")
        @classmethod
        def _postgresql_url(cls, value: Any) -> Any:
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if isinstance(value, str):
                value = value.strip()
                if not value:
                    return None
                problem = history_url_problem(value)
                if problem:
                    raise ValueError(problem)
            return value

        @field_validator("user", mode="before")
        @classmethod
        def _user_name(cls, value: Any) -> Any:
            if isinstance(value, str):
                value = value.strip() or None
                problem = None if value is None else user_problem(value)
                if problem:
                    raise ValueError(problem)
            return value

        @field_validator("base_url")
        @classmethod
        def _http_url(cls, value: str | None) -> str | None:
            if value is not None and not value.lower().startswith(("http://", "https://")):
                raise ValueError("must start with http:// or https://")
            return value

    # Their annotations are text (`from __future__ import annotations`) naming this
    # function's locals, which pydantic does not look up by itself.
    names = {"TargetConfig": target_config.TargetConfig, "Temperature": Temperature,
             "MaxTokens": MaxTokens, "PaneConfig": PaneConfig, "ArenaConfig": ArenaConfig}
    for model in (PaneConfig, ArenaConfig, SettingsModel):
        model.model_rebuild(force=True, _types_namespace=names)
    return SimpleNamespace(PaneConfig=PaneConfig, ArenaConfig=ArenaConfig,
                           SettingsModel=SettingsModel)


def __getattr__(name: str) -> Any:
    # The tables' pydantic models, made when first named (`_models`).
    if name in ("PaneConfig", "ArenaConfig"):
        return getattr(_models(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

ENV_PREFIX = "ANOMAN_"

# Settings whose variable holds JSON (a list, a table); `models` may instead be
# comma separated (`Settings._models_from_text`).
_JSON_VALUED = frozenset({"models", "keymap", "targets", "arena", "panes"})


class EnvironmentJSONError(ValueError):
    """An `ANOMAN_*` variable of a list or table setting that is not valid JSON."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _environment_values() -> dict[str, Any]:
    """The settings given by `ANOMAN_*` variables (names in any case), JSON decoded for
    list and table settings. Read with the standard library: the settings are needed
    before the first paint, and a settings framework costs more to import than they
    take to read."""
    variables = {name.lower(): value for name, value in os.environ.items()}
    values: dict[str, Any] = {}
    for key in Settings.model_fields:
        raw = variables.get(f"{ENV_PREFIX}{key}".lower())
        if raw is None:
            continue
        value: Any = raw
        if key in _JSON_VALUED and not (key == "models"
                                         and not value.lstrip().startswith("[")):
            try:
                value = json.loads(value)
            except ValueError:
                raise EnvironmentJSONError(key) from None
            if key == "arena" and isinstance(value, dict):
                # A table's own keys match in any case, as the variable's name does.
                fields = {f.name.lower(): f.name for f in dataclasses.fields(ArenaTable)}
                value = {fields.get(str(k).lower(), k): v for k, v in value.items()}
        values[key] = value
    return values


def _file_values() -> dict[str, Any]:
    """The config file's settings ({} without a file)."""
    path = config_file()
    if not path.is_file():
        return {}
    with path.open("rb") as file:
        return tomllib.load(file)


def _deep_merge(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    """`low` updated with `high`; a table given by both is merged key by key."""
    merged = dict(low)
    for key, value in high.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _merged_sources(given: dict[str, Any]) -> dict[str, Any]:
    """The values `Settings` validates: `given` over the environment over the file."""
    return _deep_merge(_deep_merge(_file_values(), _environment_values()), given)


class ConfigError(Exception):
    """A setting that cannot be used; `str()` is one line naming its source and the problem."""


# The flag that sets each setting, for error messages.
FLAG_NAMES = {
    "base_url": "--base-url",
    "api_key": "--api-key",
    "models": "--model",
    "endpoint": "--endpoint",
    "theme": "--theme",
    "system_prompt": "--system",
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "idle_timeout": "--idle-timeout",
    "history": "--no-history",
    "history_url": "--history-url",
    "record": "--no-record",
    "target": "--target",
}


def load_settings(**overrides: Any) -> Settings:
    """Settings from every source; `overrides` (flags) win, `None` meaning "not given".

    Raises `ConfigError` for an unreadable config file or any value that does not
    validate, whichever source it came from.
    """
    problem = check_config_file()
    if problem:
        raise ConfigError(problem)
    flags = {k: v for k, v in overrides.items() if v is not None}
    try:
        settings = Settings(**flags)
    except EnvironmentJSONError as exc:
        raise ConfigError(f"environment variable ANOMAN_{exc.key.upper()}: not valid JSON"
                          ) from None
    except ValueError as exc:
        if not _is_validation_error(exc):
            raise
        raise ConfigError(_describe(cast("ValidationError", exc), flags)) from None
    known = settings.all_targets()
    if settings.default_target not in known:
        close = difflib.get_close_matches(settings.default_target, list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source_of('target', flags)}: target: no target named "
                          f"{settings.default_target!r}{hint}; known: {', '.join(known)}")
    problem = _text_problem(settings, flags) or _model_problem(settings, flags)
    if problem:
        raise ConfigError(problem)
    return settings


def _is_validation_error(exc: ValueError) -> bool:
    # pydantic is imported only if the model validated (`_validated_values`).
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(exc, pydantic.ValidationError)


def not_utf8(text: str) -> bool:
    """`text` holds bytes that were not UTF-8 (decoded as lone surrogates, as Python
    reads a command line or the environment): it cannot be sent, saved or printed."""
    return any("\ud800" <= ch <= "\udfff" for ch in text)


NOT_UTF8 = "holds bytes that are not UTF-8 text"


def _text_problem(settings: Settings, flags: dict[str, Any]) -> str | None:
    """A text setting (from a flag or a variable) that is not UTF-8, named, never shown."""
    texts: dict[str, list[str]] = {
        "system_prompt": [settings.system_prompt], "models": list(settings.models),
        "base_url": [settings.base_url or ""], "target": [settings.target or ""],
        "api_key": [settings.api_key.get_secret_value() if settings.api_key else ""]}
    for key, values in texts.items():
        if any(not_utf8(value) for value in values):
            return f"{source_of(key, flags)}: {NOT_UTF8}"
    return None


def _model_problem(settings: Settings, flags: dict[str, Any]) -> str | None:
    """A `TARGET:MODEL` whose target does not exist (`unknown_target`), named with where
    it was written: refused before anything is started or sent."""
    known = settings.all_targets()
    named: list[tuple[str, str, str]] = [("models", "", spec) for spec in settings.models]
    named += [("panes", f"panes.{i}.model: ", p.model) for i, p in enumerate(settings.panes)]
    named += [("arena", "arena.pool: ", spec) for spec in settings.arena.pool]
    if settings.arena.judge:
        named.append(("arena", "arena.judge: ", settings.arena.judge))
    for key, where, spec in named:
        problem = unknown_target(spec, known, settings.default_target)
        if problem:
            return f"{source_of(key, flags)}: {where}{problem}"
    return None


def source_of(key: str, flags: dict[str, Any]) -> str:
    """Where the value that won for `key` came from, by the same precedence as `Settings`."""
    if key in flags:
        return f"flag {FLAG_NAMES.get(key, '--' + key.replace('_', '-'))}"
    variable = f"ANOMAN_{key}".upper()
    if any(name.upper() == variable for name in os.environ):
        return f"environment variable {variable}"
    return f"config file {config_file()}"


def _describe(exc: ValidationError, flags: dict[str, Any]) -> str:
    """One line: each source that gave a bad value, then each bad key and what is wrong."""
    by_source: dict[str, list[str]] = {}
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        key = loc[0] if loc else ""
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "literal_error":
            accepted = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected")))
            message = f"must be one of {', '.join(accepted)}"
        # Never echo a key, not even a malformed one, nor one written where a target's
        # key variable's name belongs (`targets.NAME.api_key_env`).
        # Nor a history URL: it may hold a password.
        if not {"api_key", "api_key_env", "history_url"} & set(loc):
            # (a URL's password never: `redact_urls`)
            shown = redact_urls(json.dumps(error.get("input"), default=str,
                                           ensure_ascii=False))
            message += f" (got {shown[:60]}{'…' if len(shown) > 60 else ''})"
        by_source.setdefault(source_of(key, flags), []).append(f"{'.'.join(loc)}: {message}")
    return "; ".join(f"{source}: {'; '.join(items)}" for source, items in by_source.items())


def history_url_problem(url: str) -> str | None:
    """What is wrong with a `history_url` (never quoting it: it may hold a password)."""
    if not url.lower().startswith(("postgresql://", "postgres://")):
        return "must be a postgresql:// URL (postgresql://user@host:port/database)"
    return None


def login_name() -> str:
    """The `user` setting's default: the login name ("" when the system has none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def user_problem(name: str) -> str | None:
    if len(name) > 64:
        return "at most 64 characters"
    if any(not ch.isprintable() for ch in name):
        return "printable characters only"
    return None


def configured_user() -> str:
    """Who this command acts as in the history: $ANOMAN_USER, else `user` in the config
    file, else the login name. Raises `ConfigError` for a name that cannot be used."""
    variable = next((name for name in os.environ if name.upper() == "ANOMAN_USER"), None)
    if variable is not None:
        source, value = f"environment variable {variable}", os.environ[variable]
    else:
        problem = check_config_file()
        if problem:
            raise ConfigError(problem)
        path = config_file()
        data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if "user" not in data:
            return login_name()
        source, value = f"config file {path}", data["user"]
    if not isinstance(value, str):
        raise ConfigError(f"{source}: user: must be a name")
    value = value.strip()
    if not value:
        return login_name()
    problem = user_problem(value)
    if problem:
        raise ConfigError(f"{source}: user: {problem}")
    return value


def configured_history_url(flag: str | None = None) -> str | None:
    """The shared history's URL: `flag` (--history-url), else $ANOMAN_HISTORY_URL, else
    `history_url` in the config file; None: the SQLite file. The precedence `Settings`
    applies, read without the rest of the settings (the history commands need no
    model or target). Raises `ConfigError` naming the source, never the URL."""
    found: tuple[str, Any] | None = None
    if flag is not None:
        found = ("flag --history-url", flag)
    else:
        variable = next((name for name in os.environ if name.upper() == "ANOMAN_HISTORY_URL"),
                        None)
        if variable is not None:
            found = (f"environment variable {variable}", os.environ[variable])
        else:
            problem = check_config_file()
            if problem:
                raise ConfigError(problem)
            path = config_file()
            if path.exists():
                data = tomllib.loads(path.read_text(encoding="utf-8"))
                if "history_url" in data:
                    found = (f"config file {path}", data["history_url"])
    if found is None:
        return None
    source, value = found
    if not isinstance(value, str):
        raise ConfigError(f"{source}: history_url: must be a postgresql:// URL")
    value = value.strip()
    if not value:
        return None  # set empty: the SQLite file, as an unset one
    problem = history_url_problem(value)
    if problem:
        raise ConfigError(f"{source}: history_url: {problem}")
    return value


def check_config_file(path: Path | None = None) -> str | None:
    """A sentence describing what is wrong with the config file, or None if it reads."""
    path = path or config_file()
    if not path.exists():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return f"config file {path}: cannot read it: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return f"config file {path}: not UTF-8 text"
    except tomllib.TOMLDecodeError as exc:
        return f"config file {path}: not valid TOML: {exc}"
    unknown = [key for key in data if key not in Settings.model_fields]
    if unknown:
        # Refused, not ignored: a misspelt key would otherwise leave its setting unset
        # without a word.
        accepted = list(Settings.model_fields)
        close = difflib.get_close_matches(unknown[0], accepted, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return (f"config file {path}: unknown key {unknown[0]!r}{hint}; "
                f"accepted keys: {', '.join(accepted)}")
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
