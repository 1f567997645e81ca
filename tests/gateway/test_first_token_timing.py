"""The first token is sent on the simulated schedule, not up to a millisecond after it.

The schedule counts from admission: time the gateway spends before it starts the
response (here, a body that arrives late) is inside `ttft=`, not added to it.

`_sleep_until` (generation.py) replaces a plain sleep for the first token:
it must never wake early, should wake close to the deadline, and must keep the event
loop serving other tasks while it waits. Bounds are generous (noisy machines); the
real figure comes from benchmarks/gateway_overhead.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.gateway.generation import _sleep_until
from tests.gateway.helpers import auth, chat_body, wait_row
from tests.helpers import loopback_client


async def test_wakes_at_the_deadline_never_before() -> None:
    loop = asyncio.get_running_loop()
    for delay in (0.0, -0.01, 0.0004, 0.003, 0.02):
        due = loop.time() + delay
        await _sleep_until(loop, due)
        now = loop.time()
        assert now >= due
        assert now - due < 0.05


async def test_other_tasks_run_while_it_waits() -> None:
    loop = asyncio.get_running_loop()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    try:
        await _sleep_until(loop, loop.time() + 0.02)
    finally:
        task.cancel()
    assert ticks > 1


async def test_cancellable_while_waiting() -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(_sleep_until(loop, loop.time() + 10))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("stream", [True, False])
def test_the_schedule_counts_from_admission(gateway: EmbeddedGateway, stream: bool) -> None:
    # The headers arrive (admission), the body 150 ms later: the first token is still
    # due 300 ms after admission, not 300 ms after the body.
    body = json.dumps(chat_body(stream=stream)).encode()
    sock = socket.create_connection(("127.0.0.1", gateway.port))
    sock.settimeout(5)
    try:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\n"
            + f"Authorization: Bearer {gateway.api_key}\r\nX-Anoman-Simulate: ttft=0.3,"
              f"rate=1000,tokens=3\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        sent = time.monotonic()
        time.sleep(0.15)
        sock.sendall(body)
        data = b""
        marker = b'{"content":"' if stream else b'"content":'
        while marker not in data.split(b"\r\n\r\n", 1)[-1]:
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
        first = time.monotonic() - sent
    finally:
        sock.close()
    rid = data.split(b"x-request-id: ")[1].split(b"\r\n")[0].decode()
    row = wait_row(gateway, rid)
    assert 0.29 <= row["first_token_at"] - row["started_at"] < 0.33
    if stream:  # a JSON answer comes whole, after the last token
        assert 0.29 <= first < 0.40


def test_a_long_answer_is_composed_without_holding_other_streams(
        gateway: EmbeddedGateway) -> None:
    # Composing 400,000 tokens takes ~0.2 s of CPU; on the gateway's loop it held every
    # other stream that long. A stream at 1,000 tok/s must keep flowing meanwhile. The
    # reads are this thread's, late on a busy machine (0.12 s seen with the load at 7):
    # one of three tries must show it; held by the composing, every try shows 0.2 s.
    worst = []
    for _ in range(3):
        worst.append(_longest_gap_beside_a_long_answer(gateway))
        if worst[-1] < 0.08:
            break
    assert min(worst) < 0.08, worst


def _longest_gap_beside_a_long_answer(gateway: EmbeddedGateway) -> float:
    import threading

    def simulate(spec: str) -> dict[str, str]:
        return {**auth(gateway), "X-Anoman-Simulate": spec}

    def long_answer() -> None:
        with loopback_client(gateway.base_url, timeout=30) as client, client.stream(
                "POST", "/v1/chat/completions", json=chat_body(),
                headers=simulate("ttft=1,rate=1000,tokens=400000")) as response:
            next(response.iter_raw())  # the head and opening frame: then it composes

    arrivals: list[float] = []
    started = 0.0
    with loopback_client(gateway.base_url, timeout=30) as client, client.stream(
            "POST", "/v1/chat/completions", json=chat_body(),
            headers=simulate("ttft=0,rate=1000,tokens=1200")) as fast:
        for _ in fast.iter_raw():
            arrivals.append(time.monotonic())
            if len(arrivals) == 20:
                started = time.monotonic()
                thread = threading.Thread(target=long_answer)
                thread.start()
    thread.join()
    during = [b - a for a, b in itertools.pairwise(arrivals)
              if b > started and a < started + 0.5]
    assert during
    return max(during)


def test_a_late_start_keeps_the_rate_after_the_first_token(gateway: EmbeddedGateway) -> None:
    # The body arrives 150 ms after the headers, when the first token (ttft=0.05) is long
    # due: it goes at once, and the next four keep 20 ms apart instead of coming with it.
    # Seen from this thread, whose reads can be late on a busy machine (with the load
    # average at 7, all five once came in one read): a burst is what every try shows.
    spans = []
    for _ in range(3):
        spans.append(_late_start_span(gateway))
        if spans[-1] >= 0.03:
            break
    assert max(spans) >= 0.03, spans


def _late_start_span(gateway: EmbeddedGateway) -> float:
    body = json.dumps(chat_body()).encode()
    sock = socket.create_connection(("127.0.0.1", gateway.port))
    sock.settimeout(5)
    arrivals: list[float] = []
    try:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\n"
            + f"Authorization: Bearer {gateway.api_key}\r\nX-Anoman-Simulate: ttft=0.05,"
              f"rate=50,tokens=5\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        time.sleep(0.15)
        sock.sendall(body)
        data = b""
        while b"[DONE]" not in data:
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
            arrivals += [time.monotonic()] * chunk.count(b'{"content":"')
    finally:
        sock.close()
    assert len(arrivals) == 5
    # 4 gaps of 20 ms, not one burst (a burst spans ~0). Bounded loosely: this thread's
    # own reads can be late under load (51 ms seen in CI with a core busy).
    return arrivals[-1] - arrivals[0]
