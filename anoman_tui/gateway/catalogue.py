"""The simulated models the local gateway serves, with prices and weights.

Each ``SimulatedModel`` has a personality (how much it writes and how it
formats it, and how much of the question it restates), a time-to-first-token
distribution, a token rate, a per-million token price table and an Anoman weight
(``weighted_tokens = total × weight``). ``anoman-judge`` is the one with the judge
role: it judges answers (``judge.py``) instead of answering prompts.
The arithmetic for cost and weighted tokens lives here too, so the stream,
the JSON answer and the ledger all use the same figures.

Imports only the standard library.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

Style = Literal["balanced", "terse", "verbose", "plain", "code", "thinking", "judge"]
# What a model is for: answering prompts, or judging answers (`anoman-judge`).
Role = Literal["answer", "judge"]
# How much of a question's content words an answer model's text contains
# (docs/local-gateway.md, "The simulated judge"): "full" restates any it has not used,
# "styled" is the answer as its style writes it, "gist" keeps one word of the prompt's
# context.
Coverage = Literal["full", "styled", "gist"]

_MILLION = Decimal(1_000_000)
# cost_usd carries six decimals, like "0.000041" in docs/wire-contract.md §2.
COST_QUANTUM = Decimal("0.000001")


@dataclass(frozen=True, slots=True)
class SimulatedModel:
    """One model of the catalogue."""

    name: str
    owned_by: str
    style: Style
    ttft_s: float  # median time to first token
    ttft_spread: float  # the TTFT is drawn in [ttft/spread, ttft*spread]
    tokens_per_s: float
    weight: int
    input_usd_per_mtok: Decimal
    output_usd_per_mtok: Decimal
    context_window: int
    thinking: bool = False
    description: str = ""
    role: Role = "answer"
    coverage: Coverage = "styled"

    def draw_ttft(self, rng: random.Random) -> float:
        # Log-uniform around the median: long tails, no negative values.
        low, high = self.ttft_s / self.ttft_spread, self.ttft_s * self.ttft_spread
        return float(low * (high / low) ** rng.random())

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        raw = (
            Decimal(prompt_tokens) * self.input_usd_per_mtok
            + Decimal(completion_tokens) * self.output_usd_per_mtok
        ) / _MILLION
        return raw.quantize(COST_QUANTUM, rounding=ROUND_HALF_UP)

    def weighted_tokens(self, prompt_tokens: int, completion_tokens: int) -> int:
        return (prompt_tokens + completion_tokens) * self.weight

    def describe(self) -> dict[str, object]:
        """The entry `GET /v1/models` lists."""
        return {
            "id": self.name,
            "object": "model",
            "created": 1_767_225_600,
            "owned_by": self.owned_by,
            "anoman": {
                "weight": self.weight,
                "pricing": {
                    "input_usd_per_mtok": str(self.input_usd_per_mtok),
                    "output_usd_per_mtok": str(self.output_usd_per_mtok),
                },
                "ttft_ms": round(self.ttft_s * 1000),
                "tokens_per_s": self.tokens_per_s,
                "context_window": self.context_window,
                "thinking": self.thinking,
                "style": self.style,
                "description": self.description,
                "role": self.role,
                "simulated": True,
            },
        }


CATALOGUE: dict[str, SimulatedModel] = {
    m.name: m
    for m in (
        SimulatedModel(
            name="claude-sonnet-4-6",
            owned_by="anthropic",
            style="balanced",
            ttft_s=0.45,
            ttft_spread=1.4,
            tokens_per_s=75.0,
            weight=4,
            input_usd_per_mtok=Decimal("3.00"),
            output_usd_per_mtok=Decimal("15.00"),
            context_window=200_000,
            description="Balanced all-rounder: headings, lists, a table, code when useful.",
            coverage="full",
        ),
        SimulatedModel(
            name="anoman-lite",
            owned_by="anoman",
            style="terse",
            ttft_s=0.08,
            ttft_spread=1.3,
            tokens_per_s=220.0,
            weight=1,
            input_usd_per_mtok=Decimal("0.05"),
            output_usd_per_mtok=Decimal("0.20"),
            context_window=32_000,
            description="Fast small model: short answers, a few bullets.",
            coverage="gist",
        ),
        SimulatedModel(
            name="deepseek-r1",
            owned_by="deepseek",
            style="thinking",
            ttft_s=2.2,
            ttft_spread=1.5,
            tokens_per_s=32.0,
            weight=5,
            input_usd_per_mtok=Decimal("0.55"),
            output_usd_per_mtok=Decimal("2.19"),
            context_window=128_000,
            thinking=True,
            description="Slow reasoning model: long wait, streams its reasoning first.",
        ),
        SimulatedModel(
            name="claude-opus-4-6",
            owned_by="anthropic",
            style="thinking",
            ttft_s=1.6,
            ttft_spread=1.4,
            tokens_per_s=28.0,
            weight=8,
            input_usd_per_mtok=Decimal("15.00"),
            output_usd_per_mtok=Decimal("75.00"),
            context_window=200_000,
            thinking=True,
            description="Extended thinking: a thinking block, then a careful answer.",
            coverage="full",
        ),
        SimulatedModel(
            name="gpt-5-mini",
            owned_by="openai",
            style="verbose",
            ttft_s=0.35,
            ttft_spread=1.5,
            tokens_per_s=110.0,
            weight=2,
            input_usd_per_mtok=Decimal("0.25"),
            output_usd_per_mtok=Decimal("2.00"),
            context_window=400_000,
            description="Verbose: many sections, numbered steps, tables, notes.",
        ),
        SimulatedModel(
            name="llama-3.3-70b",
            owned_by="meta",
            style="plain",
            ttft_s=0.30,
            ttft_spread=1.6,
            tokens_per_s=90.0,
            weight=2,
            input_usd_per_mtok=Decimal("0.59"),
            output_usd_per_mtok=Decimal("0.79"),
            context_window=128_000,
            description="Plain prose: paragraphs, little Markdown.",
        ),
        SimulatedModel(
            name="qwen3-coder",
            owned_by="qwen",
            style="code",
            ttft_s=0.25,
            ttft_spread=1.4,
            tokens_per_s=130.0,
            weight=2,
            input_usd_per_mtok=Decimal("0.40"),
            output_usd_per_mtok=Decimal("1.60"),
            context_window=256_000,
            description="Code first: a long fenced example, then notes.",
        ),
        SimulatedModel(
            name="anoman-judge",
            owned_by="anoman",
            style="judge",
            ttft_s=0.05,
            ttft_spread=1.3,
            tokens_per_s=600.0,
            weight=1,
            input_usd_per_mtok=Decimal("0.10"),
            output_usd_per_mtok=Decimal("0.40"),
            context_window=128_000,
            description="Judge: a short, deterministic verdict on a rubric or pairwise "
                        "judge prompt.",
            role="judge",
        ),
    )
}
# The models that answer prompts (every one but the judge).
ANSWER_MODELS: dict[str, SimulatedModel] = {
    name: m for name, m in CATALOGUE.items() if m.role == "answer"}

