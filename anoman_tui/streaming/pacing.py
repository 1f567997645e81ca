"""Paced socket reads: a fast stream is read every few milliseconds, not every token.

Each read of a socket costs the same however many bytes it brings: the event loop's
selector, the transport's `data_received`, anyio's stream and httpcore's parser (~70 us a
read, profiled at 3 x 1,000 tok/s, where it was a quarter of the app's CPU), and the
network thread's every wake-up also takes the GIL from the thread that draws. A fast
provider sends one event per token. So once a stream has produced its first text, its
reads are spaced at least `gap` seconds apart: what arrives in between waits in the
socket and comes in one read. The first text is read the moment it arrives (TTFT stays
exact); a later event is stamped at most `gap` late. With a `grid` (the app's frame), the
reads happen only `lead` before a multiple of it: once per frame, in time for it. A
`Pacer` also says whether a read is under way, and whether the one due has not begun
(`late()`), so the frame can wait for a reading thread that is late to it.

`paced_transport()` makes an httpx transport whose connections read through
`PacedBackend`; a `ModelStream` turns pacing on for its own reads with `pace()` (a
context variable, so only the task reading that stream is paced, whichever pooled
connection it uses).

The hook into httpx is one private attribute (`AsyncHTTPTransport._pool`, an httpcore
`AsyncConnectionPool`) and one of httpcore (the pool's `_network_backend`); everything
else is httpcore's public network-backend API. Should either go away in a new version,
`paced_transport()` returns the plain transport (reads unpaced, logged once); reads
straight from the socket (`_DirectReader`) rely on httpcore's anyio stream and anyio's
asyncio socket stream, and without them go through httpcore (logged once). httpx,
httpcore and anyio are pinned exactly in pyproject.toml, and tests/test_dependency_pins.py
checks each internal used here on the installed versions, naming the package whose shape
changed, so that pacing cannot switch off unnoticed.

May import: the standard library, httpx, httpcore (httpx's own transport), anyio (the
network backend httpcore runs on). Never Textual.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import select
import socket
import time
import typing
import weakref

import anyio
import httpcore
import httpx

from anoman_tui.streaming.rechunk import ChunkMerger

__all__ = ["PacedBackend", "Pacer", "ReadStamp", "pace", "paced_stream_of", "paced_transport",
           "stamp_reads"]

log = logging.getLogger(__name__)


class Pacer:
    """The pacing of one stream's reads: at most one read every `gap` seconds, and with a
    `grid`, only at `lead` seconds before a multiple of `grid` on the monotonic clock."""

    __slots__ = ("consuming", "direct", "ended", "gap", "grid", "last", "lead", "reading",
                 "reads")

    def __init__(self, gap: float, last: float, grid: float = 0.0, lead: float = 0.0) -> None:
        self.gap = gap
        self.grid = grid
        self.lead = lead
        self.last = last  # monotonic: when the last read returned
        self.reads = 0  # reads it paced (for tests and benchmarks)
        self.direct = 0  # of them, answered straight from the socket (_DirectReader)
        # A paced read returned data that its reader has not finished with: it asks for
        # the next read only once everything the last one brought is decoded.
        self.consuming = False
        self.reading = False  # a read has begun (it may wait for data) and not returned
        self.ended = False  # no read follows (the stream is over)

    def next_read(self) -> float:
        """The monotonic instant the next read may start."""
        earliest = self.last + self.gap
        grid = self.grid
        if not grid:
            return earliest
        return math.ceil((earliest + self.lead) / grid) * grid - self.lead

    def late(self, now: float) -> bool:
        """A read on the grid fell due by `now` and has not begun: the reading thread
        has not come round to it yet (on a busy machine, waiting for a core)."""
        return (bool(self.grid) and not (self.reading or self.consuming or self.ended)
                and self.next_read() <= now)

    async def wait(self) -> None:
        due = self.next_read()
        delay = due - time.monotonic()
        if delay > 0:
            if self.grid:
                await _until_grid(due, delay)
            else:
                await _sleep(delay)


async def _sleep(delay: float) -> None:
    # asyncio's own sleep where it runs (always, in this app): anyio's looks up the
    # running library on every call, 2.6% of a suite run's CPU (benchmarks/eval_load.py).
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        await anyio.sleep(delay)
    else:
        await asyncio.sleep(delay)


_GridWaiters = dict[float, list["asyncio.Future[None]"]]
_GRID_WAITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _GridWaiters] = \
    weakref.WeakKeyDictionary()


async def _until_grid(due: float, delay: float) -> None:
    """Sleep until the grid point `due` (monotonic), `delay` from now, on one timer shared
    by every stream of this loop waiting for it: at 32 streams on one grid, a timer each
    (scheduled, then popped off the loop's heap and cancelled) was ~3% of a suite run's
    CPU (benchmarks/eval_load.py). Wakes each waiter as its own sleep did."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        await anyio.sleep(delay)
        return
    table = _GRID_WAITERS.get(loop)
    if table is None:
        table = _GRID_WAITERS[loop] = {}
    waiters = table.get(due)
    if waiters is None:
        waiters = table[due] = []
        loop.call_later(delay, _wake_grid, table, due)
    future: asyncio.Future[None] = loop.create_future()
    waiters.append(future)
    await future  # (cancelled: only this waiter's future is)


def _wake_grid(table: _GridWaiters, due: float) -> None:
    for future in table.pop(due, ()):
        if not future.done():
            future.set_result(None)


_PACER: contextvars.ContextVar[Pacer | None] = contextvars.ContextVar(
    "anoman_pacer", default=None
)


class ReadStamp:
    """When the current task's latest socket read returned (monotonic), for stamping
    what it brought: the HTTP stack parses it afterwards, and under load that took up to
    30 ms between the first and the last chunk of one read."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: float | None = None


_STAMP: contextvars.ContextVar[ReadStamp | None] = contextvars.ContextVar(
    "anoman_read_stamp", default=None
)


def stamp_reads() -> ReadStamp:
    """Note in a `ReadStamp` when each of the current task's socket reads returns (from
    now on; reads through `PacedBackend` only)."""
    stamp = ReadStamp()
    _STAMP.set(stamp)
    return stamp


def pace(gap: float, grid: float = 0.0, lead: float = 0.0) -> Pacer:
    """Pace the current task's reads from now on (its first read is not delayed)."""
    pacer = Pacer(gap, time.monotonic(), grid, lead)
    _PACER.set(pacer)
    return pacer


def paced_stream_of(network_stream: object) -> _PacedStream | None:
    """The paced connection a response came on (httpcore's `network_stream` response
    extension), if it is one."""
    return network_stream if isinstance(network_stream, _PacedStream) else None


class _PacedStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: typing.Any = None
        self._poll: typing.Any = None  # select.poll of `_socket`, once looked up
        self._merger = ChunkMerger()
        self._handing_back = False  # `read_body` left the rest of the body to h11
        self._direct: _DirectReader | None = None
        self._direct_found = False  # looked up (once a paced read comes)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        # Each read's chunks reach h11 as one (rechunk.py): a pass per chunk through h11,
        # httpcore and httpx cost more than the events in them (benchmarks/eval_judge.py).
        merger = self._merger
        if self._handing_back:
            # `read_body` stopped at the end of the body's chunks: h11 reads from there.
            self._handing_back = False
            handed = merger.feed(b"")
            if handed:
                return handed
        while True:
            data = await self._read(max_bytes, timeout)
            if not data:
                return merger.take_held()  # the end: b"", or what was held, as it came
            handed = merger.feed(data)
            if handed:
                return handed

    @property
    def body_at_chunk_boundary(self) -> bool:
        """h11 has handed on every whole chunk it was given and expects the next chunk's
        header: the body's chunks may be read by `read_body` instead, until they end."""
        return self._merger.at_chunk_boundary

    async def read_body(self, timeout: float | None = None) -> tuple[bytes, bool]:
        """One read of a chunked body's data, without h11, httpcore and httpx (only from
        `body_at_chunk_boundary`): the data of the whole chunks it completed, and whether
        more may follow so. False: the rest (the last chunk and what follows, something
        that is not a chunk, or the end of the connection) is h11's, read through the
        response as before.

        Each read through the HTTP stack passed through h11's parser twice, six async
        generators and their exception mapping: ~35% of a suite run's busy time once its
        reads were paced, ~8% this way (py-spy, benchmarks/eval_load.py's suite). The read
        itself is `_read`'s: paced, stamped and flagged as before; errors are httpx's, as
        the response's own read raises."""
        try:
            data = await self._read(_BODY_READ_BYTES, timeout)
        except httpcore.TimeoutException as exc:
            raise httpx.ReadTimeout(str(exc)) from exc
        except httpcore.NetworkError as exc:
            raise httpx.ReadError(str(exc)) from exc
        if not data:
            self._handing_back = True  # the connection ended: h11 says how
            return b"", False
        payload, more = self._merger.take_payload(data)
        self._handing_back = not more
        return payload, more

    async def _read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        pacer = _PACER.get()
        if pacer is not None:
            pacer.consuming = False
            await pacer.wait()
            pacer.reading = True
        try:
            data = None
            if pacer is not None:
                direct = self._direct_reader()
                if direct is not None:
                    data = direct.recv(max_bytes)
                    if data is not None:
                        pacer.direct += 1
            if data is None:
                data = await self._inner.read(max_bytes, timeout)
        except BaseException:
            if pacer is not None:
                pacer.reading = False
            raise
        if pacer is not None:
            # Another thread asks `reading or consuming` without a lock (`ModelStream.
            # decoding`): what this read brought is marked as being consumed before the
            # read stops counting as under way and before it is stamped, so no instant
            # after the stamp sees neither (a frame would then take the events read before
            # it without these; seen once in CI under load).
            pacer.consuming = True
            pacer.reading = False
        now = time.monotonic()
        stamp = _STAMP.get()
        if stamp is not None:
            stamp.at = now
        if pacer is not None:
            pacer.last = now
            pacer.reads += 1
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # A request's head and body straight to the transport when it can take them
        # without waiting (as `_DirectReader` reads): through httpcore's anyio stream each
        # write opened a timeout scope and gave the loop a turn, ~2% of a suite run's CPU
        # (benchmarks/eval_load.py).
        direct = self._direct_reader()
        if direct is None or not direct.send(buffer):
            await self._inner.write(buffer, timeout)

    def _direct_reader(self) -> _DirectReader | None:
        if not self._direct_found:
            self._direct, self._direct_found = _DirectReader.of(self._inner), True
            if self._direct is None:
                _warn_if_plain(self._inner)
        return self._direct

    @property
    def reads_directly(self) -> bool:
        """Whether paced reads (and small writes) of this connection go straight to its
        socket: a plain TCP connection whose httpcore and anyio streams are as this module
        expects (tests/test_dependency_pins.py checks it on the pinned versions)."""
        return self._direct_reader() is not None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: typing.Any, server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return _PacedStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":
            # Asked of every idle connection on each pass over the pool; through anyio's
            # attribute lookup that is a getpeername() each time, 8.6% of a judged suite's
            # CPU (benchmarks/eval_judge.py). The socket is looked up once.
            if self._socket is None:
                self._socket = self._inner.get_extra_info("socket")
                if self._socket is not None and self._socket.fileno() >= 0:
                    # One poll object, its descriptor registered once: made anew on each
                    # ask, it was 2% of a suite run's CPU (benchmarks/eval_load.py).
                    self._poll = select.poll()
                    self._poll.register(self._socket.fileno(), select.POLLIN)
            if self._socket is not None:
                return _readable(self._socket, self._poll)
        return self._inner.get_extra_info(info)


_BODY_READ_BYTES = 64 * 1024
"""As much as httpcore asks for in a read."""

_DIRECT_WRITE_MAX = 16 * 1024
"""Writes up to this size may go straight to the transport (below asyncio's 64 KiB
high-water mark, so the transport never pauses writing for one of them)."""


class _DirectReader:
    """A paced read straight from the socket when data already waits in it (and a write
    straight to the transport, `send`).

    A paced read comes `gap` after the last one, and by then the socket almost always
    holds what arrived meanwhile. Through httpcore's anyio stream such a read still
    resumes and pauses the transport's reading (two epoll changes), waits on an event for
    the loop's next pass, and opens a timeout scope: ~0.2 ms of the event loop's time a
    read, most of a suite run's CPU (benchmarks/eval_load.py). Here the socket is asked
    once without waiting; when nothing waits (or anyio holds data of its own, or the
    stream is TLS) the read goes through httpcore as before.

    It relies on anyio's asyncio `SocketStream` (its `_transport` and `_protocol`) and
    the selector transport's `_sock`, looked up once per connection; should they change,
    `of()` finds nothing and every read takes httpcore's way (tests/test_pacing.py
    fails so that it is noticed)."""

    __slots__ = ("_protocol", "_sock", "_transport")

    def __init__(self, sock: typing.Any, transport: typing.Any, protocol: typing.Any) -> None:
        self._sock = sock
        self._transport = transport
        self._protocol = protocol

    @classmethod
    def of(cls, inner: httpcore.AsyncNetworkStream) -> _DirectReader | None:
        stream = getattr(inner, "_stream", None)
        transport = getattr(stream, "_transport", None)
        protocol = getattr(stream, "_protocol", None)
        sock = getattr(transport, "_sock", None)
        if (not isinstance(transport, asyncio.Transport) or not isinstance(sock, socket.socket)
                or sock.type != socket.SOCK_STREAM
                or not hasattr(protocol, "read_queue") or not hasattr(protocol, "read_event")
                or not hasattr(protocol, "write_event") or not hasattr(protocol, "exception")
                or not hasattr(transport, "is_reading")):
            return None  # TLS (anyio's TLSStream), another backend, or another anyio
        return cls(sock, transport, protocol)

    def recv(self, max_bytes: int) -> bytes | None:
        """What waits in the socket, or None: read the httpcore way."""
        protocol = self._protocol
        transport = self._transport
        if (protocol.read_queue or protocol.read_event.is_set() or protocol.is_at_eof
                or transport.is_closing() or transport.is_reading()):
            return None  # anyio holds data, an end or an error of its own: it goes first
        try:
            data = self._sock.recv(max_bytes)
        except (BlockingIOError, InterruptedError):
            return None  # nothing yet: wait the httpcore way
        except OSError as exc:
            # As httpcore's anyio stream reports a broken connection.
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc
        return data or None  # the end: anyio's read sees it too, and closes its side

    def send(self, data: bytes) -> bool:
        """Hand `data` to the transport if it takes it without waiting; False: nothing was
        sent, write the httpcore way (it waits, times out and reports errors)."""
        protocol = self._protocol
        transport = self._transport
        if (len(data) > _DIRECT_WRITE_MAX or transport.is_closing()
                or protocol.exception is not None or not protocol.write_event.is_set()
                or transport.get_write_buffer_size()):
            return False
        # With nothing buffered, the transport sends at once what the socket takes and
        # buffers the rest; under its high-water mark it never pauses, so anyio's send
        # would not have waited either.
        transport.write(data)
        return True


_warned_direct = False


def _warn_if_plain(inner: httpcore.AsyncNetworkStream) -> None:
    """Say once (in the log) that a plain TCP connection could not be read straight from
    its socket: httpcore's or anyio's stream no longer looks as `_DirectReader` expects,
    and every read takes httpcore's way (correct, at more CPU). A TLS connection never
    reads directly and says nothing."""
    global _warned_direct
    if _warned_direct:
        return
    try:
        plain = (inner.get_extra_info("ssl_object") is None
                 and isinstance(inner.get_extra_info("socket"), socket.socket))
    except Exception:  # a stream of another kind: nothing to say about it
        return
    if plain:
        _warned_direct = True
        log.warning("this httpcore/anyio hides the socket under a plain connection: paced "
                    "reads go through httpcore, fast streams cost more CPU")


def _readable(sock: typing.Any, poll: typing.Any = None) -> bool:
    """Whether a read would return at once (data, or the end of a closed socket), as
    httpcore's backends answer "is_readable": a zero-timeout poll of its descriptor
    (`poll`: one with that descriptor registered)."""
    fd = sock.fileno()
    if fd < 0:
        return True  # gone: the next read returns b"" (and the descriptor may be reused)
    if poll is None:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class PacedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, with streams that pace reads for a `pace()`d task."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None,
        local_address: str | None = None, socket_options: typing.Any = None,
    ) -> httpcore.AsyncNetworkStream:
        return _PacedStream(await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address,
            socket_options=socket_options,
        ))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Any = None,
    ) -> httpcore.AsyncNetworkStream:
        return _PacedStream(await self._inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options,
        ))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


_warned = False


def paced_transport(
    limits: httpx.Limits,
    wrap: typing.Callable[[httpcore.AsyncNetworkBackend], httpcore.AsyncNetworkBackend]
    | None = None,
) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose reads `pace()` can space out (see the module's doc).

    `wrap`, if given, wraps httpcore's own backend beneath the pacing (spares.py)."""
    global _warned
    from anoman_tui.streaming.tls import tls_context

    transport = httpx.AsyncHTTPTransport(limits=limits, verify=tls_context())
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(pool, httpcore.AsyncConnectionPool) and backend is not None:
        pool._network_backend = PacedBackend(wrap(backend) if wrap else backend)
    elif not _warned:
        _warned = True
        log.warning("this httpx/httpcore cannot pace reads: fast streams cost more CPU")
    return transport
