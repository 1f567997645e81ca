"""A suite's judge model: one request per verdict, through the stream core.

The judge is any `[TARGET:]MODEL` (docs/judges.md). Its requests stream like every other
request, with their own limit in flight (`judge_concurrency`) apart from the models'
streams, so judging one answer never holds a slot an answer could stream in. Each call
returns what the judge said (its reply read by `anoman_tui.judges.parse`) or why there is
no verdict (a judge error: counted and shown, never a pass or a fail of the model), with
what it cost.

A transport error is retried as the models' streams are (`retries`), a 429 waited out
(`Retry-After` up to `max_retry_after` seconds, else a back-off) up to
`MAX_RATE_LIMIT_WAITS` times. `cancel()` aborts the streams and ends every wait at once;
no request starts after it.

Imports the stream core and `anoman_tui.judges`; no Rich, no Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
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
from anoman_tui.suites.model import Assertion
from anoman_tui.suites.scenarios import simulate_header
from anoman_tui.suites.slots import ModelSlot

MAX_RATE_LIMIT_WAITS = 5
MAX_RETRY_AFTER_S = 60.0
"""The engine's cap on one `Retry-After` (`RunOptions.max_retry_after` sets the judge's)."""
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

    def __init__(self, slot: ModelSlot, *, concurrency: int, retries: int,
                 idle_timeout: float, headers: tuple[tuple[str, str], ...] = (),
                 rubric_template: str | None = None,
                 pairwise_template: str | None = None) -> None:
        self.slot = slot
        self.retries = retries
        self.idle_timeout = idle_timeout
        self.headers = headers
        self.rubric_template = rubric_template or RUBRIC_PROMPT
        self.pairwise_template = pairwise_template or PAIRWISE_PROMPT
        self.max_retry_after = MAX_RETRY_AFTER_S
        self._limit = asyncio.Semaphore(max(1, concurrency))
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

    async def rubric(self, client: StreamClient, question: str, assertion: Assertion,
                     answer: str) -> RubricOutcome:
        rubric = assertion.value if isinstance(assertion.value, str) else ""
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
        """The judge's reply to `prompt`, with retries as the models' streams have."""
        slot = self.slot
        retries = waits = 0
        spent = Decimal(0)
        known = False
        async with self._limit:
            while True:
                if self._cancelled.is_set():
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
                    return JudgeCall(result.text, None, spent if known else None, True)
                if failure is not None and failure.kind == "http_error" \
                        and failure.status == 429 and waits < MAX_RATE_LIMIT_WAITS:
                    waits += 1
                    wait = failure.retry_after_s if failure.retry_after_s is not None \
                        else min(30.0, 2.0 ** (waits - 1)) * random.uniform(0.8, 1.2)
                    await self._pause(min(max(wait, 0.0), self.max_retry_after))
                    continue
                if failure is not None and failure.kind == "transport_error" \
                        and retries < self.retries:
                    retries += 1
                    await self._pause(min(5.0, 0.25 * 2 ** (retries - 1)))
                    continue
                kind = failure.kind if failure is not None else result.status
                message = failure.message if failure is not None else result.status
                return JudgeCall("", f"the judge's stream failed ({kind}): {message}",
                                 spent if known else None, False)

    def _request(self, prompt: str) -> StreamRequest:
        slot = self.slot
        connection = slot.connection
        target = connection.target
        headers = (*target.headers, *self.headers, ("Cache-Control", "no-cache"))
        if slot.scenario:
            headers = (*headers, ("X-Anoman-Simulate", simulate_header(slot.scenario)))
        return StreamRequest(
            base_url=connection.base_url, api_key=connection.api_key,
            endpoint=slot.endpoint, model=slot.model,
            messages=(ChatTurn(role="user", content=prompt),),
            temperature=JUDGE_TEMPERATURE, extra_headers=headers,
            idle_timeout=self.idle_timeout, path=target.path_for(slot.endpoint),
            include_usage=target.include_usage, key_env=target.key_source,
        )
