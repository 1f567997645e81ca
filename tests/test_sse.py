"""The SSE decoder against the WHATWG rules, and the split-invariance property."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from anoman_tui.streaming import SSEDecoder, SSEEvent
from anoman_tui.streaming.formats import AnthropicFrameReader, OpenAIFrameReader
from tests.frames import ANTHROPIC_EXAMPLE_STREAM, OPENAI_ERROR_FRAME, OPENAI_EXAMPLE_STREAM


def decode_all(chunks: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.close())
    return events


def test_fields_comments_and_dispatch_rules() -> None:
    raw = (
        b": this is a comment\n"
        b"event: update\n"
        b"id: 7\n"
        b"retry: 2500\n"
        b"data: first\n"
        b"data:second\n"
        b"data\n"
        b"\n"
        b"event: nodata\n"
        b"id: 8\n"
        b"\n"  # no data: not dispatched
        b"unknown: field\n"
        b"data: {\"a\": 1}\n"
        b"\n"
        b"data: unterminated"  # discarded at EOF
    )
    decoder = SSEDecoder()
    events = decoder.feed(raw) + decoder.close()
    assert events == [
        SSEEvent("update", "first\nsecond\n", "7"),
        SSEEvent("message", '{"a": 1}', "8"),
    ]
    assert decoder.retry_ms == 2500


def test_line_endings_bom_and_separators() -> None:
    body = '\ufeffdata: a\u2028b\u2029c\r\n\r\ndata: x\rdata: y\r\r'.encode()
    assert decode_all([body]) == [
        SSEEvent("message", "a\u2028b\u2029c"),
        SSEEvent("message", "x\ny"),
    ]


def test_cr_at_end_of_read_then_lf() -> None:
    assert decode_all([b"data: a\r", b"\n\r", b"\n"]) == [SSEEvent("message", "a")]


def test_invalid_utf8_becomes_replacement_and_split_chars_join() -> None:
    snowman = "☃".encode()
    chunks = [b"data: ", snowman[:1], snowman[1:], b"\xff\n\n"]
    assert decode_all(chunks) == [SSEEvent("message", "☃\ufffd")]


def test_id_with_nul_is_ignored() -> None:
    assert decode_all([b"id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n"]) == [
        SSEEvent("message", "a", "1"),
        SSEEvent("message", "b", "1"),
    ]


def _frame_events(reader_cls, chunks: list[bytes]):
    decoder = SSEDecoder()
    reader = reader_cls()
    out = []
    for chunk in chunks:
        for sse in decoder.feed(chunk):
            out.extend(reader.read(sse, 0.0))
    for sse in decoder.close():
        out.extend(reader.read(sse, 0.0))
    return out, reader.done


STREAMS = [
    (OpenAIFrameReader, b"".join(OPENAI_EXAMPLE_STREAM)),
    (
        OpenAIFrameReader,
        b"".join(OPENAI_EXAMPLE_STREAM[:3]) + OPENAI_ERROR_FRAME + b"data: [DONE]\n\n",
    ),
    (AnthropicFrameReader, b"".join(ANTHROPIC_EXAMPLE_STREAM)),
    # multi-byte text, line separators inside JSON strings, CRLF line ends
    (
        OpenAIFrameReader,
        (
            'data: {"choices":[{"index":0,"delta":{"content":"Héllo \u2028 wörld ☃ 🎉"}}]}\r\n\r\n'
            ": ping\r\n\r\n"
            'data: {"choices":[{"index":0,"delta":{"content":"\\u2029 done"},'
            '"finish_reason":"stop"}]}\r\n\r\n'
            "data: [DONE]\r\n\r\n"
        ).encode(),
    ),
]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), which=st.integers(min_value=0, max_value=len(STREAMS) - 1))
def test_any_split_of_a_valid_stream_yields_the_same_events(data, which) -> None:
    reader_cls, raw = STREAMS[which]
    expected = _frame_events(reader_cls, [raw])
    cuts = sorted(data.draw(st.sets(st.integers(min_value=1, max_value=len(raw) - 1), max_size=40)))
    bounds = [0, *cuts, len(raw)]
    chunks = [raw[a:b] for a, b in itertools.pairwise(bounds)]
    assert _frame_events(reader_cls, chunks) == expected


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(st.binary(max_size=64), max_size=20))
def test_random_bytes_never_raise_from_the_decoder(chunks: list[bytes]) -> None:
    events = decode_all(chunks)
    assert all(isinstance(e.data, str) for e in events)
