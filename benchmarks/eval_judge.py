"""A judged suite: does a judge cost no more than its own streams?

    python benchmarks/eval_judge.py [--cases 300] [--concurrency 32] [--judge-concurrency 16]
                                    [--ttft 0.2] [--rate 100] [--tokens 80] [--runs 1]

A local gateway runs in another process (`anoman-tui serve`) with every stream's
schedule pinned in its config (`[models."NAME"] simulate = ...`, the `X-Anoman-Simulate`
syntax): the three models under test (`claude-sonnet-4-6`, `gpt-5-mini`, `anoman-lite`)
at `ttft=0.2,rate=100,tokens=80` (0.99 s a stream), the judge `anoman-judge` at its own
catalogue pace, `ttft=0.05,rate=600`, its reply held at `tokens=80` (0.18 s a call; its
replies are ~50 tokens, and a longer one repeats the reply, so the verdict, the last
`[[X]]`, is unchanged). The judge is pinned in the gateway, not with `eval -H`, because
`-H` goes to the judge's requests too.

Each run is two `anoman-tui eval --json` processes, as a user runs them (piped, a
history of their own), on the same `--cases` cases x 3 models, repeat 1, `concurrency`
`--concurrency`:

- **plain**: no judge;
- **judged**: `judge = "anoman-judge"`, `pairwise = true`, `judge_concurrency`
  `--judge-concurrency`: 3 pairs a case, each judged in both orders, 1,800 calls for
  300 cases.

Measured:

- **Time against the schedule.** The time the streams' schedule implies is the
  makespan of an ideal scheduler with no cost of its own: the models' streams started
  in the engine's order (case by case, the suite's model order) whenever one of the
  `concurrency` slots is free, each lasting its scheduled `ttft + (tokens - 1) / rate`;
  each pair's two judge calls ready once both its answers have ended, started first
  ready, first served, on `judge_concurrency` slots, each lasting the judge's scheduled
  time. Measured: the eval process from its first request (the gateway ledger's
  earliest `started_at` of the run) to its exit, the report included; its start-up
  before the first request (imports, the model list) is printed apart. The same ideal
  is also computed from the ledger's own durations (`ended_at - started_at` of every
  row), so a gateway that ran late can be told from an eval that did.
- **CPU per judge call against per answer stream.** The eval process's user + system
  CPU (`getrusage(RUSAGE_CHILDREN)` around each process): per answer stream =
  CPU(plain) / answer streams; per judge call = (CPU(judged) - CPU(plain)) / judge
  calls. Also split, from /proc samples every 0.05 s, into start-up, streaming (first
  request to the last stream's end) and the report after it.
- The judge's `calls`, `errors` and `cost_usd` from `eval --json`, and its ledger rows:
  every call must be answered (1,800 of 1,800, 0 errors).
- Beside them, to tell why a run is late: the eval's main thread's CPU (its event loop:
  a run whose loop needs about as much CPU as the schedule lasts cannot keep to it), the
  gateway's CPU, what other processes kept busy (/proc/stat, in cores), the answers and
  judge calls in flight on average (from the ledger), and the machine-speed probe before
  and after each run.

One small judged run goes first, not measured (the first process of a sitting reads its
modules from a cold cache). A run (plain + judged) takes about 75 s; `--runs N` repeats it.

Targets (benchmarks/README.md): judged run ≤ 1.10 x the implied time; CPU per judge call
≤ CPU per answer stream; every judge call answered, none an error.

May import: the standard library and `_common`.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Gateway, median, print_header, probe_line, start_gateway, verdict

TICKS = os.sysconf("SC_CLK_TCK")
MODELS = ("claude-sonnet-4-6", "gpt-5-mini", "anoman-lite")
JUDGE = "anoman-judge"
JUDGE_TTFT, JUDGE_RATE, JUDGE_TOKENS = 0.05, 600.0, 80
TOPICS = (
    "how do I descale an electric kettle with vinegar without damaging the heating element",
    "explain connection pooling for Postgres under bursty load from a web application",
    "compare SQLite and Postgres for a small inventory system with concurrent writers",
    "write a Python function that retries an HTTP request with exponential backoff",
    "what should I check before replacing the chain and cassette of a bicycle",
    "how do I keep sourdough starter healthy while travelling for two weeks",
    "explain how TCP congestion control reacts to packet loss on a wireless link",
    "design a retention policy for application logs stored in object storage",
)


def schedule_s(ttft: float, rate: float, tokens: int) -> float:
    """A stream's scheduled length at the local gateway: token i is due at
    ttft + i / rate from admission, the end right after the last."""
    return ttft + (tokens - 1) / rate


# -- the gateway, its schedule pinned in its config ------------------------------------

def paced_gateway(pacing: dict[str, str]) -> contextlib.AbstractContextManager[Gateway]:
    """`anoman-tui serve` in a child process (`_common.start_gateway`) with a standing
    `simulate` per model (`pacing`: model -> `X-Anoman-Simulate` value)."""
    return start_gateway(simulate=pacing)


@dataclass
class Row:
    model: str
    status: str
    tokens: int
    started: float
    ended: float


def ledger_rows(db: Path, since: float, until: float) -> list[Row]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute(
            "SELECT model, status, completion_tokens, started_at, ended_at FROM usage "
            "WHERE started_at >= ? AND started_at <= ? ORDER BY started_at",
            (since, until)).fetchall()
    finally:
        conn.close()
    return [Row(str(m), str(s), int(n), float(a), float(b)) for m, s, n, a, b in rows]


# -- the suite and one eval process ------------------------------------------------------

def suite_text(cases: int, concurrency: int, judge_concurrency: int, judged: bool) -> str:
    lines = ['name = "judged-load"' if judged else 'name = "plain-load"',
             f"models = {json.dumps(list(MODELS))}", "repeat = 1",
             f"concurrency = {concurrency}"]
    if judged:
        lines += [f'judge = "{JUDGE}"', f"judge_concurrency = {judge_concurrency}",
                  "pairwise = true"]
    for i in range(1, cases + 1):
        topic = TOPICS[i % len(TOPICS)]
        lines += ["[[case]]", f"prompt = {json.dumps(f'Question {i}: {topic}?')}"]
    return "\n".join(lines) + "\n"


def cpu_s(pid: int, tid: int | None = None) -> float:
    """A process's CPU (utime + stime), or one of its threads' (`tid`)."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy_s() -> float:
    """CPU time the whole machine has spent busy (all cores, /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICKS


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class EvalRun:
    judged: bool
    status: int = 0
    launched: float = 0.0  # time.time(), as the ledger's stamps
    exited: float = 0.0
    cpu_total: float = 0.0
    gateway_cpu: float = 0.0  # the gateway process's CPU over the same time
    machine_cpu: float = 0.0  # every process's, this script's too
    samples: list[tuple[float, float]] = field(default_factory=list)  # (time, cpu)
    loop_cpu: float = 0.0  # the main thread's (the event loop's), at its last sample
    report: dict[str, object] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)

    def cpu_at(self, at: float) -> float:
        """The process's CPU at `at`, from the samples (the last one not after it)."""
        before = [cpu for t, cpu in self.samples if t <= at]
        return before[-1] if before else 0.0


def run_eval(gateway: Gateway, cases: int, concurrency: int, judge_concurrency: int,
             judged: bool) -> EvalRun:
    run = EvalRun(judged)
    with tempfile.TemporaryDirectory(prefix="anoman-eval-judge-") as tmp:
        suite = Path(tmp) / "suite.toml"
        suite.write_text(suite_text(cases, concurrency, judge_concurrency, judged))
        env = dict(os.environ, XDG_DATA_HOME=str(Path(tmp) / "data"),
                   ANOMAN_CONFIG=os.devnull, ANOMAN_API_KEY=gateway.api_key)
        out_path = Path(tmp) / "out.json"
        before = children_cpu_s()
        gateway_before = cpu_s(gateway.process.pid)
        machine_before = machine_busy_s()
        run.launched = time.time()
        with out_path.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c",
                 "from anoman_tui.cli import main; raise SystemExit(main())",
                 "eval", str(suite), "--base-url", gateway.base_url, "--json"],
                stdout=out, stderr=subprocess.DEVNULL, env=env)
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    try:
                        run.samples.append((time.time(), cpu_s(proc.pid)))
                        run.loop_cpu = cpu_s(proc.pid, proc.pid)
                    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
                        return
                    done.wait(0.05)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            run.status = proc.wait()
            run.exited = time.time()
            done.set()
            sampler.join(timeout=5)
        run.cpu_total = children_cpu_s() - before
        run.gateway_cpu = cpu_s(gateway.process.pid) - gateway_before
        run.machine_cpu = machine_busy_s() - machine_before
        with contextlib.suppress(ValueError):
            run.report = json.loads(out_path.read_text())
    time.sleep(0.3)  # the gateway writes a stream's ledger row once it has ended
    run.rows = ledger_rows(gateway.db_path, run.launched, run.exited)
    return run


# -- the ideal schedule --------------------------------------------------------------------

def implied_s(answers: list[list[float]], judge_calls: list[float] | None,
              concurrency: int, judge_concurrency: int) -> tuple[float, float]:
    """(the models' last end, the makespan) of a scheduler with no cost of its own.

    `answers[case][model]`: each answer stream's length, started in that order on
    `concurrency` slots as soon as one is free. Each pair of a case's answers is ready
    once both have ended and brings two judge calls, served first ready, first served on
    `judge_concurrency` slots; `judge_calls` their lengths, in the order they start.
    """
    free = [0.0] * concurrency
    ends: list[list[float]] = []
    for case in answers:
        row = []
        for length in case:
            start = heapq.heappop(free)
            heapq.heappush(free, start + length)
            row.append(start + length)
        ends.append(row)
    models_end = max((max(row) for row in ends), default=0.0)
    if judge_calls is None:
        return models_end, models_end
    ready = sorted(t for row in ends for i, a in enumerate(row) for b in row[i + 1:]
                   for t in (max(a, b), max(a, b)))
    free = [0.0] * judge_concurrency
    last = models_end
    for at, length in zip(ready, judge_calls, strict=False):
        start = max(at, heapq.heappop(free))
        heapq.heappush(free, start + length)
        last = max(last, start + length)
    return models_end, last


@dataclass
class Figures:
    judged: bool
    status: int
    answers: int
    answers_completed: int
    judge_rows: int
    judge_completed: int
    startup_s: float  # launch -> first request
    streaming_s: float  # first request -> last stream's end (the ledger)
    report_s: float  # last stream's end -> exit
    measured_s: float  # first request -> exit
    implied_s: float  # from the schedule
    implied_models_s: float
    implied_ledger_s: float  # the same ideal, from the ledger's own durations
    late_p99_s: float  # how far a stream ran past its schedule, at the gateway
    models_in_flight: float
    judge_in_flight: float
    cpu_total: float
    cpu_startup: float
    cpu_streaming: float
    cpu_report: float
    loop_cpu: float
    gateway_cpu: float
    others_cores: float  # what other processes kept busy, in cores, on average
    judge_json: dict[str, object]

    @property
    def ratio(self) -> float:
        return self.measured_s / self.implied_s if self.implied_s else 0.0


def figures(run: EvalRun, cases: int, concurrency: int, judge_concurrency: int,
            answer_s: float, judge_s: float) -> Figures:
    answers = [r for r in run.rows if r.model in MODELS]
    judge = [r for r in run.rows if r.model == JUDGE]
    first = min((r.started for r in run.rows), default=run.launched)
    last_end = max((r.ended for r in run.rows), default=run.exited)
    calls = cases * len(MODELS) * (len(MODELS) - 1)  # pairs x 2 orders
    scheduled = [[answer_s] * len(MODELS) for _ in range(cases)]
    models_end, implied = implied_s(scheduled, [judge_s] * calls if run.judged else None,
                                    concurrency, judge_concurrency)
    # The same ideal from what the gateway actually took: each model's rows in the
    # order they started are its cells in case order; the judge's in start order.
    by_model = {m: [r.ended - r.started for r in answers if r.model == m] for m in MODELS}
    n = min((len(v) for v in by_model.values()), default=0)
    ledger_answers = [[by_model[m][i] for m in MODELS] for i in range(n)]
    _, implied_ledger = implied_s(ledger_answers, [r.ended - r.started for r in judge]
                                  if run.judged else None, concurrency, judge_concurrency)
    late = sorted((r.ended - r.started) - (judge_s if r.model == JUDGE else answer_s)
                  for r in run.rows)
    span = last_end - first
    raw = run.report.get("judge")
    judge_json: dict[str, object] = raw if isinstance(raw, dict) else {}
    return Figures(
        judged=run.judged, status=run.status, answers=len(answers),
        answers_completed=sum(r.status == "completed" for r in answers),
        judge_rows=len(judge), judge_completed=sum(r.status == "completed" for r in judge),
        startup_s=first - run.launched, streaming_s=span, report_s=run.exited - last_end,
        measured_s=run.exited - first, implied_s=implied, implied_models_s=models_end,
        implied_ledger_s=implied_ledger,
        late_p99_s=late[min(len(late) - 1, int(0.99 * len(late)))] if late else 0.0,
        models_in_flight=sum(r.ended - r.started for r in answers) / span if span else 0.0,
        judge_in_flight=sum(r.ended - r.started for r in judge) / span if span else 0.0,
        cpu_total=run.cpu_total, cpu_startup=run.cpu_at(first),
        cpu_streaming=run.cpu_at(last_end) - run.cpu_at(first),
        cpu_report=run.cpu_total - run.cpu_at(last_end), loop_cpu=run.loop_cpu,
        gateway_cpu=run.gateway_cpu,
        others_cores=max(0.0, run.machine_cpu - run.cpu_total - run.gateway_cpu)
        / max(run.exited - run.launched, 1e-9),
        judge_json=judge_json,
    )


def describe(f: Figures) -> str:
    what = "judged" if f.judged else "plain "
    in_flight = f"{f.models_in_flight:.1f} answers" + (
        f", {f.judge_in_flight:.1f} judge calls" if f.judged else "")
    return "\n".join((
        f"   {what}: {f.answers_completed}/{f.answers} answers"
        + (f", {f.judge_completed}/{f.judge_rows} judge calls" if f.judged else "")
        + f", exit {f.status}; start-up {f.startup_s:.2f} s, streams {f.streaming_s:.2f} s, "
        f"report {f.report_s:.2f} s",
        f"           first request -> exit {f.measured_s:.2f} s against {f.implied_s:.2f} s "
        f"implied = {f.ratio:.3f}x (the models' part {f.implied_models_s:.2f} s; the same "
        f"ideal from the ledger's own durations {f.implied_ledger_s:.2f} s); streams past "
        f"their schedule at the gateway p99 {f.late_p99_s * 1000:.0f} ms; in flight on "
        f"average {in_flight}",
        f"           eval CPU {f.cpu_total:.2f} s (start-up {f.cpu_startup:.2f}, streaming "
        f"{f.cpu_streaming:.2f}, report {f.cpu_report:.2f}; its event loop's thread "
        f"{f.loop_cpu:.2f}); the gateway's {f.gateway_cpu:.2f} s; other processes "
        f"{f.others_cores:.2f} cores on average"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--judge-concurrency", type=int, default=16)
    parser.add_argument("--ttft", type=float, default=0.2, help="the models' TTFT, s")
    parser.add_argument("--rate", type=float, default=100.0, help="the models' tokens/s")
    parser.add_argument("--tokens", type=int, default=80, help="the models' answer length")
    parser.add_argument("--runs", type=int, default=1,
                        help="plain + judged pairs, each with its own probe")
    args = parser.parse_args()
    answer_s = schedule_s(args.ttft, args.rate, args.tokens)
    judge_s = schedule_s(JUDGE_TTFT, JUDGE_RATE, JUDGE_TOKENS)
    calls = args.cases * len(MODELS) * (len(MODELS) - 1)  # pairs x 2 orders
    answers = args.cases * len(MODELS)
    print_header(f"eval, pairwise judge: {args.cases} cases x {len(MODELS)} models "
                 f"({answers} answers, {calls} judge calls), {args.concurrency} answers and "
                 f"{args.judge_concurrency} judge calls in flight; answers "
                 f"ttft={args.ttft:g},rate={args.rate:g},tokens={args.tokens} "
                 f"({answer_s:.2f} s), judge ttft={JUDGE_TTFT:g},rate={JUDGE_RATE:g},"
                 f"tokens={JUDGE_TOKENS} ({judge_s:.3f} s)")
    pacing = {m: f"ttft={args.ttft:g},rate={args.rate:g},tokens={args.tokens}" for m in MODELS}
    pacing[JUDGE] = f"ttft={JUDGE_TTFT:g},rate={JUDGE_RATE:g},tokens={JUDGE_TOKENS}"
    ok_all = True
    ratios: list[float] = []
    with paced_gateway(pacing) as gateway:
        # One small judged run first, not measured: the first process of a sitting reads
        # its modules from a cold disk cache (start-up CPU 1.5 s against 0.85 s after).
        run_eval(gateway, 2, args.concurrency, args.judge_concurrency, True)
        for n in range(1, args.runs + 1):
            print(f"-- run {n}: probe before {probe_line()[1]}")
            plain = figures(run_eval(gateway, args.cases, args.concurrency,
                                     args.judge_concurrency, False),
                            args.cases, args.concurrency, args.judge_concurrency,
                            answer_s, judge_s)
            judged = figures(run_eval(gateway, args.cases, args.concurrency,
                                      args.judge_concurrency, True),
                             args.cases, args.concurrency, args.judge_concurrency,
                             answer_s, judge_s)
            print(f"   probe after {probe_line()[1]}")
            print(describe(plain))
            print(describe(judged))
            j = judged.judge_json
            print(f"   eval --json judge: calls {j.get('calls')}, errors {j.get('errors')}, "
                  f"cost ${j.get('cost_usd')}, position consistency "
                  f"{j.get('position_consistency')}, first position wins "
                  f"{j.get('first_position_wins')}, longer wins {j.get('longer_wins')}")
            time_ok = judged.ratio <= 1.10
            per_answer = plain.cpu_total / answers
            per_call = (judged.cpu_total - plain.cpu_total) / calls
            stream_answer = plain.cpu_streaming / answers
            stream_call = (judged.cpu_streaming - plain.cpu_streaming) / calls
            cpu_ok = per_call <= per_answer
            calls_ok = (j.get("calls") == calls and j.get("errors") == 0
                        and judged.judge_completed == judged.judge_rows == calls
                        and plain.answers_completed == judged.answers_completed == answers
                        and plain.status == judged.status == 0)
            print(f"   judged run ≤ 1.10 x its schedule: {judged.measured_s:.2f} s / "
                  f"{judged.implied_s:.2f} s = {judged.ratio:.3f}x {verdict(time_ok)} "
                  f"(plain run: {plain.ratio:.3f}x; the judge added "
                  f"{judged.measured_s - plain.measured_s:+.2f} s to the run, its schedule "
                  f"{judged.implied_s - plain.implied_s:+.2f} s)")
            print(f"   CPU per judge call ≤ per answer stream: {per_call * 1000:.2f} ms "
                  f"against {per_answer * 1000:.2f} ms {verdict(cpu_ok)} (streaming part "
                  f"alone: {stream_call * 1000:.2f} ms against {stream_answer * 1000:.2f} ms)")
            print(f"   every judge call answered, none an error ({j.get('calls')} calls, "
                  f"{j.get('errors')} errors, {judged.judge_completed} completed in the "
                  f"ledger, of {calls}): {verdict(calls_ok)}")
            ratios.append(judged.ratio)
            ok_all = ok_all and time_ok and cpu_ok and calls_ok
    if args.runs > 1:
        print(f"   judged / implied over {args.runs} runs: median {median(ratios):.3f}x, "
              f"worst {max(ratios):.3f}x")
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
