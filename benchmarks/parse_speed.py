"""Stream core parse speed: one loopback stream of 100,000 chunks, three consumers.

    python benchmarks/parse_speed.py            # --chunks 100000 --rounds 3 --sdk-rounds 3

A child process serves one pre-built SSE body per connection on 127.0.0.1, written
with `sendall` as fast as the socket takes it: the role chunk, `--chunks` OpenAI
`chat.completion.chunk` frames with one short token each, the finish chunk with
usage, the `_anoman` frame and `data: [DONE]`. The same body is consumed, all in
one run, by
  (a) the official `openai` SDK: `AsyncOpenAI().chat.completions.create(stream=True)`,
      reading `chunk.choices[0].delta.content` (skipping the `_anoman` chunk);
  (b) bare `httpx` + `httpx_sse.aconnect_sse` + `json.loads` of every frame;
  (c) ours: `StreamClient().stream(StreamRequest(...))` iterated to `StreamDone`.
Each consumer's wall time covers request sent → last event. The consumers run
interleaved in rounds (noise on a shared machine hits all three alike) and the
figures are medians over the rounds. Each consumer must see every token; the
script checks the text length.

Targets: ours ≥ 10× faster than (a), and ours ≤ 1.5× the time of (b).

May import: the standard library, httpx, httpx_sse, openai, anoman_tui.streaming.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import socket
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _common import median, print_header, verdict

TOKENS = (" the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", ",", ".")
HEAD = ('{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,'
        '"model":"bench-model","choices":[{"index":0,')


def build_body(chunks: int) -> tuple[bytes, int]:
    """The SSE body and the length of the text it carries."""
    parts = [f'data: {HEAD}"delta":{{"role":"assistant","content":""}},'
             '"finish_reason":null}]}\n\n']
    text_len = 0
    for i in range(chunks):
        token = TOKENS[i % len(TOKENS)]
        text_len += len(token)
        parts.append(f'data: {HEAD}"delta":{{"content":{json.dumps(token)}}},'
                     '"finish_reason":null}]}\n\n')
    usage = {"prompt_tokens": 5, "completion_tokens": chunks, "total_tokens": chunks + 5}
    parts.append(f'data: {HEAD}"delta":{{}},"finish_reason":"stop"}}],'
                 f'"usage":{json.dumps(usage)}}}\n\n')
    anoman = {"guardrails": {"injection": {"status": "pass", "score": 0.02}},
              "routing": {"mode": "realtime", "region": "id"}, "cache": {"hit": False},
              "cost_usd": "0.000041", "weighted_tokens": 44}
    parts.append(f"data: {json.dumps({'_anoman': anoman})}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode(), text_len


def _serve(listener: socket.socket, body: bytes) -> None:
    """Child process: answer every connection with the body, then close it."""
    head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            b"cache-control: no-cache\r\nconnection: close\r\n"
            b"transfer-encoding: chunked\r\n\r\n")
    # One chunked-encoding chunk per 64 KiB, as a real server would frame it.
    step = 64 * 1024
    framed = b"".join(
        b"%x\r\n" % len(body[i:i + step]) + body[i:i + step] + b"\r\n"
        for i in range(0, len(body), step)
    ) + b"0\r\n\r\n"

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            request = b""
            while b"\r\n\r\n" not in request:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            head_part, _, rest = request.partition(b"\r\n\r\n")
            length = 0
            for line in head_part.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(head + framed)

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()


async def consume_sdk(base_url: str) -> int:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="anm-sk-bench", max_retries=0)
    n = 0
    try:
        stream = await client.chat.completions.create(
            model="bench-model", messages=[{"role": "user", "content": "hi"}], stream=True)
        async for chunk in stream:
            if chunk.choices:  # the `_anoman` chunk has choices None (docs/wire-contract.md §2)
                content = chunk.choices[0].delta.content
                if content:
                    n += len(content)
    finally:
        await client.close()
    return n


async def consume_httpx_sse(base_url: str) -> int:
    from httpx_sse import aconnect_sse

    n = 0
    async with httpx.AsyncClient() as http, aconnect_sse(
        http, "POST", base_url + "/v1/chat/completions",
        json={"model": "bench-model", "messages": [{"role": "user", "content": "hi"}],
              "stream": True},
    ) as source:
        async for sse in source.aiter_sse():
            if sse.data == "[DONE]":
                break
            payload = json.loads(sse.data)
            choices = payload.get("choices")
            if choices:
                content = choices[0]["delta"].get("content")
                if content:
                    n += len(content)
    return n


async def consume_ours(base_url: str) -> int:
    from anoman_tui.streaming import ChatTurn, StreamClient, StreamRequest, TextDelta

    n = 0
    async with StreamClient() as client:
        stream = client.stream(StreamRequest(
            base_url=base_url, api_key="anm-sk-bench", endpoint="openai", model="bench-model",
            messages=(ChatTurn(role="user", content="hi"),)))
        async for event in stream:
            if type(event) is TextDelta:
                n += len(event.text)
        assert stream.result is not None
        if stream.result.status != "completed":
            raise RuntimeError(f"our stream did not complete: {stream.result.failure}")
    return n


def timed(consumer: Callable[[str], Coroutine[Any, Any, int]], base_url: str,
          expected: int) -> float:
    gc.collect()
    started = time.perf_counter()
    got = asyncio.run(consumer(base_url))
    elapsed = time.perf_counter() - started
    if got != expected:
        raise RuntimeError(f"{consumer.__name__} saw {got} characters, expected {expected}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (b) and (c)")
    parser.add_argument("--sdk-rounds", type=int, default=3,
                        help="rounds that also run the SDK (about 15 s each)")
    args = parser.parse_args()

    body, text_len = build_body(args.chunks)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    ctx = multiprocessing.get_context("fork")
    server = ctx.Process(target=_serve, args=(listener, body), daemon=True)
    server.start()
    listener.close()
    base_url = f"http://127.0.0.1:{port}"

    print_header(f"stream core parse speed: one loopback stream of {args.chunks:,} chunks "
                 f"({len(body) / 1e6:.1f} MB)")
    # Warm-up: imports and first-connection costs are not what this measures.
    timed(consume_httpx_sse, base_url, text_len)
    timed(consume_ours, base_url, text_len)

    times: dict[str, list[float]] = {"sdk": [], "httpx_sse": [], "ours": []}
    rounds = max(args.rounds, args.sdk_rounds)
    try:
        for r in range(rounds):
            if r < args.rounds:
                times["httpx_sse"].append(timed(consume_httpx_sse, base_url, text_len))
                times["ours"].append(timed(consume_ours, base_url, text_len))
            if r < args.sdk_rounds:
                times["sdk"].append(timed(consume_sdk, base_url, text_len))
            line = "  ".join(f"{k} {v[-1]:.3f} s" for k, v in times.items() if len(v) > r)
            print(f"   round {r + 1}: {line}", flush=True)
    finally:
        server.terminate()
        server.join()

    labels = {"sdk": "(a) openai SDK async stream", "httpx_sse": "(b) httpx + httpx-sse + json",
              "ours": "(c) StreamClient (ours)"}
    med = {k: median(v) for k, v in times.items() if v}
    for key, label in labels.items():
        if key in med:
            rate = args.chunks / med[key]
            print(f"   {label:32s} median {med[key]:7.3f} s  ({rate:>10,.0f} chunks/s, "
                  f"n={len(times[key])})")
    ok = True
    if "sdk" in med:
        speedup = med["sdk"] / med["ours"]
        ok &= speedup >= 10
        print(f"   ours vs SDK:       {speedup:5.1f}x faster      target >= 10x    "
              f"{verdict(speedup >= 10)}")
    ratio = med["ours"] / med["httpx_sse"]
    ok &= ratio <= 1.5
    print(f"   ours vs httpx-sse: {ratio:5.2f}x the time     target <= 1.5x   "
          f"{verdict(ratio <= 1.5)}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
