"""One admitted request, from first byte to ledger row.

A ``GenerationRun`` holds the planned completion (reasoning + answer tokens),
the pacing (TTFT, tokens per second), the faults to inject, and the running
meter (tokens sent, first token time). ``GenerationResponse`` is the ASGI
response that drives it: it runs the generation in a child task and watches
the connection; a client disconnect (or gateway shutdown) cancels the child
at once, so generation stops within milliseconds and the run is metered as
cancelled with its partial usage. Every run writes exactly one ledger row
in ``finalize``.

Pacing: token i is due at ``first_due + i / rate`` on the loop clock, and the
loop sleeps until that moment, so delays never accumulate drift.

Imports the gateway's own modules and the standard library only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from anoman_tui.gateway.cache import CachedAnswer
from anoman_tui.gateway.catalogue import SimulatedModel
from anoman_tui.gateway.composer import answer_tokens, compose_answer
from anoman_tui.gateway.faults import FaultPlan
from anoman_tui.gateway.frames import (
    AnthropicFrames,
    OpenAIFrames,
    StreamFrames,
    TokenKind,
    anthropic_message,
    error_body,
    openai_completion,
)
from anoman_tui.gateway.guardrails import GuardrailOutcome
from anoman_tui.gateway.ledger import RowStatus, UsageRow, key_hint
from anoman_tui.gateway.requests import ChatRequest
from anoman_tui.gateway.state import GatewayState
from anoman_tui.gateway.tokenizer import tokenize

log = logging.getLogger("anoman_tui.gateway")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


@dataclass(slots=True)
class RunIdentity:
    """Who asked for what, fixed at admission."""

    request_id: str
    api_key: str
    endpoint: str
    started_at: float  # unix seconds
    playground: bool = False
    # The event loop's clock at admission: the simulated schedule counts from
    # here, so the gateway's own work before the first byte (reading the body, checks)
    # is inside the TTFT asked for, not added to it. 0: count from the run's start.
    admitted: float = 0.0


def anoman_block(state: GatewayState, verdicts: dict[str, GuardrailOutcome], *, request_id: str,
                 cost_usd: str, weighted_tokens: int, cache_hit: bool,
                 request: ChatRequest | None, playground: bool) -> dict[str, Any]:
    """The `_anoman` metadata object (docs/wire-contract.md §2.1)."""
    block: dict[str, Any] = {
        "guardrails": {name: v.as_block() for name, v in verdicts.items()},
        "routing": {"mode": "realtime", "region": state.config.region},
        "cache": {"hit": cache_hit},
        "cost_usd": cost_usd,
        "weighted_tokens": weighted_tokens,
        "request_id": request_id,
    }
    if playground and request is not None:
        block["playground"] = {"compare_id": request.compare_id, "panel": request.panel}
    return block


@dataclass(frozen=True)
class _ComposedAnswer:
    tokens: list[tuple[TokenKind, str]]
    text: str
    reasoning: str
    reasoning_count: int
    finish: str


class GenerationRun:
    """A simulated model answering one request, streamed or not."""

    def __init__(self, state: GatewayState, ident: RunIdentity, request: ChatRequest,
                 model: SimulatedModel, plan: FaultPlan,
                 verdicts: dict[str, GuardrailOutcome], cache_key: str | None) -> None:
        self.state = state
        self.ident = ident
        self.request = request
        self.model = model
        self.plan = plan
        self.verdicts = verdicts
        self.cache_key = cache_key
        self.prompt_tokens = request.prompt_tokens

        scale = state.config.time_scale
        rng = random.Random(ident.request_id)
        self.ttft = plan.ttft if plan.ttft is not None else model.draw_ttft(rng) * scale
        rate = plan.rate if plan.rate is not None else model.tokens_per_s / scale
        self.interval = 1.0 / rate

        # Meter and outcome, filled in as the run goes.
        self.sent = 0
        self.first_token_at: float | None = None
        self.status: RowStatus = "failed"
        self.failure_class: str | None = None
        self.http_status = 200
        self.response_complete = False
        self.malformed_sent = False
        self.cancel_reason: str | None = None
        self.task: asyncio.Task[None] | None = None
        self._recorded = False
        self._simulated_start = 0.0  # loop time the simulated model started (admission)

    # -- the answer --------------------------------------------------------------

    @cached_property
    def answer_seed(self) -> int:
        """The seed the simulated model composes with: the request's, 0 at temperature 0,
        else a fresh draw, so a repeated prompt is not answered word for word again."""
        request = self.request
        if request.seed is not None:
            return request.seed
        return _ANSWER_DRAW.getrandbits(63) if request.varies else 0

    @cached_property
    def _answer(self) -> _ComposedAnswer:
        # Composed on first use: a stream composes it while its first token is due (the
        # simulated model's own work, inside its TTFT), not before the response starts
        # (measured ~0.2 ms of the gateway's TTFT overhead otherwise).
        request, model = self.request, self.model
        seed = self.answer_seed
        answer = compose_answer(model, request.prompt, seed, conversation=request.messages)
        text_tokens = answer_tokens(model, request.prompt, seed, answer.text,
                                    self.plan.tokens, conversation=request.messages)
        reasoning_tokens = tokenize(answer.reasoning)
        finish = "stop"
        budget = request.max_tokens
        # Thinking counts within max_tokens, as with the Anthropic API: the budget may run
        # out during the reasoning, and then no answer text follows (docs/wire-contract.md §9.6).
        if budget is not None and len(reasoning_tokens) + len(text_tokens) > budget:
            reasoning_tokens = reasoning_tokens[:budget]
            text_tokens = text_tokens[: budget - len(reasoning_tokens)]
            finish = "length"
        tokens: list[tuple[TokenKind, str]] = [
            *(("reasoning", t) for t in reasoning_tokens),
            *(("text", t) for t in text_tokens),
        ]
        return _ComposedAnswer(tokens, "".join(text_tokens), "".join(reasoning_tokens),
                               len(reasoning_tokens), finish)

    async def _compose(self) -> None:
        """Compose the answer; a long one (~0.4 ms per 1,000 tokens) in a thread: on the
        loop, 100,000 tokens held every other stream and every admission for 75-120 ms
        on a busy machine (benchmarks/app_metrics_truth.py --contend 2)."""
        if (self.plan.tokens or 0) > _COMPOSE_IN_THREAD_TOKENS:
            await asyncio.to_thread(lambda: self._answer)
        else:
            self._answer  # noqa: B018

    @property
    def tokens(self) -> list[tuple[TokenKind, str]]:
        return self._answer.tokens

    @property
    def text(self) -> str:
        return self._answer.text

    @property
    def reasoning(self) -> str:
        return self._answer.reasoning

    @property
    def reasoning_count(self) -> int:
        return self._answer.reasoning_count

    @property
    def finish(self) -> str:
        return self._answer.finish

    # -- control ---------------------------------------------------------------

    def cancel(self, reason: str) -> None:
        if self.cancel_reason is None and not self.response_complete:
            self.cancel_reason = reason
            if self.task is not None and not self.task.done():
                self.task.cancel()

    # -- figures ---------------------------------------------------------------

    def _usage_figures(self, completion_tokens: int) -> tuple[str, int]:
        cost = self.model.cost_usd(self.prompt_tokens, completion_tokens)
        return str(cost), self.model.weighted_tokens(self.prompt_tokens, completion_tokens)

    def _anoman(self) -> dict[str, Any]:
        cost, weighted = self._usage_figures(self.sent)
        return anoman_block(self.state, self.verdicts, request_id=self.ident.request_id,
                            cost_usd=cost, weighted_tokens=weighted, cache_hit=False,
                            request=self.request, playground=self.ident.playground)

    def _frames(self) -> StreamFrames:
        rid, name = self.ident.request_id, self.model.name
        if self.request.wire == "anthropic":
            return AnthropicFrames(rid, name, self.prompt_tokens)
        return OpenAIFrames(rid, name, int(self.ident.started_at))

    # -- streaming -------------------------------------------------------------

    async def stream(self, send: Send) -> None:
        """Write the SSE response, token by token, on schedule."""
        # The simulated model started at admission; the response head and opening frame
        # go out while it "thinks", as a real upstream's headers do (~0.25 ms measured).
        loop = asyncio.get_running_loop()
        self._simulated_start = self._start(loop)
        # Due `ttft` after admission; if the gateway itself gets here later than that, the
        # first token goes at once and the rest keep the rate from it, not in one burst
        # of tokens all due (which would read as a far higher rate).
        first_due = max(self._simulated_start + self.ttft, loop.time())
        frames = self._frames()
        headers = [*SSE_HEADERS, (b"x-request-id", self.ident.request_id.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        async def write_last(data: bytes) -> None:
            self.response_complete = True
            await send({"type": "http.response.body", "body": data, "more_body": False})

        try:
            await write(frames.opening())
            # Composed now, within the TTFT.
            await self._compose()
            interval = self.interval
            faults = self._fault_points()
            tokens = self.tokens
            count = len(tokens)
            i = 0
            while True:
                if i in faults and await self._inject(faults[i], frames, write, write_last):
                    return
                if i == count:
                    break
                if i == 0:
                    await _sleep_until(loop, first_due)  # TTFT: on time to a fraction of 1 ms
                else:
                    delay = first_due + i * interval - loop.time()
                    # Sleeping 0 still yields, so one fast stream cannot starve the others.
                    await asyncio.sleep(delay if delay > 0 else 0)
                # Token i, and with it every later one already due (up to a fault): at
                # 2,000 tok/s a wake-up and a write per token kept this loop so busy that
                # admitting a new request waited up to 12 ms (benchmarks/app_metrics_truth.py).
                # Each is still its own SSE event, on schedule or late as before.
                end = i + 1
                now = loop.time()
                while end < count and end not in faults and first_due + end * interval <= now:
                    end += 1
                await write(b"".join([frames.delta(kind, token) for kind, token in tokens[i:end]]))
                self.sent = end
                if self.first_token_at is None:
                    self.first_token_at = time.time()
                i = end
            self.status = "failed" if self.malformed_sent else "completed"
            self.failure_class = "protocol_error" if self.malformed_sent else None
            tail = frames.closing(self.finish, self.prompt_tokens, self.sent,
                                  min(self.sent, self.reasoning_count))
            tail += frames.anoman(self._anoman()) + frames.terminator()
            await write_last(tail)
        except asyncio.CancelledError:
            raise
        except Exception:
            # Internal trouble: details to the log, the generic frame to the client.
            log.exception("stream %s failed inside the gateway", self.ident.request_id)
            self.status, self.failure_class = "failed", "gateway_error"
            body = frames.error(self.sent, "gateway_error")
            if frames.error_has_terminator:
                body += frames.terminator()
            await write_last(body)

    def _fault_points(self) -> dict[int, list[str]]:
        points: dict[int, list[str]] = {}
        # Order matters when two faults share an index: the malformed frame goes first.
        for name in ("malformed_after", "interrupt_after", "drop_after", "stall_after"):
            n = getattr(self.plan, name)
            if n is not None:
                points.setdefault(min(n, len(self.tokens)), []).append(name)
        return points

    async def _inject(self, names: list[str], frames: StreamFrames,
                      write: Callable[[bytes], Awaitable[None]],
                      write_last: Callable[[bytes], Awaitable[None]]) -> bool:
        """Apply faults due now; True when the stream must end here."""
        for name in names:
            if name == "malformed_after":
                self.malformed_sent = True
                await write(frames.malformed())
            elif name == "interrupt_after":
                log.info("simulated upstream interruption in %s after %d tokens",
                         self.ident.request_id, self.sent)
                self.status, self.failure_class = "failed", "upstream_error"
                body = frames.error(self.sent, "upstream_error")
                if frames.error_has_terminator:
                    body += frames.terminator()
                await write_last(body)
                return True
            elif name == "drop_after":
                # Return without finishing the body: the server closes the connection.
                self.status, self.failure_class = "failed", "dropped"
                return True
            elif name == "stall_after":
                self.failure_class = "stalled"
                await asyncio.Event().wait()  # until the client or the gateway gives up
        return False

    # -- non-streaming ---------------------------------------------------------

    async def respond(self, send: Send) -> None:
        """Answer with one JSON body after the simulated generation time."""
        loop = asyncio.get_running_loop()
        self._simulated_start = self._start(loop)
        timeout = self.state.config.non_stream_timeout_s
        try:
            async with asyncio.timeout(timeout):
                await self._compose()
                await self._respond(send, loop)
        except TimeoutError:
            self.sent = self._produced_by(loop.time())
            self.status, self.failure_class, self.http_status = "failed", "timeout", 504
            body = error_body(self.request.wire, "api_error",
                              f"the upstream model did not answer within {timeout:g} s",
                              code="timeout")
            await _send_json(send, 504, body, self.ident.request_id)
            self.response_complete = True

    def _start(self, loop: asyncio.AbstractEventLoop) -> float:
        """Loop time the simulated model started: admission, when it is known and past.

        Under load the gateway can spend milliseconds between admitting a request and
        starting its response (benchmarks/app_metrics_truth.py saw up to ~9 ms while two
        fast streams ran); counted from here, `ttft=` is the time from admission to the
        first token, which is what the ledger's `first_token_at - started_at` reports.
        """
        now = loop.time()
        admitted = self.ident.admitted
        return admitted if 0.0 < admitted <= now else now

    def _produced_by(self, now: float) -> int:
        elapsed = now - self._simulated_start - self.ttft
        if elapsed < 0:
            return 0
        return min(len(self.tokens), math.floor(elapsed / self.interval) + 1)

    async def _respond(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        plan = self.plan
        n_total = len(self.tokens)
        stop_at = n_total
        for name in ("interrupt_after", "drop_after", "stall_after"):
            n = getattr(plan, name)
            if n is not None:
                stop_at = min(stop_at, n)
        start = self._simulated_start
        if stop_at > 0:
            first_due = start + self.ttft
            await asyncio.sleep(max(0.0, first_due - loop.time()))
            self.first_token_at = time.time()
        await asyncio.sleep(max(0.0, start + self.ttft + stop_at * self.interval - loop.time()))
        self.sent = stop_at
        rid = self.ident.request_id

        if plan.stall_after is not None and plan.stall_after <= stop_at:
            self.failure_class = "stalled"
            await asyncio.Event().wait()  # ends by timeout (504) or disconnect
        if plan.interrupt_after is not None and plan.interrupt_after <= stop_at:
            log.info("simulated upstream interruption in %s after %d tokens", rid, self.sent)
            self.status, self.failure_class, self.http_status = "failed", "upstream_error", 502
            body = error_body(self.request.wire, "api_error", "upstream request failed",
                              code="upstream_error")
            body["error"]["_anoman"] = {"failure_class": "upstream_error",
                                        "completion_tokens": self.sent}
            await _send_json(send, 502, body, rid)
            self.response_complete = True
            return

        reasoning_sent = min(self.sent, self.reasoning_count)
        cost, weighted = self._usage_figures(self.sent)
        anoman = anoman_block(self.state, self.verdicts, request_id=rid, cost_usd=cost,
                              weighted_tokens=weighted, cache_hit=False, request=self.request,
                              playground=self.ident.playground)
        payload = self._completion_body(anoman, reasoning_sent)
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        malformed = plan.malformed_after is not None and plan.drop_after is None
        if malformed:
            data = data[: len(data) // 2]  # an invalid JSON body, correctly framed
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(data)).encode()),
                   (b"x-request-id", rid.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if plan.drop_after is not None and plan.drop_after <= stop_at:
            self.status, self.failure_class = "failed", "dropped"
            await send({"type": "http.response.body", "body": data[: len(data) // 2],
                        "more_body": True})
            return  # the server closes the connection mid-body
        if malformed:
            self.status, self.failure_class = "failed", "protocol_error"
        else:
            self.status = "completed"
        self.response_complete = True
        await send({"type": "http.response.body", "body": data, "more_body": False})

    def _completion_body(self, anoman: dict[str, Any], reasoning_sent: int) -> dict[str, Any]:
        rid, name = self.ident.request_id, self.model.name
        if self.request.wire == "anthropic":
            return anthropic_message(rid, name, self.text, self.reasoning, self.finish,
                                     self.prompt_tokens, self.sent, anoman)
        return openai_completion(rid, name, int(self.ident.started_at), self.text,
                                 self.reasoning, self.finish, self.prompt_tokens, self.sent,
                                 reasoning_sent, anoman)

    # -- the end ---------------------------------------------------------------

    def finalize(self) -> None:
        """Write the ledger row (once) and, for a clean completion, the cache entry."""
        if self._recorded:
            return
        self._recorded = True
        if self.cancel_reason is not None and not self.response_complete:
            self.status = "cancelled"
            self.failure_class = self.cancel_reason
            if not self.request.stream:
                self.sent = self._produced_by(asyncio.get_running_loop().time())
        routing = "streaming_cancelled" if (
            self.status == "cancelled" and self.request.stream) else "realtime"
        cost, weighted = self._usage_figures(self.sent)
        row = UsageRow(
            request_id=self.ident.request_id,
            key_hint=key_hint(self.ident.api_key),
            endpoint=self.ident.endpoint,
            model=self.model.name,
            stream=self.request.stream,
            status=self.status,
            routing_mode=routing,
            http_status=self.http_status,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.sent,
            weighted_tokens=weighted,
            cost_usd=cost,
            guardrails={name: v.as_block() for name, v in self.verdicts.items()},
            failure_class=self.failure_class,
            started_at=self.ident.started_at,
            first_token_at=self.first_token_at,
            ended_at=time.time(),
            compare_id=self.request.compare_id,
            panel=self.request.panel,
        )
        try:
            self.state.ledger.record(row)
        except Exception:
            log.exception("could not record usage for %s", self.ident.request_id)
        if self.status == "completed" and self.cache_key is not None:
            self.state.cache.put(self.cache_key, CachedAnswer(
                text=self.text, reasoning=self.reasoning, finish_reason=self.finish,
                prompt_tokens=self.prompt_tokens, completion_tokens=self.sent,
                reasoning_tokens=min(self.sent, self.reasoning_count),
            ))


_COMPOSE_IN_THREAD_TOKENS = 4_000
# Seeds of the answers drawn afresh (temperature above 0, no seed): seeded from the OS, so
# no two gateway runs draw the same sequence.
_ANSWER_DRAW = random.SystemRandom()
_TIMER_SLACK_S = 0.002  # epoll rounds waits up to 1 ms, and waking from idle adds more


async def _sleep_until(loop: asyncio.AbstractEventLoop, due: float) -> None:
    """Sleep until ``due`` on the loop clock, late by well under a millisecond.

    epoll rounds each wait up to a whole millisecond, counted from the loop's next poll
    rather than from the moment the sleep was asked for, so a plain sleep wakes up to
    1 ms late, and for the first token that lateness is TTFT the gateway adds on top of
    the simulated one; waking an idle process adds more (measured: 10% of
    waits over 1 ms late). Sleep to within ``_TIMER_SLACK_S`` of ``due``, then yield until
    it passes: other tasks keep running, and the cost is at most that much polling per
    stream.
    """
    coarse = due - loop.time() - _TIMER_SLACK_S
    if coarse > 0:
        await asyncio.sleep(coarse)
    while loop.time() < due:
        await asyncio.sleep(0)


async def _send_json(send: Send, status: int, body: dict[str, Any], request_id: str) -> None:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"x-request-id", request_id.encode()),
    ]})
    await send({"type": "http.response.body", "body": data, "more_body": False})


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class GenerationResponse:
    """ASGI response running a ``GenerationRun`` and cancelling it on disconnect."""

    def __init__(self, run: GenerationRun, on_end: Callable[[], None]) -> None:
        self.run = run
        self.on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        run = self.run
        body = run.stream(send) if run.request.stream else run.respond(send)
        task = asyncio.ensure_future(body)
        run.task = task
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        run.state.active.add(run)
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done() and not run.response_complete:
                run.cancel("client_disconnect")
            try:
                await task
            except asyncio.CancelledError:
                if run.cancel_reason is None:
                    raise
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # we are being cancelled ourselves, not just the child
        finally:
            if not task.done():
                # The handler itself was cancelled (forced shutdown): stop the child too.
                run.cancel("gateway_shutdown")
                task.cancel()
            watcher.cancel()
            run.state.active.discard(run)
            run.finalize()
            self.on_end()
