"""Spare connections (anoman_tui.streaming.spares), over real loopback sockets: an abort
leaves a connection in place of the one it closed, and the next request takes it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpcore

from anoman_tui.streaming import StreamClient, StreamDone, TextDelta
from anoman_tui.streaming.spares import SpareConnections
from tests.helpers import make_request
from tests.replay_server import ReplayServer, Script, sse

HOST = "127.0.0.1"


def chunk(content: str) -> dict[str, object]:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}}]}


def endless() -> Script:
    """One word, then nothing until the client gives up."""
    return Script(body=[*sse(chunk("Hello")), 30.0], ending="hang")


def quick() -> Script:
    return Script(body=[*sse(chunk("Hi")), b"data: [DONE]\n\n"])


async def until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def abort_after_first_word(client: StreamClient, replay: ReplayServer) -> None:
    stream = client.stream(make_request(replay, "endless"))
    async for event in stream:
        if isinstance(event, TextDelta):
            stream.cancel()
        if isinstance(event, StreamDone):
            assert event.result.status == "cancelled"


async def test_an_abort_leaves_a_connection_the_next_request_takes(
        replay: ReplayServer) -> None:
    replay.scripts.update(endless=endless(), quick=quick())
    async with StreamClient(read_gap=0.004) as client:
        spares = client.spares
        assert spares is not None
        await abort_after_first_word(client, replay)
        await until(lambda: spares.spares(HOST, replay.port) == 1)
        result = await client.stream(make_request(replay, "quick")).wait()
        assert result.status == "completed" and result.text == "Hi"
        assert spares.used == 1 and spares.spares(HOST, replay.port) == 0
    aborted, retried = replay.requests
    assert retried.peer != aborted.peer  # a connection of its own, opened before it


async def test_a_stream_that_ends_leaves_no_spare(replay: ReplayServer) -> None:
    replay.scripts["quick"] = quick()
    async with StreamClient(read_gap=0.004) as client:
        assert client.spares is not None
        for _ in range(2):
            assert (await client.stream(make_request(replay, "quick")).wait()).status == (
                "completed")
        await asyncio.sleep(0.05)
        assert client.spares.spares(HOST, replay.port) == 0 and client.spares.used == 0
    first, second = replay.requests
    assert second.peer == first.peer  # the pooled connection, as before


async def test_the_headless_client_opens_no_spares(replay: ReplayServer) -> None:
    async with StreamClient() as client:  # unpaced: `anoman-tui compare`
        assert client.spares is None


# -- the backend on its own --------------------------------------------------------------


async def start_server(on_connect: object) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(on_connect, HOST, 0)  # type: ignore[arg-type]
    return server, server.sockets[0].getsockname()[1]


async def test_a_spare_the_server_closed_is_not_used() -> None:
    async def close_at_once(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                            ) -> None:
        writer.close()

    server, port = await start_server(close_at_once)
    backend = SpareConnections(httpcore.AnyIOBackend())
    try:
        await (await backend.connect_tcp(HOST, port)).aclose()
        backend.open_spare(HOST, port)
        await until(lambda: backend.spares(HOST, port) == 1)
        await asyncio.sleep(0.05)  # the server's close arrives
        stream = await backend.connect_tcp(HOST, port)
        await stream.aclose()
        assert backend.used == 0 and backend.spares(HOST, port) == 0
    finally:
        await backend.aclose()
        server.close()


async def test_spares_expire_are_capped_and_closed_with_the_backend() -> None:
    ends: list[float] = []

    async def wait_for_eof(reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                           ) -> None:
        await reader.read()
        ends.append(time.monotonic())
        writer.close()

    server, port = await start_server(wait_for_eof)
    backend = SpareConnections(httpcore.AnyIOBackend(), ttl=0.2, per_server=3)
    try:
        await (await backend.connect_tcp(HOST, port)).aclose()
        await until(lambda: len(ends) == 1)
        for _ in range(5):
            backend.open_spare(HOST, port)
        await until(lambda: backend.spares(HOST, port) == 3)
        await asyncio.sleep(0.05)
        assert backend.spares(HOST, port) == 3  # no more than `per_server`
        await until(lambda: backend.spares(HOST, port) == 0)  # after `ttl`
        await until(lambda: len(ends) == 4)  # and closed

        backend.open_spare(HOST, port)
        await until(lambda: backend.spares(HOST, port) == 1)
        await backend.aclose()
        await until(lambda: len(ends) == 5)
        backend.open_spare(HOST, port)  # closed: none any more
        await asyncio.sleep(0.05)
        assert backend.spares(HOST, port) == 0
    finally:
        await backend.aclose()
        server.close()


async def test_no_spare_to_a_server_it_never_connected_to() -> None:
    # (A request through a proxy connects to the proxy, never to the server itself.)
    accepted: list[object] = []

    async def count(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        writer.close()

    server, port = await start_server(count)
    backend = SpareConnections(httpcore.AnyIOBackend())
    try:
        backend.open_spare(HOST, port)
        await asyncio.sleep(0.1)
        assert backend.spares(HOST, port) == 0 and accepted == []
    finally:
        await backend.aclose()
        server.close()
