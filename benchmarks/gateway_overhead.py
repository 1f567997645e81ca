"""Local gateway TTFT overhead: gateway TTFT minus the simulated TTFT.

    python benchmarks/gateway_overhead.py       # --requests 150 --runs 3 --ttft 0.05

Starts `anoman-tui serve` in a child process (throw-away ledger, limits raised)
and sends sequential streaming requests over one keep-alive connection from a raw
asyncio Protocol client, each with `X-Anoman-Simulate: ttft=0.05,rate=1000,tokens=3`
to model `anoman-lite` (no reasoning). For each request:

    overhead = (arrival of the first token frame − request written) − simulated TTFT

i.e. everything the gateway adds: HTTP parsing, auth, JSON, guardrails, composing
the answer, the response head and role chunk, timer lateness, the first write. The
arrival instant is taken in `data_received`, before any parsing. A second series with
`ttft=0` shows the same path with no timer in it, and a third runs against a bare
asyncio socket server (child process, no HTTP framework) that answers with the same
frames after the same `asyncio.sleep(ttft)`: the floor of this machine and event loop
(epoll rounds timeouts up to the next millisecond; idle processes wake slowly).
Printed: p50/p95/max per run and the median of the runs' p50 and p95 (after a
20-request warm-up).

Target: p50 ≤ 2 ms.

May import: the standard library and benchmarks/_common.py (the gateway runs in a
separate process, so nothing of it is imported here).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Gateway,
    RawStreamProtocol,
    chat_request_bytes,
    median,
    percentile,
    print_header,
    start_gateway,
    verdict,
)

MODEL = "anoman-lite"
_FRAME = (b'data: {"id":"chatcmpl-floor","object":"chat.completion.chunk","choices":'
          b'[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n')


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _floor_server(listener: socket.socket) -> None:
    """Child process: the least an asyncio server can do to answer like the gateway."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            ttft = float(head.lower().split(b"ttft=")[1].split(b",")[0])
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"transfer-encoding: chunked\r\n\r\n")
            writer.write(_chunk(_FRAME.replace(b'"content":"hi"', b'"role":"assistant"')))
            await asyncio.sleep(ttft)
            writer.write(_chunk(_FRAME))
            writer.write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")

    async def serve() -> None:
        server = await asyncio.start_server(handle, sock=listener)
        await server.serve_forever()

    asyncio.run(serve())


async def series(gateway: Gateway, count: int, ttft: float, warmup: int,
                 port: int | None = None) -> list[float]:
    """Overheads (seconds) of `count` sequential requests on one keep-alive connection."""
    host, gateway_port = gateway.host_port
    port = port or gateway_port
    loop = asyncio.get_running_loop()
    _, proto = await loop.create_connection(RawStreamProtocol, host, port)
    request = chat_request_bytes(host, port, gateway.api_key, MODEL,
                                 f"ttft={ttft:g},rate=1000,tokens=3")
    out: list[float] = []
    try:
        for i in range(warmup + count):
            timing, finished = proto.send(request)
            await finished
            if timing.status != 200 or not timing.done or not timing.token_times:
                raise RuntimeError(f"request {i} failed: status {timing.status}")
            if i >= warmup:
                out.append(timing.token_times[0] - timing.sent_at - ttft)
    finally:
        assert proto.transport is not None
        proto.transport.close()
    return out


def ms(value: float) -> str:
    return f"{value * 1000:6.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=150, help="requests per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ttft", type=float, default=0.05, help="simulated TTFT, seconds")
    args = parser.parse_args()

    print_header("local gateway TTFT overhead (gateway TTFT − simulated TTFT), "
                 f"{args.runs} runs × {args.requests} sequential requests")
    p50s: list[float] = []
    p95s: list[float] = []
    zero_p50s: list[float] = []
    floor_p50s: list[float] = []
    listener = socket.create_server(("127.0.0.1", 0))
    floor = multiprocessing.get_context("fork").Process(
        target=_floor_server, args=(listener,), daemon=True)
    floor.start()
    floor_port = listener.getsockname()[1]
    listener.close()
    try:
        with start_gateway() as gateway:
            for run in range(args.runs):
                values = asyncio.run(series(gateway, args.requests, args.ttft,
                                            warmup=20 if run == 0 else 5))
                zero = asyncio.run(series(gateway, args.requests // 3, 0.0, warmup=5))
                bare = asyncio.run(series(gateway, args.requests // 3, args.ttft, warmup=5,
                                          port=floor_port))
                p50s.append(percentile(values, 50))
                p95s.append(percentile(values, 95))
                zero_p50s.append(percentile(zero, 50))
                floor_p50s.append(percentile(bare, 50))
                print(f"   run {run + 1}: ttft={args.ttft:g}: p50 {ms(p50s[-1])}  "
                      f"p95 {ms(p95s[-1])}  max {ms(max(values))}  |  ttft=0: p50 "
                      f"{ms(zero_p50s[-1])}  |  bare asyncio server, ttft={args.ttft:g}: "
                      f"p50 {ms(floor_p50s[-1])}", flush=True)
            rows = gateway.ledger_count()
    finally:
        floor.terminate()
        floor.join()
    p50 = median(p50s)
    print(f"   median over runs: p50 {ms(p50)}  p95 {ms(median(p95s))}   "
          f"(ttft=0 path: p50 {ms(median(zero_p50s))}; floor, bare asyncio server: "
          f"p50 {ms(median(floor_p50s))})")
    print(f"   target p50 <= 2 ms: {p50 * 1000:.2f} ms = {p50 / 0.002:.2f}x the budget   "
          f"{verdict(p50 <= 0.002)}")
    print(f"   ledger rows: {rows} (one per request)")
    return 0 if p50 <= 0.002 else 1


if __name__ == "__main__":
    raise SystemExit(main())
