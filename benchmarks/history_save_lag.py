"""Does saving comparisons stall the panes? Display lag with and without saves running.

The real `AnomanApp` runs headless (`App.run_test`, 180x50) against the local gateway in
a separate process (`anoman-tui serve --port 0`), with its history open on a file that
already holds `--prefill` comparisons (3,000 by default, of the sizes
`history_store.py` uses). Panes 1 and 2 stream `--tokens` tokens each at `--rate` tok/s
(`X-Anoman-Simulate: ttft=0.05,rate=300,tokens=2000`); display lag is measured as in
`app_display_lag.py` (a token's arrival stamp at the socket -> the end of the frame that
drew it). Two loads per run, their order alternating from run to run so that drift
(other work on the machine, a warming process) falls on both alike:

* (a) the panes stream, nothing is saved (beyond the app's own save of the turn when both
  panes end, as in (b));
* (b) the panes stream while comparisons are saved back to back the way the compare
  screen saves a turn: `asyncio.to_thread(store.save, record)` started from the app's
  event loop, on the app's own open history. Each record is 3 panes x ~3,000-token
  answers (one with reasoning), a 120-cell token-rate series, usage, an Anoman block
  and metrics.

Each saved comparison goes through the compare screen's save path: `for_history` (its
recordings kept under the recording limit) and `PendingSaves.save` (the app's, which a
shared history uses to wait out a lost server), each pane with a recording of its answer
as the app keeps one by default (`--no-record`: without, as before 12-06).

Target (per run, and on the medians over the runs): |p99(b) - p99(a)| <= 5 ms. Also
printed: how many saves ran during (b) and their duration (p50/p99), each in its thread
(the store's write from the call until the commit has returned) and as the compare
screen awaits it (with the hand-off to the thread and the wait until the loop, busy
drawing, takes the result back: the first save of a run, started as the panes start,
waits there for the loop's redraw of three reset panes), and how late a 10 ms sleep on
the event loop woke up in each load.

`--postgres` puts the app's history on a throw-away PostgreSQL server on loopback
(tests/postgres.py: initdb + pg_ctl, fsync off, as benchmarks/pg_store.py starts one),
`--server URL` on a server of yours (a database `bench_save_lag` is created there);
the app opens it as it opens `history_url`. There the save itself has a target too:
p99 <= 20 ms in its thread while the panes stream (until 12-06 the figure was the save
as awaited, which counts the loop's own work too). `--panes 3` streams all three panes.

    python benchmarks/history_save_lag.py [--runs 3] [--prefill 3000]
    python benchmarks/history_save_lag.py --postgres --panes 3

May import: the standard library, textual, anoman_tui, _common, app_harness, history_store
(beside it) and tests/postgres.py (the throw-away server).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import statistics
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/postgres.py

from _common import probe_line
from app_harness import (
    BenchApp,
    gateway_process,
    isolate_environment,
    loop_probe,
    percentile,
)
from history_store import MODELS as HISTORY_MODELS
from history_store import answer, comparison

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.history.builder import for_history
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording

TARGET_MS = 5.0
SAVE_P99_TARGET_MS = 20.0  # a save to a shared (PostgreSQL) history while panes stream
CHARS_PER_TOKEN = 4  # about what the local gateway's answers average


@dataclass
class Load:
    saving: bool
    lag: list[float]  # arrival -> drawn, seconds
    loop_late: list[float]
    saves: list[float] = field(default_factory=list)  # each save in its thread, seconds
    awaited: list[float] = field(default_factory=list)  # each save as the loop awaits it
    undrawn: int = 0

    def p99_ms(self) -> float:
        return 1000 * percentile(self.lag, 0.99)


def recording(pane: int, model: str, text: str) -> StreamRecording:
    """The stream of `text` as the app records it: one SSE frame a word, read off the
    socket in reads of ~40 frames (about a frame's worth at 300 tok/s)."""
    frames = [(f'data: {{"choices":[{{"delta":{{"content":"{word} "}}}}]}}\n\n').encode()
              for word in text.split()]
    reads = tuple((0.2 + i / 300, b"".join(frames[i:i + 40]))
                  for i in range(0, len(frames), 40))
    return StreamRecording(endpoint="openai", path="/v1/chat/completions", model=model,
                           status=200, headers=(("content-type", "text/event-stream"),),
                           headers_at=0.1, reads=reads, ending="completed",
                           ended_at=reads[-1][0] + 0.01, pane=pane)


def big_comparison(rng: random.Random, n: int, tokens: int,
                   recorded: bool = True) -> ComparisonRecord:
    """3 panes x `tokens`-token answers, as a long turn of the app would leave them."""
    models = rng.sample(HISTORY_MODELS, 3)
    cells = 120  # 250 ms cells: a 30 s answer
    panes = []
    for i, model in enumerate(models, start=1):
        text = answer(rng, tokens * CHARS_PER_TOKEN)
        panes.append(PaneRecord(
            pane=i, model=model, base_url="http://127.0.0.1:8765", endpoint="openai",
            temperature=0.7, max_tokens=None, scenario="none", status="completed",
            committed=True, text=text,
            recording=recording(i, model, text) if recorded else None,
            reasoning=answer(rng, 3000) if i == 3 else "", finish_reason="stop",
            usage={"prompt_tokens": 60, "completion_tokens": tokens,
                   "total_tokens": tokens + 60},
            anoman={"request_id": f"req-save-{n}-{i}", "cost_usd": tokens * 2e-6,
                    "weighted_tokens": tokens * 3, "routing": {"mode": "auto", "region": "eu"},
                    "cache": {"status": "miss"}, "guardrails": {"pii": {"status": "pass"}}},
            metrics={"ttft_s": rng.uniform(0.1, 2), "e2e_s": rng.uniform(10, 40),
                     "output_tokens_per_s": rng.uniform(50, 150), "chunks": tokens},
            rate_series=tuple(round(rng.uniform(0, 200), 1) for _ in range(cells)),
            cost=Cost(Decimal(f"{tokens * 2e-6:.6f}"), "gateway"),
        ))
    return ComparisonRecord(
        prompt="compare connection pooling strategies for postgres under bursty load "
               f"(turn {n})",
        panes=tuple(panes), system_prompt="You are a careful reviewer.",
        conversation=(("user", "an earlier question"), ("assistant", answer(rng, 2000))),
        created_at=time.time(), source="app",
    )


async def keep_saving(app: BenchApp, records: list[ComparisonRecord], every: float,
                      load: Load, stop: asyncio.Event) -> None:
    """Save one comparison every `every` seconds (0: back to back) as
    `CompareScreen._save_turn` saves one: its recordings within the limit
    (`for_history`), then in a thread, awaited from the app's loop, through the app's
    `PendingSaves` (the store's own `save` when it has none). Each save is timed in its
    thread (the call until the commit has returned) and as the loop awaits it (with the
    hand-off to the thread and the wait for the loop to take the result back)."""
    store, pending = app.history, app.pending_saves
    assert store is not None
    limit = app.settings.recording_limit()
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        record = for_history(records[n % len(records)], limit).record
        n += 1
        save = store.save if pending is None else pending.save

        def timed(record: ComparisonRecord = record, save: Any = save) -> float:
            began = time.perf_counter()
            save(record)
            return time.perf_counter() - began

        start = time.perf_counter()
        load.saves.append(await asyncio.to_thread(timed))
        load.awaited.append(time.perf_counter() - start)
        next_at += every
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))


async def run_load(app: BenchApp, saving: bool, records: list[ComparisonRecord],
                   every: float, rate: float, tokens: int, panes: int) -> Load:
    streaming = list(range(1, panes + 1))
    app.reset_lags()
    for pane in app.panes:
        pane.reset()  # no conversation: every request is the same size
    stop = asyncio.Event()
    load = Load(saving, [], [])
    tasks = [asyncio.create_task(loop_probe(load.loop_late, stop))]
    if saving:
        tasks.append(asyncio.create_task(keep_saving(app, records, every, load, stop)))
    app.start_panes({i: f"ttft=0.05,rate={rate:g},tokens={tokens}" for i in streaming})
    await app.wait_done(streaming)
    deadline = time.monotonic() + 5
    while any(lag.arrivals for lag in app.lags[:panes]) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.gather(*tasks)
    load.lag = [d - a for lag in app.lags[:panes] for a, d in lag.drawn]
    load.undrawn = sum(len(lag.arrivals) for lag in app.lags[:panes])
    # The app saves the turn that just ended: let it finish before the next load.
    await asyncio.sleep(0.5)
    return load


def ms(values: list[float], q: float) -> float:
    return 1000 * percentile(values, q) if values else float("nan")


def show(load: Load) -> None:
    label = "(b) saving    " if load.saving else "(a) no saving "
    # (the first save of a run apart too: it starts beside the streams, while the loop
    # resets and redraws the panes)
    saves = (f"; {len(load.saves)} saves, each p50/p99/max {ms(load.saves, .5):.1f}/"
             f"{ms(load.saves, .99):.1f}/{ms(load.saves, 1):.1f} ms, the first "
             f"{1000 * load.saves[0]:.1f} ms (as awaited p50/p99/max "
             f"{ms(load.awaited, .5):.1f}/{ms(load.awaited, .99):.1f}/"
             f"{ms(load.awaited, 1):.1f} ms, the first {1000 * load.awaited[0]:.1f} ms)"
             if load.saving and load.saves else "")
    print(f"    {label} lag p50/p95/p99/max {ms(load.lag, .5):.1f}/{ms(load.lag, .95):.1f}/"
          f"{ms(load.lag, .99):.1f}/{ms(load.lag, 1):.1f} ms over {len(load.lag)} tokens, "
          f"undrawn {load.undrawn}; loop late p99 {ms(load.loop_late, .99):.1f} ms{saves}")


@contextlib.contextmanager
def history_server(postgres: bool, server: str | None) -> Iterator[str | None]:
    """The URL of a fresh PostgreSQL database for the app's history (a throw-away server
    with `postgres`, else one created on `server`), or None: the SQLite file."""
    if not postgres and server is None:
        yield None
        return
    throwaway = None
    if server is None:
        from tests.postgres import PostgresServer, find_bindir

        bindir = find_bindir()
        if bindir is None:
            raise SystemExit("no PostgreSQL server binaries: install Debian's postgresql "
                             "or pass --server URL")
        throwaway = PostgresServer(bindir)
        throwaway.start()
        server = throwaway.url("postgres")
    try:
        import psycopg

        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS bench_save_lag")
            conn.execute("CREATE DATABASE bench_save_lag")
        parts = urllib.parse.urlsplit(server)
        yield urllib.parse.urlunsplit(parts._replace(path="/bench_save_lag"))
    finally:
        if throwaway is not None:
            throwaway.destroy()


async def main_async(args: argparse.Namespace) -> int:
    isolate_environment()
    home = Path(os.environ["XDG_DATA_HOME"]).parent  # the throw-away home made just now
    try:
        with history_server(args.postgres, args.server) as url:
            if url is not None:
                os.environ["ANOMAN_HISTORY_URL"] = url  # the app opens it as history_url
            return await measure(args, url)
    finally:
        # The history grows by hundreds of MB when saving back to back: never leave it.
        shutil.rmtree(home, ignore_errors=True)


def _history_size(url: str | None, path: Path) -> float:
    """MB the history takes."""
    if url is None:
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 1e6
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) / 1e6 if row else float("nan")


async def measure(args: argparse.Namespace, url: str | None) -> int:
    from anoman_tui.history.engines import describe_url

    runs, every, rate, tokens, panes = (args.runs, args.save_every, args.rate, args.tokens,
                                        args.panes)
    rng = random.Random(12)
    path = default_path()
    start = time.perf_counter()
    with HistoryStore.open(url or path) as store:
        for n in range(args.prefill):
            store.save(comparison(rng, n))
    where = describe_url(url) if url is not None else str(path)
    print(f"history: {args.prefill:,} comparisons in {where} "
          f"({_history_size(url, path):.0f} MB), "
          f"filled in {time.perf_counter() - start:.1f} s")
    records = [big_comparison(rng, n, args.answer_tokens, recorded=args.record)
               for n in range(8)]
    chars = sum(len(p.text) + len(p.reasoning) for p in records[0].panes)
    streams = records[0].recording_bytes
    print(f"saved while streaming: 3 panes x {args.answer_tokens:,}-token answers "
          f"({chars / 1000:.0f} KB of text a comparison"
          f"{f', {streams / 1e6:.1f} MB of recorded streams' if streams else ', no recordings'}"
          f"), {'back to back' if every <= 0 else f'one every {1000 * every:g} ms'}")
    results: list[tuple[Load, Load]] = []
    with gateway_process() as gateway:
        print(f"gateway: separate process (pid {gateway.process.pid}) at {gateway.base_url}; "
              f"machine probe {probe_line()[1]}; load average "
              f"{os.getloadavg()[0]:.2f}")
        print(f"load: panes 1-{panes} at {rate:g} tok/s x {tokens:,} tokens")
        for run in range(runs):
            app = BenchApp(gateway)
            async with app.run_test(size=(180, 50)):
                await app.ready()
                while app.history is None:
                    if app.history_problem:
                        raise SystemExit(f"the app's history: {app.history_problem}")
                    await asyncio.sleep(0.02)
                order = (False, True) if run % 2 == 0 else (True, False)
                print(f"run {run + 1}/{runs} ({'a then b' if run % 2 == 0 else 'b then a'})")
                loads = {}
                for saving in order:
                    loads[saving] = await run_load(app, saving, records, every, rate, tokens,
                                                   panes)
                    show(loads[saving])
                a, b = loads[False], loads[True]
                delta = b.p99_ms() - a.p99_ms()
                ok = abs(delta) <= TARGET_MS and not a.undrawn and not b.undrawn
                print(f"    p99 (b) - (a) = {delta:+.1f} ms   target |delta| <= "
                      f"{TARGET_MS:g} ms  {'MET' if ok else 'MISSED'}")
                results.append((a, b))
    a99 = statistics.median(a.p99_ms() for a, _ in results)
    b99 = statistics.median(b.p99_ms() for _, b in results)
    saves = [s for _, b in results for s in b.saves]
    awaited = [s for _, b in results for s in b.awaited]
    met_runs = sum(abs(b.p99_ms() - a.p99_ms()) <= TARGET_MS for a, b in results)
    overall = abs(b99 - a99) <= TARGET_MS
    print(f"\nmedians over {runs} runs: display lag p99 (a) no saving {a99:.1f} ms, "
          f"(b) saving {b99:.1f} ms, difference {b99 - a99:+.1f} ms")
    print(f"  {len(saves)} saves in all, each p50 {ms(saves, .5):.1f} ms, p99 "
          f"{ms(saves, .99):.1f} ms in its thread; as awaited p50 {ms(awaited, .5):.1f} ms, "
          f"p99 {ms(awaited, .99):.1f} ms; runs within target {met_runs}/{runs}")
    print(f"  target |p99(b) - p99(a)| <= {TARGET_MS:g} ms   {'MET' if overall else 'MISSED'}")
    if url is not None:
        saved = bool(saves) and ms(saves, .99) <= SAVE_P99_TARGET_MS
        overall = overall and saved
        print(f"  target a save's p99 (in its thread) <= {SAVE_P99_TARGET_MS:g} ms on "
              f"PostgreSQL while {panes} panes stream   {'MET' if saved else 'MISSED'}")
    return 0 if overall else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prefill", type=int, default=3000,
                        help="comparisons in the history before the runs")
    parser.add_argument("--save-every", type=float, default=0.1, metavar="SECONDS",
                        help="start a save this often during (b); 0: back to back")
    parser.add_argument("--rate", type=float, default=300.0, help="tok/s per pane")
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per pane")
    parser.add_argument("--answer-tokens", type=int, default=3000,
                        help="tokens of each answer in the comparisons saved")
    parser.add_argument("--panes", type=int, choices=(1, 2, 3), default=2,
                        help="how many panes stream")
    parser.add_argument("--no-record", dest="record", action="store_false",
                        help="save the comparisons without their recorded streams")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--postgres", action="store_true",
                       help="the app's history on a throw-away PostgreSQL server")
    where.add_argument("--server", default=None, metavar="URL",
                       help="the app's history in a database created on this PostgreSQL "
                       "server")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
