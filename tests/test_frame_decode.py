"""The frame readers' JSON decoding accepts and refuses exactly what `json.loads` does.

`formats._decode` takes a `raw_decode` fast path for speed; these cases pin
that the fast path changed nothing: surrounding whitespace, extra data, a BOM, bad
JSON and non-objects behave as they did with `json.loads`.
"""

from __future__ import annotations

import json

import pytest

from anoman_tui.streaming import SSEEvent, TextDelta
from anoman_tui.streaming.failures import ProtocolViolation
from anoman_tui.streaming.formats import OpenAIFrameReader, _decode

CHUNK = '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}'


@pytest.mark.parametrize(
    "data",
    [CHUNK, f"  {CHUNK}", f"{CHUNK} \t", f"\n{CHUNK}\r\n", '{"a": NaN}', '{"a":"\u2028"}'],
)
def test_accepts_what_json_loads_accepts(data: str) -> None:
    assert _decode(data) == json.loads(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (f"{CHUNK} x", "not valid JSON"),
        (f"{CHUNK}{CHUNK}", "not valid JSON"),
        (f"\ufeff{CHUNK}", "not valid JSON"),
        ("{not json", "not valid JSON"),
        (f"{CHUNK} \u00a0", "not valid JSON"),  # not JSON whitespace, though str.isspace
        ("[1, 2]", "not a JSON object"),
        ('"text"', "not a JSON object"),
    ],
)
def test_refuses_what_json_loads_refuses(data: str, message: str) -> None:
    with pytest.raises(ProtocolViolation, match=message):
        _decode(data)


def test_text_chunk_with_padding_is_still_a_text_delta() -> None:
    reader = OpenAIFrameReader()
    events = reader.read(SSEEvent("message", f" {CHUNK} "), 1.0)
    assert events == [TextDelta(1.0, "hi")]
