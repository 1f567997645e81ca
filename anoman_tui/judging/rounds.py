"""The arena judge: its verdict on one voted blind round (docs/judges.md).

Every two answers of the round that completed are judged twice, once in each order
(MT-bench's position swap, as a pairwise suite does); the judge's best answer is the
model that won every one of its pairs after the swap, else a tie
(`anoman_tui.judges.best_after_swap`). A round with one completed answer needs no call:
that answer is the best, as the only one a person could pick. A pair the judge failed
on in either order leaves the round without a verdict ("none"): a failed judge is
neither a tie nor a pick, and is never counted in the agreement with people.

Runs only after the round's vote: its callers (`anoman-tui vote`, the arena screen)
start it once the vote is recorded, so nothing of the judge exists before it. For
`vote` (`judge_saved_round`), the judge's target is resolved here and, when it is the
local target, the local gateway the caller hands in is started for the call: what can
stop a verdict (a judge not configured right, one of the round's models, or failed) is
one line, never an error of the vote.

Imports the stream core, the history, the settings, the targets, `anoman_tui.judges`
and the judge's calls (`anoman_tui.judging.calls`); no views, never the gateway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from anoman_tui.config import Settings
from anoman_tui.history import ComparisonRecord, HistoryStore, HistoryUnavailable, VoteRefused
from anoman_tui.judges import TIE, PairJudgement, best_after_swap
from anoman_tui.judging.calls import Judge
from anoman_tui.streaming import StreamClient
from anoman_tui.targets import (
    LocalGateway,
    ModelSlot,
    Target,
    connect,
    split_model,
    with_model_info,
)

Outcome = Literal["win", "tie", "none"]

ROUND_JUDGE_CONCURRENCY = 6
"""Every order of every pair of a three-pane round at once."""


@dataclass(frozen=True)
class NoVerdict:
    """Why the judge gave no verdict on a round, in one sentence."""

    reason: str


def resolve_judge(settings: Settings, spec: str) -> tuple[Target, str] | NoVerdict:
    """The judge's target and model id, or why `spec` names none."""
    targets = settings.all_targets()
    prefix, model = split_model(spec, targets)
    name = prefix or settings.default_target
    if name not in targets:
        return NoVerdict(f"the arena judge {spec!r}: no target {name!r}")
    return targets[name], model


def judges_itself(record: ComparisonRecord, target: Target, model: str) -> bool:
    """The judge is one of the round's models (the same model on the same target)."""
    return any(p.model == model and (p.target or target.name) == target.name
               for p in record.panes)


def round_answers(record: ComparisonRecord) -> list[tuple[str, str]]:
    """(model, answer) of the round's completed panes, in pane order."""
    return [(p.model, p.text) for p in sorted(record.panes, key=lambda p: p.pane)
            if p.status == "completed"]


@dataclass(frozen=True)
class RoundVerdict:
    """The judge's verdict on one round: its best answer's model, "tie", or None."""

    judge: str
    """The judge as configured (`[TARGET:]MODEL`)."""
    best: str | None
    """The model that won every one of its pairs, `TIE`, or None (no verdict)."""
    verdicts: tuple[PairJudgement, ...]
    calls: int
    """Requests the judge answered."""
    errors: tuple[str, ...]
    cost_usd: Decimal | None
    simulated: bool = False
    """The judge is a simulated model (the local gateway's `anoman-judge`)."""

    @property
    def outcome(self) -> Outcome:
        if self.best is None:
            return "none"
        return "tie" if self.best == TIE else "win"

    @property
    def winner(self) -> str | None:
        """The best model, for a "win"."""
        return self.best if self.outcome == "win" else None

    def to_json(self) -> dict[str, Any]:
        """As `vote --json` prints it under `judge` and the history keeps it."""
        return {
            "model": self.judge, "best": self.best,
            "verdicts": [v.to_json() for v in self.verdicts],
            "calls": self.calls, "errors": list(self.errors),
            "cost_usd": None if self.cost_usd is None else float(self.cost_usd),
            "simulated": self.simulated,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundVerdict:
        """Back from `to_json` (the history's copy); ValueError when it is not one."""
        try:
            cost = data.get("cost_usd")
            return cls(
                judge=str(data["model"]),
                best=None if data.get("best") is None else str(data["best"]),
                verdicts=tuple(PairJudgement.from_json(v) for v in data.get("verdicts", ())),
                calls=int(data.get("calls", 0)),
                errors=tuple(str(e) for e in data.get("errors", ())),
                cost_usd=None if cost is None else Decimal(str(cost)),
                simulated=bool(data.get("simulated", False)),
            )
        except (KeyError, TypeError, ArithmeticError) as exc:
            raise ValueError(f"not a judge's verdict: {exc}") from None


async def judge_round(client: StreamClient, judge: Judge, question: str,
                      answers: Sequence[tuple[str, str]], *, round_id: int | str = "",
                      judge_name: str = "") -> RoundVerdict:
    """The judge's verdict on a round's completed answers, (model, text) in pane order.

    Both orders of every pair are asked at once (the judge's own limit of requests in
    flight applies); answer A of each prompt is the pair's first, then its second.
    """
    name = judge_name or judge.slot.spec
    simulated = judge.slot.simulated
    models = [model for model, _ in answers]
    if len(set(models)) != len(models):
        raise ValueError(f"a round's models are distinct, got {models}")
    if len(answers) < 2:
        best = models[0] if models else None
        return RoundVerdict(name, best, (), 0, (), None, simulated)
    text = dict(answers)
    pairs = [(a, b) for n, a in enumerate(models) for b in models[n + 1:]]
    asked = await asyncio.gather(*(
        judge.pairwise(client, question, text[first], text[second])
        for a, b in pairs for first, second in ((a, b), (b, a))))
    verdicts: list[PairJudgement] = []
    errors: list[str] = []
    calls = 0
    spent = Decimal(0)
    known = False
    for n, (a, b) in enumerate(pairs):
        (ab, ab_error, ab_cost, ab_answered), (ba, ba_error, ba_cost, ba_answered) = \
            asked[2 * n], asked[2 * n + 1]
        own = [f"{a} | {b} ({order}): {error}"
               for order, error in (("A=" + a, ab_error), ("A=" + b, ba_error)) if error]
        errors.extend(own)
        calls += ab_answered + ba_answered
        for cost in (ab_cost, ba_cost):
            if cost is not None:
                spent += cost
                known = True
        verdicts.append(PairJudgement(case=str(round_id), repeat=1, a=a, b=b, ab=ab, ba=ba,
                                      len_a=len(text[a]), len_b=len(text[b]),
                                      errors=tuple(own)))
    best = None if errors else best_after_swap(models, verdicts)
    return RoundVerdict(name, best, tuple(verdicts), calls, tuple(errors),
                        spent if known else None, simulated)


def keep_verdict(store: HistoryStore, comparison_id: int, verdict: RoundVerdict) -> str | None:
    """Store the verdict with its round; why it could not be, or None."""
    try:
        store.save_round_judgement(comparison_id, verdict.judge, verdict.outcome,
                                   verdict.winner, verdict.to_json())
    except (VoteRefused, HistoryUnavailable) as exc:
        return exc.reason
    return None


def judge_saved_round(settings: Settings, record: ComparisonRecord,
                      start_local: Callable[[], LocalGateway]
                      ) -> RoundVerdict | NoVerdict:
    """The configured judge's verdict on a voted round (`anoman-tui vote`; the caller
    keeps it): `start_local` starts the local gateway when the judge is on it."""
    spec = settings.arena.judge
    if not spec:
        return NoVerdict("no arena judge is configured ([arena] judge)")
    found = resolve_judge(settings, spec)
    if isinstance(found, NoVerdict):
        return found
    target, model = found
    if judges_itself(record, target, model):
        return NoVerdict(f"the judge {spec} is one of the round's models, and a judge "
                         "favours its own answers")
    gateway = start_local() if target.is_local else None
    local = (gateway.base_url, gateway.api_key) if gateway is not None else None
    try:
        slot = ModelSlot(spec=spec, model=model, pane=0,
                         connection=connect(target, local=local),
                         endpoint=target.default_endpoint(settings.endpoint))
        return asyncio.run(_ask(slot, settings, record))
    finally:
        if gateway is not None:
            gateway.stop()


async def _ask(slot: ModelSlot, settings: Settings, record: ComparisonRecord) -> RoundVerdict:
    judge = Judge(slot, concurrency=ROUND_JUDGE_CONCURRENCY,
                  idle_timeout=settings.idle_timeout)
    async with StreamClient() as client:
        (judge.slot,) = await with_model_info([slot], client)
        return await judge_round(client, judge, record.prompt, round_answers(record),
                                 round_id=record.id or "")

