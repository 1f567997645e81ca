"""Local gateway under load: 500 concurrent streams at 20 tokens/s each.

    python benchmarks/gateway_load.py           # --streams 500 --rate 20 --tokens 100 --runs 3

Each run starts a fresh `anoman-tui serve` in a child process (fresh ledger, limits
raised) and `--clients` client processes (default 1) that together open `--streams`
keep-alive connections, then send one streaming request on each at the same moment
(`X-Anoman-Simulate: ttft=0,rate=20,tokens=100`, model `anoman-lite`): 500 × 20 =
10,000 frames/s through the gateway for 5 s. Clients are raw asyncio Protocols that
stamp every read on arrival (`data_received`) and do minimal parsing, so the client
side costs little; its own CPU use is printed so that can be checked
(`--clients 2` splits the streams over two processes).

Checked per run: every stream answered 200, carried all its tokens and ended with
`[DONE]`; the ledger holds exactly one row per request, all `completed`. Measured:
the gap between consecutive token frames of a stream, over all streams (p50/p99/max;
the schedule says 50 ms), the lateness of the last token against the schedule, and
gateway/client CPU. Figures are medians over the runs.

Target: every stream completes; inter-chunk gap p99 ≤ 100 ms.

May import: the standard library and benchmarks/_common.py (the gateway runs in its
own process).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import resource
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    RawStreamProtocol,
    StreamTiming,
    chat_request_bytes,
    median,
    percentile,
    print_header,
    start_gateway,
    verdict,
)

MODEL = "anoman-lite"


async def _client(host: str, port: int, key: str, streams: int, simulate: str,
                  start_at: float) -> tuple[list[StreamTiming | None], float]:
    loop = asyncio.get_running_loop()
    protos: list[RawStreamProtocol] = []
    # Connect first (in small batches, to stay inside the listen backlog), send later.
    for i in range(0, streams, 50):
        batch = await asyncio.gather(*(
            loop.create_connection(RawStreamProtocol, host, port)
            for _ in range(min(50, streams - i))))
        protos.extend(p for _, p in batch)
    request = chat_request_bytes(host, port, key, MODEL, simulate)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    cpu0 = time.process_time()
    sent = [p.send(request) for p in protos]
    results: list[StreamTiming | None] = []
    for timing, finished in sent:
        try:
            await asyncio.wait_for(finished, 120)
            results.append(timing)
        except (ConnectionError, TimeoutError):
            results.append(None)
    cpu = time.process_time() - cpu0
    for p in protos:
        assert p.transport is not None
        p.transport.close()
    return results, cpu


def _client_process(conn: Connection, host: str, port: int, key: str, streams: int,
                    simulate: str, start_at: float) -> None:
    results, cpu = asyncio.run(_client(host, port, key, streams, simulate, start_at))
    conn.send(([None if r is None else (r.status, r.done, r.sent_at, r.token_times)
                for r in results], cpu))
    conn.close()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(args: argparse.Namespace) -> dict[str, float]:
    simulate = f"ttft=0,rate={args.rate:g},tokens={args.tokens}"
    ctx = multiprocessing.get_context("fork")
    with start_gateway(max_streams=args.streams * 2) as gateway:
        host, port = gateway.host_port
        gw_cpu0 = _proc_cpu(gateway.process.pid)
        start_at = time.time() + 1.0 + args.streams / 500  # all connected by then
        shares = [args.streams // args.clients + (i < args.streams % args.clients)
                  for i in range(args.clients)]
        pipes, procs = [], []
        for share in shares:
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_client_process,
                               args=(child, host, port, gateway.api_key, share, simulate,
                                     start_at))
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        gathered: list[tuple[int, bool, float, list[float]] | None] = []
        client_cpu = 0.0
        for parent, proc in zip(pipes, procs, strict=True):
            rows, cpu = parent.recv()
            gathered.extend(rows)
            client_cpu += cpu
            proc.join()
        wall = time.time() - start_at
        gw_cpu = _proc_cpu(gateway.process.pid) - gw_cpu0
        time.sleep(0.2)  # the last rows are written as the streams close
        ledger_rows = gateway.ledger_count()
        statuses = gateway.ledger_statuses()

    complete = [r for r in gathered
                if r is not None and r[0] == 200 and r[1] and len(r[3]) == args.tokens]
    gaps = [b - a for r in complete for a, b in zip(r[3], r[3][1:], strict=False)]
    interval = 1 / args.rate
    late = [r[3][-1] - (r[3][0] + (args.tokens - 1) * interval) for r in complete]
    ttfts = [r[3][0] - r[2] for r in complete]
    out = {
        "complete": len(complete), "gap_p50": percentile(gaps, 50),
        "gap_p99": percentile(gaps, 99), "gap_max": max(gaps),
        "late_p99": percentile(late, 99), "ttft_p99": percentile(ttfts, 99),
        "gw_cpu": gw_cpu / wall, "client_cpu": client_cpu / wall,
        "ledger_rows": ledger_rows, "ledger_completed": statuses.get("completed", 0),
    }
    print(f"   run: {out['complete']}/{args.streams} complete, gap p50 "
          f"{out['gap_p50'] * 1000:.1f} ms p99 {out['gap_p99'] * 1000:.1f} ms max "
          f"{out['gap_max'] * 1000:.1f} ms, last token late p99 {out['late_p99'] * 1000:.1f} ms,"
          f" TTFT p99 {out['ttft_p99'] * 1000:.0f} ms, gateway CPU {out['gw_cpu']:.0%},"
          f" client CPU {out['client_cpu']:.0%}, ledger {ledger_rows} rows {statuses}",
          flush=True)
    return out


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--rate", type=float, default=20.0, help="tokens/s of each stream")
    parser.add_argument("--tokens", type=int, default=100, help="tokens per stream")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1, help="client processes")
    args = parser.parse_args()

    print_header(f"local gateway: {args.streams} concurrent streams at {args.rate:g} tok/s, "
                 f"{args.tokens} tokens each, {args.clients} client process(es), "
                 f"{args.runs} runs")
    runs = [one_run(args) for _ in range(args.runs)]
    med = {k: median([r[k] for r in runs]) for k in runs[0]}
    all_complete = all(r["complete"] == args.streams for r in runs)
    ledger_ok = all(r["ledger_rows"] == args.streams == r["ledger_completed"] for r in runs)
    print(f"   median over runs: gap p50 {med['gap_p50'] * 1000:.1f} ms, "
          f"p99 {med['gap_p99'] * 1000:.1f} ms, max {med['gap_max'] * 1000:.1f} ms; "
          f"gateway CPU {med['gw_cpu']:.0%} of a core, client CPU {med['client_cpu']:.0%}")
    print(f"   every stream completes ({args.streams} per run):  "
          f"{', '.join(str(int(r['complete'])) for r in runs)}   {verdict(all_complete)}")
    print(f"   gap p99 <= 100 ms: {med['gap_p99'] * 1000:.1f} ms = "
          f"{med['gap_p99'] / 0.1:.2f}x the budget   {verdict(med['gap_p99'] <= 0.1)}")
    print(f"   ledger: exactly one completed row per request: "
          f"{', '.join(str(int(r['ledger_rows'])) for r in runs)} rows   {verdict(ledger_ok)}")
    return 0 if all_complete and ledger_ok and med["gap_p99"] <= 0.1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
