"""One vocabulary for failures: the kinds, what a failure carries, and its words.

The pane's badge, the `compare` summary and JSON (`failure.message`) and the log line
all come from `describe_failure`, so a failure reads the same wherever it is seen.
The UI may append a key hint (e.g. which key retries); it never rewords. The kinds
and what causes each are in docs/wire-contract.md §8; `failures.py` maps what went
wrong onto them.

May import: the standard library and `anoman_tui.wire`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    # Imported where a stored failure is read (`from_json`): the wire models import
    # pydantic, which a reader of suite runs does not otherwise need.
    from anoman_tui.wire import GuardrailVerdict

FailureKind = Literal[
    "http_error",
    "stream_error",
    "truncated",
    "stalled",
    "protocol_error",
    "transport_error",
    "cancelled",
]
FAILURE_KINDS: tuple[FailureKind, ...] = (
    "http_error", "stream_error", "truncated", "stalled", "protocol_error",
    "transport_error", "cancelled",
)
Severity = Literal["error", "warning", "muted"]
NOT_COMMITTED = "partial answer not committed"


@dataclass(frozen=True, slots=True)
class FailureDescription:
    """`symbol headline: advice`, e.g. `◷ 429 RATE LIMITED: retry in 7 s (slow down)`.

    The symbol and the upper-case headline say what happened without colour; the
    severity picks the colour.
    """

    symbol: str
    headline: str
    advice: str
    severity: Severity

    @property
    def text(self) -> str:
        return f"{self.headline}: {self.advice}" if self.advice else self.headline

    @property
    def line(self) -> str:
        return f"{self.symbol} {self.text}"


@dataclass(slots=True, frozen=True)
class StreamFailure:
    """Why a stream did not complete, with every detail the gateway gave.

    `detail` is what the server or the transport said, cleaned and key-free (the
    gateway's message, "connection refused", the protocol problem); `message` is the
    one sentence every view shows, made from all the fields by `describe_failure`.
    """

    kind: FailureKind
    detail: str = ""
    status: int | None = None
    type: str | None = None
    code: str | None = None
    failure_class: str | None = None
    completion_tokens: int | None = None
    retry_after_s: float | None = None
    guardrails: dict[str, GuardrailVerdict] | None = None
    # The request line an HTTP error answered, e.g. "POST /v1/messages": a 404 names it.
    route: str | None = None
    key_env: str | None = None
    """The environment variable the request's key came from (a 401 names it)."""

    @property
    def message(self) -> str:
        """The failure in one line, the same words on the badge, in `compare` and the log."""
        return describe_failure(self).text

    @property
    def not_found(self) -> Literal["model", "path"] | None:
        """What a 404 says is missing: the model when the server says so, else the path.

        None for any other failure, and for a 404 that neither names a model nor
        carries the request line (nothing is known about what was missing).
        """
        if self.kind != "http_error" or self.status != 404:
            return None
        if self.code == "model_not_found" or _MODEL_WORD.search(self.detail):
            return "model"
        return "path" if self.route else None

    @property
    def blocking_guardrail(self) -> tuple[str, GuardrailVerdict] | None:
        """The check that blocked a 403 (first with status `block`), if the body said."""
        for name, verdict in (self.guardrails or {}).items():
            if verdict.status == "block":
                return name, verdict
        return None

    @classmethod
    def from_json(cls, data: Any) -> StreamFailure | None:
        """A failure back from its `to_json()` (plus `detail`, as the history keeps it).

        Read defensively: the data comes from a file; a field of the wrong shape reads
        as absent, and something that is not a failure at all gives None.
        """
        if not isinstance(data, dict) or data.get("kind") not in FAILURE_KINDS:
            return None

        def number(key: str, kind: type | tuple[type, ...]) -> Any:
            value = data.get(key)
            return value if isinstance(value, kind) and not isinstance(value, bool) else None

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        from anoman_tui.wire import GuardrailVerdict

        guardrails: dict[str, GuardrailVerdict] = {}
        raw = data.get("guardrails")
        for name, verdict in (raw.items() if isinstance(raw, dict) else ()):
            try:
                guardrails[str(name)] = GuardrailVerdict.model_validate(verdict)
            except ValueError:
                continue
        return cls(
            kind=data["kind"],
            detail=text("detail") or "",
            status=number("status", int),
            type=text("type"),
            code=text("code"),
            failure_class=text("failure_class"),
            completion_tokens=number("completion_tokens", int),
            retry_after_s=number("retry_after_s", (int, float)),
            guardrails=guardrails or None,
            route=text("route"),
            key_env=text("key_env"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": self.status,
            "type": self.type,
            "code": self.code,
            "message": self.message,
            "failure_class": self.failure_class,
            "completion_tokens": self.completion_tokens,
            "retry_after_s": self.retry_after_s,
            "guardrails": (
                {k: v.model_dump(mode="json") for k, v in self.guardrails.items()}
                if self.guardrails
                else None
            ),
            "route": self.route,
            "key_env": self.key_env,
        }


_MODEL_WORD = re.compile(r"\bmodels?\b", re.I)
# A 401 whose text is about the server's own set-up (a proxy's virtual or upstream key),
# where "check your API key" would send the user after a key that is right.
_SERVER_CREDENTIALS = re.compile(
    r"\b(proxy|virtual key|master key|litellm|upstream|configured|expected)\b", re.I)
# What FastAPI, Starlette and web servers say for a path they do not serve.
_GENERIC_NOT_FOUND = re.compile(r"^\W*(404\W*)?(not found|page not found|404)\W*$", re.I)


def _with(advice: str, said: str) -> str:
    if not said:
        return advice
    return f"{advice} ({said})" if advice else said


def _after(tokens: int | None, unit: str = "tokens") -> str:
    return f" after {tokens} {unit}" if tokens is not None else ""


def describe_failure(failure: StreamFailure) -> FailureDescription:
    said = failure.detail
    kind = failure.kind
    if kind == "http_error":
        status = failure.status or 0
        blocked = failure.blocking_guardrail
        if status == 403 and blocked is not None:
            name, verdict = blocked
            score = f" (score {verdict.score:.2f})" if verdict.score is not None else ""
            # A demo block (X-Anoman-Simulate) says so: it did not judge the prompt.
            fake = " (simulated)" if (verdict.model_extra or {}).get("simulated") else ""
            # The gateway's own words add nothing to the check's name and score.
            return FailureDescription(
                "⊘", f"BLOCKED{fake} by the {name} guardrail{score} before streaming", "", "error"
            )
        if status == 401:
            if said and _SERVER_CREDENTIALS.search(said):
                # The server explains what it wants; its words are the advice.
                return FailureDescription("✗", "401 UNAUTHORIZED", said, "error")
            return FailureDescription(
                "✗", "401 UNAUTHORIZED",
                _with(f"check your API key ({failure.key_env})" if failure.key_env
                      else "check your API key", said), "error",
            )
        if status == 403:
            return FailureDescription("✗", "403 FORBIDDEN", said, "error")
        if status == 404:
            missing = failure.not_found
            if missing == "path":
                extra = "" if _GENERIC_NOT_FOUND.match(said) else said
                return FailureDescription(
                    "✗", "404 NOT FOUND",
                    _with(f"{failure.route} is not served by this server", extra), "error",
                )
            if missing is None and said:
                return FailureDescription("✗", "404 NOT FOUND", said, "error")
            return FailureDescription(
                "✗", "404 MODEL NOT FOUND", _with("check the model name", said), "error"
            )
        if status == 429:
            if failure.retry_after_s is not None:
                wait = f"retry in {failure.retry_after_s:.0f} s"
                return FailureDescription("◷", "429 RATE LIMITED", _with(wait, said), "warning")
            # No Retry-After: the server's own words say more than a guess at a wait.
            return FailureDescription("◷", "429 RATE LIMITED", said or "retry later", "warning")
        if status == 413:
            return FailureDescription("✗", "413 REQUEST TOO LARGE", said, "error")
        if status >= 500:
            return FailureDescription("✗", f"{status} GATEWAY ERROR", said, "error")
        if 400 <= status < 500:
            return FailureDescription("✗", f"{status} BAD REQUEST", said, "error")
        return FailureDescription("✗", f"{status} UNEXPECTED STATUS", said, "error")
    if kind == "stream_error":
        # An Anoman gateway's in-stream message is generic by contract (docs/wire-contract.md
        # §3, it carries a failure class); another server's message is all there is to know.
        advice = NOT_COMMITTED
        if said and failure.failure_class is None:
            advice = f"{said}, {NOT_COMMITTED}"
        return FailureDescription(
            "✗", f"STREAM INTERRUPTED{_after(failure.completion_tokens)}", advice, "error"
        )
    if kind == "truncated":
        advice = f"{said}, {NOT_COMMITTED}" if said else NOT_COMMITTED
        return FailureDescription("✗", "TRUNCATED", advice, "error")
    if kind == "stalled":
        return FailureDescription("✗", "STALLED", said, "error")
    if kind == "protocol_error":
        return FailureDescription("✗", "PROTOCOL ERROR", said, "error")
    if kind == "transport_error":
        return FailureDescription("✗", "GATEWAY UNREACHABLE", said, "error")
    return FailureDescription(
        "■", f"CANCELLED{_after(failure.completion_tokens)}", NOT_COMMITTED, "muted"
    )
