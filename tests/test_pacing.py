"""Paced reads (anoman_tui.streaming.pacing): a fast stream is read every `gap`, over real
loopback sockets, losing nothing and stamping the first text the moment it arrives."""

from __future__ import annotations

import json
from itertools import pairwise

import httpx

from anoman_tui.streaming import StreamClient, StreamDone, TextDelta
from anoman_tui.streaming.pacing import PacedBackend, paced_transport
from tests.replay_server import ReplayServer, Script
from tests.test_stream_core import make_request

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
    gap = 0.05
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
    # (The events of one read are stamped as each is parsed, microseconds apart.)
    reads = [texts[0].at]
    for text in texts[1:]:
        if text.at - reads[-1] > gap / 2:
            reads.append(text.at)
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
