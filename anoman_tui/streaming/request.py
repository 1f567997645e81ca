"""What a caller asks for: one model, one conversation, one endpoint format.

Also builds the HTTP request for each format (path, headers, JSON body), so
the rest of the stream core never branches on the format to talk HTTP.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from anoman_tui.streaming.endpoints import ENDPOINT_FORMATS as ENDPOINT_FORMATS
from anoman_tui.streaming.endpoints import ENDPOINT_PATHS as ENDPOINT_PATHS
from anoman_tui.streaming.endpoints import EndpointFormat as EndpointFormat
from anoman_tui.streaming.endpoints import normalize_base_url as normalize_base_url
from anoman_tui.streaming.safe_text import Secret
from anoman_tui.streaming.safe_text import mask_key as mask_key

# The Messages API requires max_tokens; this is the default when the caller sets none.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
ANTHROPIC_VERSION = "2023-06-01"


class ChatTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    content: str


class StreamRequest(BaseModel):
    """One streaming call. The key is a `SecretStr`, so no repr or log line shows it."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    api_key: SecretStr = SecretStr("")
    endpoint: EndpointFormat = "openai"
    model: str
    messages: tuple[ChatTurn, ...]
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    extra_headers: tuple[tuple[str, str], ...] = ()
    idle_timeout: float = Field(default=60.0, gt=0)
    connect_timeout: float = Field(default=10.0, gt=0)
    compare_id: str | None = None
    pane: int | None = None
    # Where the format is served when not at its default path (e.g. "/v1/messages" on an
    # Anthropic-compatible server that is not the Anoman gateway).
    path: str | None = None
    # Ask an OpenAI-format server for the final usage chunk; off for servers that refuse
    # `stream_options`.
    include_usage: bool = True
    # The environment variable its key comes from: what a 401 tells the user to check.
    key_env: str | None = "ANOMAN_API_KEY"
    # Keep the response byte-exact with its arrival times (`StreamResult.recording`).
    record: bool = False

    @field_validator("api_key", mode="before")
    @classmethod
    def _any_secret(cls, value: Any) -> Any:
        # A `Secret` (the settings' and targets', which hold no pydantic type) too.
        if isinstance(value, Secret):
            return value.get_secret_value()
        return value

    @field_validator("base_url")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_base_url(value)

    @field_validator("path")
    @classmethod
    def _rooted(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        return value if value.startswith("/") else "/" + value

    @property
    def request_path(self) -> str:
        """The path the request goes to: `path` when set, else the format's default."""
        return self.path or ENDPOINT_PATHS[self.endpoint]

    @property
    def url(self) -> str:
        return self.base_url + self.request_path

    def headers(self) -> dict[str, str]:
        key = self.api_key.get_secret_value()
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self.endpoint == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if key:
                headers["x-api-key"] = key
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        for name, value in self.extra_headers:
            headers[name] = value
        return headers

    def body(self) -> dict[str, Any]:
        turns = [{"role": t.role, "content": t.content} for t in self.messages]
        body: dict[str, Any] = {"model": self.model, "stream": True}
        if self.endpoint == "anthropic":
            if self.system:
                body["system"] = self.system
            body["messages"] = turns
            body["max_tokens"] = self.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS
        else:
            system = [{"role": "system", "content": self.system}] if self.system else []
            body["messages"] = system + turns
            # Plain OpenAI only sends usage when asked; Anoman always does.
            if self.include_usage or self.endpoint == "playground":
                body["stream_options"] = {"include_usage": True}
            if self.max_tokens is not None:
                body["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.endpoint == "playground":
            if self.compare_id is not None:
                body["compare_id"] = self.compare_id
            if self.pane is not None:
                # "panel" is the wire's name for the pane (docs/wire-contract.md §1).
                body["panel"] = self.pane
        return body
