"""Shared helpers for the benchmark scripts: percentiles, result lines, a gateway subprocess.

`start_gateway()` runs `anoman-tui serve` in a child process on a free loopback port
with a throw-away ledger and a config whose limits do not get in a benchmark's way
(rate limits and the per-key stream cap are the gateway's to test, not to measure).

May import: the standard library only (the scripts import what they measure).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH_KEY = "anm-sk-local-benchmark-key-0000"


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def probe_times_ms(rounds: int = 5) -> list[float]:
    """A fixed pure-Python workload (dict and string churn, as parsing and drawing are),
    timed `rounds` times, in ms."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        table: dict[str, int] = {}
        for i in range(200_000):
            key = f"k{i % 5000}"
            table[key] = table.get(key, 0) + len(key)
        times.append((time.perf_counter() - start) * 1000)
    return times


def probe_ms() -> float:
    """The machine's speed now: `probe_times_ms()`'s best of 5, in ms. Printed beside
    app-level figures so that a slow machine, or a busy moment, can be told from a
    regression."""
    return min(probe_times_ms())


def probe_line() -> tuple[float, str]:
    """The probe's best of 5 and a line with its best and slowest: on a shared machine
    speed changes within seconds (seen here: 33 ms, then 60-66 ms for whole seconds,
    then 33 again), which the best alone hides."""
    times = probe_times_ms()
    return min(times), f"{min(times):.0f} ms (slowest of 5: {max(times):.0f} ms)"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def print_header(title: str) -> None:
    print(f"== {title}")
    print(f"   python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at start, machine probe {probe_line()[1]}")


@dataclass
class Gateway:
    base_url: str
    api_key: str
    db_path: Path
    process: subprocess.Popen[str]

    @property
    def host_port(self) -> tuple[str, int]:
        host, port = self.base_url.removeprefix("http://").rsplit(":", 1)
        return host, int(port)

    def ledger_count(self) -> int:
        """Rows in the usage ledger (read directly: WAL lets us read while it runs)."""
        import sqlite3

        conn = sqlite3.connect(str(self.db_path))
        try:
            return int(conn.execute("SELECT COUNT(*) FROM usage").fetchone()[0])
        finally:
            conn.close()

    def ledger_statuses(self) -> dict[str, int]:
        import sqlite3

        conn = sqlite3.connect(str(self.db_path))
        try:
            rows = conn.execute("SELECT status, COUNT(*) FROM usage GROUP BY status").fetchall()
            return {str(s): int(n) for s, n in rows}
        finally:
            conn.close()


@contextlib.contextmanager
def start_gateway(max_streams: int = 2000,
                  simulate: dict[str, str] | None = None) -> Iterator[Gateway]:
    """`anoman-tui serve` in a child process; yields once it listens, stops it on exit.
    `simulate`: a standing `X-Anoman-Simulate` value per model (`[models."NAME"]`)."""
    with tempfile.TemporaryDirectory(prefix="anoman-bench-") as tmp:
        config = Path(tmp) / "gateway.toml"
        config.write_text(
            f'api_keys = ["{BENCH_KEY}"]\n'
            "rate_limit_rpm = 1000000\n"
            f"max_concurrent_streams = {max_streams}\n"
            # Every request of a benchmark is alike: a cache hit would skip the stream.
            "cache_enabled = false\n"
            + "".join(f'[models."{model}"]\nsimulate = "{value}"\n'
                      for model, value in (simulate or {}).items())
        )
        db = Path(tmp) / "usage.sqlite3"
        proc = subprocess.Popen(
            [sys.executable, "-c", "from anoman_tui.cli import main; raise SystemExit(main())",
             "serve", "--port", "0", "--config", str(config), "--db", str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + 20
            base_url = ""
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                found = re.search(r"listening on (http://\S+)", line)
                if found:
                    base_url = found.group(1)
                    break
            if not base_url:
                raise RuntimeError("the gateway did not start")
            yield Gateway(base_url, BENCH_KEY, db, proc)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# -- a raw HTTP/1.1 streaming client -------------------------------------------------------

def chat_request_bytes(host: str, port: int, api_key: str, model: str, simulate: str,
                       prompt: str = "Say something about streaming.") -> bytes:
    """One keep-alive `POST /v1/chat/completions` with `stream: true`, ready to write."""
    body = json.dumps({"model": model, "stream": True,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}:{port}\r\n"
            f"authorization: Bearer {api_key}\r\ncontent-type: application/json\r\n"
            f"accept: text/event-stream\r\nx-anoman-simulate: {simulate}\r\n"
            f"content-length: {len(body)}\r\n\r\n")
    return head.encode() + body


class StreamTiming:
    """What one streamed response looked like: status, and when each token frame arrived."""

    __slots__ = ("done", "frames", "sent_at", "status", "token_times")

    def __init__(self, sent_at: float) -> None:
        self.sent_at = sent_at
        self.status = 0
        self.token_times: list[float] = []  # arrival of every frame that carries a token
        self.frames = 0
        self.done = False  # `data: [DONE]` seen and the chunked body ended


class RawStreamProtocol(asyncio.Protocol):
    """asyncio Protocol for sequential keep-alive SSE responses (h11 chunked bodies).

    Timestamps are taken in `data_received`, i.e. when the loop hands us the bytes,
    before any parsing: the same rule the stream core follows. Parsing is minimal on
    purpose (the client must not be the bottleneck): chunked framing, then frames
    split on blank lines and classified by a byte search.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buf = b""
        self._sse = b""
        self._state = "idle"
        self._need = 0
        self._timing: StreamTiming | None = None
        self._finished: asyncio.Future[StreamTiming] | None = None

    # Protocol callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        if self._finished is not None and not self._finished.done():
            self._finished.set_exception(ConnectionError("connection lost mid-response"))

    def eof_received(self) -> bool:
        return False

    def send(self, request: bytes) -> tuple[StreamTiming, asyncio.Future[StreamTiming]]:
        """Write one request; returns its timing and a future done when the response ends."""
        loop = asyncio.get_running_loop()
        self._finished = loop.create_future()
        self._timing = StreamTiming(time.monotonic())
        self._state = "head"
        assert self.transport is not None
        self.transport.write(request)
        return self._timing, self._finished

    def data_received(self, data: bytes) -> None:
        at = time.monotonic()
        self._buf += data
        timing = self._timing
        assert timing is not None
        while True:
            state = self._state
            if state == "head":
                end = self._buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self._buf[:end]
                self._buf = self._buf[end + 4:]
                timing.status = int(head.split(b" ", 2)[1])
                if timing.status != 200:
                    self._state = "idle"
                    self._finish()
                    return
                self._state = "size"
            elif state == "size":
                end = self._buf.find(b"\r\n")
                if end < 0:
                    return
                self._need = int(self._buf[:end], 16)
                self._buf = self._buf[end + 2:]
                self._state = "data" if self._need else "trailer"
            elif state == "data":
                if len(self._buf) < self._need + 2:
                    return
                self._frames(self._buf[:self._need], at, timing)
                self._buf = self._buf[self._need + 2:]
                self._state = "size"
            elif state == "trailer":
                if len(self._buf) < 2:
                    return
                self._buf = self._buf[2:]
                self._state = "idle"
                self._finish()
                return
            else:
                return

    def _frames(self, data: bytes, at: float, timing: StreamTiming) -> None:
        self._sse += data
        *frames, self._sse = self._sse.split(b"\n\n")
        for frame in frames:
            timing.frames += 1
            if b'"delta":{"content":' in frame or b'"delta":{"reasoning_content":' in frame:
                timing.token_times.append(at)
            elif frame == b"data: [DONE]":
                timing.done = True

    def _finish(self) -> None:
        if self._finished is not None and not self._finished.done():
            assert self._timing is not None
            self._finished.set_result(self._timing)
