"""History store speed with 10,000 comparisons: the first page, a search, one save.

    python benchmarks/history_store.py            # --comparisons 10000 --rounds 30

Fills a throw-away history file (a temporary directory) with `--comparisons`
comparisons of three panes each, of realistic sizes (prompts of 60-400
characters, answers of 1-5 KB with reasoning on one pane in three, a 40-cell
token-rate series, usage, an Anoman block and metrics), saved one by one through
`HistoryStore.save` as the app and `compare` save them. Then, over `--rounds`
rounds, medians and p95 of:

  - the first page: `recent(50)` on an open store, and open + `recent(50)` from a
    fresh process's point of view (a new connection each round);
  - a search: `recent(50, search=...)` for a prompt word, a model name, a prefix
    as typed and a word that matches nothing, through the full-text index, and the
    same through the LIKE fallback (for a SQLite without FTS5);
  - one save of a comparison like the others.

Targets (the issue's, for the whole screen; this is the store's part of them):
the history's first page within 300 ms of the key, filtering within 100 ms of a
keystroke. A save has no target of its own: it runs off the UI thread, and the
app's display-lag benchmark is where a stall would show.

May import: the standard library and anoman_tui.history.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from anoman_tui.streaming.cost import Cost

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median, percentile, print_header, verdict

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord

FIRST_PAGE_TARGET_S = 0.300
SEARCH_TARGET_S = 0.100
MODELS = ("claude-sonnet-4-6", "anoman-lite", "deepseek-r1", "qwen3-coder", "gpt-4o-mini",
          "llama-3.1-70b", "mistral-large", "gemini-2.0-flash")
WORDS = ("connection", "pooling", "latency", "database", "index", "stream", "token", "cache",
         "retry", "socket", "thread", "python", "rust", "memory", "queue", "deadlock",
         "migration", "schema", "benchmark", "gateway", "prompt", "review", "summary",
         "explain", "compare", "write", "function", "error", "timeout", "budget")


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def answer(rng: random.Random, size: int) -> str:
    parts: list[str] = ["## " + sentence(rng, 4)]
    while sum(len(p) for p in parts) < size:
        parts.append(sentence(rng, rng.randint(8, 20)))
        if rng.random() < 0.1:
            parts.append("```python\ndef f(x):\n    return x * 2\n```")
    return "\n\n".join(parts)


def comparison(rng: random.Random, n: int) -> ComparisonRecord:
    models = rng.sample(MODELS, 3)
    panes = []
    for i, model in enumerate(models, start=1):
        out = rng.randint(200, 1200)
        failed = rng.random() < 0.05
        panes.append(PaneRecord(
            pane=i, model=model, base_url="https://api.anoman.io", endpoint="openai",
            temperature=0.7, max_tokens=None, scenario="none",
            status="failed" if failed else "completed", committed=not failed,
            text=answer(rng, rng.randint(1000, 5000)),
            reasoning=answer(rng, 800) if i == 3 and rng.random() < 0.33 else "",
            finish_reason=None if failed else "stop",
            failure={"kind": "stream_error", "message": "upstream error"} if failed else None,
            usage={"prompt_tokens": 40, "completion_tokens": out, "total_tokens": out + 40},
            anoman={"request_id": f"req-{n}-{i}", "cost_usd": out * 2e-6,
                    "weighted_tokens": out * 3, "routing": {"mode": "auto", "region": "eu"},
                    "cache": {"status": "miss"}, "guardrails": {"pii": {"status": "pass"}}},
            metrics={"ttft_s": rng.uniform(0.1, 2), "e2e_s": rng.uniform(2, 30),
                     "output_tokens_per_s": rng.uniform(20, 200), "chunks": out},
            rate_series=tuple(round(rng.uniform(0, 200), 1) for _ in range(40)),
            cost=Cost(Decimal(f"{out * 2e-6:.6f}"), "gateway"),
        ))
    return ComparisonRecord(
        prompt=sentence(rng, rng.randint(8, 60)), panes=tuple(panes),
        system_prompt="You are a careful reviewer.", created_at=time.time(), source="app",
    )


def timed(fn: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def line(label: str, times: list[float], target: float | None) -> None:
    p50, p95 = median(times) * 1000, percentile(times, 95) * 1000
    goal = "" if target is None else (
        f"   target ≤ {target * 1000:.0f} ms (p95): {verdict(percentile(times, 95) <= target)}")
    print(f"   {label:<52} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms{goal}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print_header(f"history store: {args.comparisons:,} comparisons × 3 panes")
    rng = random.Random(12)
    with tempfile.TemporaryDirectory(prefix="anoman-history-bench-") as tmp:
        path = Path(tmp) / "history.sqlite3"
        store = HistoryStore.open(path)
        start = time.perf_counter()
        for n in range(args.comparisons):
            store.save(comparison(rng, n))
        fill = time.perf_counter() - start
        size = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 1e6
        print(f"   filled in {fill:.1f} s ({fill / args.comparisons * 1000:.2f} ms a save), "
              f"{size:.0f} MB on disk, full-text index: {'yes' if store.fts else 'no'}")

        assert len(store.recent(50)) == 50
        line("first page (50), store open", timed(lambda: store.recent(50), args.rounds),
             FIRST_PAGE_TARGET_S)

        def cold() -> None:
            with HistoryStore.open(path) as fresh:
                fresh.recent(50)

        line("first page (50), open + read", timed(cold, args.rounds), FIRST_PAGE_TARGET_S)

        queries = {"a prompt word": "deadlock", "a model name": "qwen3-coder",
                   "a prefix, as typed": "migra", "two words": "socket timeout",
                   "no match": "zebra"}
        for label, query in queries.items():
            found = len(store.recent(50, query))
            line(f"search {label} ({query!r}, {found} shown)",
                 timed(lambda q=query: store.recent(50, q), args.rounds), SEARCH_TARGET_S)
        store.fts = False
        for label in ("a prompt word", "no match"):
            query = queries[label]
            line(f"LIKE fallback: {label} ({query!r})",
                 timed(lambda q=query: store.recent(50, q), max(3, args.rounds // 5)),
                 SEARCH_TARGET_S)
        store.fts = True

        records = [comparison(rng, args.comparisons + i) for i in range(args.rounds)]
        line("save one comparison (no target: off the UI thread)",
             timed(lambda: store.save(records.pop()), args.rounds), None)
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
