"""A judge model's calls: one request per verdict, through the stream core.

The judge is any `[TARGET:]MODEL` (docs/judges.md), for a suite's `llm-rubric`
assertions and pairwise verdicts and for the arena's rounds alike. Its requests stream
like every other request, with their own limit in flight (`concurrency`) apart from the
models' streams, so judging one answer never holds a slot an answer could stream in.
Each call returns what the judge said (its reply read by `anoman_tui.judges.parse`) or
why there is no verdict (a judge error: counted and shown, never a pass or a fail of the
model), with what it cost.

Failed requests are sent again by the one retry policy
(`anoman_tui.streaming.retry.RetryPolicy`), a 429 also lowering the judge's limit in
flight as it lowers a suite target's. `cancel()` aborts the streams and ends every wait
at once; no request starts after it.

Imports the stream core, the targets and `anoman_tui.judges`; no Rich, no Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from decimal import Decimal

from anoman_tui.judges.parse import (
    JudgeError,
    RubricVerdict,
    Verdict,
    parse_pairwise,
    parse_rubric,
)
from anoman_tui.judges.prompts import (
    PAIRWISE_PROMPT,
    RUBRIC_PROMPT,
    new_nonce,
    pairwise_prompt,
    rubric_prompt,
)
from anoman_tui.streaming import ChatTurn, ModelStream, StreamClient, StreamRequest
from anoman_tui.streaming.cost import cost_of
from anoman_tui.streaming.retry import ConcurrencyLimit, RetryPolicy
from anoman_tui.targets import ModelSlot, stream_request

JUDGE_TEMPERATURE = 0.0
"""Verdicts should not vary between two readings of the same answers."""


@dataclass(frozen=True)
class JudgeCall:
    """One request to the judge, as it ended."""

    reply: str
    error: str | None
    """Why no verdict could be had (its stream failed); None when the judge answered."""
    cost_usd: Decimal | None
    answered: bool
    """The judge's stream completed (a call counted in `calls`)."""


@dataclass(frozen=True)
class RubricOutcome:
    verdict: RubricVerdict | None
    error: str | None
    """A judge error: the stream failed or the reply could not be read."""
    cost_usd: Decimal | None
    answered: bool


class Judge:
    """The suite's judge: where its requests go, and how many may be in flight."""

    def __init__(self, slot: ModelSlot, *, concurrency: int, idle_timeout: float,
                 policy: RetryPolicy | None = None,
                 headers: tuple[tuple[str, str], ...] = (),
                 simulate: str = "",
                 rubric_template: str | None = None,
                 pairwise_template: str | None = None) -> None:
        self.slot = slot
        self.policy = policy or RetryPolicy()
        self.idle_timeout = idle_timeout
        self.headers = headers
        # The judge's `X-Anoman-Simulate` value, named by whoever knows the scenarios
        # (a suite's judge may be a simulated model with one): empty for none.
        self.simulate = simulate
        self.rubric_template = rubric_template or RUBRIC_PROMPT
        self.pairwise_template = pairwise_template or PAIRWISE_PROMPT
        self.limit = ConcurrencyLimit(concurrency, self.policy)
        self._streams: set[ModelStream] = set()
        self._cancelled = asyncio.Event()

    def cancel(self) -> None:
        self._cancelled.set()
        for stream in list(self._streams):
            stream.cancel()

    async def _pause(self, seconds: float) -> None:
        """Wait `seconds`, or less: until `cancel()`."""
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._cancelled.wait(), seconds)

    async def rubric(self, client: StreamClient, question: str, rubric: str,
                     answer: str) -> RubricOutcome:
        prompt = rubric_prompt(question, rubric, answer, nonce=new_nonce(),
                               template=self.rubric_template)
        call = await self.ask(client, prompt)
        if call.error is not None:
            return RubricOutcome(None, call.error, call.cost_usd, call.answered)
        try:
            verdict = parse_rubric(call.reply)
        except JudgeError as exc:
            return RubricOutcome(None, str(exc), call.cost_usd, call.answered)
        return RubricOutcome(verdict, None, call.cost_usd, call.answered)

    async def pairwise(self, client: StreamClient, question: str, first: str, second: str
                       ) -> tuple[Verdict | None, str | None, Decimal | None, bool]:
        """The judge's verdict on two answers, `first` shown as A: (verdict or None, the
        judge error or None, its cost, whether the judge answered)."""
        prompt = pairwise_prompt(question, first, second, nonce=new_nonce(),
                                 template=self.pairwise_template)
        call = await self.ask(client, prompt)
        if call.error is not None:
            return None, call.error, call.cost_usd, call.answered
        try:
            return parse_pairwise(call.reply), None, call.cost_usd, True
        except JudgeError as exc:
            return None, str(exc), call.cost_usd, True

    async def ask(self, client: StreamClient, prompt: str) -> JudgeCall:
        """The judge's reply to `prompt`, sent again as the policy says."""
        slot, policy = self.slot, self.policy
        retries = waits = 0
        spent = Decimal(0)
        known = False
        async with self.limit.held(self._cancelled) as held:
            while True:
                if not held or self._cancelled.is_set():
                    return JudgeCall("", "the judge was stopped", spent if known else None,
                                     False)
                stream = client.stream(self._request(prompt))
                self._streams.add(stream)
                try:
                    result = await stream.wait()
                finally:
                    self._streams.discard(stream)
                cost = cost_of(result.anoman, result.usage, slot.info, result.provider_cost,
                               model=slot.model,
                               provider=slot.connection.target.price_provider)
                if cost.usd is not None:
                    spent += cost.usd
                    known = True
                failure = result.failure
                if result.committed:
                    self.limit.succeeded()
                    return JudgeCall(result.text, None, spent if known else None, True)
                decision = policy.decide(failure, retries=retries, waits=waits)
                if decision == "rate_limited" and failure is not None:
                    waits += 1
                    self.limit.rate_limited(failure.retry_after_s, time.monotonic())
                    await self._pause(self.limit.resume_at - time.monotonic())
                    continue
                if decision == "retry":
                    retries += 1
                    await self._pause(policy.retry_wait(retries))
                    continue
                kind = failure.kind if failure is not None else result.status
                message = failure.message if failure is not None else result.status
                return JudgeCall("", f"the judge's stream failed ({kind}): {message}",
                                 spent if known else None, False)

    def _request(self, prompt: str) -> StreamRequest:
        slot = self.slot
        return stream_request(
            slot.connection, slot.endpoint, slot.model,
            (ChatTurn(role="user", content=prompt),), temperature=JUDGE_TEMPERATURE,
            headers=(*self.headers, ("Cache-Control", "no-cache")),
            simulate=self.simulate,
            idle_timeout=self.idle_timeout)
