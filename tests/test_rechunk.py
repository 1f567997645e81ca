"""`ChunkMerger` (streaming/rechunk.py): a connection's bytes, split into reads anywhere,
re-framed with each read's chunks merged, read by h11 (an independent HTTP/1.1 parser)
as the same responses with the same bodies; anything it does not re-frame is passed on
byte for byte."""

from __future__ import annotations

import random

import h11
import pytest

from anoman_tui.streaming.rechunk import ChunkMerger


def chunked_response(rng: random.Random, events: int, *, trailers: bool = False,
                     extension: bool = False) -> tuple[bytes, bytes]:
    """(the response's bytes, its body) as a streaming server writes it: one chunk per
    event."""
    body = b""
    out = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n"]
    for n in range(events):
        data = f"data: {{\"n\": {n}, \"t\": \"{'x' * rng.randint(0, 40)}\"}}\n\n".encode()
        body += data
        ext = b";name=value" if extension and n % 3 == 0 else b""
        out.append(b"%x%s\r\n" % (len(data), ext) + data + b"\r\n")
    out.append(b"0\r\nX-Trailer: yes\r\n\r\n" if trailers else b"0\r\n\r\n")
    return b"".join(out), body


def split(rng: random.Random, data: bytes) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 40))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def through_merger(reads: list[bytes]) -> list[bytes]:
    """What h11 would be handed, read by read, as `_PacedStream.read` does it."""
    merger = ChunkMerger()
    handed = []
    for data in reads:
        out = merger.feed(data)
        if out:
            handed.append(out)
    rest = merger.take_held()
    if rest:
        handed.append(rest)
    return handed


def parse(handed: list[bytes], responses: int) -> tuple[list[bytes], int]:
    """The bodies h11 reads from `handed` (a client that sent `responses` requests), and
    how many Data events it gave."""
    conn = h11.Connection(h11.CLIENT)
    bodies: list[bytes] = []
    data_events = 0
    for n in range(responses):
        conn.send(h11.Request(method="POST", target="/", headers=[
            ("Host", "x"), ("Content-Length", "0")]))
        conn.send(h11.EndOfMessage())
        body = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(handed.pop(0) if handed else b"")
                continue
            if isinstance(event, h11.Data):
                body += event.data
                data_events += 1
            if isinstance(event, h11.EndOfMessage):
                break
        bodies.append(body)
        if n < responses - 1:
            conn.start_next_cycle()
    return bodies, data_events


@pytest.mark.parametrize("seed", range(40))
def test_any_split_gives_h11_the_same_responses_in_fewer_chunks(seed: int) -> None:
    rng = random.Random(seed)
    responses = [chunked_response(rng, rng.randint(0, 30), trailers=rng.random() < 0.3,
                                  extension=rng.random() < 0.3)
                 for _ in range(rng.randint(1, 3))]  # kept alive: one after another
    wire = b"".join(r for r, _ in responses)
    reads = split(rng, wire)
    handed = through_merger(reads)
    assert len(handed) <= len(reads)
    bodies, merged_events = parse(handed, len(responses))
    assert bodies == [body for _, body in responses]
    _, plain_events = parse(list(reads), len(responses))
    assert merged_events <= plain_events


def test_a_read_of_many_whole_chunks_becomes_one_chunk() -> None:
    wire, body = chunked_response(random.Random(1), 5)
    head_end = wire.index(b"\r\n\r\n") + 4
    merger = ChunkMerger()
    assert merger.feed(wire[:head_end]) == wire[:head_end]
    assert merger.feed(wire[head_end:]) == b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    assert merger.held == b"" and not merger.passthrough


def test_a_chunk_not_yet_whole_is_held_until_it_is() -> None:
    merger = ChunkMerger()
    assert merger.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n") == b""
    assert merger.feed(b"\r\n5\r\nhel") == (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert merger.held == b"5\r\nhel"
    assert merger.feed(b"lo\r\n3\r\nab") == b"5\r\nhello\r\n"
    assert merger.take_held() == b"3\r\nab"  # the connection ended: as it came


@pytest.mark.parametrize("wire", [
    # Not chunked (a model list), then a chunked response on the same connection.
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\n",
    b"not http at all",
    b"data",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n",  # bad size
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n",  # no CRLF after
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
])
def test_what_it_does_not_re_frame_is_passed_on_byte_for_byte(wire: bytes) -> None:
    for size in (1, 3, len(wire)):
        reads = [wire[i:i + size] for i in range(0, len(wire), size)]
        assert b"".join(through_merger(reads)) == wire, size
