"""A tiny HTTP/1.1 server on loopback that replays scripted bytes, for stream-core tests.

Scripts choose the exact bytes, how they are split into writes, pauses, and
how the connection ends (clean, truncated chunked body, hang, RST), which a
well-behaved framework would not let us do. The request's JSON `model`
selects the script (a request without one, e.g. GET /v1/models, its path).
Every request is recorded (path, headers, body) and so is the instant the
client closed its side.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Literal

Ending = Literal["complete", "truncate", "hang", "reset"]


@dataclass
class Script:
    status: int = 200
    content_type: str | None = "text/event-stream"
    headers: list[tuple[str, str]] = field(default_factory=list)
    # bytes are written (and flushed) one item at a time; a float pauses that many seconds
    body: list[bytes | float] = field(default_factory=list)
    ending: Ending = "complete"
    chunked: bool = True


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, object]
    client_closed_at: float | None = None
    peer: tuple[str, int] | None = None  # the client's address: one per connection
    received_at: float = 0.0  # monotonic, once the whole request was read


class ReplayServer:
    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self.port = 0
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> None:
        """Listen on `port` (0: any free one), e.g. where a client already tried to connect."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    def script_for(self, request: RecordedRequest) -> Script:
        """The script that answers `request`: by its body's `model`, else by its path
        (e.g. GET /v1/models); a 404 when none matches. Subclasses may answer any request."""
        key = str(request.body["model"]) if "model" in request.body else request.path
        return self.scripts.get(key, Script(status=404, body=[b"{}"]))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        body = json.loads(raw) if raw else {}
        recorded = RecordedRequest(method, path, headers, body,
                                   peer=writer.get_extra_info("peername"),
                                   received_at=time.monotonic())
        self.requests.append(recorded)
        script = self.script_for(recorded)

        reason = {200: "OK", 404: "Not Found"}.get(script.status, "Status")
        out = [f"HTTP/1.1 {script.status} {reason}"]
        if script.content_type:
            out.append(f"Content-Type: {script.content_type}")
        out.extend(f"{k}: {v}" for k, v in script.headers)
        if script.chunked:
            out.append("Transfer-Encoding: chunked")
        else:
            out.append("Connection: close")
        writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()

        for item in script.body:
            if isinstance(item, float):
                await asyncio.sleep(item)
                continue
            writer.write(f"{len(item):x}\r\n".encode() + item + b"\r\n" if script.chunked else item)
            await writer.drain()

        if script.ending == "complete":
            if script.chunked:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                return True
            return False
        if script.ending == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if script.ending == "hang":
            # Keep the connection open until the client gives up on it.
            await reader.read()
            recorded.client_closed_at = time.monotonic()
            return False
        return False  # "truncate": close without the final chunk


def sse(*payloads: object, event: str | None = None) -> list[bytes]:
    """Encode payloads as `data:` frames (dicts as JSON, strings as they are)."""
    frames = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        prefix = f"event: {event}\n" if event else ""
        frames.append(f"{prefix}data: {data}\n\n".encode())
    return frames
