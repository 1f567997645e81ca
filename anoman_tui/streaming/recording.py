"""One stream, byte-exact as the stream core read it, with arrival times; and its replay.

`StreamRecording` is what `ModelStream` captures when `StreamRequest.record` is set:
the response status, the few headers the core reads, every read of the body with
the seconds since the request went out, and how the body ended. `to_json()` makes
a versioned, JSON-ready document (body bytes as base64); `from_json()` reads one
back and refuses anything malformed or hostile with `RecordingError`, whose message
is one sentence, because a recording may come from someone else.

Their replay, `ReplayTransport`, is in `anoman_tui.streaming.replay`: this module
imports no HTTP stack, so reading a history stays cheap.

The request's key is never recorded: request headers are not kept, only an allowlist
of response headers is, and a key (or the URL's password) a server echoed back is masked
in the bytes.

May import: the standard library and the rest of `anoman_tui.streaming` (its `safe_text`
included).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from anoman_tui.streaming.endpoints import ENDPOINT_FORMATS, EndpointFormat
from anoman_tui.streaming.safe_text import url_password

if TYPE_CHECKING:
    from anoman_tui.streaming.request import StreamRequest

RECORDING_FORMAT = "anoman-stream-recording"
RECORDING_VERSION = 1

RecordingEnding = Literal["completed", "closed", "reset", "stalled", "cancelled"]
"""How the body ended, as the core saw it.

completed: the body reached its end, or the core stopped reading on its own (the
    terminator, an error frame, a malformed frame, an HTTP error body).
closed: the server closed the connection before the body was whole.
reset: the connection was reset (before the response: it could not be made).
stalled: no bytes came for the idle timeout.
cancelled: the user aborted the stream.
"""
RECORDING_ENDINGS: tuple[RecordingEnding, ...] = get_args(RecordingEnding)

# The response headers the stream core reads; nothing else (cookies, keys) is kept.
RECORDED_HEADERS = frozenset({
    "content-type", "retry-after", "x-request-id", "request-id",
    "anoman-request-id", "x-anoman-request-id",
})

MAX_READS = 1_000_000
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_READ_BYTES = 16 * 1024 * 1024
MAX_HEADER_VALUE = 1024
MAX_NAME = 1024
MAX_SECONDS = 7 * 24 * 3600.0


class RecordingError(ValueError):
    """A recording document that cannot be used; the message is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class StreamRecording:
    """One stream as it came off the socket. Times are seconds since the request went out.

    `status` is None when no response arrived (the connection could not be made, or the
    stream was cancelled or stalled before the headers). `reads` are the body reads in
    order, each as (seconds, bytes); `ended_at` is when the body ended `ending`'s way.
    """

    endpoint: EndpointFormat
    path: str
    model: str
    status: int | None
    headers: tuple[tuple[str, str], ...]
    headers_at: float | None
    reads: tuple[tuple[float, bytes], ...]
    ending: RecordingEnding
    ended_at: float
    pane: int | None = None
    version: int = RECORDING_VERSION

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.reads)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RECORDING_FORMAT,
            "version": self.version,
            "endpoint": self.endpoint,
            "path": self.path,
            "model": self.model,
            "pane": self.pane,
            "status": self.status,
            "headers": [[name, value] for name, value in self.headers],
            "headers_at": self.headers_at,
            "reads": [[at, base64.b64encode(chunk).decode("ascii")] for at, chunk in self.reads],
            "ending": self.ending,
            "ended_at": self.ended_at,
        }

    @classmethod
    def from_json(cls, document: object) -> StreamRecording:
        """Read a document made by `to_json` (a dict, or its JSON text); raise `RecordingError`."""
        try:
            return _parse(document)
        except RecordingError:
            raise
        except Exception as exc:  # a hostile document must never surface as anything else
            raise RecordingError(
                f"the recording cannot be read ({type(exc).__name__})."
            ) from None


def _parse(document: object) -> StreamRecording:
    if isinstance(document, (str, bytes)):
        if len(document) > 2 * MAX_BODY_BYTES:
            raise RecordingError("the recording is larger than a recording may be.")
        try:
            document = json.loads(document)
        except (ValueError, RecursionError):
            raise RecordingError("the recording is not valid JSON.") from None
    if not isinstance(document, dict):
        raise RecordingError("the recording is not a JSON object.")
    if document.get("format") != RECORDING_FORMAT:
        raise RecordingError(f"the document is not a stream recording ('format' is not "
                             f"{RECORDING_FORMAT!r}).")
    version = document.get("version")
    if type(version) is not int or version != RECORDING_VERSION:
        raise RecordingError(
            f"the recording's version {_show(version)} is not supported "
            f"(this version of anoman-tui reads version {RECORDING_VERSION})."
        )
    missing = [name for name in ("endpoint", "path", "model", "status", "headers", "headers_at",
                                 "reads", "ending", "ended_at") if name not in document]
    if missing:
        raise RecordingError(f"the recording has no {', '.join(repr(n) for n in missing)}.")
    endpoint = document["endpoint"]
    if endpoint not in ENDPOINT_FORMATS:
        raise RecordingError(f"the recording's endpoint {_show(endpoint)} is not one of "
                             f"{', '.join(ENDPOINT_FORMATS)}.")
    path = _text(document["path"], "path")
    if not path.startswith("/"):
        raise RecordingError("the recording's path does not start with '/'.")
    model = _text(document["model"], "model")
    pane = document.get("pane")
    if pane is not None and (type(pane) is not int or not 0 <= pane < 1000):
        raise RecordingError("the recording's pane is not a small non-negative integer.")
    status = document["status"]
    if status is not None and (type(status) is not int or not 100 <= status <= 599):
        raise RecordingError("the recording's status is not an HTTP status code.")
    headers = _headers(document["headers"])
    ending = document["ending"]
    if ending not in RECORDING_ENDINGS:
        raise RecordingError(f"the recording's ending {_show(ending)} is not one of "
                             f"{', '.join(RECORDING_ENDINGS)}.")
    headers_at = document["headers_at"]
    if (status is None) != (headers_at is None):
        raise RecordingError("the recording has a status without a time, or a time without one.")
    raw_reads = document["reads"]
    if not isinstance(raw_reads, list):
        raise RecordingError("the recording's reads are not a list.")
    if len(raw_reads) > MAX_READS:
        raise RecordingError(f"the recording has more than {MAX_READS} reads.")
    if status is None and raw_reads:
        raise RecordingError("the recording has body reads but no response.")
    if status is None and ending in ("completed", "closed"):
        raise RecordingError(f"the recording ended {ending!r} without a response.")
    last = 0.0
    if headers_at is not None:
        last = _time(headers_at, "headers_at", last)
    reads: list[tuple[float, bytes]] = []
    total = 0
    for index, item in enumerate(raw_reads):
        if not isinstance(item, list) or len(item) != 2:
            raise RecordingError(f"read {index} is not a [seconds, base64] pair.")
        at, data = item
        last = _time(at, f"read {index}", last)
        if not isinstance(data, str):
            raise RecordingError(f"read {index}'s bytes are not a base64 string.")
        if len(data) > MAX_READ_BYTES * 4 // 3 + 4:
            raise RecordingError(f"read {index} is larger than {MAX_READ_BYTES} bytes.")
        try:
            chunk = base64.b64decode(data.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise RecordingError(f"read {index}'s bytes are not valid base64.") from None
        if not chunk:
            raise RecordingError(f"read {index} is empty.")
        total += len(chunk)
        if total > MAX_BODY_BYTES:
            raise RecordingError(f"the recording's body is larger than {MAX_BODY_BYTES} bytes.")
        reads.append((float(at), chunk))
    ended_at = _time(document["ended_at"], "ended_at", last)
    return StreamRecording(
        endpoint=endpoint,
        path=path,
        model=model,
        status=status,
        headers=headers,
        headers_at=None if headers_at is None else float(headers_at),
        reads=tuple(reads),
        ending=ending,
        ended_at=ended_at,
        pane=pane,
        version=version,
    )


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise RecordingError(f"the recording's {name} is not a string of 1 to {MAX_NAME} "
                             f"characters.")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise RecordingError(f"the recording's {name} contains control characters.")
    return value


def _headers(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or len(value) > len(RECORDED_HEADERS):
        raise RecordingError("the recording's headers are not a short list of [name, value].")
    headers = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(part, str) for part in item)):
            raise RecordingError("the recording's headers are not a list of [name, value].")
        name, text = item
        if name not in RECORDED_HEADERS:
            raise RecordingError(f"the recording has a header {_show(name)} that recordings "
                                 f"never keep.")
        if len(text) > MAX_HEADER_VALUE or any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise RecordingError(f"the recording's {name} header is too long or has control "
                                 f"characters.")
        headers.append((name, text))
    return tuple(headers)


def _time(value: object, name: str, previous: float) -> float:
    if type(value) not in (int, float):
        raise RecordingError(f"the recording's time for {name} is not a number.")
    at = float(value)  # type: ignore[arg-type]
    if not math.isfinite(at) or at < 0 or at > MAX_SECONDS:
        raise RecordingError(f"the recording's time for {name} is negative, too large or "
                             f"not finite.")
    if at < previous:
        raise RecordingError(f"the recording's time for {name} is earlier than the one "
                             f"before it.")
    return at


class RecordingCapture:
    """Builds a `StreamRecording` while `ModelStream` reads; times are `time.monotonic()`."""

    __slots__ = (
        "_headers",
        "_headers_at",
        "_open",
        "_open_at",
        "_open_size",
        "_reads",
        "_request",
        "_size",
        "_status",
        "overflowed",
    )

    def __init__(self, request: StreamRequest) -> None:
        self._request = request
        self._status: int | None = None
        self._headers: tuple[tuple[str, str], ...] = ()
        self._headers_at: float | None = None
        self._reads: list[tuple[float, bytes]] = []
        # The chunks of the latest socket read, joined into one read when the next begins:
        # one read brings many HTTP chunks (a token each from a fast provider), all with
        # its stamp, and an entry each cost ~100 bytes (3 x 100,000 tokens: ~35 MB).
        self._open: list[bytes] = []
        self._open_at = 0.0
        self._open_size = 0
        self._size = 0
        self.overflowed = False

    def opened(self, at: float, status: int, headers: Mapping[str, str]) -> None:
        self._status = status
        self._headers_at = at
        self._headers = tuple(
            (name, value[:MAX_HEADER_VALUE]) for name, value in headers.items()
            if name in RECORDED_HEADERS
        )

    def read(self, at: float, chunk: bytes) -> None:
        if not chunk or self.overflowed:
            return
        self._size += len(chunk)
        opened = self._open
        if opened and at == self._open_at and self._open_size + len(chunk) <= MAX_READ_BYTES:
            opened.append(chunk)
            self._open_size += len(chunk)
            if self._size > MAX_BODY_BYTES:
                self._overflow()
            return
        self._close_read()
        if (self._size > MAX_BODY_BYTES or len(chunk) > MAX_READ_BYTES
                or len(self._reads) >= MAX_READS):
            self._overflow()
            return
        self._open, self._open_at, self._open_size = [chunk], at, len(chunk)

    def _close_read(self) -> None:
        if self._open:
            self._reads.append((self._open_at, b"".join(self._open)))
            self._open = []

    def _overflow(self) -> None:
        # Too big to keep: no recording rather than one that cannot be read back.
        self.overflowed = True
        self._reads.clear()
        self._open = []

    def finish(self, sent_at: float, ended_at: float,
               ending: RecordingEnding) -> StreamRecording | None:
        if self.overflowed:
            return None
        self._close_read()
        if self._status is None and ending in ("completed", "closed"):
            ending = "reset"
        reads, headers = self._reads, list(self._headers)
        # The key (its last four kept, to tell keys apart), and a password the URL carries
        # (none of it): a server may echo either back.
        for secret, keep in ((self._request.api_key.get_secret_value(), 4),
                             (url_password(self._request.base_url), 0)):
            reads = mask_reads(reads, secret.encode(), keep)
            headers = [(n, _mask_text(v, secret, keep)) for n, v in headers]
        previous = 0.0

        def since(at: float) -> float:
            # Relative, never negative, never before the previous instant (monotonic stamps
            # are, but the send instant is re-stamped once the request starts out).
            nonlocal previous
            previous = max(previous, at - sent_at)
            return previous

        headers_at = None if self._headers_at is None else since(self._headers_at)
        relative = tuple((since(at), chunk) for at, chunk in reads)
        return StreamRecording(
            endpoint=self._request.endpoint,
            path=self._request.request_path,
            model=self._request.model,
            status=self._status,
            headers=tuple(headers),
            headers_at=headers_at,
            reads=relative,
            ending=ending,
            ended_at=since(ended_at),
            pane=self._request.pane,
        )


def _mask_text(text: str, secret: str, keep: int = 4) -> str:
    if not secret or len(secret) < 4:
        return text
    return text.replace(secret, _masked(len(secret), secret, keep).decode())


def _masked(length: int, secret: str, keep: int = 4) -> bytes:
    """`length` bytes: stars, then the secret's last `keep` characters."""
    tail = secret[-keep:].encode() if keep else b""
    return b"*" * max(length - len(tail), 0) + tail


def mask_reads(reads: list[tuple[float, bytes]], secret: bytes,
               keep: int = 4) -> list[tuple[float, bytes]]:
    """A recording's reads with `secret` (a key echoed in the body) masked, even where it
    spans two reads: every read keeps its time and length, the key its last `keep`
    characters. The one way a recording masks a key in its bytes: recording a stream
    uses it, and so does exporting a recording (`anoman_tui.history.portable`)."""
    if not secret or len(secret) < 4:
        return reads
    whole = b"".join(chunk for _, chunk in reads)
    if secret not in whole:
        return reads
    whole = whole.replace(secret, _masked(len(secret), secret.decode(), keep))
    masked = []
    offset = 0
    for at, chunk in reads:
        masked.append((at, whole[offset:offset + len(chunk)]))
        offset += len(chunk)
    return masked


# -- replay --------------------------------------------------------------------

REPLAY_PANE_EXTENSION = "anoman_pane"
"""The request extension `ModelStream` sets to its pane, so a replay can tell apart
panes that ask for the same model."""
