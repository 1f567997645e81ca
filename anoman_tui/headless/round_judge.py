"""The arena judge for `anoman-tui vote`: resolve `[arena] judge`, ask it, keep its verdict.

The judge is `[TARGET:]MODEL` on any target; on the local target an embedded local
gateway is started for the call, as `compare` and `eval` start one. What can stop a
verdict (a judge that is not configured right, is one of the round's models, or
failed) is one line, never an error of the vote: the vote is recorded first.
"""

from __future__ import annotations

import asyncio

from anoman_tui.config import Settings
from anoman_tui.history import ComparisonRecord
from anoman_tui.streaming import StreamClient
from anoman_tui.suites.engine import with_model_info
from anoman_tui.suites.judging import Judge
from anoman_tui.suites.round_judge import (
    ROUND_JUDGE_CONCURRENCY,
    NoVerdict,
    RoundVerdict,
    judge_round,
    judges_itself,
    resolve_judge,
    round_answers,
)
from anoman_tui.suites.slots import ModelSlot
from anoman_tui.targets import connect


def judge_saved_round(settings: Settings, record: ComparisonRecord) -> RoundVerdict | NoVerdict:
    """The configured judge's verdict on a voted round (the caller keeps it)."""
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
    gateway = None
    local = None
    if target.is_local:
        from anoman_tui.gateway.config import GatewayConfig
        from anoman_tui.gateway.embedded import EmbeddedGateway

        gateway = EmbeddedGateway(GatewayConfig()).start()
        local = (gateway.base_url, gateway.api_key)
    try:
        slot = ModelSlot(spec=spec, model=model, pane=0,
                         connection=connect(target, local=local),
                         endpoint=target.default_endpoint(settings.endpoint))
        return asyncio.run(_ask(slot, settings, record))
    finally:
        if gateway is not None:
            gateway.stop()


async def _ask(slot: ModelSlot, settings: Settings, record: ComparisonRecord) -> RoundVerdict:
    (slot,) = await with_model_info([slot])
    judge = Judge(slot, concurrency=ROUND_JUDGE_CONCURRENCY, retries=2,
                  idle_timeout=settings.idle_timeout)
    async with StreamClient() as client:
        return await judge_round(client, judge, record.prompt, round_answers(record),
                                 round_id=record.id or "")
