"""A saved comparison as one portable file, and that file read back (untrusted).

`comparison_document(record, recordings)` makes the JSON-ready document
`anoman-tui export ID --format recording` writes: the whole comparison as the
history keeps it, each pane with its stream's recording (`StreamRecording.to_json()`).
`read_comparison_document(data)` reads one back for `anoman-tui import`, as strictly
as anything from someone else must be: every field's type, every size, every
cross-reference is checked, and anything wrong raises `PortableRefused` whose
`reason` is one sentence. The format is described field by field in
docs/recording-format.md.

Text (prompt, answers) is kept exactly as a model could send it, escape sequences
and markup included, as live model output is: the screens and the reports render
it inert. No key is ever in the document: a record holds none, and a recording
keeps no request header and masks a key a server echoed back.

May import: the standard library, `anoman_tui.streaming`, the rest of `anoman_tui.history`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import Any

from anoman_tui.history.legacy import legacy_cost
from anoman_tui.history.model import ComparisonRecord, PaneRecord, VoteRecord
from anoman_tui.history.pane_json import pane_json, provider_cost_raw
from anoman_tui.streaming.cost import Cost, decimal_or_none
from anoman_tui.streaming.recording import RecordingError, StreamRecording, mask_reads
from anoman_tui.streaming.request import ENDPOINT_FORMATS
from anoman_tui.streaming.vocabulary import FAILURE_KINDS

DOCUMENT_FORMAT = "anoman-comparison-recording"
DOCUMENT_VERSION = 1
FILE_SUFFIX = ".anoman-recording.json"

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_PANES = 9
MAX_TEXT = 16 * 1024 * 1024
"""Characters in one long text: the prompt, the system prompt, an answer, a turn."""
MAX_NAME = 1024
"""Characters in a short text: a model, a URL, a label, a cost."""
MAX_TURNS = 10_000
MAX_SERIES = 100_000
MAX_BLOCK_ITEMS = 10_000
"""Values in one JSON block (failure, usage, `_anoman`), nested ones included."""
MAX_BLOCK_DEPTH = 8
MAX_METRICS = 64
MAX_NUMBER = 2.0**63
"""The largest magnitude of a number: SQLite's integers, and every figure a pane has."""
UID_PATTERN = re.compile(r"[0-9A-Za-z:-]{1,64}")
"""A comparison's uid as a file may carry it (`ComparisonRecord.uid`)."""
STATUSES = ("completed", "failed", "cancelled")
OUTCOMES = ("win", "tie", "bad")
ROLES = ("user", "assistant")


class PortableRefused(ValueError):
    """A comparison that cannot be exported, or a file that cannot be imported; `reason`
    is one sentence saying why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- writing -------------------------------------------------------------------


MIN_SECRET = 8
"""Shorter `secrets` are not masked: they would mask ordinary words of an answer."""


def comparison_document(record: ComparisonRecord, recordings: dict[int, StreamRecording],
                        secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The portable document of a saved comparison with its panes' recordings.

    `secrets` (the keys the exporter knows) are masked wherever they appear, as a
    recording masks the key it was made with: a server may echo a key into an answer
    or an error message, which the history keeps as it came.

    Refused (`PortableRefused`) for a blind round not voted on yet (its recordings name
    the models) and for a comparison a pane of which has no recording.
    """
    if record.hidden:
        raise PortableRefused("it is a blind round not voted on yet: its recordings would "
                              "name the models; vote first (`anoman-tui vote ID`).")
    if not recordings:
        raise PortableRefused("its streams were not recorded (recording was off, over the "
                              "size limit, or it was saved before recordings existed).")
    missing = [p.pane for p in record.panes if p.pane not in recordings]
    if missing:
        raise PortableRefused(f"pane {missing[0]} has no recording: only a comparison "
                              "recorded whole can be shared.")
    vote = record.vote
    keys = sorted({k for k in secrets if len(k) >= MIN_SECRET}, key=len, reverse=True)
    document: dict[str, Any] = _scrubbed({
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "prompt": record.prompt,
        "system_prompt": record.system_prompt,
        "conversation": [list(turn) for turn in record.conversation],
        "created_at": record.created_at,
        "source": record.source,
        "blind": record.blind,
        "vote": None if vote is None else {
            "blind": vote.blind, "outcome": vote.outcome,
            "winner_pane": vote.winner_pane, "voted_at": vote.voted_at,
        },
        "panes": [pane_json(p, recording=_masked_recording(recordings[p.pane], keys))
                  for p in record.panes],
    }, keys)
    if record.uid:
        document["uid"] = record.uid  # (optional: a 1.x addition readers may ignore)
    return document


def _masked_text(key: str) -> str:
    return "*" * max(len(key) - 4, 0) + key[-4:]


def _scrubbed(value: Any, keys: list[str]) -> Any:
    if not keys:
        return value
    if isinstance(value, str):
        for key in keys:
            if key in value:
                value = value.replace(key, _masked_text(key))
        return value
    if isinstance(value, dict):
        return {_scrubbed(k, keys): _scrubbed(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item, keys) for item in value]
    return value


def _masked_recording(recording: StreamRecording, keys: list[str]) -> StreamRecording:
    reads = list(recording.reads)
    for key in keys:
        reads = mask_reads(reads, key.encode())
    return replace(recording, reads=tuple(reads))


def dumps(document: dict[str, Any]) -> str:
    """The document as the file's text: compact, ASCII only (any byte a model sent is
    an escape, so no encoding or terminal can mangle the file), one final newline."""
    return json.dumps(document, ensure_ascii=True, separators=(",", ":"),
                      allow_nan=False) + "\n"


# -- reading -------------------------------------------------------------------


def read_comparison_document(data: bytes | str) -> ComparisonRecord:
    """The comparison in a portable file's contents, its panes carrying `.recording`.

    Raises `PortableRefused` for anything that is not a valid document of a version this
    build reads; never anything else. The record has no id (`source` and `created_at`
    are the document's; the importer decides what to keep).
    """
    try:
        return _read(data)
    except PortableRefused:
        raise
    except RecursionError:
        raise PortableRefused("the file nests its JSON too deeply to be a recording.") from None
    except Exception as exc:  # a hostile file must never surface as anything else
        raise PortableRefused(f"the file cannot be read ({type(exc).__name__}).") from None


def too_large() -> PortableRefused:
    return PortableRefused(f"the file is larger than {MAX_FILE_BYTES:,} bytes, the most a "
                           "recording may be.")


GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(data: bytes) -> bytes:
    """A gzip-compressed file's contents, never more than the file limit of them (a small
    file may expand a thousandfold)."""
    reader = zlib.decompressobj(wbits=31)
    try:
        text = reader.decompress(data, MAX_FILE_BYTES + 1)
    except zlib.error:
        raise PortableRefused("the file is not valid gzip.") from None
    if len(text) > MAX_FILE_BYTES or reader.unconsumed_tail:
        raise PortableRefused(f"the file expands to more than {MAX_FILE_BYTES:,} bytes, the "
                              "most a recording may be.")
    if not reader.eof:
        raise PortableRefused("the gzip file is cut short.")
    return text


def _refuse_constant(name: str) -> float:
    raise PortableRefused(f"the file holds {name}, which is not a number a recording has.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PortableRefused("the file holds a number too large to be finite.")
    return value


def _read(data: bytes | str) -> ComparisonRecord:
    if len(data) > MAX_FILE_BYTES:
        raise too_large()
    if isinstance(data, bytes) and data[:2] == GZIP_MAGIC:
        data = _gunzip(data)
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PortableRefused("the file is not UTF-8 text.") from None
    data = data.removeprefix("\ufeff")
    if not data.strip():
        raise PortableRefused("the file is empty.")
    try:
        document = json.loads(data, parse_constant=_refuse_constant,
                              parse_float=_finite_float)
    except RecursionError:
        raise PortableRefused("the file nests its JSON too deeply to be a recording.") from None
    except ValueError as exc:
        if isinstance(exc, PortableRefused):
            raise
        raise PortableRefused("the file is not JSON.") from None
    if not isinstance(document, dict):
        raise PortableRefused("the file is not a JSON object.")
    if document.get("format") != DOCUMENT_FORMAT:
        raise PortableRefused(f"the file is not a comparison recording ('format' is not "
                              f"{DOCUMENT_FORMAT!r}).")
    version = document.get("version")
    if type(version) is not int:
        raise PortableRefused("the file's 'version' is not an integer.")
    if version > DOCUMENT_VERSION:
        raise PortableRefused(f"the file is version {version} of the format; this anoman-tui "
                              f"reads version {DOCUMENT_VERSION}: update anoman-tui to import it.")
    if version < 1:
        raise PortableRefused(f"the file's version {version} is not a version of the format.")
    fields = _Fields(document, "the file")
    prompt = fields.text("prompt", MAX_TEXT, allow_empty=False)
    system_prompt = fields.text("system_prompt", MAX_TEXT)
    conversation = _turns(fields.get("conversation"), "the file's conversation") or ()
    created_at = fields.number("created_at")
    if created_at < 0:
        raise PortableRefused("the file's created_at is negative.")
    source = fields.name("source")
    blind = fields.boolean("blind")
    raw_panes = fields.get("panes")
    if not isinstance(raw_panes, list) or not 1 <= len(raw_panes) <= MAX_PANES:
        raise PortableRefused(f"the file's panes are not a list of 1 to {MAX_PANES} panes.")
    panes = tuple(_pane(item, index) for index, item in enumerate(raw_panes))
    numbers = [p.pane for p in panes]
    duplicate = next((n for n in numbers if numbers.count(n) > 1), None)
    if duplicate is not None:
        raise PortableRefused(f"the file has pane {duplicate} twice.")
    vote = _vote(fields.get("vote"), set(numbers))
    if blind and vote is None:
        raise PortableRefused("the file is a blind round not voted on yet, which is never "
                              "shared (its recordings name the models).")
    if blind and any(not p.label for p in panes):
        raise PortableRefused("the file is a blind round with a pane that has no label.")
    record = ComparisonRecord(
        prompt=prompt,
        panes=tuple(sorted(panes, key=lambda p: p.pane)),
        system_prompt=system_prompt,
        conversation=conversation,
        created_at=created_at,
        source=source,
        blind=blind,
        vote=vote,
        recorded=True,
    )
    uid = document.get("uid")
    if uid is not None and (not isinstance(uid, str) or not UID_PATTERN.fullmatch(uid)):
        raise PortableRefused("the file's uid is not 1 to 64 letters, digits, '-' or ':'.")
    return replace(record, uid=uid or fingerprint(record))


def fingerprint(record: ComparisonRecord) -> str:
    """A uid for a document exported before documents carried one: the same comparison
    exported twice gets the same, so importing both is still recognised."""
    content = json.dumps([record.created_at, record.prompt, record.system_prompt,
                          [list(t) for t in record.conversation],
                          [[p.pane, p.model, p.text, p.status] for p in record.panes]],
                         ensure_ascii=False, separators=(",", ":"))
    return "import:" + hashlib.sha256(content.encode()).hexdigest()[:40]


class _Fields:
    """Typed, required fields of one JSON object, each refusal naming where it is."""

    def __init__(self, obj: dict[str, Any], where: str) -> None:
        self.obj = obj
        self.where = where

    def get(self, name: str) -> Any:
        if name not in self.obj:
            raise PortableRefused(f"{self.where} has no {name!r}.")
        return self.obj[name]

    def text(self, name: str, limit: int, *, allow_empty: bool = True,
             nullable: bool = False) -> Any:
        value = self.get(name)
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise PortableRefused(f"{self.where}'s {name} is not a string.")
        if len(value) > limit:
            raise PortableRefused(f"{self.where}'s {name} is longer than {limit} characters.")
        if not value and not allow_empty:
            raise PortableRefused(f"{self.where}'s {name} is empty.")
        _encodable(value, f"{self.where}'s {name}")
        return value

    def name(self, name: str, **kw: Any) -> Any:
        """A short text that names something: never a control character."""
        value = self.text(name, MAX_NAME, **kw)
        if value is not None and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise PortableRefused(f"{self.where}'s {name} contains control characters.")
        return value

    def number(self, name: str, *, nullable: bool = False) -> Any:
        value = self.get(name)
        if value is None and nullable:
            return None
        if not _is_number(value):
            raise PortableRefused(f"{self.where}'s {name} is not a number.")
        return float(value)

    def integer(self, name: str, low: int, high: int, *, nullable: bool = False) -> Any:
        value = self.get(name)
        if value is None and nullable:
            return None
        if type(value) is not int or not low <= value <= high:
            raise PortableRefused(f"{self.where}'s {name} is not an integer from {low} to "
                                  f"{high}.")
        return value

    def boolean(self, name: str) -> bool:
        value = self.get(name)
        if type(value) is not bool:
            raise PortableRefused(f"{self.where}'s {name} is not true or false.")
        return value

    def choice(self, name: str, choices: tuple[str, ...], *, nullable: bool = False) -> Any:
        value = self.get(name)
        if value is None and nullable:
            return None
        if value not in choices or not isinstance(value, str):
            raise PortableRefused(f"{self.where}'s {name} is not one of {', '.join(choices)}.")
        return value


def _is_number(value: Any) -> bool:
    # (bool is an int to Python, never a number here; a huge int would not fit SQLite)
    return type(value) in (int, float) and abs(value) < MAX_NUMBER


def _encodable(text: str, where: str) -> None:
    # JSON may spell a lone surrogate ("\ud800"): no database or file can store it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PortableRefused(f"{where} holds an invalid character (a lone surrogate).") \
            from None


def _turns(value: Any, where: str) -> tuple[tuple[str, str], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_TURNS:
        raise PortableRefused(f"{where} is not a list of at most {MAX_TURNS} turns.")
    turns = []
    for index, turn in enumerate(value):
        if (not isinstance(turn, list) or len(turn) != 2 or turn[0] not in ROLES
                or not isinstance(turn[1], str)):
            raise PortableRefused(f"{where}'s turn {index} is not a [\"user\" or \"assistant\", "
                                  "text] pair.")
        if len(turn[1]) > MAX_TEXT:
            raise PortableRefused(f"{where}'s turn {index} is longer than {MAX_TEXT} characters.")
        _encodable(turn[1], f"{where}'s turn {index}")
        turns.append((turn[0], turn[1]))
    return tuple(turns)


def _block(value: Any, where: str) -> dict[str, Any] | None:
    """A JSON object kept as it is (failure, usage, `_anoman`): bounded in depth and size."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise PortableRefused(f"{where} is not a JSON object or null.")
    count = 0

    def check(item: Any, depth: int) -> None:
        nonlocal count
        count += 1
        if count > MAX_BLOCK_ITEMS:
            raise PortableRefused(f"{where} holds more than {MAX_BLOCK_ITEMS} values.")
        if depth > MAX_BLOCK_DEPTH:
            raise PortableRefused(f"{where} nests deeper than {MAX_BLOCK_DEPTH} levels.")
        if isinstance(item, str):
            if len(item) > MAX_TEXT:
                raise PortableRefused(f"{where} holds a text longer than {MAX_TEXT} characters.")
            _encodable(item, where)
        elif type(item) is int and not abs(item) < MAX_NUMBER:
            raise PortableRefused(f"{where} holds an integer too large to store.")
        elif isinstance(item, dict):
            for key, inner in item.items():
                _encodable(key, where)
                check(inner, depth + 1)
        elif isinstance(item, list):
            for inner in item:
                check(inner, depth + 1)

    check(value, 1)
    return value


def _metrics(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > MAX_METRICS:
        raise PortableRefused(f"{where} is not an object of at most {MAX_METRICS} figures.")
    for key, figure in value.items():
        if len(key) > MAX_NAME:
            raise PortableRefused(f"{where} has a name longer than {MAX_NAME} characters.")
        _encodable(key, where)
        if figure is not None and not _is_number(figure):
            raise PortableRefused(f"{where}'s {key[:40]!r} is not a number or null.")
        if key == "chunks" and type(figure) is not int:
            raise PortableRefused(f"{where}'s 'chunks' is not an integer.")
    return value


def _series(value: Any, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) > MAX_SERIES:
        raise PortableRefused(f"{where} is not a list of at most {MAX_SERIES} numbers.")
    if any(not _is_number(x) or x < 0 for x in value):
        raise PortableRefused(f"{where} holds something that is not a number of 0 or more.")
    return tuple(float(x) for x in value)


def _pane(item: Any, index: int) -> PaneRecord:
    if not isinstance(item, dict):
        raise PortableRefused(f"the file's pane {index + 1} (in order) is not a JSON object.")
    fields = _Fields(item, f"the file's pane {index + 1} (in order)")
    number = fields.integer("pane", 1, MAX_PANES)
    where = f"pane {number}"
    fields.where = where
    model = fields.name("model", allow_empty=False)
    endpoint = fields.choice("endpoint", ENDPOINT_FORMATS)
    temperature = fields.number("temperature", nullable=True)
    if temperature is not None and temperature < 0:
        raise PortableRefused(f"{where}'s temperature is negative.")
    status = fields.choice("status", STATUSES)
    failure = _block(fields.get("failure"), f"{where}'s failure")
    if failure is not None and failure.get("kind") not in FAILURE_KINDS:
        raise PortableRefused(f"{where}'s failure has no kind of "
                              f"{', '.join(FAILURE_KINDS)}.")
    if status == "completed" and failure is not None:
        raise PortableRefused(f"{where} completed, yet has a failure.")
    if status == "failed" and failure is None:
        raise PortableRefused(f"{where} failed, yet has no failure.")
    raw_recording = fields.get("recording")
    if raw_recording is None:
        raise PortableRefused(f"{where} has no recording.")
    try:
        recording = StreamRecording.from_json(raw_recording)
    except RecordingError as exc:
        raise PortableRefused(f"{where}: {exc.reason}") from None
    if recording.model != model or recording.endpoint != endpoint:
        raise PortableRefused(f"{where}'s recording is of {recording.model!r} "
                              f"({recording.endpoint}), not of its model {model!r} ({endpoint}).")
    if recording.pane is not None and recording.pane != number:
        raise PortableRefused(f"{where}'s recording is of pane {recording.pane}.")
    return PaneRecord(
        pane=number,
        model=model,
        base_url=fields.name("base_url"),
        endpoint=endpoint,
        temperature=temperature,
        max_tokens=fields.integer("max_tokens", 1, 2**31 - 1, nullable=True),
        scenario=fields.name("scenario"),
        status=status,
        committed=fields.boolean("committed"),
        text=fields.text("text", MAX_TEXT),
        reasoning=fields.text("reasoning", MAX_TEXT),
        # What the server said, as it said it (shown inert like the answer).
        finish_reason=fields.text("finish_reason", MAX_NAME, nullable=True),
        failure=failure,
        usage=_block(fields.get("usage"), f"{where}'s usage"),
        anoman=_block(fields.get("anoman"), f"{where}'s anoman block"),
        metrics=_metrics(fields.get("metrics"), f"{where}'s metrics"),
        rate_series=_series(fields.get("rate_series"), f"{where}'s rate_series"),
        cost=_cost(item, fields, where),
        provider_cost=_provider_cost(item, where),
        simulated=_simulated(item, where),
        conversation=_turns(fields.get("conversation"), f"{where}'s conversation"),
        target=fields.name("target"),
        label=fields.name("label"),
        recording=recording,
    )


def _cost(value: dict[str, Any], fields: _Fields, where: str) -> Cost:
    """The pane's `cost` object; a file written before it has only `cost_text`."""
    if "cost" not in value:
        return legacy_cost(fields.name("cost_text"))
    try:
        cost = Cost.from_json(value["cost"])
    except ValueError as exc:
        raise PortableRefused(f"{where}'s cost: {exc}.") from None
    if cost.source == "hidden":
        raise PortableRefused(f"{where}'s cost is hidden: a file holds the real one.")
    return cost


def _provider_cost(value: dict[str, Any], where: str) -> Decimal | None:
    raw = provider_cost_raw(value)
    if raw is None:
        return None
    amount = decimal_or_none(raw) if isinstance(raw, str) and len(raw) <= MAX_NAME else None
    if amount is None or not amount.is_finite() or amount < 0:
        raise PortableRefused(f"{where}'s provider_cost_usd is not a decimal string.")
    return amount


def _simulated(value: dict[str, Any], where: str) -> bool:
    raw = value.get("simulated", False)  # absent in files written before it
    if not isinstance(raw, bool):
        raise PortableRefused(f"{where}'s simulated is not true or false.")
    return raw


def _vote(value: Any, panes: set[int]) -> VoteRecord | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise PortableRefused("the file's vote is not a JSON object or null.")
    fields = _Fields(value, "the file's vote")
    outcome = fields.choice("outcome", OUTCOMES)
    winner = fields.integer("winner_pane", 1, MAX_PANES, nullable=True)
    if (outcome == "win") != (winner is not None):
        raise PortableRefused("the file's vote names a winner only for a win, and always "
                              "for one.")
    if winner is not None and winner not in panes:
        raise PortableRefused(f"the file's vote names pane {winner}, which it does not have.")
    voted_at = fields.number("voted_at")
    if voted_at < 0:
        raise PortableRefused("the file's vote time is negative.")
    return VoteRecord(blind=fields.boolean("blind"), outcome=outcome, winner_pane=winner,
                      voted_at=voted_at)
