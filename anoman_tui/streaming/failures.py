"""Turning what went wrong into a `StreamFailure` with a sentence a person can act on."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from email.utils import parsedate_to_datetime
from typing import Any

from pydantic import ValidationError

from anoman_tui.safe_text import terminal_safe
from anoman_tui.streaming.events import StreamFailure
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
    """A pre-stream HTTP error (SPEC §3), described from its status and JSON body."""
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
    failure = StreamFailure(
        kind="http_error",
        message="",
        status=status,
        type=detail.type if detail else None,
        code=detail.code if detail else None,
        retry_after_s=retry_after,
        guardrails=guardrails,
    )
    return replace(failure, message=_describe_http(failure, gateway_says))


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


def _describe_http(failure: StreamFailure, gateway_says: str) -> str:
    status = failure.status or 0
    suffix = f" ({gateway_says})" if gateway_says else ""
    if status == 401:
        return f"HTTP 401 unauthorized: check your API key{suffix}"
    if status == 403:
        blocked = failure.blocking_guardrail
        if blocked is not None:
            name, verdict = blocked
            score = f", score {verdict.score:.2f}" if verdict.score is not None else ""
            return f"HTTP 403 blocked by the {name} guardrail{score}{suffix}"
        return f"HTTP 403 forbidden{suffix}"
    if status == 404:
        return f"HTTP 404 not found: check the model name{suffix}"
    if status == 429:
        wait = (
            f"retry in {failure.retry_after_s:.0f} s"
            if failure.retry_after_s is not None
            else "retry later"
        )
        return f"HTTP 429 rate limited: {wait}{suffix}"
    if status == 413:
        return f"HTTP 413 request too large{suffix}"
    if 400 <= status < 500:
        return f"HTTP {status} bad request{suffix}"
    if status >= 500:
        return f"HTTP {status} gateway or upstream error{suffix}"
    return f"HTTP {status} unexpected status{suffix}"


def stream_error_failure(detail: StreamErrorDetail) -> StreamFailure:
    """The in-stream error frame (SPEC §3): the response failed after it opened."""
    info = detail.anoman
    tokens = info.completion_tokens if info else None
    after = f" after {tokens} tokens" if tokens is not None else ""
    says = clean_excerpt(detail.message) if detail.message else ""
    return StreamFailure(
        kind="stream_error",
        message=f"stream interrupted{after}" + (f" ({says})" if says else ""),
        type=detail.type,
        code=detail.code,
        failure_class=info.failure_class if info else None,
        completion_tokens=tokens,
    )


def redact(failure: StreamFailure, secret: str) -> StreamFailure:
    """Mask a key a server might have echoed back in its error text."""
    if not secret or secret not in failure.message:
        return failure
    return replace(failure, message=failure.message.replace(secret, "…" + secret[-4:]))


def describe_payload(payload: Any) -> str:
    return clean_excerpt(payload if isinstance(payload, str) else repr(payload), 60)
