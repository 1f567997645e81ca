"""Turning what went wrong into a `StreamFailure`: the one mapping of the stream core.

Every way a stream can fail arrives here: an HTTP error status (`http_failure`), an
error frame in the body (`stream_error_failure`), the body ending early
(`truncated_failure`) or an exception while reading (`failure_from_exception`, the
one place an exception becomes a failure kind). The words shown for a failure are
made from its fields by `vocabulary.describe_failure`.
"""

from __future__ import annotations

import asyncio
import errno
import html
import json
import re
import time
from dataclasses import replace
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import ValidationError

from anoman_tui.streaming.safe_text import terminal_safe
from anoman_tui.streaming.vocabulary import StreamFailure
from anoman_tui.wire import ErrorBody, StreamErrorDetail

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_TAGS = re.compile(r"<[^>]{0,200}>")


class ProtocolViolation(Exception):
    """The server broke the wire contract (bad JSON, wrong shape, wrong content type)."""


def clean_excerpt(text: str, limit: int = 160) -> str:
    """A short, single-line, control-free excerpt of server text, safe to show.

    Whole escape sequences go first (an OSC's payload is not text to show), then
    bidi overrides and other controls.
    """
    text = terminal_safe(text)
    text = _TAGS.sub(" ", text)
    text = _CONTROL.sub(" ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds from now: delta-seconds or an HTTP date (RFC 9110)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds == seconds else None  # NaN guard


def http_failure(
    status: int, headers: dict[str, str], body: bytes, *, route: str | None = None,
    key_env: str | None = None,
) -> StreamFailure:
    """A pre-stream HTTP error (docs/wire-contract.md §3), from its status and body.

    Reads every error shape a server of the OpenAI or Anthropic kind sends (§8): the
    OpenAI and Anthropic envelopes, vLLM's top-level `message`, FastAPI's `detail` (a
    string or a list of field errors), plain text and HTML pages (their title or first
    heading). `route` is the request line tried, e.g. "POST /v1/messages", so that a 404
    can name the path when the server did not say a model was missing.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    retry_after = parse_retry_after(lowered.get("retry-after"))
    error = _error_body(body)
    detail = error.error if error else None
    guardrails = None
    if error is not None and error.guardrails is not None and error.guardrails.guardrails:
        guardrails = dict(error.guardrails.guardrails)
    said = clean_excerpt(detail.message) if detail and detail.message else ""
    if error is None:
        said = _text_body_message(body, lowered.get("content-type", ""))
    return StreamFailure(
        kind="http_error",
        detail=said,
        status=status,
        type=detail.type if detail else None,
        code=detail.code if detail else None,
        retry_after_s=retry_after,
        guardrails=guardrails,
        route=route,
        key_env=key_env,
    )


_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_HTML_HEADING = re.compile(r"<h1[^>]*>(.*?)</h1\s*>", re.I | re.S)
_HTML_INVISIBLE = re.compile(r"<(script|style|head)[^>]*>.*?</\1\s*>", re.I | re.S)


def _text_body_message(body: bytes, content_type: str) -> str:
    """What a non-JSON error body says: an HTML page's title or heading, else its text."""
    text = body.decode("utf-8", "replace")
    if not text.strip():
        return "empty body"
    if "html" in content_type.lower() or text.lstrip()[:1] == "<":
        for pattern in (_HTML_TITLE, _HTML_HEADING):
            found = pattern.search(text)
            if found and clean_excerpt(html.unescape(_TAGS.sub(" ", found.group(1)))):
                return clean_excerpt(html.unescape(_TAGS.sub(" ", found.group(1))), 120)
        text = _HTML_INVISIBLE.sub(" ", text)
        return clean_excerpt(html.unescape(_TAGS.sub(" ", text)), 120) or "empty HTML page"
    return clean_excerpt(text, 160)


def _error_body(body: bytes) -> ErrorBody | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    payload = _as_error_envelope(payload)
    try:
        return ErrorBody.model_validate(payload)
    except ValidationError:
        return None


def _as_error_envelope(payload: dict[str, Any]) -> dict[str, Any]:
    """Other servers' error shapes as the OpenAI envelope `{"error": {...}}`."""
    if "error" in payload and payload["error"] is not None:
        return payload
    if "detail" in payload:
        # FastAPI (LiteLLM, vLLM): a string, or a list of field errors.
        return {**payload, "error": {"message": _detail_text(payload["detail"])}}
    if isinstance(payload.get("message"), str):
        # vLLM and others: {"object": "error", "message", "type", "code"} at the top level.
        return {**payload, "error": {k: payload.get(k) for k in ("message", "type", "code")}}
    return payload


def _detail_text(detail: Any) -> str:
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        parts = []
        for item in detail[:3]:
            if isinstance(item, dict):
                where = item.get("loc")
                field = ".".join(str(x) for x in where if x != "body") if isinstance(
                    where, list) else ""
                message = str(item.get("msg") or item.get("message") or "")
                parts.append(f"{field}: {message}" if field and message else message or field)
            else:
                parts.append(str(item))
        return "; ".join(p for p in parts if p)
    if isinstance(detail, dict):
        return str(detail.get("message") or detail.get("msg") or detail.get("error") or "")
    return "" if detail is None else str(detail)


def stream_error_failure(detail: StreamErrorDetail) -> StreamFailure:
    """The in-stream error frame (docs/wire-contract.md §3): the response failed after it opened."""
    info = detail.anoman
    return StreamFailure(
        kind="stream_error",
        detail=clean_excerpt(detail.message) if detail.message else "",
        type=detail.type,
        code=detail.code,
        failure_class=info.failure_class if info else None,
        completion_tokens=info.completion_tokens if info else None,
    )


def truncated_failure(chunks: int, how: str = "connection closed") -> StreamFailure:
    """The body ended (or broke) before the terminator: the answer is not whole."""
    return StreamFailure(
        kind="truncated", detail=f"{how} after {chunks} chunks", completion_tokens=chunks
    )


def failure_from_exception(
    exc: BaseException,
    *,
    opened: bool,
    chunks: int,
    completion_tokens: int | None,
    idle_timeout: float,
    host: str,
) -> StreamFailure:
    """What an exception raised while a stream ran means, as a failure kind.

    `opened`: the response headers had arrived; `chunks`: text chunks received so far;
    `completion_tokens`: the best count of tokens produced (for a cancelled stream).
    """
    if isinstance(exc, asyncio.CancelledError):
        return StreamFailure(kind="cancelled", completion_tokens=completion_tokens)
    if isinstance(exc, ProtocolViolation):
        return StreamFailure(kind="protocol_error", detail=str(exc))
    if isinstance(exc, httpx.ReadTimeout):
        return StreamFailure(
            kind="stalled",
            detail=f"no bytes for {idle_timeout:g} s after {chunks} chunks",
            completion_tokens=chunks,
        )
    if isinstance(exc, httpx.TimeoutException):
        return StreamFailure(
            kind="transport_error", detail=f"cannot reach {host}: {type(exc).__name__}"
        )
    if isinstance(exc, httpx.HTTPError):
        if opened:
            return truncated_failure(chunks, f"connection lost ({transport_reason(exc)})")
        return StreamFailure(
            kind="transport_error", detail=f"cannot reach {host}: {transport_reason(exc)}"
        )
    # A bug in the client: the stream ends with a failure (the caller logs the traceback).
    return StreamFailure(
        kind="protocol_error", detail=f"unexpected client error: {type(exc).__name__}"
    )


def transport_reason(exc: httpx.HTTPError) -> str:
    """Why a connection failed, in a few words."""
    # anyio reports "All connection attempts failed"; the OSError underneath says why.
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno is not None:
            if cause.errno == errno.ECONNREFUSED:
                return "connection refused"
            if cause.errno == errno.ECONNRESET:
                return "connection reset"
        cause = cause.__cause__ or cause.__context__
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "refused" in lowered:
        return "connection refused"
    if "reset" in lowered:
        return "connection reset"
    if "name or service" in lowered or "nodename" in lowered or "getaddrinfo" in lowered:
        return "host name not found"
    if "certificate" in lowered or "ssl" in lowered:
        return "TLS error"
    if "peer closed" in lowered or "incomplete" in lowered:
        return "peer closed the connection"
    return clean_excerpt(text, 100)


def redact(failure: StreamFailure, secret: str) -> StreamFailure:
    """Mask a key a server might have echoed back in its error text."""
    if not secret or secret not in failure.detail:
        return failure
    return replace(failure, detail=failure.detail.replace(secret, "…" + secret[-4:]))


def describe_payload(payload: Any) -> str:
    return clean_excerpt(payload if isinstance(payload, str) else repr(payload), 60)
