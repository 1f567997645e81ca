"""Client fault matrix: every failure kind of docs/wire-contract.md §3 × every endpoint format,
through the real stream core over loopback sockets.

Each case asserts the failure kind and that nothing was committed: a failed or cancelled
result has `committed == False` and the stream still ends with exactly one `StreamDone`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from anoman_tui.streaming import EndpointFormat, StreamClient, TextDelta
from tests.reliability.helpers import (
    FORMATS,
    RawServer,
    assert_not_committed,
    collect,
    error_frame,
    free_port,
    request,
    spec_frames,
)
from tests.replay_server import ReplayServer, Script

# Every status of docs/wire-contract.md §3's pre-stream table, plus 413 and the 5xx family.
HTTP_STATUSES = (400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504, 529)
BODIES: dict[str, tuple[str | None, bytes]] = {
    "json": ("application/json",
             b'{"error":{"type":"api_error","code":"x","message":"refused by the gateway"}}'),
    "html": ("text/html", b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"),
    "empty": (None, b""),
}
FAULTS_TRIED: list[str] = []  # filled as cases run; read by the figures test at the end


@pytest.fixture
async def client() -> AsyncIterator[StreamClient]:
    async with StreamClient() as c:
        yield c


@pytest.mark.parametrize("endpoint", FORMATS)
async def test_http_errors_every_status_and_body(replay: ReplayServer, client: StreamClient,
                                                 endpoint: EndpointFormat) -> None:
    cases = [(s, b) for s in HTTP_STATUSES for b in BODIES]
    for status, body_kind in cases:
        content_type, body = BODIES[body_kind]
        replay.scripts[f"{status}-{body_kind}"] = Script(
            status=status, content_type=content_type, body=[body] if body else [],
            headers=[("Retry-After", "3")] if status == 429 else [])
    for status, body_kind in cases:
        _, result = await collect(client, request(replay.base_url, f"{status}-{body_kind}",
                                                  endpoint))
        assert_not_committed(result)
        assert result.failure is not None
        assert (result.failure.kind, result.failure.status) == ("http_error", status), body_kind
        assert result.text == ""
        # The sentence is one clean line: no HTML tags, no control characters.
        assert "<" not in result.failure.message and "\n" not in result.failure.message
        if status == 429:
            assert result.failure.retry_after_s == 3
    FAULTS_TRIED.extend(f"http {s} {b} {endpoint}" for s, b in cases)


@pytest.mark.parametrize("endpoint", FORMATS)
@pytest.mark.parametrize("after", [0, 2, 4])
async def test_error_frame_mid_stream(replay: ReplayServer, client: StreamClient,
                                      endpoint: EndpointFormat, after: int) -> None:
    frames = spec_frames(endpoint)
    tail = [b"data: [DONE]\n\n"] if endpoint != "anthropic" else []
    replay.scripts["m"] = Script(body=[*frames[: 1 + after], error_frame(endpoint), *tail])
    _, result = await collect(client, request(replay.base_url, "m", endpoint))
    assert_not_committed(result)
    assert result.failure is not None and result.failure.kind == "stream_error"
    assert result.failure.completion_tokens == 42
    FAULTS_TRIED.append(f"error frame after {after} {endpoint}")


def cut_points(frames: list[bytes]) -> list[tuple[str, int]]:
    """Every frame boundary before the terminator, the middle of every frame, and every
    byte offset inside the last frame (the terminator itself)."""
    points: list[tuple[str, int]] = []
    offset = 0
    for i, frame in enumerate(frames):
        points.append((f"before frame {i}", offset))
        points.append((f"mid frame {i}", offset + len(frame) // 2))
        if i == len(frames) - 1:
            points.extend((f"in terminator +{k}", offset + k) for k in range(1, len(frame)))
        offset += len(frame)
    return points


@pytest.mark.parametrize("endpoint", FORMATS)
@pytest.mark.parametrize("ending", ["truncate", "reset", "close"])
async def test_truncation_at_every_boundary_and_mid_frame(
    replay: ReplayServer, client: StreamClient, endpoint: EndpointFormat, ending: str
) -> None:
    raw = b"".join(spec_frames(endpoint))
    points = cut_points(spec_frames(endpoint))
    for label, at in points:
        # "close": a Connection: close body that simply ends (a clean EOF, no chunk error)
        replay.scripts[label] = Script(
            body=[raw[:at]] if at else [],
            ending="truncate" if ending == "close" else ending,  # type: ignore[arg-type]
            chunked=ending != "close")

    async def one(label: str) -> None:
        _, result = await collect(client, request(replay.base_url, label, endpoint))
        assert_not_committed(result)
        assert result.failure is not None
        assert result.failure.kind == "truncated", (label, result.failure)

    # Concurrently, in small groups: hundreds of streams, each a real connection.
    for i in range(0, len(points), 16):
        await asyncio.gather(*(one(label) for label, _ in points[i : i + 16]))
    FAULTS_TRIED.extend(f"cut {label} {ending} {endpoint}" for label, _ in points)


@pytest.mark.parametrize("endpoint", FORMATS)
async def test_complete_stream_in_one_byte_reads_is_not_a_failure(
    replay: ReplayServer, client: StreamClient, endpoint: EndpointFormat
) -> None:
    # The control case for the truncation matrix: the same bytes, complete, in 1-byte writes.
    raw = b"".join(spec_frames(endpoint))
    replay.scripts["m"] = Script(body=[raw[i : i + 1] for i in range(len(raw))])
    _, result = await collect(client, request(replay.base_url, "m", endpoint))
    assert result.status == "completed" and result.text == "Once upon a time..."


@pytest.mark.parametrize("endpoint", FORMATS)
@pytest.mark.parametrize("where", ["before headers", "after headers", "mid frame", "mid stream"])
async def test_stalls(replay: ReplayServer, client: StreamClient, endpoint: EndpointFormat,
                      where: str) -> None:
    frames = spec_frames(endpoint)
    body: list[bytes | float] = {
        "after headers": [],
        "mid frame": [frames[0], frames[1][:10]],
        "mid stream": frames[:3],
    }.get(where, [])
    started = time.monotonic()
    if where == "before headers":
        async with RawServer("silent") as server:
            _, result = await collect(client, request(server.base_url, "m", endpoint,
                                                      idle_timeout=0.3))
    else:
        replay.scripts["m"] = Script(body=body, ending="hang")
        _, result = await collect(client, request(replay.base_url, "m", endpoint,
                                                  idle_timeout=0.3))
    assert_not_committed(result)
    assert result.failure is not None and result.failure.kind == "stalled", result.failure
    assert time.monotonic() - started < 5.0
    FAULTS_TRIED.append(f"stall {where} {endpoint}")


@pytest.mark.parametrize("endpoint", FORMATS)
@pytest.mark.parametrize("mode", ["reset", "close", "garbage"])
async def test_peer_misbehaves_before_any_header(client: StreamClient, endpoint: EndpointFormat,
                                                 mode: str) -> None:
    async with RawServer(mode) as server:  # type: ignore[arg-type]
        _, result = await collect(client, request(server.base_url, "m", endpoint))
    assert_not_committed(result)
    assert result.failure is not None
    # Nothing HTTP came back: the gateway could not be reached (or spoke no HTTP).
    assert result.failure.kind in ("transport_error", "protocol_error"), result.failure
    if mode != "garbage":
        assert result.failure.kind == "transport_error"
    FAULTS_TRIED.append(f"peer {mode} before headers {endpoint}")


@pytest.mark.parametrize("endpoint", FORMATS)
async def test_refused_connection(client: StreamClient, endpoint: EndpointFormat) -> None:
    started = time.monotonic()
    _, result = await collect(client, request(f"http://127.0.0.1:{free_port()}", "m", endpoint))
    assert_not_committed(result)
    assert result.failure is not None and result.failure.kind == "transport_error"
    assert "refused" in result.failure.message
    assert time.monotonic() - started < 5.0
    FAULTS_TRIED.append(f"refused {endpoint}")


PROTOCOL_CASES: dict[str, Script] = {
    "invalid json": Script(body=[b"data: {not json\n\n"]),
    "json array": Script(body=[b"data: [1, 2]\n\n"]),
    "wrong shape": Script(body=[b'data: {"choices":[{"index":0,"delta":{"content":5}}],'
                                b'"type":"content_block_delta","delta":{"type":"text_delta",'
                                b'"text":7}}\n\n']),
    "html 200": Script(content_type="text/html", body=[b"<html>hi</html>"]),
    "no content type": Script(content_type=None, body=[b"data: {}\n\n"]),
    "json not a cache hit": Script(content_type="application/json",
                                   body=[b'{"choices":[],"object":"chat.completion"}']),
    "json garbage": Script(content_type="application/json", body=[b"\xff\xfe{{{"]),
}


@pytest.mark.parametrize("endpoint", FORMATS)
@pytest.mark.parametrize("case", list(PROTOCOL_CASES))
async def test_protocol_errors(replay: ReplayServer, client: StreamClient,
                               endpoint: EndpointFormat, case: str) -> None:
    script = PROTOCOL_CASES[case]
    frames = spec_frames(endpoint)
    if script.content_type == "text/event-stream":
        # After a valid start, so partial text exists and must still not be committed.
        script = Script(body=[*frames[:4], *script.body, *frames[4:]])
    replay.scripts["m"] = script
    _, result = await collect(client, request(replay.base_url, "m", endpoint))
    assert_not_committed(result)
    assert result.failure is not None and result.failure.kind == "protocol_error", result.failure
    FAULTS_TRIED.append(f"protocol {case} {endpoint}")


@pytest.mark.parametrize("endpoint", FORMATS)
async def test_cancel_mid_stream(replay: ReplayServer, client: StreamClient,
                                 endpoint: EndpointFormat) -> None:
    replay.scripts["m"] = Script(body=spec_frames(endpoint)[:4], ending="hang")
    stream = client.stream(request(replay.base_url, "m", endpoint))
    async for event in stream:
        if isinstance(event, TextDelta):
            stream.cancel()
    assert stream.result is not None
    assert_not_committed(stream.result)
    assert stream.result.failure is not None and stream.result.failure.kind == "cancelled"
    FAULTS_TRIED.append(f"cancel {endpoint}")


# -- a server process that dies mid-stream ------------------------------------------


def _start_serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str, str]:
    env = dict(os.environ)  # clean_env (tests/reliability/conftest.py): no ANOMAN_* of ours
    proc = subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "serve", "--port", "0",
         "--db", f"{tmp_path}/ledger.sqlite3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    url = key = None
    deadline = time.monotonic() + 30
    assert proc.stdout is not None
    while (url is None or key is None) and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "listening on" in line:
            url = line.rsplit(" ", 1)[1].strip()
        if "API key" in line:
            key = line.rsplit(" ", 1)[1].strip()
    assert url and key, "anoman-tui serve did not start"
    return proc, url, key


@pytest.mark.parametrize("endpoint", FORMATS)
async def test_server_process_killed_mid_stream(tmp_path: Path, client: StreamClient,
                                                endpoint: EndpointFormat) -> None:
    proc, url, key = _start_serve(tmp_path)
    try:
        req = request(url, "anoman-lite", endpoint, key=key,
                      extra_headers=(("X-Anoman-Simulate", "stall-after=5,ttft=0"),))
        stream = client.stream(req)
        killed = False
        async for event in stream:
            if isinstance(event, TextDelta) and not killed:
                proc.send_signal(signal.SIGKILL)  # no shutdown code runs: the kernel closes
                killed = True
        assert killed
        assert stream.result is not None
        assert_not_committed(stream.result)
        assert stream.result.failure is not None
        assert stream.result.failure.kind == "truncated", stream.result.failure
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    FAULTS_TRIED.append(f"server killed {endpoint}")


def test_fault_figures() -> None:
    """Prints how many client fault cases ran (for the Reliability section of tests/README.md)."""
    print(f"\nclient fault cases tried: {len(FAULTS_TRIED)}")
