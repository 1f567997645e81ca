"""The versions the tests were written against are the ones installed.

pyproject.toml keeps the runtime requirements as ranges, except what the code reaches
into below the public API: Textual (checked by tests/ui/test_textual_internals.py) and
the HTTP stack under the stream core's paced reads (httpx, httpcore, anyio: checked
here, each internal on the installed version, naming the package whose shape changed,
so that pacing cannot switch off unnoticed). It pins in the `test` extra the exact
releases the snapshot tests were drawn with and whose figures the tests compare. A
snapshot that fails because another Rich or Pygments is installed says nothing about
the app, so this names the culprit first.
"""

from __future__ import annotations

import asyncio
import inspect
import socket
import tomllib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio.abc
import httpcore
import httpx
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from anoman_tui.streaming.pacing import PacedBackend, paced_stream_of, paced_transport
from anoman_tui.streaming.spares import SpareConnections

PYPROJECT = tomllib.loads(
    (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
RUNTIME = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
TEST_EXTRA = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]]
# Textual and Rich draw the screen, markdown-it-py splits answers into blocks, Pygments
# colours code: each changes what the snapshots compare.
RENDERING = ("textual", "rich", "markdown-it-py", "pygments")
# The stream core's paced reads (anoman_tui/streaming/pacing.py) hook into httpx's
# transport, httpcore's pool and network backend, and anyio's asyncio socket stream.
HTTP_STACK = ("httpx", "httpcore", "anyio")
RECHECK = (
    "re-read anoman_tui/streaming/pacing.py (its docstrings name each internal) against "
    "the installed source, re-run tests/test_pacing.py and benchmarks/eval_load.py, then "
    "pin the version that passes in pyproject.toml"
)


def exact_pins(requirements: list[Requirement]) -> dict[str, str]:
    """name -> version of each `==` requirement that applies to this interpreter."""
    pins: dict[str, str] = {}
    for requirement in requirements:
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        for spec in requirement.specifier:
            if spec.operator == "==":
                pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def installed_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def test_installed_versions_are_the_pinned_ones() -> None:
    pins = {**exact_pins(RUNTIME), **exact_pins(TEST_EXTRA)}
    wrong = [
        f"{name}: pyproject.toml pins {pinned}, installed is {installed_version(name)}"
        for name, pinned in sorted(pins.items())
        if installed_version(name) != pinned
    ]
    assert not wrong, (
        "; ".join(wrong) + ". The tests were written against the pinned versions: "
        "reinstall with `pip install -e '.[test]'` (in a virtual environment of its own)")


def test_rendering_libraries_are_pinned_for_the_snapshots() -> None:
    runtime_pins, test_pins = exact_pins(RUNTIME), exact_pins(TEST_EXTRA)
    # Textual exactly, for users too: tests/ui/test_textual_internals.py checks its
    # private internals against one version.
    assert "textual" in runtime_pins
    for name in RENDERING:
        assert name in runtime_pins or name in test_pins, (
            f"{name} renders what the snapshots compare: pin it with == in the test extra")


def test_runtime_requirements_are_ranges_except_what_the_code_reaches_into() -> None:
    pinned = set(exact_pins(RUNTIME)) - {"textual", *HTTP_STACK}
    assert not pinned, (
        f"{', '.join(sorted(pinned))}: exact in [project] dependencies; give users a range "
        "and pin the exact version in the test extra")


def test_the_http_stack_under_the_paced_reads_is_pinned_as_textual_is() -> None:
    runtime_pins = exact_pins(RUNTIME)
    for name in HTTP_STACK:
        assert name in runtime_pins, (
            f"{name}: anoman_tui/streaming/pacing.py relies on its internals; pin the "
            "release they were checked against with == in [project] dependencies")


# -- the shape of each internal the paced reads use, on the installed versions ------------
def shape(package: str, what: str, check: bool) -> None:
    assert check, (f"{package} {version(package)}: {what} is not as "
                   f"anoman_tui/streaming/pacing.py uses it; {RECHECK}.")


def parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_httpx_transport_holds_httpcores_pool_with_its_backend() -> None:
    transport = httpx.AsyncHTTPTransport(limits=httpx.Limits())
    pool = getattr(transport, "_pool", None)
    shape("httpx", "AsyncHTTPTransport._pool (an httpcore AsyncConnectionPool)",
          isinstance(pool, httpcore.AsyncConnectionPool))
    shape("httpcore", "AsyncConnectionPool._network_backend",
          isinstance(getattr(pool, "_network_backend", None), httpcore.AsyncNetworkBackend))
    paced = paced_transport(httpx.Limits())
    shape("httpcore", "the paced transport's network backend",
          isinstance(paced._pool._network_backend, PacedBackend))


def test_httpcore_network_api_has_the_signatures_the_backends_override() -> None:
    for ours in (PacedBackend, SpareConnections):
        for method in ("connect_tcp", "connect_unix_socket", "sleep"):
            shape("httpcore", f"AsyncNetworkBackend.{method}()",
                  parameters(getattr(httpcore.AsyncNetworkBackend, method))
                  == parameters(getattr(ours, method)))
    for name in ("ReadError", "TimeoutException", "NetworkError"):
        shape("httpcore", name, isinstance(getattr(httpcore, name, None), type))
    shape("httpcore", "ReadError as a NetworkError",
          issubclass(httpcore.ReadError, httpcore.NetworkError))


@asynccontextmanager
async def chunked_server() -> AsyncIterator[int]:
    """A loopback HTTP/1.1 server answering every request with one chunked body."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"5\r\nhello\r\n0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def test_a_plain_connection_is_read_straight_from_its_socket() -> None:
    async with chunked_server() as port:
        plain = await httpcore.AnyIOBackend().connect_tcp("127.0.0.1", port)
        try:
            # What `_DirectReader` looks up, step by step, so that a failure names whose
            # shape changed.
            stream = getattr(plain, "_stream", None)
            shape("httpcore", "AnyIOStream._stream (anyio's socket stream)",
                  isinstance(stream, anyio.abc.SocketStream))
            transport = getattr(stream, "_transport", None)
            protocol = getattr(stream, "_protocol", None)
            shape("anyio", "the asyncio SocketStream's _transport",
                  isinstance(transport, asyncio.Transport)
                  and callable(getattr(transport, "is_reading", None)))
            for name in ("read_queue", "read_event", "write_event", "exception", "is_at_eof"):
                shape("anyio", f"the asyncio StreamProtocol's {name}", hasattr(protocol, name))
            shape("anyio", "the transport's socket (asyncio's selector transport, `_sock`)",
                  isinstance(getattr(transport, "_sock", None), socket.socket))
        finally:
            await plain.aclose()
        paced = await PacedBackend(httpcore.AnyIOBackend()).connect_tcp("127.0.0.1", port)
        try:
            for method in ("read", "write", "aclose", "start_tls", "get_extra_info"):
                shape("httpcore", f"AsyncNetworkStream.{method}()",
                      parameters(getattr(httpcore.AsyncNetworkStream, method))
                      == parameters(getattr(type(paced), method)))
            ours = paced_stream_of(paced)
            assert ours is not None
            shape("anyio", "the socket stream under httpcore's", ours.reads_directly)
        finally:
            await paced.aclose()


async def test_a_response_names_its_paced_connection_and_traces_its_first_bytes() -> None:
    events: list[str] = []

    async def trace(name: str, info: dict[str, Any]) -> None:
        events.append(name)

    async with (chunked_server() as port,
                httpx.AsyncClient(transport=paced_transport(httpx.Limits())) as client,
                client.stream("GET", f"http://127.0.0.1:{port}/",
                              extensions={"trace": trace}) as response):
        body = await response.aread()
        paced = paced_stream_of(response.extensions.get("network_stream"))
        shape("httpx", 'the response\'s "network_stream" extension (the paced connection)',
              paced is not None)
    assert body == b"hello"
    # The stream core starts a request's clock at these (streaming/client.py).
    for name in ("connection.connect_tcp.started", "http11.send_request_headers.started"):
        shape("httpcore", f'the trace event "{name}"', name in events)


def test_test_pins_fall_within_the_runtime_ranges() -> None:
    # Otherwise `pip install -e '.[test]'` asks for two versions at once and fails.
    ranges: dict[str, SpecifierSet] = {canonicalize_name(r.name): r.specifier for r in RUNTIME}
    for name, pinned in exact_pins(TEST_EXTRA).items():
        if name in ranges:
            assert ranges[name].contains(pinned, prereleases=True), (
                f"{name}: the test extra pins {pinned}, outside the runtime range "
                f"{ranges[name]}")
