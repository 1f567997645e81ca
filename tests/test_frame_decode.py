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


# -- a stream's text frames read through its template (formats._TextTemplate) -----------

HEAD = ('{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"m",'
        '"choices":[{"index":0,')


def openai_text(text: object) -> str:
    return HEAD + '"delta":{"content":' + json.dumps(text) + '},"finish_reason":null}]}'


def read_all(reader: object, frames: list[str]) -> list[object]:
    out: list[object] = []
    for data in frames:
        try:
            out.append(reader.read(SSEEvent("message", data), 1.0))  # type: ignore[attr-defined]
        except ProtocolViolation as exc:
            out.append(str(exc))
    return out


@pytest.mark.parametrize("frames", [
    # Tokens with escapes, non-ASCII, an empty one, and quotes that look like the template.
    [openai_text(t) for t in ["Hello", ' "content":"x"', "é\u2028\n", "", "\\", "ok"]],
    # A frame that is not the template's: another choice, a finish, usage, an error.
    [openai_text("a"), openai_text("b"),
     HEAD + '"delta":{"content":"c"},"finish_reason":"stop"}]}',
     HEAD + '"delta":{"content":"d"},"finish_reason":null}],"usage":{"completion_tokens":4}}',
     '{"error":{"message":"boom"}}', openai_text("e")],
    # Bad frames that begin and end as the template does: refused as before.
    [openai_text("a"), openai_text("b"), HEAD + '"delta":{"content":"x"y"},"finish_reason"'
     ':null}]}', HEAD + '"delta":{"content":"\x01"},"finish_reason":null}]}',
     HEAD + '"delta":{"content":1},"finish_reason":null}]}',
     HEAD + '"delta":{"content":"a","role":"x"},"finish_reason":null}]}', openai_text("c")],
])
def test_text_frames_read_through_the_template_as_decoded_whole(frames: list[str]) -> None:
    # The reference: each frame read by a reader of its own (no template learnt yet).
    expected = read_all_fresh(frames)
    reader = OpenAIFrameReader()
    assert read_all(reader, frames) == expected
    assert reader._template._prefix is not None  # the template was learnt and used


def read_all_fresh(frames: list[str]) -> list[object]:
    return [read_all(OpenAIFrameReader(), [data])[0] for data in frames]


def test_the_template_is_proved_before_it_is_used() -> None:
    # "content" also names a top-level key holding the same text: the literal found last
    # is the delta's here, but if it were not, the proof would refuse the place.
    data = ('{"x":{"content":"hi"},"choices":[{"index":0,"delta":{"content":"hi"},'
            '"finish_reason":null}]}')
    reader = OpenAIFrameReader()
    assert reader.read(SSEEvent("message", data), 1.0) == [TextDelta(1.0, "hi")]
    other = data.replace('"delta":{"content":"hi"}', '"delta":{"content":"yo"}')
    assert reader.read(SSEEvent("message", other), 2.0) == [TextDelta(2.0, "yo")]
    decoy = ('{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],'
             '"x":{"content":"hi"}}')
    reader = OpenAIFrameReader()
    assert reader.read(SSEEvent("message", decoy), 1.0) == [TextDelta(1.0, "hi")]
    assert reader._template._prefix is None  # the last "content" is not the delta's
    changed = decoy.replace('"x":{"content":"hi"}', '"x":{"content":"yo"}')
    assert reader.read(SSEEvent("message", changed), 2.0) == [TextDelta(2.0, "hi")]


def test_anthropic_text_deltas_read_through_the_template() -> None:
    from anoman_tui.streaming.formats import AnthropicFrameReader

    frames = [json.dumps({"type": "content_block_delta", "index": 0,
                          "delta": {"type": "text_delta", "text": t}})
              for t in ["Hi", ' "text":"x"', "", "é"]]
    reader = AnthropicFrameReader()
    got = [reader.read(SSEEvent("content_block_delta", f), 1.0) for f in frames]
    assert got == [[TextDelta(1.0, t)] if t else [] for t in ["Hi", ' "text":"x"', "", "é"]]
    assert reader._template._prefix is not None
