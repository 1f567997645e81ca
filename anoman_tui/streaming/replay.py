"""Replaying recordings through the stream core.

`ReplayTransport` is an httpx transport that answers requests from recordings
(`anoman_tui.streaming.recording.StreamRecording`) at the recorded pace, so a replay
goes through the same stream core as a live stream and needs neither network nor key.

May import: httpx, the standard library, the rest of `anoman_tui.streaming`.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Mapping

import httpx

from anoman_tui.streaming.recording import REPLAY_PANE_EXTENSION, StreamRecording


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers each request from a recording, at the recorded pace divided by `speed`.

    A recording is chosen by the request's pane (an int key, from the request's
    `anoman_pane` extension) else by its model (a str key, from the JSON body); a
    request with neither answers 404. Times run from when the request reaches the
    transport; a recording answers only a request to the path it was made on. A
    recorded stall sends nothing more and raises `httpx.ReadTimeout` after the
    request's read timeout, as a silent socket would, so the core reports it stalled.
    """

    def __init__(self, recordings: Mapping[int, StreamRecording] | Mapping[str, StreamRecording]
                 | Mapping[str | int, StreamRecording], speed: float = 1.0) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError("speed must be a positive number")
        self.recordings: dict[str | int, StreamRecording] = {
            key: value for key, value in recordings.items()}
        self.speed = speed

    def _find(self, request: httpx.Request) -> StreamRecording | None:
        pane = request.extensions.get(REPLAY_PANE_EXTENSION)
        if isinstance(pane, int) and pane in self.recordings:
            return self.recordings[pane]
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            return None
        model = body.get("model") if isinstance(body, dict) else None
        return self.recordings.get(model) if isinstance(model, str) else None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        trace = request.extensions.get("trace")
        if trace is not None:
            # What httpcore reports as the request leaving: the core starts its clock here.
            await trace("http11.send_request_headers.started", {"request": request})
        start = time.monotonic()
        recording = self._find(request)
        if recording is None or not request.url.path.endswith(recording.path):
            # A recording only answers the endpoint it was made on: an Anthropic stream
            # read as OpenAI frames would fail for a reason that never happened.
            said = ("no recording for this request" if recording is None
                    else f"the recording is of POST {recording.path}")
            body = json.dumps({"error": {"type": "not_found_error", "message": said}}).encode()
            return httpx.Response(404, headers={"content-type": "application/json"},
                                  content=body, request=request)
        timeouts = request.extensions.get("timeout") or {}
        read_timeout = timeouts.get("read")
        clock = _ReplayClock(start, self.speed, read_timeout, request)
        if recording.status is None or recording.headers_at is None:
            await clock.until(recording.ended_at, stalls=recording.ending == "stalled")
            raise _ending_error(recording, request, before_response=True)
        await clock.until(recording.headers_at)
        return httpx.Response(
            recording.status,
            headers=list(recording.headers),
            stream=_ReplayBody(recording, clock, request),
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )


class _ReplayClock:
    def __init__(self, start: float, speed: float, read_timeout: float | None,
                 request: httpx.Request) -> None:
        self.start = start
        self.speed = speed
        self.read_timeout = read_timeout
        self.request = request

    async def until(self, at: float, *, stalls: bool = False) -> None:
        """Wait until recorded instant `at`; a stall waits out the read timeout instead."""
        delay = self.start + at / self.speed - time.monotonic()
        timeout = self.read_timeout
        if stalls:
            # A stall is the server sending nothing more: the reader's own timeout ends it.
            if timeout is None:
                await asyncio.Event().wait()
            await asyncio.sleep(timeout or 0)
            raise httpx.ReadTimeout("no bytes within the read timeout", request=self.request)
        # A recorded gap is replayed whole even when slowed past the read timeout: the
        # replay shows what happened, and only a recorded stall stalls.
        if delay > 0:
            await asyncio.sleep(delay)


class _ReplayBody(httpx.AsyncByteStream):
    def __init__(self, recording: StreamRecording, clock: _ReplayClock,
                 request: httpx.Request) -> None:
        self._recording = recording
        self._clock = clock
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        recording = self._recording
        for at, chunk in recording.reads:
            await self._clock.until(at)
            yield chunk
        if recording.ending == "stalled":
            await self._clock.until(recording.ended_at, stalls=True)
        await self._clock.until(recording.ended_at)
        if recording.ending != "completed":
            raise _ending_error(recording, self._request, before_response=False)

    async def aclose(self) -> None:
        return None


def _ending_error(recording: StreamRecording, request: httpx.Request, *,
                  before_response: bool) -> BaseException:
    ending = recording.ending
    if ending == "cancelled":
        # The user aborted here when it was recorded: the core ends it as a cancel.
        return asyncio.CancelledError()
    if ending == "closed":
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=request)
    if ending == "stalled":
        return httpx.ReadTimeout("no bytes within the read timeout", request=request)
    if before_response:
        return httpx.ConnectError("connection reset", request=request)
    return httpx.ReadError("connection reset by peer", request=request)
