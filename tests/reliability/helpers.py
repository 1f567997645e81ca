"""Shared helpers of the reliability suite: per-format streams, misbehaving raw servers,
resource counters and terminal-safety checks.

Reuses tests/replay_server.py for scripted HTTP responses; `RawServer` covers what a
response script cannot: a peer that resets, closes or stays silent before any header.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal

from rich.segment import Segment

from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.streaming import (
    ChatTurn,
    EndpointFormat,
    StreamClient,
    StreamDone,
    StreamEvent,
    StreamRequest,
    StreamResult,
)
from tests.frames import (
    ANTHROPIC_ERROR_EVENT,
    ANTHROPIC_EXAMPLE_STREAM,
    OPENAI_ERROR_FRAME,
    OPENAI_EXAMPLE_STREAM,
)
from tests.helpers import gateway_config

KEY = "anm-sk-reliability-0123456789abcdef"
FORMATS: tuple[EndpointFormat, ...] = ("openai", "anthropic", "playground")


def spec_frames(endpoint: EndpointFormat) -> list[bytes]:
    """The contract's example stream for `endpoint`, one frame per item, terminator last."""
    return list(ANTHROPIC_EXAMPLE_STREAM if endpoint == "anthropic" else OPENAI_EXAMPLE_STREAM)


def error_frame(endpoint: EndpointFormat) -> bytes:
    return ANTHROPIC_ERROR_EVENT if endpoint == "anthropic" else OPENAI_ERROR_FRAME


def terminator(endpoint: EndpointFormat) -> bytes:
    return b"data: [DONE]\n\n" if endpoint != "anthropic" else b""


def request(base_url: str, model: str, endpoint: EndpointFormat = "openai", *,
            key: str = KEY, **kw: object) -> StreamRequest:
    return StreamRequest(base_url=base_url, api_key=key, endpoint=endpoint, model=model,
                         messages=(ChatTurn(role="user", content="Tell me a story"),),
                         **kw)  # type: ignore[arg-type]


async def collect(client: StreamClient, req: StreamRequest
                  ) -> tuple[list[StreamEvent], StreamResult]:
    """Every event of one stream; checks the one-`StreamDone`-last contract on the way."""
    events = [event async for event in client.stream(req)]
    assert isinstance(events[-1], StreamDone)
    assert sum(isinstance(e, StreamDone) for e in events) == 1
    return events, events[-1].result


def assert_not_committed(result: StreamResult) -> None:
    assert result.status in ("failed", "cancelled")
    assert not result.committed
    assert result.failure is not None


RawMode = Literal["reset", "close", "silent", "garbage"]


class RawServer:
    """A TCP listener that misbehaves before sending any HTTP response header."""

    def __init__(self, mode: RawMode) -> None:
        self.mode = mode
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await reader.readuntil(b"\r\n\r\n")
            if self.mode == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif self.mode == "silent":
                await reader.read()  # until the client gives up
            elif self.mode == "garbage":
                writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")  # not HTTP at all
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- resources ---------------------------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def open_sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                count += 1
        except OSError:
            pass  # closed between listdir and readlink
    return count


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- terminal safety -----------------------------------------------------------------

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe_chars(text: str) -> list[str]:
    """Characters that must never reach the terminal from model output."""
    return [
        repr(ch) for ch in text
        if unicodedata.category(ch) == "Cc" or ch in BIDI_CONTROLS
    ]


def check_segments(segments: Iterable[Segment], where: str) -> None:
    """No control segment, no control/bidi character, no clickable action, no link."""
    for seg in segments:
        assert not seg.control, f"{where}: control segment {seg!r}"
        bad = unsafe_chars(seg.text)
        assert not bad, f"{where}: unsafe characters {bad} in {seg.text[:80]!r}"
        style = seg.style
        if style is not None:
            assert not style.link, f"{where}: hyperlink {style.link!r}"
            meta = style.meta or {}
            # Scrollbars carry `@mouse.*` handlers of their own; markup would add `@click`.
            assert "@click" not in meta, f"{where}: action {meta!r}"


def fast_config(**overrides: Any) -> GatewayConfig:
    """Simulated models far faster than life, limits out of the way."""
    values: dict[str, Any] = {
        "rate_limit_rpm": 1_000_000,
        "max_concurrent_streams": 100_000,
        "non_stream_timeout_s": 5.0,
        # A stalled body gets its 408 in 4 s rather than the default 10 (the trickling
        # client's whole body takes 2 s, well within it).
        "body_timeout_s": 4.0,
    }
    values.update(overrides)
    return gateway_config(**values)
