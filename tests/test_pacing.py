"""Paced reads (anoman_tui.streaming.pacing): a fast stream is read every `gap`, over real
loopback sockets, losing nothing and stamping the first text the moment it arrives."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import struct
import weakref
from collections import deque
from itertools import pairwise

import httpcore
import httpx
import pytest

from anoman_tui.streaming import ReasoningDelta, StreamClient, StreamDone, TextDelta
from anoman_tui.streaming.pacing import (
    PacedBackend,
    Pacer,
    _DirectReader,
    _PacedStream,
    paced_transport,
)
from tests.helpers import make_request
from tests.replay_server import ReplayServer, Script

WORDS = 240


def frame(payload: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def fast_stream() -> Script:
    """A role frame, the first word 50 ms later, then a word every millisecond."""
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    body: list[bytes | float] = [
        frame({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}), 0.05,
    ]
    for n in range(WORDS):
        body.append(frame({**chunk, "choices": [{"index": 0, "delta": {"content": f"w{n} "}}]}))
        body.append(0.001)
    body.append(frame({**chunk, "choices": [{"index": 0, "delta": {},
                                             "finish_reason": "stop"}]}))
    body.append(b"data: [DONE]\n\n")
    return Script(body=body)


def test_the_transport_reads_through_the_paced_backend() -> None:
    # Fails when a new httpx or httpcore moved what paced_transport() hooks into: the app
    # would still work, reading every event (see the module's doc).
    transport = paced_transport(httpx.Limits())
    assert isinstance(transport._pool._network_backend, PacedBackend)


async def test_a_fast_stream_is_read_every_gap_and_loses_nothing(replay: ReplayServer) -> None:
    replay.scripts["m"] = fast_stream()
    # A gap well beyond the first word's 50 ms: read on arrival and read a gap later stay
    # apart even when a busy machine delays the read by tens of milliseconds.
    gap = 0.2
    async with StreamClient(read_gap=gap) as client:
        stream = client.stream(make_request(replay, "m"))
        events = [event async for event in stream]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.result.status == "completed"
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(t.text for t in texts) == "".join(f"w{n} " for n in range(WORDS))
    # The first word is read when it arrives, 50 ms after the headers, not a gap later.
    assert done.result.metrics.ttft_s is not None
    assert 0.045 <= done.result.metrics.ttft_s < 0.05 + gap / 2
    # Then reads (and so stamps) at least `gap` apart: the ~0.25 s of words come in a
    # handful of reads instead of one per word.
    assert stream.pacer is not None
    # The events of one read carry that read's stamp (when the socket read returned,
    # however long the HTTP stack then took to hand its chunks over).
    reads = sorted({text.at for text in texts})
    assert all(b - a >= gap * 0.9 for a, b in pairwise(reads)), reads
    assert len(reads) <= 12 < WORDS / 10
    assert stream.pacer.reads <= 12


async def test_an_unpaced_client_reads_as_events_come(replay: ReplayServer) -> None:
    replay.scripts["m"] = fast_stream()
    async with StreamClient() as client:
        stream = client.stream(make_request(replay, "m"))
        events = [event async for event in stream]
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert stream.pacer is None
    assert len({t.at for t in texts}) > WORDS / 4  # many reads: stamps as they came


async def test_on_a_grid_a_fast_stream_is_read_just_before_each_frame(
    replay: ReplayServer,
) -> None:
    # The app reads a talking stream `lead` before each of its frames (a multiple of
    # `grid` on the monotonic clock), so what a read brings is drawn in that frame.
    replay.scripts["m"] = fast_stream()
    gap, grid, lead = 0.004, 0.1, 0.02
    async with StreamClient(read_gap=gap, read_grid=(grid, lead)) as client:
        stream = client.stream(make_request(replay, "m"))
        events = [event async for event in stream]
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(t.text for t in texts) == "".join(f"w{n} " for n in range(WORDS))
    assert stream.pacer is not None
    # (One read brings many HTTP chunks, each stamped as it is parsed: a few ms apart.)
    reads = [texts[0].at]
    for text in texts[1:]:
        if text.at - reads[-1] > grid / 4:
            reads.append(text.at)
    assert len(reads) >= 2
    for at in reads[1:]:
        # Never before its slot; late by less than half a grid (a loaded machine).
        assert (at + lead) % grid < grid / 2, (at, reads)
    assert all(b - a >= grid / 2 for a, b in pairwise(reads[1:])), reads


def test_the_network_thread_reads_on_the_frame_clock_grid() -> None:
    from anoman_tui.ui.network import FRAME_S, READ_LEAD_S
    from anoman_tui.ui.widgets.frame_clock import FrameClock

    assert FRAME_S == FrameClock.INTERVAL
    assert 0 < READ_LEAD_S < FRAME_S / 4


async def test_a_thinking_stream_stamps_its_first_answer_text_on_arrival(
    replay: ReplayServer,
) -> None:
    # Reasoning first: reads are paced by `gap` only until the answer's first text, so the
    # grid (which may hold a read back a whole grid) never delays the TTFT stamp.
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    body: list[bytes | float] = [
        frame({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
    ]
    for n in range(100):
        body.append(frame({**chunk, "choices": [
            {"index": 0, "delta": {"reasoning_content": f"r{n} "}}]}))
        body.append(0.004)
    body.append(frame({**chunk, "choices": [{"index": 0, "delta": {"content": "answer"}}]}))
    body.append(0.05)
    body.append(frame({**chunk, "choices": [{"index": 0, "delta": {},
                                             "finish_reason": "stop"}]}))
    body.append(b"data: [DONE]\n\n")
    replay.scripts["m"] = Script(body=body)
    grid = 0.2
    async with StreamClient(read_gap=0.004, read_grid=(grid, 0.01)) as client:
        stream = client.stream(make_request(replay, "m"))
        events = [event async for event in stream]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.result.status == "completed"
    reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    text = next(e for e in events if isinstance(e, TextDelta))
    assert "".join(r.text for r in reasoning) == "".join(f"r{n} " for n in range(100))
    # While it reasons (~0.4 s), reads are `gap` apart, not a 200 ms grid apart, so the
    # text sent 4 ms after the last reasoning is read within about a gap of it.
    # Counted in reads rather than by the longest gap, which a busy machine stretches
    # (0.18 s seen with other work beside the suite): on the grid the ~0.4 s of
    # reasoning would come in 2 or 3 reads, paced by the gap in dozens.
    stamps = [r.at for r in reasoning]
    gaps = sorted(b - a for a, b in pairwise(sorted(set(stamps))))
    assert len(set(stamps)) >= 10, stamps
    assert gaps[len(gaps) // 2] < 0.05, stamps
    assert text.at - reasoning[-1].at < 0.05
    assert stream.pacer is not None and stream.pacer.grid == grid


def test_a_read_due_on_the_grid_and_not_begun_is_late() -> None:
    # The frame waits for such a read (ThreadedStream.caught_up): the network thread has
    # not come round to it yet, and what it brings belongs in this frame.
    from anoman_tui.streaming.pacing import Pacer

    grid, lead = 0.04, 0.005
    frame = 400 * grid
    pacer = Pacer(0.004, frame - grid - lead + 0.0005, grid, lead)  # read for the last frame
    assert not pacer.late(frame - lead - 0.001)  # this frame's read is not due yet
    assert pacer.late(frame)
    pacer.reading = True  # under way (waiting for data, or returning it)
    assert not pacer.late(frame)
    pacer.reading, pacer.consuming = False, True  # returned, being decoded
    assert not pacer.late(frame)
    pacer.consuming, pacer.ended = False, True  # the stream is over: no read will come
    assert not pacer.late(frame)
    pacer.ended, pacer.last = False, frame - lead + 0.0002  # made on time
    assert not pacer.late(frame)
    assert not Pacer(0.004, frame - 1.0).late(frame)  # not on a grid (not talking yet)


async def test_a_paced_read_is_marked_while_under_way() -> None:
    import asyncio

    from anoman_tui.streaming.pacing import _PacedStream, pace

    started, release = asyncio.Event(), asyncio.Event()
    pacers: list[Pacer] = []

    class Inner:  # an httpcore network stream whose read waits for data
        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            started.set()
            await release.wait()
            return b"data"

    async def reader() -> bytes:
        pacers.append(pace(0.0, grid=0.04, lead=0.005))
        return await _PacedStream(Inner()).read(10)  # type: ignore[arg-type]

    task = asyncio.create_task(reader())
    await asyncio.wait_for(started.wait(), 5)
    pacer = pacers[0]
    assert pacer.reading and not pacer.late(pacer.next_read() + 1.0)
    release.set()
    assert await task == b"data"
    assert not pacer.reading and pacer.consuming


def test_an_idle_paced_connection_reads_readable_only_when_the_server_spoke_or_closed() -> None:
    class Inner:
        def __init__(self, sock: socket.socket) -> None:
            self.sock = sock
            self.asked: list[str] = []

        def get_extra_info(self, info: str) -> object:
            self.asked.append(info)
            return self.sock if info == "socket" else None

    ours, server = socket.socketpair()
    inner = Inner(ours)
    stream = _PacedStream(inner)  # type: ignore[arg-type]
    assert stream.get_extra_info("is_readable") is False  # idle: reusable
    server.sendall(b"x")
    assert stream.get_extra_info("is_readable") is True  # unexpected bytes: not reusable
    ours.recv(1)
    server.close()
    assert stream.get_extra_info("is_readable") is True  # closed by the server
    assert inner.asked == ["socket"]  # looked up once, then polled directly
    ours.close()


async def test_paced_reads_of_a_plain_connection_come_straight_from_its_socket(
        replay: ReplayServer) -> None:
    # Fails when a new anyio moved what _DirectReader reads beside it: paced reads would
    # still work, through httpcore, at more CPU (see the class's doc).
    replay.scripts["m"] = fast_stream()
    async with StreamClient(read_gap=0.05) as client:
        stream = client.stream(make_request(replay, "m"))
        events = [event async for event in stream]
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(t.text for t in texts) == "".join(f"w{n} " for n in range(WORDS))
    assert isinstance(events[-1], StreamDone) and events[-1].result.status == "completed"
    assert stream.pacer is not None and stream.pacer.reads >= 3
    # The words arrive faster than the reads: nearly every paced read finds them waiting.
    assert stream.pacer.direct >= stream.pacer.reads // 2, (stream.pacer.direct,
                                                            stream.pacer.reads)


class _Protocol:
    def __init__(self) -> None:
        self.read_queue: deque[bytes] = deque()
        self.read_event = asyncio.Event()
        self.is_at_eof = False


class _Transport:
    def __init__(self) -> None:
        self.reading = False
        self.closing = False

    def is_reading(self) -> bool:
        return self.reading

    def is_closing(self) -> bool:
        return self.closing


async def test_a_direct_read_leaves_to_anyio_what_anyio_holds_or_must_wait_for() -> None:
    ours, server = socket.socketpair()
    ours.setblocking(False)
    protocol, transport = _Protocol(), _Transport()
    reader = _DirectReader(ours, transport, protocol)
    assert reader.recv(1024) is None  # nothing waits: the read waits the httpcore way
    server.sendall(b"abc")
    protocol.read_queue.append(b"first")
    protocol.read_event.set()
    assert reader.recv(1024) is None  # anyio holds earlier bytes: they go first
    protocol.read_queue.clear()
    protocol.read_event.clear()
    transport.reading = True
    assert reader.recv(1024) is None  # the loop reads this socket itself just now
    transport.reading = False
    assert reader.recv(2) == b"ab" and reader.recv(1024) == b"c"
    server.close()
    assert reader.recv(1024) is None  # the end: anyio's own read sees it and closes
    ours.close()


async def test_a_connection_reset_under_a_direct_read_is_httpcores_read_error() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    ours = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    listener.close()
    ours.setblocking(False)
    ours.send(b"request")
    # Closing with unread bytes and SO_LINGER 0 resets the connection.
    server.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    server.recv(1)  # (leaves bytes unread)
    server.close()
    reader = _DirectReader(ours, _Transport(), _Protocol())
    for _ in range(200):  # the reset reaches our side at once on loopback; wait for it
        try:
            if reader.recv(1024) is None:
                await asyncio.sleep(0.005)
                continue
        except httpcore.ReadError:
            break
    else:
        pytest.fail("the reset never reached the direct read")
    ours.close()


def test_a_suite_reads_its_streams_together_on_one_grid() -> None:
    # All streams of a suite wake on the same grid points, so one pass of the event loop
    # reads them all instead of one wake-up a stream (benchmarks/eval_load.py).
    from anoman_tui.suites import engine

    pacer = Pacer(engine.READ_MIN_GAP_S, 0.0, *engine.READ_GRID)
    assert engine.READ_GRID == (engine.READ_GAP_S, 0.0)
    for last in (0.0101, 0.0333, 0.048):
        pacer.last = last
        assert pacer.next_read() == pytest.approx(engine.READ_GAP_S)


async def test_a_finished_stream_is_freed_without_the_cyclic_collector(
        replay: ReplayServer) -> None:
    # httpx's response and its body stream refer to each other; the stream core breaks
    # that once the response is closed, so a suite's thousands of streams are freed as
    # they end instead of piling up between the collector's passes (eval_load.py).
    replay.scripts["m"] = fast_stream()
    gc.collect()
    gc.disable()
    try:
        async with StreamClient(read_gap=0.05) as client:
            for _ in range(3):
                stream = client.stream(make_request(replay, "m"))
                result = await stream.wait()
                assert result.status == "completed"
                gone = weakref.ref(stream)
                del stream
                await asyncio.sleep(0)
                assert gone() is None, gc.get_referrers(gone())
    finally:
        gc.enable()


async def test_a_paced_connection_writes_its_requests_straight_to_the_transport(
        replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Fails when a new anyio moved what _DirectReader.send relies on: requests would still
    # go out, through httpcore, at more CPU.
    sent: list[bool] = []
    send = _DirectReader.send

    def counted(self: _DirectReader, data: bytes) -> bool:
        sent.append(send(self, data))
        return sent[-1]

    monkeypatch.setattr(_DirectReader, "send", counted)
    replay.scripts["m"] = fast_stream()
    async with StreamClient(read_gap=0.05) as client:
        for _ in range(2):
            result = await client.stream(make_request(replay, "m")).wait()
            assert result.status == "completed"
    assert len(sent) >= 4 and all(sent), sent  # each request's head and body


class _WriteProtocol(_Protocol):
    def __init__(self) -> None:
        super().__init__()
        self.write_event = asyncio.Event()
        self.write_event.set()
        self.exception: Exception | None = None


class _WriteTransport(_Transport):
    def __init__(self) -> None:
        super().__init__()
        self.buffered = 0
        self.written: list[bytes] = []

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def write(self, data: bytes) -> None:
        self.written.append(data)


def test_a_direct_write_leaves_to_anyio_what_it_must_wait_for_or_report() -> None:
    protocol, transport = _WriteProtocol(), _WriteTransport()
    direct = _DirectReader(None, transport, protocol)
    assert direct.send(b"head") and transport.written == [b"head"]
    transport.buffered = 10
    assert not direct.send(b"x")  # earlier bytes still queued: anyio waits for them
    transport.buffered = 0
    protocol.write_event.clear()
    assert not direct.send(b"x")  # writing paused: anyio waits for it to resume
    protocol.write_event.set()
    protocol.exception = ConnectionResetError()
    assert not direct.send(b"x")  # anyio reports the broken connection
    protocol.exception = None
    transport.closing = True
    assert not direct.send(b"x")
    transport.closing = False
    assert not direct.send(b"x" * (64 * 1024))  # might pass the high-water mark
    assert transport.written == [b"head"]


async def test_paced_streams_waiting_for_one_grid_point_share_its_timer() -> None:
    loop = asyncio.get_running_loop()
    timers: list[object] = []
    call_later = loop.call_later

    def counted(delay: float, *args: object) -> asyncio.TimerHandle:
        timers.append(args)
        return call_later(delay, *args)

    loop.call_later = counted  # type: ignore[method-assign]
    try:
        pacers = [Pacer(0.001, loop.time(), grid=0.05) for _ in range(5)]
        due = pacers[0].next_read()
        waits = [asyncio.create_task(p.wait()) for p in pacers]
        await asyncio.sleep(0)  # (each has begun its wait)
    finally:
        del loop.call_later
    waits[2].cancel()  # one stream aborted meanwhile: the others still wake
    done, _ = await asyncio.wait(waits, timeout=2)
    assert len(done) == 5 and waits[2].cancelled()
    assert all(w.exception() is None for i, w in enumerate(waits) if i != 2)
    assert loop.time() >= due - 0.001  # (asyncio may run a timer up to its clock's
    assert len(timers) == 1  # resolution early) and one timer for all five


def _paced_answer(ending: str, *, terminated: bool = True, junk: bytes = b"") -> Script:
    """A role frame, the first word, then words a few grid points long, and `ending`."""
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    body: list[bytes | float] = [
        frame({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}), 0.02]
    for n in range(40):
        body.append(frame({**chunk, "choices": [{"index": 0, "delta": {"content": f"w{n} "}}]}))
        body.append(0.003)
    if junk:
        body.append(junk)
    if terminated:
        body.append(frame({**chunk, "choices": [{"index": 0, "delta": {},
                                                 "finish_reason": "stop"}]}))
        body.append(b"data: [DONE]\n\n")
    return Script(body=body, ending=ending)  # type: ignore[arg-type]


@pytest.mark.parametrize(("ending", "terminated"), [
    ("complete", True), ("complete", False), ("truncate", True), ("truncate", False),
    ("reset", False), ("hang", False),
])
async def test_a_paced_answer_read_past_h11_ends_as_read_through_it(
        replay: ReplayServer, monkeypatch: pytest.MonkeyPatch, ending: str,
        terminated: bool) -> None:
    # The same stream read by an unpaced client (every read through h11, httpcore and
    # httpx) and by a paced one on a grid (its answer's chunks through read_body): the
    # same text, status and failure, recorded alike; the connection is kept when whole.
    taken: list[tuple[bytes, bool]] = []
    read_body = _PacedStream.read_body

    async def counted(self: _PacedStream, timeout: float | None = None) -> tuple[bytes, bool]:
        taken.append(await read_body(self, timeout))
        return taken[-1]

    monkeypatch.setattr(_PacedStream, "read_body", counted)
    replay.scripts["m"] = _paced_answer(ending, terminated=terminated)
    results = []
    for client in (StreamClient(), StreamClient(read_gap=0.001, read_grid=(0.02, 0.0))):
        async with client:
            request = make_request(replay, "m", idle_timeout=0.5, record=True)
            results.append(await client.stream(request).wait())
            if ending == "complete" and terminated:
                again = await client.stream(request).wait()
                assert again.status == "completed"
                # The connection went back to the pool and served the second request.
                assert replay.requests[-1].peer == replay.requests[-2].peer
    plain, paced = results
    assert taken and any(payload for payload, _ in taken)
    assert paced.text == plain.text and paced.text.startswith("w0 w1 ")
    assert paced.status == plain.status
    assert (paced.failure and paced.failure.kind) == (plain.failure and plain.failure.kind)
    assert paced.recording is not None and plain.recording is not None
    assert paced.recording.body == plain.recording.body
    assert paced.recording.ending == plain.recording.ending


async def test_a_paced_body_that_stops_being_chunked_is_refused_as_through_h11(
        replay: ReplayServer) -> None:
    script = _paced_answer("complete")
    script.chunked = False  # the framing written by hand: a good start, then junk
    words = [item for item in script.body if isinstance(item, bytes)][:20]
    script.body = [b"%x\r\n%s\r\n" % (len(w), w) for w in words[:1]] + [0.02] + [
        b"%x\r\n%s\r\n" % (len(w), w) for w in words[1:]] + [0.05, b"zz\r\nnot a chunk\r\n"]
    script.headers = [("Transfer-Encoding", "chunked")]
    replay.scripts["m"] = script
    results = []
    for client in (StreamClient(), StreamClient(read_gap=0.001, read_grid=(0.02, 0.0))):
        async with client:
            results.append(await client.stream(make_request(replay, "m",
                                                            idle_timeout=0.5)).wait())
    plain, paced = results
    assert plain.status == paced.status == "failed"
    assert paced.failure is not None and plain.failure is not None
    assert paced.failure.kind == plain.failure.kind and paced.text == plain.text
