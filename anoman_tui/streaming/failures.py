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
import json
import re
import time
from dataclasses import replace
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import ValidationError

from anoman_tui.safe_text import terminal_safe
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


def http_failure(status: int, headers: dict[str, str], body: bytes) -> StreamFailure:
    """A pre-stream HTTP error (docs/wire-contract.md §3), from its status and JSON body."""
    retry_after = parse_retry_after(headers.get("retry-after"))
    error = _error_body(body)
    detail = error.error if error else None
    guardrails = None
    if error is not None and error.guardrails is not None and error.guardrails.guardrails:
        guardrails = dict(error.guardrails.guardrails)
    gateway_says = clean_excerpt(detail.message) if detail and detail.message else ""
    if error is None:
        excerpt = clean_excerpt(body.decode("utf-8", "replace"), 80)
        gateway_says = f"non-JSON body: {excerpt}" if excerpt else "empty body"
    return StreamFailure(
        kind="http_error",
        detail=gateway_says,
        status=status,
        type=detail.type if detail else None,
        code=detail.code if detail else None,
        retry_after_s=retry_after,
        guardrails=guardrails,
    )


def _error_body(body: bytes) -> ErrorBody | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    try:
        return ErrorBody.model_validate(payload)
    except ValidationError:
        return None


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
