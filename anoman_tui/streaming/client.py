"""The stream worker: one HTTP streaming call in, one typed event stream out.

`StreamClient` owns the single shared `httpx.AsyncClient` (connection reuse
across panes and turns). `StreamClient.stream(request)` returns a
`ModelStream`: an async iterator of `StreamEvent`s that always ends with
exactly one `StreamDone` carrying the `StreamResult`.

The network is read by a producer task of the stream's own, which stamps
each read with `time.monotonic()` the moment it returns, parses it and queues
the events. A consumer that is slow to draw (a busy UI) therefore delays the
drawing, never the timestamps, so TTFT and tokens/s stay true.

A client made with `read_gap=G` (the app's, whose reads compete with drawing for one
core) reads a stream's socket at most once every G seconds once its first text has
arrived (`anoman_tui.streaming.pacing`): the first text is stamped the moment it
arrives, a later event at most G late. With `read_grid=(F, L)` too, those reads happen
only L seconds before a multiple of F on the monotonic clock (the app draws on that
grid), so a later event is stamped at most about F late.

Cancelling — `ModelStream.cancel()`, leaving `async with`, or cancelling the
task that iterates — cancels the producer, whose `async with` closes the
response, which closes the socket (the gateway cancels upstream on close).

May import: httpx, pydantic, the standard library, `anoman_tui.wire`, and the other
modules of `anoman_tui.streaming`.
Never Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from types import TracebackType
from typing import Any

import httpcore
import httpx

from anoman_tui.streaming.events import (
    ReasoningDelta,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamOpened,
    StreamResult,
    TextDelta,
)
from anoman_tui.streaming.failures import (
    ProtocolViolation,
    clean_excerpt,
    failure_from_exception,
    http_failure,
    redact,
    truncated_failure,
)
from anoman_tui.streaming.formats import frame_reader, whole_body_events
from anoman_tui.streaming.gateway_answers import ModelInfo
from anoman_tui.streaming.gateway_api import fetch_usage, list_models
from anoman_tui.streaming.pacing import (
    Pacer,
    pace,
    paced_stream_of,
    paced_transport,
    stamp_reads,
)
from anoman_tui.streaming.recorder import ResultRecorder
from anoman_tui.streaming.recording import (
    REPLAY_PANE_EXTENSION,
    RecordingCapture,
    RecordingEnding,
)
from anoman_tui.streaming.request import StreamRequest
from anoman_tui.streaming.spares import SpareConnections
from anoman_tui.streaming.sse import SSEDecoder
from anoman_tui.streaming.tls import tls_context
from anoman_tui.streaming.vocabulary import StreamFailure

log = logging.getLogger(__name__)

_REQUEST_ID_HEADERS = ("x-request-id", "request-id", "anoman-request-id", "x-anoman-request-id")
_MAX_ERROR_BODY = 64 * 1024
_MAX_JSON_BODY = 64 * 1024 * 1024
_CONTENT = (TextDelta, ReasoningDelta)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_DRAIN_TIMEOUT_S = 0.05
_DRAIN_LIMIT_BYTES = 64 * 1024
# httpcore trace events that mark a request's first bytes leaving (a new connection, or
# the request line on a pooled one).
_WIRE_START_EVENTS = frozenset({
    "connection.connect_tcp.started",
    "connection.connect_unix_socket.started",
    "http11.send_request_headers.started",
    "http2.send_request_headers.started",
})

Emit = Callable[[list[StreamEvent]], None]


class StreamClient:
    """Holds the shared HTTP connection pool; make one per app and close it at exit."""

    def __init__(self, http: httpx.AsyncClient | None = None, *, read_gap: float = 0.0,
                 read_grid: tuple[float, float] | None = None,
                 pace_reasoning: bool = True, keep_events: bool = False,
                 max_keepalive: int = 32) -> None:
        self.read_gap = read_gap  # seconds between reads of a stream once it talks
        self.keep_events = keep_events  # each stream keeps its events (ModelStream.events)
        self.read_grid = read_grid  # (grid, lead): reads only `lead` before a grid point
        # False: reads are paced only once answer text has come (a reasoning model's
        # first answer token, its TTFT, is then stamped on arrival too).
        self.pace_reasoning = pace_reasoning
        self._owns_http = http is None
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=max_keepalive)
        # The app's client (paced reads) also replaces what an abort closes (spares.py):
        # a spare lives as long as the pool keeps an idle connection.
        self.spares: SpareConnections | None = None

        def with_spares(inner: httpcore.AsyncNetworkBackend) -> SpareConnections:
            self.spares = SpareConnections(inner, ttl=limits.keepalive_expiry or 5.0)
            return self.spares

        self._http = http or httpx.AsyncClient(
            limits=limits,
            verify=tls_context(),
            follow_redirects=False,
            transport=paced_transport(limits, with_spares) if read_gap > 0 else None,
        )

    def stream(self, request: StreamRequest) -> ModelStream:
        return ModelStream(self._http, request, read_gap=self.read_gap,
                           read_grid=self.read_grid, pace_reasoning=self.pace_reasoning,
                           on_abort=self._replace_aborted if self.spares else None,
                           keep_events=self.keep_events)

    def _replace_aborted(self, url: httpx.URL, timeout: float) -> None:
        """An aborted stream closed its connection: open a spare to the same server."""
        if self.spares is not None and url.scheme in _DEFAULT_PORTS:
            self.spares.open_spare(url.raw_host.decode("ascii"),
                                   url.port or _DEFAULT_PORTS[url.scheme], timeout)

    async def list_models(
        self, base_url: str, api_key: str, extra_headers: tuple[tuple[str, str], ...] = (),
        path: str = "/v1/models",
    ) -> list[ModelInfo]:
        """`GET /v1/models` (or `path`); raises `GatewayRequestError` with a sentence."""
        return await list_models(self._http, base_url, api_key, extra_headers, path)

    async def fetch_usage(
        self, base_url: str, api_key: str, limit: int = 100
    ) -> list[dict[str, Any]]:
        """`GET /anoman/v1/usage?limit=N`: ledger rows, newest first."""
        return await fetch_usage(self._http, base_url, api_key, limit)

    async def aclose(self) -> None:
        if self.spares is not None:
            await self.spares.aclose()
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> StreamClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


_NO_BODY = httpx.ByteStream(b"")
"""A closed response's body (see `ModelStream._produce`)."""


class ModelStream:
    """One model's stream. Iterate it (`async for event in stream`), or `await stream.wait()`."""

    def __init__(self, http: httpx.AsyncClient, request: StreamRequest, *,
                 read_gap: float = 0.0, read_grid: tuple[float, float] | None = None,
                 on_abort: Callable[[httpx.URL, float], None] | None = None,
                 pace_reasoning: bool = True, keep_events: bool = False,
                 max_keepalive: int = 32) -> None:
        self.request = request
        self._paced_from = _CONTENT if pace_reasoning else (TextDelta,)
        # Told when this stream is aborted after its request went out (its connection is
        # closed, not pooled): the client opens a spare in its place.
        self._on_abort = on_abort
        self._http = http
        self._read_gap = read_gap
        self._read_grid = read_grid
        self.pacer: Pacer | None = None  # once its reads are paced (read_gap)
        self.emitted = 0  # events queued for the iterator so far
        self._queue: asyncio.Queue[list[StreamEvent]] = asyncio.Queue()
        self._ready: deque[StreamEvent] = deque()
        self._task: asyncio.Task[None] | None = None
        self._finished = False
        self._started = False
        # `wait()` called before the stream started: nobody iterates, so the events are
        # not queued (at 32 streams a token each, the queue was 5% of a suite's CPU).
        self._unread = False
        self._cancel_requested = False
        self.result: StreamResult | None = None
        self.sent_at: float | None = None  # monotonic instant the request went out
        self._terminated_at: float | None = None  # arrival of the terminator frame
        self._body: AsyncIterator[bytes] | None = None  # the response body being read
        # Keeps every read when the request asks for a recording; None costs nothing.
        self._capture: RecordingCapture | None = None
        self.events: list[StreamEvent] | None = [] if keep_events else None
        """Every event so far, StreamDone last (`keep_events`: a stream someone may start
        watching while it runs, whoever consumes it; the suite screen's open case)."""
        self.watchers: list[Callable[[list[StreamEvent]], None]] = []
        """Told each batch of events as it is emitted, on the stream's loop (with
        `events`: a watcher takes `events` first, then what follows)."""

    def start(self) -> None:
        """Send the request now (iteration starts it too)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._produce(), name=f"stream:{self.request.model}"
            )

    def cancel(self) -> None:
        """Close the connection at once; the stream then ends with a `cancelled` result."""
        if self._task is None:
            self.start()
        assert self._task is not None
        if not self._started:
            # A task cancelled before its first step never runs its body, so it could not
            # report the cancellation; let it start and see the request instead.
            self._cancel_requested = True
        elif not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def decoding(self) -> bool:
        """A paced read brought data whose events are not all in `emitted` yet. With
        `emitted`, lets another thread tell when every event read so far has reached it:
        read `decoding` first, then `emitted`."""
        pacer = self.pacer
        return pacer is not None and pacer.consuming

    @property
    def read_late(self) -> bool:
        """A paced read is due and has not begun (see `Pacer.late`): what it will bring
        is not in `emitted` yet, though it was meant to be by now."""
        pacer = self.pacer
        return pacer is not None and pacer.late(time.monotonic())

    async def wait(self) -> StreamResult:
        """Drain the stream and return its result."""
        if self._task is None:
            self._unread = True
            self.start()
            assert self._task is not None
            try:
                await self._task
            except asyncio.CancelledError:
                self.cancel()  # whoever waits was cancelled: close the connection
                raise
            assert self.result is not None
            return self.result
        async for _ in self:
            pass
        assert self.result is not None
        return self.result

    async def aclose(self) -> None:
        """Cancel if still running and wait until the connection is closed."""
        if self._task is None:
            return
        self.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def __aiter__(self) -> ModelStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self._ready:
            if self._finished:
                raise StopAsyncIteration
            self.start()
            try:
                batch = await self._queue.get()
            except asyncio.CancelledError:
                # Whoever iterates us was cancelled: the connection must not outlive it.
                self.cancel()
                raise
            self._ready.extend(batch)
        event = self._ready.popleft()
        if isinstance(event, StreamDone):
            self._finished = True
            self.result = event.result
        return event

    async def __aenter__(self) -> ModelStream:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the producer ---------------------------------------------------------

    async def _produce(self) -> None:
        request = self.request
        # Provisional; re-stamped below when the request starts onto the wire.
        self.sent_at = time.monotonic()
        recorder = ResultRecorder(self.sent_at)
        on_wire = False

        async def trace(event: str, info: object) -> None:
            # httpcore's trace hook: TTFT starts when the request's bytes start to leave
            # (opening a connection if one is needed), not while this client builds the
            # request or waits for the GIL behind a UI (measured 1-6 ms under load).
            nonlocal on_wire
            if not on_wire and event in _WIRE_START_EVENTS:
                on_wire = True
                self.sent_at = recorder.sent_at = time.monotonic()
        opened = False
        completed = False
        response: httpx.Response | None = None
        ending: RecordingEnding = "completed"
        capture = self._capture = RecordingCapture(request) if request.record else None
        extensions: dict[str, object] = {"trace": trace}
        if request.pane is not None:
            extensions[REPLAY_PANE_EXTENSION] = request.pane
        queue = self._queue

        def emit(events: list[StreamEvent]) -> None:
            for index, event in enumerate(events):
                if type(event) is StreamFailed:
                    # A server may echo the key in an error frame: mask it before anyone sees it.
                    failure = redact(event.failure, secret)
                    if failure.kind == "stream_error" and failure.completion_tokens is None:
                        # No Anoman count in the frame: the tokens received (usage, else
                        # the text chunks, one token each) are the best there is.
                        failure = replace(failure, completion_tokens=recorder.completion_tokens())
                    event = events[index] = StreamFailed(event.at, failure)
                recorder.record(event)
            if events:
                self.emitted += len(events)
                if not self._unread:
                    queue.put_nowait(events)
                if self.events is not None:
                    self.events += events
                    for watcher in self.watchers:
                        watcher(events)

        def fail(failure: StreamFailure) -> None:
            emit([StreamFailed(time.monotonic(), failure)])

        secret = request.api_key.get_secret_value()
        timeout = httpx.Timeout(
            connect=request.connect_timeout,
            read=request.idle_timeout,
            write=request.connect_timeout,
            pool=request.connect_timeout,
        )
        self._started = True
        try:
            if self._cancel_requested:
                raise asyncio.CancelledError
            async with self._http.stream(
                "POST",
                request.url,
                json=request.body(),
                headers=request.headers(),
                timeout=timeout,
                extensions=extensions,
            ) as response:
                at = time.monotonic()
                headers = {k.lower(): v for k, v in response.headers.items()}
                if capture is not None:
                    capture.opened(at, response.status_code, headers)
                if not 200 <= response.status_code < 300:
                    body = await _read_limited(response, _MAX_ERROR_BODY, capture)
                    recorder.http_status = response.status_code
                    route = f"POST {request.request_path}"
                    fail(http_failure(response.status_code, headers, body, route=route,
                                      key_env=request.key_env))
                    return
                content_type = headers.get("content-type", "")
                request_id = next((headers[h] for h in _REQUEST_ID_HEADERS if h in headers), None)
                emit([StreamOpened(at, response.status_code, headers, request_id, content_type)])
                opened = True
                media = content_type.split(";", 1)[0].strip().lower()
                if media == "application/json":
                    body = await _read_limited(response, _MAX_JSON_BODY, capture)
                    emit(whole_body_events(body, time.monotonic()))
                    completed = True
                    return
                if media != "text/event-stream":
                    raise ProtocolViolation(
                        f"expected text/event-stream, got {clean_excerpt(content_type) or 'none'}"
                    )
                completed = await self._read_events(response, emit)
                if completed:
                    await self._drain_for_reuse()
                if not completed and recorder.failure is None:
                    fail(truncated_failure(recorder.text_chunks))
        except (asyncio.CancelledError, Exception) as exc:  # a bug ends this stream, not the app
            ending = _ending(exc)
            if ending == "cancelled" and on_wire and self._on_abort is not None:
                self._on_abort(httpx.URL(request.url), request.connect_timeout)
            if not isinstance(exc, (asyncio.CancelledError, ProtocolViolation, httpx.HTTPError)):
                log.exception("stream for model %s failed unexpectedly", request.model)
            fail(
                failure_from_exception(
                    exc,
                    opened=opened,
                    chunks=recorder.text_chunks,
                    completion_tokens=recorder.completion_tokens(),
                    idle_timeout=request.idle_timeout,
                    host=_host(request),
                )
            )
        finally:
            if response is not None:
                # httpx's response and its body stream refer to each other: left so, the
                # whole stream (request, connection's stream, recording, this object) is
                # freed only by the cyclic collector, and a suite run's memory grew by
                # tens of MB between its passes (benchmarks/eval_load.py). The response is
                # closed here, so its body is no longer needed.
                response.stream = _NO_BODY
            self._body = None
            if self.pacer is not None:
                self.pacer.consuming = False  # (its last read is not followed by another)
                self.pacer.ended = True
            ended = self._terminated_at if completed and self._terminated_at else time.monotonic()
            result = recorder.result(ended, completed)
            if capture is not None:
                recording = capture.finish(self.sent_at, time.monotonic(), ending)
                result = replace(result, recording=recording)
            self.emitted += 1
            done = StreamDone(ended, result)
            if self._unread:
                self.result, self._finished = result, True
            else:
                queue.put_nowait([done])
            if self.events is not None:
                self.events.append(done)
                for watcher in self.watchers:
                    watcher([done])
            if result.failure is not None:
                # The same words as the pane's badge and `compare` (vocabulary.py).
                log.info("stream %s (%s) %s: %s", request.pane, request.model, result.status,
                         result.failure.message)

    async def _read_events(self, response: httpx.Response, emit: Emit) -> bool:
        """Read until the terminator (True), a failure frame, or EOF (False)."""
        decoder = SSEDecoder()
        reader = frame_reader(self.request.endpoint)
        monotonic = time.monotonic
        read = reader.read
        capture = self._capture
        self._body = body = response.aiter_bytes()
        gap = self._read_gap
        answering = False  # answer text has arrived: reads may be paced on the grid
        # Each chunk is stamped with the return of the socket read that brought it (if
        # the transport is the paced one; else when the chunk comes out of the stack).
        read_stamp = stamp_reads()
        # A paced connection's body, once paced on the grid, is read past h11 (below).
        paced = paced_stream_of(response.extensions.get("network_stream")) if gap else None

        batch: list[StreamEvent] = []  # the events of the last read

        def take(chunk: bytes, at: float) -> bool | None:
            """Decode one read: True at the terminator, False at a failure frame."""
            nonlocal batch
            if capture is not None:
                capture.read(at, chunk)
            batch = []
            for sse in decoder.feed(chunk):
                events = read(sse, at)
                if events:
                    batch += events
                    if StreamFailed in map(type, events):
                        emit(batch)
                        return False
                if reader.done:
                    emit(batch)
                    self._terminated_at = at
                    return True
            emit(batch)
            return None

        async for chunk in body:
            at = read_stamp.at or monotonic()
            ended = take(chunk, at)
            if ended is not None:
                return ended
            if gap and not answering:
                if self.pacer is None and any(type(e) in self._paced_from for e in batch):
                    # The first text or reasoning is in: read at most every `gap`.
                    self.pacer = pace(gap)
                if self.pacer is not None and TextDelta in map(type, batch):
                    # The first answer text is in (TTFT, stamped on arrival): from now on
                    # only on the grid too, which may stamp a later event a grid late.
                    answering = True
                    if self._read_grid is not None:
                        self.pacer.grid, self.pacer.lead = self._read_grid
            if answering and paced is not None and paced.body_at_chunk_boundary:
                break
        else:
            # The body ended before the terminator. Nothing is left to decode: an event
            # without its blank line is discarded at the end of a stream
            # (docs/wire-contract.md §10), so the caller reports the stream truncated.
            return False
        # Paced reads of the answer's chunks straight from the connection
        # (`pacing._PacedStream.read_body`): the same bytes, reads and stamps as through
        # httpx.
        assert paced is not None
        timeout = self.request.idle_timeout
        more = True
        while more:
            payload, more = await paced.read_body(timeout)
            if payload:
                ended = take(payload, read_stamp.at or monotonic())
                if ended is not None:
                    return ended
        # The end of the body (or what is wrong with it), through h11 as before.
        async for chunk in body:
            ended = take(chunk, read_stamp.at or monotonic())
            if ended is not None:
                return ended
        return False

    async def _drain_for_reuse(self) -> None:
        """Read what follows the terminator (normally only the end of the chunked body).

        Then the connection goes back to the pool; closed mid-body it cannot, and the
        next request pays for a new connection inside its TTFT (measured 1-3 ms on
        loopback under load; a TCP and TLS handshake to a real gateway). Bounded: a
        server that keeps sending is simply disconnected.
        """
        body = self._body
        if body is None:
            return
        drained = 0
        try:
            async with asyncio.timeout(_DRAIN_TIMEOUT_S):
                async for chunk in body:
                    if self._capture is not None:
                        self._capture.read(time.monotonic(), chunk)
                    drained += len(chunk)
                    if drained > _DRAIN_LIMIT_BYTES:
                        break
        except (TimeoutError, httpx.HTTPError):
            pass
        except asyncio.CancelledError:
            pass  # the answer is complete: an abort now only closes the connection


async def _read_limited(
    response: httpx.Response, limit: int, capture: RecordingCapture | None
) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        if capture is not None:
            capture.read(time.monotonic(), chunk)
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


def _ending(exc: BaseException) -> RecordingEnding:
    """How the body ended, for a recording, when reading it raised `exc`."""
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    if isinstance(exc, httpx.ReadTimeout):
        return "stalled"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "closed"
    if isinstance(exc, httpx.HTTPError):
        return "reset"
    return "completed"  # the core stopped reading on its own (a malformed frame)


def _host(request: StreamRequest) -> str:
    url = httpx.URL(request.base_url)
    port = f":{url.port}" if url.port else ""
    return f"{url.host}{port}"
