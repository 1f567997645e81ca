"""One HTTP chunk per socket read: a chunked response body's chunks re-framed as one.

A streaming server writes each event as a chunk of its own (`Transfer-Encoding:
chunked`), so a paced read (`pacing.py`) that brings five events brings five chunks,
and h11, httpcore and httpx each take a pass per chunk: at 32 streams, most of the
client's CPU was that, not our decoding (benchmarks/eval_load.py). `ChunkMerger` sits
under h11 on a connection's bytes and hands it, per read, the same body as fewer, larger
chunks: the data of every complete chunk of the read joined into one. h11 reads the same
bytes of body either way; chunk boundaries carry no meaning in HTTP/1.1 (RFC 9112 §7.1),
and a chunk extension, which h11 ignores, is dropped.

It parses only what it must and is byte-exact otherwise: each response's head is passed
on as it came; a response that is not chunked (or anything it does not recognise: no
`HTTP/` status line, a chunk size that is not hex) turns it into a pass-through for the
rest of the connection, from the first byte it did not re-frame. A chunk not yet whole
is held until the read that completes it, as h11 would hold it; the last chunk and its
trailers are passed on as they came, and the next response on a kept-alive connection
starts over at its head.

Pure: the standard library only.
"""

from __future__ import annotations

_HEAD_END = b"\r\n\r\n"
_CRLF = b"\r\n"
_CHUNKED = b"\r\ntransfer-encoding: chunked\r\n"
_MAX_SIZE_LINE = 4096
"""A chunk-size line longer than this (no CRLF yet) goes to h11, which refuses it."""


class ChunkMerger:
    """The bytes of one connection, read by read, with each read's chunks merged."""

    def __init__(self) -> None:
        self._held = b""
        self._in_body = False
        self._data_only = False  # what `feed` last handed on was one merged data chunk
        self.passthrough = False

    @property
    def held(self) -> bytes:
        """What is kept for the next read (a head or a chunk not yet whole)."""
        return self._held

    def take_held(self) -> bytes:
        """At the end of the connection: whatever was held, as it came."""
        held, self._held = self._held, b""
        return held

    def feed(self, data: bytes) -> bytes:
        """What to hand on for `data`, just read (b"": hold it all, read again)."""
        if self.passthrough:
            return data
        buf = self._held + data if self._held else data
        out: list[bytes] = []
        payload: list[bytes] = []
        pos = 0
        size_limit = len(buf)
        while pos < size_limit:
            if not self._in_body:
                seen = buf[pos:pos + 5]
                if not b"HTTP/".startswith(seen):  # not a response head: not ours to read
                    return self._give_up(out, payload, buf, pos)
                end = buf.find(_HEAD_END, pos)
                if end < 0:
                    break
                head = buf[pos:end + 4]
                out.append(head)
                pos = end + 4
                if _CHUNKED not in head.lower():
                    return self._give_up(out, payload, buf, pos)
                self._in_body = True
                continue
            line_end = buf.find(_CRLF, pos)
            if line_end < 0:
                break
            try:
                size = int(buf[pos:line_end].split(b";", 1)[0].strip(), 16)
            except ValueError:
                return self._give_up(out, payload, buf, pos)
            if size < 0:
                return self._give_up(out, payload, buf, pos)
            if size == 0:
                # The last chunk, its trailers and the blank line: passed on as they came.
                end = buf.find(_HEAD_END, line_end)
                if end < 0:
                    break
                self._flush(out, payload)
                out.append(buf[pos:end + 4])
                pos = end + 4
                self._in_body = False
                continue
            data_end = line_end + 2 + size
            if len(buf) < data_end + 2:
                break
            if buf[data_end:data_end + 2] != _CRLF:
                return self._give_up(out, payload, buf, pos)
            payload.append(buf[line_end + 2:data_end])
            pos = data_end + 2
        self._data_only = not out and bool(payload) and pos == size_limit
        self._flush(out, payload)
        self._held = buf[pos:]
        return b"".join(out)

    @property
    def at_chunk_boundary(self) -> bool:
        """In a chunked body, holding nothing, and what it last handed on was data chunks
        only (merged into one): once h11 has handed that chunk's data on, it holds only
        the chunk's closing CRLF and next expects a chunk header."""
        return self._in_body and not self.passthrough and not self._held and self._data_only

    def take_payload(self, data: bytes) -> tuple[bytes, bool]:
        """At a chunk boundary, read the body's chunks without h11 (`_PacedStream.
        read_body`): the data of each whole chunk of `data` joined, and whether more may
        follow so. At the last chunk (or anything that is not a chunk) it stops and holds
        the rest, which `feed(b"")` then hands to h11 as it came: h11, still at the same
        chunk boundary, reads the end of the body (or refuses what is wrong) itself."""
        buf = self._held + data if self._held else data
        payload: list[bytes] = []
        pos = 0
        size_limit = len(buf)
        more = True
        while pos < size_limit:
            line_end = buf.find(_CRLF, pos)
            if line_end < 0:
                more = size_limit - pos <= _MAX_SIZE_LINE
                break
            try:
                size = int(buf[pos:line_end].split(b";", 1)[0].strip(), 16)
            except ValueError:
                size = 0
            data_end = line_end + 2 + size
            if size <= 0 or (size_limit >= data_end + 2
                             and buf[data_end:data_end + 2] != _CRLF):
                more = False  # the last chunk, or not a chunk: h11's to read
                break
            if size_limit < data_end + 2:
                break
            payload.append(buf[line_end + 2:data_end])
            pos = data_end + 2
        self._held = buf[pos:]
        return b"".join(payload), more

    @staticmethod
    def _flush(out: list[bytes], payload: list[bytes]) -> None:
        if payload:
            joined = b"".join(payload)
            out.append(b"%x\r\n" % len(joined) + joined + _CRLF)
            payload.clear()

    def _give_up(self, out: list[bytes], payload: list[bytes], buf: bytes, pos: int) -> bytes:
        """Pass-through from `pos` on: what was re-framed, then the rest as it came."""
        self._flush(out, payload)
        self.passthrough = True
        self._held = b""
        out.append(buf[pos:])
        return b"".join(out)
