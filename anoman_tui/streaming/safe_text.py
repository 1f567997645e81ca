"""Making text safe to let out of the program: untrusted model output on a terminal,
and no secret anywhere.

Model output is text, never instructions to the terminal: ANSI CSI / OSC /
DCS sequences (colour, cursor moves, title changes, OSC 52 clipboard writes),
C0 and C1 controls other than newline and tab, and bidi overrides that can
make text read differently from what it is, are removed (`terminal_safe`).

No key and no password leaves the program: a server may echo a key into an answer
or an error, a user may paste one into a prompt, a target's URL may carry
`user:password@`. `masked` is the one way every exit (the terminal, `--json`, each
report and export) hides them: each known secret becomes `anm-sk-…last4` (as the
screens show a key), anything shaped like an Anoman key too, and a URL keeps its
user and host but never its password (`redact_url`).

Lives in the stream core, the lowest layer that uses it (a failure's text, a
recording's masked keys); everything above imports it from here. Pure standard library:
it imports nothing else of the package.
"""

from __future__ import annotations

import dataclasses
import io
import re
import urllib.parse
from collections.abc import Iterable
from typing import IO, Any, Protocol, TypeVar, cast

T = TypeVar("T")

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings ending in
# BEL or ST, and two-byte escapes. Then the 8-bit C1 forms of CSI and OSC.
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?            # CSI
    | \x1b[\]PX^_].*?(?:\x07|\x1b\\|$)  # OSC, DCS, SOS, PM, APC up to BEL / ST
    | \x1b[ -/]*[0-~]?                  # other ESC sequences (incl. a lone ESC)
    | \x9b[0-?]*[ -/]*[@-~]?            # 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x9c|$)  # 8-bit string controls
    """,
    re.VERBOSE | re.DOTALL,
)
# C0 except \t and \n, DEL, C1, and bidi embedding/override/isolate controls.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Strip escape sequences and control characters; keep newlines and tabs."""
    if text.isprintable():
        return text  # the common case: nothing to strip, no regex work
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


MIN_SECRET = 8
"""Shorter secrets are not masked in free text: they would mask ordinary words."""

# Anything shaped like an Anoman key, known or not (the log file masks these too).
_ANOMAN_KEY = re.compile(r"anm-sk-[A-Za-z0-9_\-]{8,}")
# scheme://user:password@ anywhere in a text; the password runs to the `@` (quotes,
# backslashes and all: a JSON-quoted or repr'd URL keeps its escapes in it).
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^:/@\s]*):[^@/\s]*@")
_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&\s'\"]*")


def mask_secret(secret: str) -> str:
    """`anm-sk-…4086`: enough to tell keys apart, never enough to use one."""
    prefix = "anm-sk-" if secret.startswith("anm-sk-") else ""
    return f"{prefix}…{secret[-4:]}" if len(secret) > len(prefix) + 8 else f"{prefix}…"


def secret_list(secrets: Iterable[str]) -> tuple[str, ...]:
    """The secrets worth masking, longest first (a key that holds another is masked
    whole), each once."""
    return tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len,
                        reverse=True))


def redact_url(url: str) -> str:
    """The URL as it may be stored or shown: `https://user:***@host/v1`, never its
    password (nor libpq's `?password=`)."""
    return redact_urls(url)


def redact_urls(text: str) -> str:
    """`text` with the password of every URL in it replaced by `***`."""
    if "@" not in text and "password=" not in text.lower():
        return text  # the common case: no URL credentials, no regex work
    return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", text))


def url_password(url: str | None) -> str:
    """The password a URL carries ("" for none), to mask it wherever a server echoes it."""
    if not url or "@" not in url:
        return ""
    try:
        password = urllib.parse.urlsplit(url.strip()).password
    except ValueError:
        return ""
    return urllib.parse.unquote(password) if password else ""


def mask_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret and every Anoman-shaped key masked (`mask_secret`), and
    every URL's password redacted (`redact_urls`). `secrets` as `secret_list` (or
    `anoman_tui.secrets_in_use`) gives them: longest first, none too short."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, mask_secret(secret))
    if "anm-sk-" in text:
        text = _ANOMAN_KEY.sub(lambda m: mask_secret(m.group(0)), text)
    return redact_urls(text)


def mask_partial_end(text: str, secrets: Iterable[str]) -> str:
    """`text` (so far) without the start of a secret it ends with: a live view shows the
    last few characters of a stream, where a key may have half arrived."""
    for secret in secrets:
        for length in range(min(len(secret), len(text)), 3, -1):
            if text.endswith(secret[:length]):
                return text[:-length] + "…"
    return text


def masked(value: T, secrets: Iterable[str] = ()) -> T:
    """`value` with `mask_secrets` applied to every text in it: strings, and those in
    dicts, lists, tuples and dataclasses (records, results), however deep. Bytes are
    left as they are (a recording masks its own). Unchanged parts are the same objects."""
    return _masked(value, secret_list(secrets), 0)  # type: ignore[no-any-return]


def _masked(value: Any, secrets: tuple[str, ...], depth: int) -> Any:
    if isinstance(value, str):
        shown = mask_secrets(value, secrets)
        return value if shown == value else shown
    if depth > 64 or value is None or isinstance(value, (bytes, int, float)):
        return value
    if isinstance(value, dict):
        pairs = [(_masked(k, secrets, depth + 1), _masked(v, secrets, depth + 1), k, v)
                 for k, v in value.items()]
        if all(nk is k and nv is v for nk, nv, k, v in pairs):
            return value
        return {nk: nv for nk, nv, _, _ in pairs}
    if isinstance(value, (list, tuple)):
        items_seq = [_masked(v, secrets, depth + 1) for v in value]
        if all(a is b for a, b in zip(items_seq, value, strict=True)):
            return value
        if isinstance(value, list):
            return items_seq
        if hasattr(value, "_fields"):  # a named tuple
            return type(value)(*items_seq)
        return tuple(items_seq)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            was = getattr(value, f.name)
            now = _masked(was, secrets, depth + 1)
            if now is not was:
                changes[f.name] = now
        return dataclasses.replace(value, **changes) if changes else value
    return value


class MaskedWriter(io.TextIOBase):
    """A text stream (stdout, stderr) that masks (`mask_secrets`) whatever is written
    through it: the last guard of a command's output, behind masking its data."""

    def __init__(self, stream: IO[str], secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._stream = stream
        self._secrets = secret_list(secrets)

    def write(self, text: str) -> int:
        self._stream.write(mask_secrets(text, self._secrets))
        return len(text)

    # What Rich and print read of a stream: the wrapped one's.
    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    def close(self) -> None:
        """Leaves the wrapped stream open (it is stdout's or a caller's)."""


def masked_stream(stream: IO[str], secrets: Iterable[str] = ()) -> IO[str]:
    """`stream` behind a `MaskedWriter`, typed as the stream it stands for."""
    return cast(IO[str], MaskedWriter(stream, secrets))


def mask_key(key: str | None) -> str:
    """`anm-sk-…a1b2`: enough to tell keys apart, never enough to use one."""
    if not key:
        return "(none)"
    prefix = "anm-sk-" if key.startswith("anm-sk-") else ""
    return f"{prefix}…{key[-4:]}" if len(key) > len(prefix) + 8 else f"{prefix}…"


class SecretValue(Protocol):
    """What holds a secret: `Secret` below, or pydantic's `SecretStr`."""

    def get_secret_value(self) -> str: ...


class Secret:
    """A key or a URL that may hold a password, as pydantic's `SecretStr` keeps one (the
    same `get_secret_value()`, never shown by `str` or `repr`), without pydantic: the
    settings and targets hold these before the first paint, which imports no validation
    library."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __repr__(self) -> str:
        return f"Secret('{self}')"

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        # As SecretStr: equal to another secret holding the same value.
        get = getattr(other, "get_secret_value", None)
        return callable(get) and get() == self._value

    def __hash__(self) -> int:
        return hash(self._value)
