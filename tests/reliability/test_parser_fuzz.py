"""Fuzzing the stream parser: random bytes and mutated valid streams, in reads of
any size, through the real `ModelStream` (httpx with an in-memory transport, so thousands
of cases run in seconds). Whatever arrives, the stream ends with one result, never an
exception, and a failure is only ever `protocol_error` or `truncated` (a mutation that
happens to forge an error frame may give `stream_error`). The client's catch-all for its
own bugs ("unexpected client error") must never be what answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoman_tui.streaming import EndpointFormat, SSEDecoder, StreamClient, StreamDone
from anoman_tui.streaming.failures import ProtocolViolation
from anoman_tui.streaming.formats import frame_reader
from anoman_tui.streaming.sse import SSEEvent
from tests.reliability.helpers import FORMATS, request, spec_frames

FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
ALLOWED = {"protocol_error", "truncated", "stream_error"}
FUZZ_CASES: list[int] = [0]


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes], error: bool) -> None:
        self._chunks = chunks
        self._error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk
        if self._error:
            raise httpx.ReadError("connection reset by peer")


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


async def run_stream(endpoint: EndpointFormat, chunks: list[bytes], *, content_type: str,
                     error: bool) -> None:
    def handler(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type},
                              stream=_Chunks(chunks, error))

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with StreamClient(http) as client:
        stream = client.stream(request("http://gateway.test", "m", endpoint, idle_timeout=5))
        events = [event async for event in stream]
    await http.aclose()
    assert isinstance(events[-1], StreamDone)
    assert sum(isinstance(e, StreamDone) for e in events) == 1
    result = events[-1].result
    FUZZ_CASES[0] += 1
    if result.status == "completed":
        return
    assert result.failure is not None
    assert result.failure.kind in ALLOWED, result.failure
    assert "unexpected client error" not in result.failure.message, result.failure
    assert not result.committed


def fuzz_once(endpoint: EndpointFormat, chunks: list[bytes], content_type: str,
              error: bool, caplog: pytest.LogCaptureFixture) -> None:
    caplog.clear()
    started = time.monotonic()
    asyncio.run(run_stream(endpoint, chunks, content_type=content_type, error=error))
    assert time.monotonic() - started < 5.0  # bounded: no quadratic blow-up, no hang
    bugs = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bugs, bugs[0].getMessage()


@pytest.mark.parametrize("endpoint", FORMATS)
@FUZZ
@given(data=st.binary(max_size=2048), cuts=st.lists(st.integers(0, 4096), max_size=12),
       error=st.booleans())
def test_random_bytes(endpoint: EndpointFormat, data: bytes, cuts: list[int], error: bool,
                      caplog: pytest.LogCaptureFixture) -> None:
    fuzz_once(endpoint, split(data, cuts), "text/event-stream", error, caplog)


@pytest.mark.parametrize("endpoint", FORMATS)
@FUZZ
@given(data=st.binary(max_size=1024))
def test_random_json_bodies(endpoint: EndpointFormat, data: bytes,
                            caplog: pytest.LogCaptureFixture) -> None:
    # The cache-hit path: a whole JSON body instead of SSE.
    fuzz_once(endpoint, [data], "application/json", False, caplog)


_mutation = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 4000), st.integers(1, 40)),
    st.tuples(st.just("insert"), st.integers(0, 4000), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("flip"), st.integers(0, 4000), st.integers(1, 255)),
    st.tuples(st.just("dup"), st.integers(0, 4000), st.integers(1, 200)),
    st.tuples(st.just("token"), st.integers(0, 4000),
              st.sampled_from([b'"', b"{", b"}", b"[", b"]", b"\n", b"\r", b"\n\n", b":",
                               b"data:", b"event: error\n", b"null", b"1e999", b"\\u",
                               b"\\ud800", b"\xff", b"\xe2\x82", b"\x00", b'"choices":',
                               b'"_anoman":', b'"error":', b'"usage":', b"[DONE]"])),
)


def mutate(data: bytes, mutations: list[tuple[str, int, object]]) -> bytes:
    buf = bytearray(data)
    for op, pos, arg in mutations:
        at = pos % (len(buf) + 1)
        if op == "delete":
            assert isinstance(arg, int)
            del buf[at : at + arg]
        elif op in ("insert", "token"):
            assert isinstance(arg, bytes)
            buf[at:at] = arg
        elif op == "flip" and at < len(buf):
            assert isinstance(arg, int)
            buf[at] ^= arg
        elif op == "dup":
            assert isinstance(arg, int)
            buf[at:at] = buf[at : at + arg]
    return bytes(buf)


@pytest.mark.parametrize("endpoint", FORMATS)
@FUZZ
@given(mutations=st.lists(_mutation, min_size=1, max_size=6),
       cuts=st.lists(st.integers(0, 4096), max_size=12), error=st.booleans())
def test_mutated_valid_streams(endpoint: EndpointFormat, mutations: list[tuple[str, int, object]],
                               cuts: list[int], error: bool,
                               caplog: pytest.LogCaptureFixture) -> None:
    data = mutate(b"".join(spec_frames(endpoint)), mutations)
    fuzz_once(endpoint, split(data, cuts), "text/event-stream", error, caplog)


@pytest.mark.parametrize("endpoint", FORMATS)
@FUZZ
@given(data=st.text(max_size=300), event=st.sampled_from(
    ["message", "error", "anoman", "message_start", "message_delta", "content_block_delta",
     "content_block_start", "message_stop", "ping", "x"]))
def test_frame_reader_raises_only_protocol_violations(endpoint: EndpointFormat, data: str,
                                                      event: str) -> None:
    reader = frame_reader(endpoint)
    with contextlib.suppress(ProtocolViolation):
        reader.read(SSEEvent(event, data), 0.0)


@FUZZ
@given(data=st.binary(max_size=4096), cuts=st.lists(st.integers(0, 8192), max_size=20))
def test_sse_decoder_never_raises(data: bytes, cuts: list[int]) -> None:
    decoder = SSEDecoder()
    for chunk in split(data, cuts):
        decoder.feed(chunk)
    decoder.close()


def test_fuzz_figures() -> None:
    print(f"\nfuzzed streams through ModelStream: {FUZZ_CASES[0]}")
