"""Our SSE decoder and httpx-sse read the same events from the same valid streams.

The stream core decodes SSE itself (anoman_tui/streaming/sse.py says why); httpx-sse is
the library the rest of the Python world reads SSE with. Hypothesis writes valid event
streams, cuts the bytes into arbitrary reads, and both decoders must report the same
events: type, data, last event id, and the retry time.

The streams stay inside the language both decoders read the same way, and where they
differ the standard (WHATWG HTML, "Server-sent events", event stream interpretation)
sides with ours:
- every event has at least one `data` line and ends with exactly one blank line:
  httpx-sse also dispatches an event without data (the standard does not), and once an
  id was seen it turns every further blank line into an empty event;
- `retry` values are ASCII digits (or empty): httpx-sse takes anything `int()` takes
  ("-5", " 7", "1_0", non-ASCII digits), the standard only ASCII digits;
- no leading byte order mark: ours drops it as the standard says, httpx-sse keeps it
  in the first field's name;
- the retry time is compared once, at the end: ours applies a `retry` line when it is
  read (as the standard does), httpx-sse reports it on the next event it dispatches.
Both split lines on CR, LF and CRLF only, so values may hold U+2028, U+0085 and the like.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import httpx
from httpx_sse import EventSource
from hypothesis import given, settings
from hypothesis import strategies as st

from anoman_tui.streaming import SSEDecoder

# Any character a field's value may hold: everything but CR and LF (line ends), and
# no lone surrogates (not encodable as UTF-8).
VALUE = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=12)
UNKNOWN_NAME = st.text(st.sampled_from("abcdefgxyz_-"), min_size=1, max_size=6).filter(
    lambda name: name not in ("data", "event", "id", "retry"))


def _field(name: str) -> st.SearchStrategy[str]:
    """`name:value`, `name: value` (one space is dropped), or a bare `name` (empty value)."""
    return st.one_of(
        st.builds(lambda space, value: f"{name}:{space}{value}", st.sampled_from(["", " "]),
                  VALUE),
        st.just(name),
    )


DATA_LINE = _field("data")
OTHER_LINE = st.one_of(
    _field("event"),
    _field("id"),  # a NUL in the value makes both ignore the line
    st.builds(lambda space, digits: f"retry:{space}{digits}", st.sampled_from(["", " "]),
              st.text(st.sampled_from("0123456789"), max_size=6)),
    st.builds(lambda text: f":{text}", VALUE),  # a comment
    st.builds(lambda name, sep, value: f"{name}{sep}{value}", UNKNOWN_NAME,
              st.sampled_from(["", ":", ": "]), VALUE),
)


@st.composite
def event_lines(draw: st.DrawFn) -> list[str]:
    """One event's field lines, in any order, with at least one data line."""
    lines = [draw(DATA_LINE), *draw(st.lists(st.one_of(DATA_LINE, OTHER_LINE), max_size=5))]
    return draw(st.permutations(lines))


@st.composite
def event_stream(draw: st.DrawFn) -> tuple[bytes, int]:
    """Events, each closed by one blank line, and how many; line ends CRLF, LF or CR."""
    events = draw(st.lists(event_lines(), min_size=1, max_size=6))
    lines: list[str] = []
    for event in events:
        lines.extend([*event, ""])
    text: list[str] = []
    previous_end = ""
    for line in lines:
        ends = ["\r\n", "\n", "\r"]
        if not line and previous_end == "\r":
            # CR then a blank line ended by LF reads as one CRLF line end: the blank line
            # would vanish and two events merge. Not wrong, but not the stream drawn.
            ends.remove("\n")
        previous_end = draw(st.sampled_from(ends))
        text.append(line + previous_end)
    return "".join(text).encode("utf-8"), len(events)


def _reads(raw: bytes, cuts: set[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(raw)]
    return [raw[a:b] for a, b in itertools.pairwise(bounds)]


Decoded = tuple[list[tuple[str, str, str]], int | None]


def ours(reads: list[bytes]) -> Decoded:
    decoder = SSEDecoder()
    events = [event for read in reads for event in decoder.feed(read)] + decoder.close()
    # The standard's last event id starts as the empty string; ours says None until set.
    return [(e.event, e.data, e.id or "") for e in events], decoder.retry_ms


def httpx_sse(reads: list[bytes]) -> Decoded:
    def body() -> Iterator[bytes]:
        yield from reads

    # httpx-sse reads a response through httpx's own text decoding, fed the same reads.
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=body())
    events = list(EventSource(response).iter_sse())
    retries = [e.retry for e in events if e.retry is not None]
    return [(e.event, e.data, e.id) for e in events], (retries[-1] if retries else None)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), stream=event_stream())
def test_ours_and_httpx_sse_decode_the_same_events(
    data: st.DataObject, stream: tuple[bytes, int]
) -> None:
    raw, drawn = stream
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=len(raw) - 1), max_size=30))
    reads = _reads(raw, cuts)
    expected = httpx_sse([raw])
    # The streams are what they claim: one event per drawn event, none dropped or invented.
    assert len(expected[0]) == drawn
    assert ours(reads) == expected
    # httpx-sse is fed the same reads too: its own line splitting holds them together.
    assert httpx_sse(reads) == expected
