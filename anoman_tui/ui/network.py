"""Streams read off the UI's thread: one network thread with its own event loop.

A `ModelStream` stamps each network read with `time.monotonic()` when its producer task
runs. On the UI's event loop that task waits behind drawing (a flush, a frame: 10-50 ms),
so the request went out late and first-token stamps came late: measured with
benchmarks/app_metrics_truth.py, TTFT read +26..+62 ms against a 0.30 s schedule while two
other panes drew at 300 tok/s. `NetworkThread` runs every stream (and its own
`StreamClient`, since an httpx client belongs to one loop) on a loop in a daemon thread
that does nothing else, so requests leave at once and reads are stamped when they arrive
(bounded by the GIL switch interval, not by a frame). Aborts are handed to that loop too,
so closing the connection never waits for the UI.

While the UI thread draws it holds the GIL, and the network thread waits up to the switch
interval for it after every socket call; sending a request takes several, so at the
default 5 ms TTFT still read up to +46 ms. The thread lowers the interval to
`SWITCH_INTERVAL_S` (measured at 0.5 ms: TTFT error within +3..+9 ms under the same load;
CPU cost in benchmarks/app_display_lag.py). Since the core stamps a request when its
first bytes reach the wire rather than when it starts building it, the error left is
+1..+5 ms.

Its client reads a stream that has started to talk once per frame, `READ_LEAD_S` before
the app draws (`anoman_tui.streaming.pacing`): a fast provider sends an event per token,
each read costs the same however much it brings (~0.3 ms of this thread), and each
wake-up of this thread takes the GIL from the one that draws. Reading only when a frame
is about to show what was read costs little lag: what arrives after the read would mostly
have missed that frame anyway (display lag p50 +7 ms, p99 unchanged). Measured with
benchmarks/app_display_lag.py: reading at most every 4 ms had brought 3 x 1,000 tok/s
from 81-87% to ~55% of a core; once per frame, this thread's CPU at 3 x 100 fell from
1.0-1.3 s to 0.3 s a run and the app's from 36-47% to 22-30%. TTFT is still stamped on
arrival, later tokens at most a frame late (benchmarks/app_metrics_truth.py).

`ThreadedStream` is what a pane iterates on the UI loop: the network thread hands events
over in batches (at most one pending wake-up of the UI loop per stream, however many reads
arrive while the UI is busy), so the UI's cost per read does not grow with the rate.
A frame does not wait for that wake-up: as it begins it takes the text read for it
(`take_deltas()`), after waiting briefly while a read is still being decoded
(`caught_up`; see `anoman_tui.ui.widgets.frame_clock`).

May import: the standard library and `anoman_tui.streaming`. Never Textual.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from anoman_tui.streaming import (
    ReasoningDelta,
    StreamDone,
    StreamEvent,
    StreamResult,
    TextDelta,
)

if TYPE_CHECKING:
    # The HTTP stack (httpcore and what it brings) is imported as the thread starts,
    # after the first paint; the request's pydantic model with the first request.
    from anoman_tui.streaming import ModelStream, StreamClient, StreamRequest

__all__ = ["NetworkThread", "ThreadedStream"]

T = TypeVar("T")

SWITCH_INTERVAL_S = 0.0005
READ_GAP_S = 0.004
"""Seconds at least between reads of a talking stream (`StreamClient(read_gap=)`)."""
FRAME_S = 0.04
"""The grid the app draws on (`FrameClock.INTERVAL`, which imports Textual: a test keeps
the two equal). A talking stream is read once per frame, `READ_LEAD_S` before it."""
READ_LEAD_S = 0.005
"""How long before a frame the streams are read: time for the network thread to parse
what a read brings and for the UI to take it in, so that it is drawn in that frame."""


class NetworkThread:
    """A daemon thread running an asyncio loop for the app's streams."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: StreamClient | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the thread (idempotent; `stream()` starts it too)."""
        with self._lock:
            if self._thread is not None:
                return
            # Process-wide, but only this app's threads compete for the GIL.
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
            ready = threading.Event()
            self._thread = threading.Thread(
                target=self._run, args=(ready,), name="anoman-network", daemon=True
            )
            self._thread.start()
        ready.wait()

    def _run(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        from anoman_tui.streaming import StreamClient

        self._client = StreamClient(read_gap=READ_GAP_S, read_grid=(FRAME_S, READ_LEAD_S))
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        self.start()
        assert self._loop is not None
        return self._loop

    def stream(self, request: StreamRequest, client: StreamClient | None = None
               ) -> ThreadedStream:
        """`request` streamed by the thread's client, or by `client` (a replay's: its
        transport answers from recordings) on the same thread."""
        self.start()
        assert self._client is not None
        return ThreadedStream(self, (client or self._client).stream(request))

    def run(self, work: Callable[[StreamClient], Coroutine[Any, Any, T]]
            ) -> concurrent.futures.Future[T]:
        """`work(client)` run on the thread's loop with its client (a judge's requests:
        they stream like the panes', off the UI's loop)."""
        self.start()
        assert self._client is not None
        return asyncio.run_coroutine_threadsafe(work(self._client), self.loop)

    def stop(self, timeout: float = 2.0) -> None:
        """Cancel what still runs, close the HTTP client and end the thread."""
        loop, thread, client = self._loop, self._thread, self._client
        if loop is None or thread is None or client is None or not thread.is_alive():
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await client.aclose()

        future = asyncio.run_coroutine_threadsafe(shutdown(), loop)
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            future.result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


_DELTAS = (TextDelta, ReasoningDelta)


class ThreadedStream:
    """A `ModelStream` running in the network thread, iterated from the UI loop.

    Same surface as `ModelStream` for a pane: `async for event in stream`, `cancel()`,
    `sent_at`, `result`.
    """

    def __init__(self, network: NetworkThread, stream: ModelStream) -> None:
        self.request = stream.request
        self.result: StreamResult | None = None
        self._network = network
        self._inner = stream
        self._lock = threading.Lock()
        self._pending: list[StreamEvent] = []
        self._received = 0  # events moved to `_pending` so far
        self._signalled = False
        self._ready: deque[StreamEvent] = deque()
        self._wake: asyncio.Event | None = None
        self._ui_loop: asyncio.AbstractEventLoop | None = None
        self._started = False
        self._finished = False

    @property
    def sent_at(self) -> float | None:
        return self._inner.sent_at  # stamped in the network thread when the request left

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._ui_loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        asyncio.run_coroutine_threadsafe(self._pump(), self._network.loop)

    def cancel(self) -> None:
        """Close the connection now, from the network thread (never waits for the UI)."""
        if not self._started:
            self.start()
        with contextlib.suppress(RuntimeError):  # the thread was stopped: nothing runs
            self._network.loop.call_soon_threadsafe(self._inner.cancel)

    def _consumer_gone(self) -> None:
        """Whoever iterates this stream was cancelled: close the connection."""
        self.cancel()

    async def _pump(self) -> None:
        """In the network thread: move events to the UI side as they come."""
        async for event in self._inner:
            self._deliver((event,))

    def _deliver(self, events: Sequence[StreamEvent]) -> None:
        """On the stream's loop: hand `events` to the UI side, waking it once a batch."""
        if not events:
            return
        with self._lock:
            self._pending.extend(events)
            self._received += len(events)
            if self._signalled:
                return  # the UI has not taken the last batch yet: these join it
            self._signalled = True
        assert self._ui_loop is not None and self._wake is not None
        with contextlib.suppress(RuntimeError):  # the UI loop is gone (app exit)
            self._ui_loop.call_soon_threadsafe(self._wake.set)

    @property
    def caught_up(self) -> bool:
        """Everything read off the socket so far is in `take_deltas()`'s reach, and the
        read due before this frame has been made (asked from the UI thread while the
        network thread works; under CPU contention that thread was late to the read in
        4% of the frames at 3 x 300 tok/s, whose text then waited a frame more)."""
        inner = self._inner
        if inner.decoding or inner.read_late:
            return False
        return inner.emitted == self._received  # (in that order: see ModelStream.decoding)

    def take_deltas(self) -> list[StreamEvent]:
        """On the UI loop, outside the iteration: the text and reasoning deltas read so
        far that the iterator has not returned, in order, up to the first event of another
        kind (that one and the rest stay for the iterator, which is woken for them).

        A frame takes them in as it begins (see `FrameClock.add_source`): through the
        iterator they wait for the UI loop to wake it, often until after that frame.
        """
        return self._take_ready(backlog=False)

    def take_backlog(self) -> list[StreamEvent]:
        """On the UI loop, outside the iteration: every event read so far that the
        iterator has not returned, up to its end (`StreamDone` and what follows stay for
        the iterator, which is woken for them). For a stream followed from its middle
        (`ComparePane.catch_up`): `take_deltas` stops at its opening event, so its text
        so far came only once the iterator had run and a frame had come."""
        return self._take_ready(backlog=True)

    def _take_ready(self, *, backlog: bool) -> list[StreamEvent]:
        if not self._started or self._wake is None:
            return []
        with self._lock:
            if self._pending:
                # A wake-up for them may still be on its way (`_signalled`): the iterator
                # then finds nothing new and waits again.
                self._ready.extend(self._pending)
                self._pending = []
        ready = self._ready
        taken: list[StreamEvent] = []
        if backlog:
            while ready and type(ready[0]) is not StreamDone:
                taken.append(ready.popleft())
        else:
            while ready and type(ready[0]) in _DELTAS:
                taken.append(ready.popleft())
        if ready:
            self._wake.set()
        return taken

    def __aiter__(self) -> ThreadedStream:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._ready:
            if self._finished:
                raise StopAsyncIteration
            self.start()
            assert self._wake is not None
            try:
                await self._wake.wait()
            except asyncio.CancelledError:
                self._consumer_gone()
                raise
            with self._lock:
                self._ready.extend(self._pending)
                self._pending = []
                self._signalled = False
                self._wake.clear()
        event = self._ready.popleft()
        if type(event) is StreamDone:
            self._finished = True
            self.result = event.result
        return event
