"""Spare connections: an aborted stream leaves a connection ready in its place.

An HTTP/1.1 response cannot be stopped halfway and its connection kept: aborting a
stream closes its connection. A stream that ends on its own hands its connection back
to the pool, and the next request to that server reuses it; after an abort, the next
request (a retry, the next comparison) would open a new one inside its TTFT, which
counts from the connect (docs/wire-contract.md §7). That is a TCP handshake to a real
gateway, and 1-12 ms on loopback when the machine is busy
(benchmarks/app_metrics_truth.py: the first try after the aborts of a load).

`SpareConnections` is an httpcore network backend that wraps the real one. After an
abort, `open_spare()` connects to the same server in the background; the next
`connect_tcp()` there takes that connection instead of making one, so the request's
first bytes leave at once, as on a pooled connection. A spare:

* is opened only to a host and port this backend has already connected to itself (a
  request sent through a proxy never reaches it, so no spare bypasses the proxy);
* lives at most as long as the pool keeps an idle connection (`ttl`, httpx's
  `keepalive_expiry`) and is then closed; at most `per_server` wait per server;
* is checked before use: one the server has closed (or written to) is dropped, and
  the request connects as usual;
* is plain TCP; TLS, when the URL asks for it, is started on it by httpcore as on any
  new connection.

A spare that cannot be opened is simply not there: the next request connects itself and
reports what goes wrong.

May import: the standard library and httpcore. Never Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import typing

import httpcore

__all__ = ["SpareConnections"]

log = logging.getLogger(__name__)

Server = tuple[str, int]


class SpareConnections(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, plus connections opened ahead for `open_spare()`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, *, ttl: float = 5.0,
                 per_server: int = 3) -> None:
        self._inner = inner
        self.ttl = ttl
        self.per_server = per_server
        self._known: set[Server] = set()
        # Each waiting spare with the timer that closes it after `ttl`.
        self._spares: dict[Server, list[tuple[asyncio.TimerHandle,
                                              httpcore.AsyncNetworkStream]]] = {}
        self._opening: dict[Server, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # opening or closing spares
        self._openers: set[asyncio.Task[None]] = set()  # of those, the opening ones
        self._closed = False
        self.used = 0  # spares handed to a request (for tests and benchmarks)

    # -- the backend ---------------------------------------------------------------
    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None,
        local_address: str | None = None, socket_options: typing.Any = None,
    ) -> httpcore.AsyncNetworkStream:
        if local_address is None and not socket_options:
            self._known.add((host, port))
            spare = self._take((host, port))
            if spare is not None:
                self.used += 1
                return spare
        return await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Any = None,
    ) -> httpcore.AsyncNetworkStream:
        return await self._inner.connect_unix_socket(
            path, timeout=timeout, socket_options=socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)

    # -- spares --------------------------------------------------------------------
    def spares(self, host: str, port: int) -> int:
        """How many spares wait for `host`:`port` (opened, not yet used or expired)."""
        return len(self._spares.get((host, port), ()))

    def open_spare(self, host: str, port: int, timeout: float | None = None) -> None:
        """Connect to `host`:`port` in the background, for the next request there.

        Call from the event loop the pool runs on. Does nothing for a server this backend
        has not connected to, once `aclose()` ran, or when enough spares wait already."""
        server = (host, port)
        if self._closed or server not in self._known:
            return
        if self.spares(host, port) + self._opening.get(server, 0) >= self.per_server:
            return
        self._opening[server] = self._opening.get(server, 0) + 1
        opener = self._spawn(self._open(server, timeout))
        self._openers.add(opener)
        opener.add_done_callback(self._openers.discard)

    async def _open(self, server: Server, timeout: float | None) -> None:
        try:
            stream = await self._inner.connect_tcp(server[0], server[1], timeout=timeout)
        except Exception as exc:  # the next request connects itself and says what is wrong
            log.debug("no spare connection to %s:%s: %s", server[0], server[1], exc)
            return
        finally:
            self._opening[server] -= 1
        if self._closed:
            await _close(stream)
            return
        timer = asyncio.get_running_loop().call_later(self.ttl, self._expire, server, stream)
        self._spares.setdefault(server, []).append((timer, stream))

    def _take(self, server: Server) -> httpcore.AsyncNetworkStream | None:
        spares = self._spares.get(server)
        while spares:
            timer, stream = spares.pop()  # the newest first
            timer.cancel()
            # Readable while idle means the server closed it (or sent what it should
            # not): a request on it would fail, so it is dropped.
            if not stream.get_extra_info("is_readable"):
                return stream
            self._spawn(_close(stream))
        return None

    def _expire(self, server: Server, stream: httpcore.AsyncNetworkStream) -> None:
        spares = self._spares.get(server, [])
        for index, (_timer, waiting) in enumerate(spares):
            if waiting is stream:
                del spares[index]
                self._spawn(_close(stream))
                return

    def _spawn(self, work: typing.Coroutine[typing.Any, typing.Any, None]
               ) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Close every spare and stop opening new ones."""
        self._closed = True
        for opener in self._openers:  # no waiting for a connect at exit
            opener.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for spares in self._spares.values():
            for timer, stream in spares:
                timer.cancel()
                await _close(stream)
        self._spares.clear()


async def _close(stream: httpcore.AsyncNetworkStream) -> None:
    with contextlib.suppress(Exception):
        await stream.aclose()
