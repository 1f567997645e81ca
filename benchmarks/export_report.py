"""Report export speed: a 3 × 100,000-token comparison to Markdown, HTML and JSON.

    python benchmarks/export_report.py            # --tokens 100000 --rounds 3

Each of the three answers is realistic Markdown of about `--tokens` tokens (counted as
one token per 4 characters, the usual estimate for English): headings, paragraphs,
bullet lists, Python code fences and tables, plus a reasoning text. Each format is
exported `--rounds` times from the same record; the figure is the median wall time.

Target: HTML within 2 s (Markdown and JSON are reported alongside).

May import: the standard library and anoman_tui.report / anoman_tui.history.
"""

from __future__ import annotations

import argparse
import sys
import time
from decimal import Decimal
from pathlib import Path

from anoman_tui.streaming.cost import Cost

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median, print_header, verdict

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.report import FORMATS, export

TARGET_HTML_S = 2.0
CHARS_PER_TOKEN = 4

PARAGRAPH = ("A closure keeps the variables of the scope it was created in, so a function "
             "returned from another can still read them after the outer call has ended. "
             "This is what makes *decorators* and **callbacks** work without globals.\n\n")
LIST = ("- capture by reference, not by value\n- late binding in loops: `lambda i=i: i`\n"
        "- `nonlocal` to rebind an outer name\n\n")
CODE = ("```python\ndef counter(start: int = 0):\n    count = start\n\n    def step() -> int:\n"
        "        nonlocal count\n        count += 1\n        return count\n\n    return step\n\n"
        "tick = counter()\nfor _ in range(3):\n    print(tick())  # 1, 2, 3\n```\n\n")
TABLE = ("| feature | closure | class |\n|---|---|---|\n| state | captured | attributes |\n"
         "| cost | one cell | one object |\n\n")


def answer(tokens: int, n: int) -> str:
    parts: list[str] = []
    size = 0
    section = 0
    while size < tokens * CHARS_PER_TOKEN:
        section += 1
        for part in (f"## Part {section} of answer {n}\n\n", PARAGRAPH, LIST, PARAGRAPH, CODE,
                     TABLE):
            parts.append(part)
            size += len(part)
    return "".join(parts)


def record(tokens: int) -> ComparisonRecord:
    panes = tuple(
        PaneRecord(
            pane=n, model=model, base_url="http://127.0.0.1:8787", endpoint="openai",
            text=answer(tokens, n), reasoning=PARAGRAPH * 20,
            usage={"prompt_tokens": 20, "completion_tokens": tokens, "total_tokens": tokens + 20},
            anoman={"routing": {"mode": "latency", "region": "eu-west"}, "cache": {"hit": False},
                    "weighted_tokens": tokens, "cost_usd": "0.0123"},
            metrics={"ttft_s": 0.31, "e2e_s": 900.0, "output_tokens_per_s": 111.1,
                     "chunks": tokens},
            rate_series=tuple(float(100 + (i * 7) % 40) for i in range(3600)),
            cost=Cost(Decimal("0.0123"), "gateway"),
        )
        for n, model in enumerate(("gpt-4o-mini", "claude-3-5-haiku", "llama-3.1-8b"), start=1)
    )
    return ComparisonRecord(prompt="Explain closures in Python, at length.", panes=panes,
                            created_at=time.time(), id=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print_header(f"report export: 3 x {args.tokens:,} tokens, {args.rounds} rounds")
    rec = record(args.tokens)
    chars = sum(len(p.text) for p in rec.panes)
    print(f"   answers: {chars:,} characters in all")
    ok = True
    for fmt in FORMATS:
        times, size = [], 0
        for _ in range(args.rounds):
            start = time.perf_counter()
            size = len(export(rec, fmt))
            times.append(time.perf_counter() - start)
        med = median(times)
        line = f"   {fmt:5s} median {med:6.3f} s   ({size:,} characters out)"
        if fmt == "html":
            met = med <= TARGET_HTML_S
            ok = ok and met
            line += f"   target <= {TARGET_HTML_S:.0f} s   {verdict(met)}"
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
