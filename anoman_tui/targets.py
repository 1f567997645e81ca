"""Targets: the servers a pane can stream from, each with its own URL, key and paths.

A target is a name plus a kind (`anoman`, `openai-compatible`, `anthropic`), a base
URL, the paths it serves (defaults per kind, each overridable), where its key comes
from (an environment variable; an inline key is accepted and warned about), extra
headers, and whether it is asked for usage in an OpenAI stream
(`stream_options.include_usage`). Built in: `local` (the embedded gateway, the
default), `anoman` (the hosted gateway), `openai` (at `OPENAI_BASE_URL` when that is
set), `anthropic`, `openrouter` and `ollama` (on loopback); a config file adds its own
under `[targets.NAME]`, or replaces a built-in one (`[targets.openai]`).

A model is named `TARGET:MODEL`, or plain `MODEL` for the default target. Model ids
may hold colons themselves (`ollama:llama3.2:1b`): only a prefix that names a target
is one.

A model on its target, resolved (`ModelSlot`), and the one way a request to it is made
(`stream_request`: every caller that sends a prompt to a target builds it here).

May import: the standard library, `anoman_tui.streaming` (for the endpoint formats, URL
normalising, a model's listing and the request) and `anoman_tui.target_config` (a
config's `[targets.NAME]` table, pydantic: imported on first use, as the first paint
needs the built-in targets but no validation library).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from anoman_tui.streaming.endpoints import EndpointFormat, normalize_base_url
from anoman_tui.streaming.safe_text import Secret, SecretValue, redact_url

if TYPE_CHECKING:
    from anoman_tui.streaming import ChatTurn, ModelInfo, StreamClient, StreamRequest
    from anoman_tui.target_config import TargetConfig as TargetConfig
    from anoman_tui.target_config import TargetKind


def __getattr__(name: str) -> Any:
    # `TargetConfig` (pydantic) is imported when first named, not with the built-in
    # targets that the first paint needs.
    if name == "TargetConfig":
        from anoman_tui.target_config import TargetConfig

        return TargetConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

LOCAL = "local"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

# The paths each kind serves by default; `None`: it does not serve that endpoint format.
_DEFAULT_PATHS: dict[TargetKind, dict[str, str | None]] = {
    "anoman": {"chat_path": "/v1/chat/completions", "messages_path": "/anthropic/v1/messages",
               "playground_path": "/anoman/v1/playground/run", "models_path": "/v1/models",
               "usage_path": "/anoman/v1/usage"},
    "openai-compatible": {"chat_path": "/v1/chat/completions", "messages_path": None,
                          "playground_path": None, "models_path": "/v1/models",
                          "usage_path": None},
    "anthropic": {"chat_path": None, "messages_path": "/v1/messages",
                  "playground_path": None, "models_path": "/v1/models", "usage_path": None},
}


@dataclass(frozen=True, kw_only=True)
class Target:
    """A server panes stream from. `local` has no URL until the embedded gateway runs.

    A plain dataclass (as every field is built by `_target` from checked values): the
    built-in ones exist before the first paint, which imports no validation library."""

    name: str
    kind: TargetKind
    base_url: str | None
    api_key_env: str | None = None
    api_key: SecretValue | None = field(default=None, repr=False)
    headers: tuple[tuple[str, str], ...] = ()
    chat_path: str | None = None
    messages_path: str | None = None
    playground_path: str | None = None
    models_path: str | None = "/v1/models"
    usage_path: str | None = None
    include_usage: bool = True
    max_concurrency: int | None = None
    """The most streams a suite run keeps in flight on it (None: the run's own limit)."""
    key_hint: str | None = None
    """Where a user sets its key, for a 401's advice (default: `api_key_env`)."""
    base_url_env: str | None = None
    """An environment variable whose value, when set, replaces `base_url` once the target
    is connected (the built-in `openai`'s `OPENAI_BASE_URL`, as the OpenAI SDK and
    promptfoo read it); a `[targets.NAME]` table has none: its `base_url` is what it says."""

    @property
    def key_source(self) -> str | None:
        return self.key_hint or self.api_key_env

    @property
    def is_local(self) -> bool:
        """The embedded gateway, started by the app itself."""
        return self.base_url is None

    def path_for(self, endpoint: EndpointFormat) -> str | None:
        """The path this target serves `endpoint` at, None if it does not serve it."""
        return {"openai": self.chat_path, "anthropic": self.messages_path,
                "playground": self.playground_path}[endpoint]

    @property
    def endpoints(self) -> list[EndpointFormat]:
        """The endpoint formats it serves, in the order they are offered."""
        formats: list[EndpointFormat] = ["openai", "anthropic", "playground"]
        return [f for f in formats if self.path_for(f)]

    def default_endpoint(self, wanted: EndpointFormat) -> EndpointFormat:
        """`wanted` if this target serves it, else the first format it does serve."""
        served = self.endpoints
        return wanted if wanted in served or not served else served[0]

    def resolved_base_url(self, environ: Mapping[str, str] | None = None) -> str | None:
        """Where its requests go: `base_url_env`'s value when set (normalised: the SDKs'
        trailing `/v1` dropped, as our paths add it), else `base_url`."""
        environ = os.environ if environ is None else environ
        if self.base_url_env and environ.get(self.base_url_env, "").strip():
            return normalize_base_url(environ[self.base_url_env])
        return self.base_url

    def key(self, environ: Mapping[str, str] | None = None) -> str:
        """Its key: the environment variable's value, else the inline key, else ""."""
        environ = os.environ if environ is None else environ
        if self.api_key_env and environ.get(self.api_key_env):
            return environ[self.api_key_env]
        return self.api_key.get_secret_value() if self.api_key else ""

    def missing_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The environment variable its key comes from, when that is unset and no key is
        written for it either (None: it has a key, or reads none from a variable)."""
        if self.api_key_env is None or self.key(environ):
            return None
        return self.api_key_env

    @property
    def price_provider(self) -> str | None:
        """The provider whose list prices estimate a cost it does not report."""
        if self.name in ("openai", "anthropic", "openrouter"):
            return self.name
        return "anthropic" if self.kind == "anthropic" else None

    def describe(self) -> str:
        """`litellm (http://127.0.0.1:4000)`: what a header or a list says about it."""
        return f"{self.name} ({redact_url(self.base_url)})" if self.base_url \
            else f"{self.name} (embedded)"


def _target(name: str, kind: TargetKind, base_url: str | None, **fields: Any) -> Target:
    paths: dict[str, Any] = {key: value for key, value in _DEFAULT_PATHS[kind].items()}
    paths.update({key: value for key, value in fields.items() if key.endswith("_path")})
    rest = {key: value for key, value in fields.items() if not key.endswith("_path")}
    return Target(name=name, kind=kind,
                  base_url=normalize_base_url(base_url) if base_url else None,
                  **paths, **rest)


BUILT_IN: dict[str, Target] = {
    LOCAL: _target(LOCAL, "anoman", None),
    "anoman": _target("anoman", "anoman", "https://api.anoman.io",
                      api_key_env="ANOMAN_API_KEY"),
    # OPENAI_BASE_URL is read when the target is connected, not here at import.
    "openai": _target("openai", "openai-compatible", "https://api.openai.com",
                      api_key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL"),
    "anthropic": _target("anthropic", "anthropic", "https://api.anthropic.com",
                         api_key_env="ANTHROPIC_API_KEY"),
    # Its OpenAI-compatible API lives under /api: /api/v1/chat/completions.
    "openrouter": _target("openrouter", "openai-compatible", "https://openrouter.ai/api",
                          api_key_env="OPENROUTER_API_KEY"),
    "ollama": _target("ollama", "openai-compatible", "http://127.0.0.1:11434"),
}


def from_config(name: str, config: TargetConfig) -> Target:
    """A target from its `[targets.NAME]` table: the kind's paths, then the table's."""
    fields: dict[str, Any] = {
        "api_key_env": config.api_key_env, "api_key": config.api_key,
        "headers": tuple(config.headers.items()), "include_usage": config.include_usage,
        "max_concurrency": config.max_concurrency,
    }
    for path in ("chat_path", "messages_path", "playground_path", "models_path",
                 "usage_path"):
        value = getattr(config, path)
        if value is not None:
            fields[path] = value
    return _target(name, config.kind, config.base_url, **fields)


def gateway_target(base_url: str, api_key: SecretValue | None) -> Target:
    """The default target when `base_url` is set: an Anoman gateway there, with `api_key`."""
    # The key is the `api_key` setting, already read from the flag, ANOMAN_API_KEY or the
    # file in that order: no variable of its own to prefer over it.
    return _target("gateway", "anoman", base_url, api_key=api_key,
                   key_hint="ANOMAN_API_KEY")


def split_model(spec: str, targets: Mapping[str, Target]) -> tuple[str | None, str]:
    """(target name or None for the default, model) of `TARGET:MODEL` or `MODEL`."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in targets and rest:
        return prefix, rest
    return None, spec


def unknown_target(spec: str, targets: Mapping[str, Target], default: str) -> str | None:
    """Why `TARGET:MODEL` cannot be sent: its prefix reads as a target's name but no
    target has it (`opnai:gpt-4o`), or None.

    A prefix that names no target is part of the model id (`llama3.2:1b` on ollama), so
    one is refused only where it cannot be: when the model would go to the local
    gateway (none of its models has a colon), or when the prefix is one typo away from
    a target's name. Otherwise the request would go, mistyped, to the default target
    and come back as another server's "model not found".
    """
    prefix, sep, rest = spec.partition(":")
    if not sep or not rest or prefix in targets or not NAME_PATTERN.match(prefix):
        return None
    local = default in targets and targets[default].is_local
    close = [name for name in targets if _one_typo(prefix.lower(), name.lower())]
    if not local and not close:
        return None
    hint = f'; did you mean "{close[0]}:{rest}"?' if close else ""
    return f'no target named "{prefix}" (targets: {", ".join(targets)}){hint}'


def _one_typo(typed: str, name: str) -> bool:
    """`typed` is `name` with one letter left out, added, changed, or two swapped (or
    only its case changed)."""
    if typed == name:
        return True
    if abs(len(typed) - len(name)) > 1:
        return False
    if len(typed) == len(name):
        diff = [i for i, (a, b) in enumerate(zip(typed, name, strict=True)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and typed[diff[0]] == name[diff[1]]
                                  and typed[diff[1]] == name[diff[0]])
    short, long = sorted((typed, name), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, kw_only=True)
class Connection:
    """A target, resolved to where its requests go now (the local gateway's URL and key
    are known only once it runs)."""

    target: Target
    base_url: str
    api_key: SecretValue = field(default=Secret(""), repr=False)

    @property
    def name(self) -> str:
        return self.target.name

    def label(self) -> str:
        """`local gateway (127.0.0.1:8787)`, `litellm (http://127.0.0.1:4000)`."""
        shown = redact_url(self.base_url)  # never a password the URL carries
        host = shown.removeprefix("http://").removeprefix("https://")
        if self.target.is_local:
            return f"local gateway ({host})"
        if self.target.name == "gateway":  # the one set by base_url: its URL says it all
            return shown
        return f"{self.target.name} ({shown})"

    def list_models_args(self) -> tuple[str, str, tuple[tuple[str, str], ...], str]:
        """(base_url, bearer key, headers, path) for `StreamClient.list_models`: an
        Anthropic API takes its key as `x-api-key`, not a bearer token."""
        key = self.api_key.get_secret_value()
        headers = self.target.headers
        if self.target.kind == "anthropic":
            headers = (*headers, ("anthropic-version", ANTHROPIC_VERSION))
            if key:
                headers = (*headers, ("x-api-key", key))
            key = ""
        return self.base_url, key, headers, self.target.models_path or "/v1/models"


class LocalGateway(Protocol):
    """The local gateway a caller started for a run or a judge (the embedded one: started
    by the command or the app, as the layers below never import the gateway)."""

    @property
    def base_url(self) -> str: ...

    @property
    def api_key(self) -> str: ...

    def stop(self) -> None: ...


def connect(target: Target, *, local: tuple[str, str] | None = None,
            environ: Mapping[str, str] | None = None) -> Connection:
    """`target` resolved: `local` is the running local gateway's (base URL, key)."""
    if target.is_local:
        if local is None:
            raise ValueError("the local gateway is not running")
        return Connection(target=target, base_url=local[0], api_key=Secret(local[1]))
    base_url = target.resolved_base_url(environ)
    assert base_url is not None
    return Connection(target=target, base_url=base_url,
                      api_key=Secret(target.key(environ)))


def stream_request(connection: Connection, endpoint: EndpointFormat, model: str,
                   messages: Sequence[ChatTurn], *, system: str | None = None,
                   temperature: float | None = None, max_tokens: int | None = None,
                   headers: Sequence[tuple[str, str]] = (), simulate: str = "",
                   idle_timeout: float = 60.0, record: bool = False,
                   compare_id: str | None = None, pane: int | None = None,
                   path: str | None = None) -> StreamRequest:
    """The request sending `messages` to `model` on `connection`'s target: its URL, key,
    path for `endpoint` (`path` replaces it: a recording's), its usage setting and the
    variable its key comes from; its own headers first, then `headers`, then `simulate`
    as the local gateway's `X-Anoman-Simulate` ("" sends none)."""
    from anoman_tui.streaming.request import StreamRequest

    target = connection.target
    extra = (*target.headers, *headers)
    if simulate:
        extra = (*extra, ("X-Anoman-Simulate", simulate))
    return StreamRequest(
        base_url=connection.base_url, api_key=connection.api_key.get_secret_value(),
        endpoint=endpoint,
        path=path if path is not None else target.path_for(endpoint),
        include_usage=target.include_usage, key_env=target.key_source, model=model,
        messages=tuple(messages), system=system, temperature=temperature,
        max_tokens=max_tokens, extra_headers=extra, idle_timeout=idle_timeout,
        record=record, compare_id=compare_id, pane=pane)


@dataclass(frozen=True)
class ModelSlot:
    """A model on its target, resolved: where its requests go and how (a suite's models,
    its judge, the arena's judge)."""

    spec: str
    """As written (`litellm:gpt-4o-mini`): a suite result's `model`."""
    model: str
    """The id sent."""
    pane: int
    """1-based: its pane in each case's comparison (the suite's order); 0 for a judge."""
    connection: Connection = field(repr=False)
    endpoint: EndpointFormat = "openai"
    info: ModelInfo | None = None
    """What its target lists about it (prices, whether it is simulated)."""
    scenario: str | None = None
    """The local gateway's `X-Anoman-Simulate` value for it (a suite's `[simulate]`)."""

    @property
    def target_name(self) -> str:
        return self.connection.name

    @property
    def simulated(self) -> bool:
        return self.info is not None and self.info.simulated


async def with_model_info(slots: Sequence[ModelSlot], client: StreamClient | None = None
                          ) -> list[ModelSlot]:
    """The slots with what their targets list about their models (prices, simulated),
    each target asked once through `client` (None: a client of its own); a target that
    lists nothing still streams (its costs are then unknown)."""
    from anoman_tui.streaming import GatewayRequestError
    from anoman_tui.streaming.client import StreamClient

    if client is None:
        async with StreamClient() as own:
            return await with_model_info(slots, own)
    by_target: dict[str, dict[str, ModelInfo]] = {}
    for connection in {s.connection.name: s.connection for s in slots}.values():
        base_url, key, headers, path = connection.list_models_args()
        try:
            models = await client.list_models(base_url, key, headers, path)
        except GatewayRequestError:
            continue
        by_target[connection.name] = {m.id: m for m in models}
    return [replace(s, info=by_target.get(s.connection.name, {}).get(s.model)) for s in slots]
