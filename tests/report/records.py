"""Comparison records for the report tests: a realistic turn and a hostile one."""

from __future__ import annotations

from decimal import Decimal

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.streaming.cost import UNKNOWN, Cost

HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)> "
    '"><svg onload=alert(1)> [x](javascript:alert(1)) '
    "![pixel](https://tracker.example/p.png) | pipe\nnew line"
)

ANOMAN = {
    "guardrails": {"pii": {"status": "pass", "score": 0.02},
                   "toxicity": {"status": "flag", "score": 0.61, "category": "violence"}},
    "routing": {"mode": "latency", "region": "eu-west"},
    "cache": {"hit": False},
    "cost_usd": "0.000412",
    "weighted_tokens": 1234,
}


def pane(n: int, model: str, **fields: object) -> PaneRecord:
    base: dict[str, object] = dict(
        pane=n, model=model, base_url="http://127.0.0.1:8787", endpoint="openai",
        text="Hello.", usage={"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46},
        anoman=ANOMAN, metrics={"ttft_s": 0.4213, "e2e_s": 1.9, "output_tokens_per_s": 57.31,
                                "chunks": 34},
        rate_series=(0.0, 20.0, 55.5, 61.0, 58.0, 12.0), cost=Cost(Decimal("0.000412"), "gateway"),
        finish_reason="stop",
    )
    base.update(fields)
    return PaneRecord(**base)  # type: ignore[arg-type]


ANSWER = """# Plan

Use a **list**:

- one
- two

```python
def f(x):
    return x + 1
```

| a | b |
|---|---|
| 1 | 2 |
"""

FAILED_FAILURE = {"kind": "stream_error", "status": None, "type": "server_error", "code": None,
                  "message": "STREAM INTERRUPTED after 7 tokens: partial answer not committed",
                  "failure_class": "upstream", "completion_tokens": 7, "retry_after_s": None,
                  "guardrails": None}
CANCELLED_FAILURE = {"kind": "cancelled", "status": None, "type": None, "code": None,
                     "message": "CANCELLED after 3 tokens: partial answer not committed",
                     "failure_class": None, "completion_tokens": 3, "retry_after_s": None,
                     "guardrails": None}


def sample() -> ComparisonRecord:
    """Three panes: one completed (with reasoning), one failed mid-stream, one cut and cancelled."""
    return ComparisonRecord(
        prompt="Explain *closures* in Python.\nBriefly.",
        system_prompt="You are terse.",
        created_at=1_764_554_726.0,
        id=42,
        panes=(
            pane(1, "gpt-4o-mini", text=ANSWER, reasoning="Think about scopes."),
            pane(2, "claude-3-5-haiku", status="failed", committed=False,
                 text="Closures capture\n```python\ndef outer():", failure=FAILED_FAILURE,
                 finish_reason=None, anoman=None, cost=UNKNOWN),
            pane(3, "llama-3.1-8b", status="cancelled", committed=False, text="Partial",
                 failure=CANCELLED_FAILURE, finish_reason=None,
                 anoman={**ANOMAN, "cache": {"hit": True}}),
        ),
    )


def cut() -> ComparisonRecord:
    return ComparisonRecord(prompt="p", created_at=0.0,
                            panes=(pane(1, "m", text="long answer", finish_reason="length"),))


def hostile() -> ComparisonRecord:
    return ComparisonRecord(
        prompt=HOSTILE, system_prompt=HOSTILE, created_at=0.0,
        conversation=(("user", HOSTILE), ("assistant", HOSTILE)),
        panes=(
            pane(1, HOSTILE, text=HOSTILE, reasoning=HOSTILE),
            pane(2, "m2", status="failed", committed=False, text=HOSTILE,
                 failure={**FAILED_FAILURE, "message": HOSTILE}, finish_reason=None,
                 anoman={"routing": {"mode": HOSTILE, "region": HOSTILE},
                         "guardrails": {HOSTILE: {"status": HOSTILE, "category": HOSTILE}}},
                 cost=Cost(Decimal("0.000001"), "estimate")),
        ),
    )


# Each pane's own earlier answers, told apart by their words (a follow-up turn).
EARLIER = {1: ("**Alpha** one", "Alpha two"), 2: ("*Beta* one", "Beta two"),
           3: ("Gamma one <script>alert(1)</script>",)}


def follow_up() -> ComparisonRecord:
    """The third turn of a conversation: each pane answered the earlier prompts its own
    way (pane 3's second answer failed, so it was never part of its conversation)."""
    prompts = ("First question?", "Second question?")

    def turns(n: int) -> tuple[tuple[str, str], ...]:
        return tuple(turn for prompt, answer in zip(prompts, EARLIER[n], strict=False)
                     for turn in (("user", prompt), ("assistant", answer)))

    return ComparisonRecord(
        prompt="Third question?", created_at=0.0, conversation=turns(1),
        panes=tuple(pane(n, f"model-{n}", text=f"Answer {n} now.", conversation=turns(n))
                    for n in (1, 2, 3)),
    )
