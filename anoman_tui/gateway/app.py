"""The Starlette application of the local Anoman-compatible gateway.

``create_app(config)`` builds the routes of docs/wire-contract.md §1 and §9 and
the pre-call pipeline every generation request goes through, in this order:
authentication (401), body (408, 413), JSON and field validation (400), simulated status
(`X-Anoman-Simulate: status=CODE`), model lookup (404), per-key rate limits
(429 + Retry-After), guardrails (403), cache (JSON answer on a hit), then the
``GenerationRun`` that streams or answers. Every generation request that got
past authentication leaves exactly one ledger row.

Imports Starlette and the gateway's own modules; never Textual, never the
client side (`anoman_tui.ui`, `anoman_tui.streaming`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from anoman_tui.gateway.cache import cache_key
from anoman_tui.gateway.catalogue import CATALOGUE, SimulatedModel
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.faults import FaultPlan, FaultSyntaxError
from anoman_tui.gateway.frames import anthropic_message, error_body, openai_completion
from anoman_tui.gateway.generation import (
    GenerationResponse,
    GenerationRun,
    RunIdentity,
    anoman_block,
)
from anoman_tui.gateway.guardrails import GuardrailOutcome, first_block, run_guardrails
from anoman_tui.gateway.ledger import RowStatus, UsageRow, key_hint
from anoman_tui.gateway.requests import ChatRequest, InvalidRequest, WireFormat, parse_chat_request
from anoman_tui.gateway.state import GatewayState

log = logging.getLogger("anoman_tui.gateway")

SIMULATE_HEADER = "x-anoman-simulate"

_STATUS_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "simulated bad request"),
    401: ("authentication_error", "simulated authentication failure"),
    403: ("permission_error", "simulated permission failure"),
    # As a provider says it (OpenAI's model_not_found), so clients show a missing model.
    404: ("not_found_error", "simulated: the model was not found"),
    408: ("api_error", "simulated request timeout"),
    409: ("api_error", "simulated conflict"),
    413: ("invalid_request_error", "simulated request too large"),
    422: ("invalid_request_error", "simulated unprocessable request"),
    429: ("rate_limit_error", "simulated rate limit"),
    500: ("api_error", "simulated internal error"),
    502: ("api_error", "simulated upstream unreachable"),
    503: ("overloaded_error", "simulated overload"),
    504: ("api_error", "simulated upstream timeout"),
    529: ("overloaded_error", "simulated overload"),
}


class _PrecallError(Exception):
    """A pre-call refusal: becomes a JSON error response and a ledger row."""

    def __init__(self, status: int, error_type: str, message: str, *, failure_class: str,
                 code: str | None = None, param: str | None = None,
                 headers: dict[str, str] | None = None, row_status: RowStatus = "failed",
                 anoman: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.failure_class = failure_class
        self.code = code
        self.param = param
        self.headers = headers or {}
        self.row_status = row_status
        self.anoman = anoman


class _BodyTooLarge(Exception):
    pass


def _presented_key(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return request.headers.get("x-api-key") or None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _json_response(body: dict[str, Any], status: int, request_id: str | None = None,
                    headers: dict[str, str] | None = None) -> Response:
    all_headers = dict(headers or {})
    if request_id:
        all_headers["x-request-id"] = request_id
    return JSONResponse(body, status_code=status, headers=all_headers)


class _Gateway:
    """Route handlers bound to one ``GatewayState``."""

    def __init__(self, state: GatewayState) -> None:
        self.state = state

    # -- generation endpoints -----------------------------------------------------

    async def chat_completions(self, request: Request) -> Response:
        return await self._generate(request, "openai", "/v1/chat/completions", playground=False)

    async def anthropic_messages(self, request: Request) -> Response:
        return await self._generate(request, "anthropic", "/anthropic/v1/messages",
                                    playground=False)

    async def playground_run(self, request: Request) -> Response:
        return await self._generate(request, "openai", "/anoman/v1/playground/run",
                                    playground=True)

    async def _generate(self, request: Request, wire: WireFormat, endpoint: str, *,
                        playground: bool) -> Response:
        state = self.state
        request_id = uuid.uuid4().hex[:24]
        started_at, admitted = time.time(), asyncio.get_running_loop().time()
        api_key = state.authenticate(_presented_key(request))
        if api_key is None:
            # Unauthenticated calls are not metered: there is no account to bill.
            return _json_response(
                error_body(wire, "authentication_error", "missing or invalid API key",
                           code="invalid_api_key"), 401, request_id)
        ident = RunIdentity(request_id, api_key, endpoint, started_at, playground, admitted)
        chat: ChatRequest | None = None
        model: SimulatedModel | None = None
        stream_slot = False
        verdicts: dict[str, GuardrailOutcome] = {}
        try:
            try:
                async with asyncio.timeout(state.config.body_timeout_s):
                    raw = await _read_body(request, state.config.max_body_bytes)
            except TimeoutError:
                # A client that stops mid-body must not hold a request (and a task) forever.
                raise _PrecallError(
                    408, "invalid_request_error",
                    f"request body not received within {state.config.body_timeout_s:g} s",
                    failure_class="body_timeout", code="body_timeout") from None
            except ClientDisconnect:
                # Gone before the body arrived: nothing to answer, but the request is metered.
                raise _PrecallError(
                    499, "invalid_request_error", "client closed the connection mid-body",
                    failure_class="client_disconnect", code="client_disconnect",
                    row_status="cancelled") from None
            except _BodyTooLarge:
                raise _PrecallError(
                    413, "invalid_request_error",
                    f"request body exceeds {state.config.max_body_bytes} bytes",
                    failure_class="request_too_large", code="request_too_large") from None
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                raise _PrecallError(400, "invalid_request_error", "request body is not valid JSON",
                                    failure_class="invalid_request", code="invalid_json") from None
            try:
                header_plan = FaultPlan.parse(request.headers.get(SIMULATE_HEADER))
            except FaultSyntaxError as exc:
                raise _PrecallError(400, "invalid_request_error",
                                    f"X-Anoman-Simulate: {exc}", failure_class="invalid_request",
                                    code="invalid_simulate_header") from None
            try:
                chat = parse_chat_request(body, wire, playground=playground)
            except InvalidRequest as exc:
                raise _PrecallError(400, "invalid_request_error", str(exc),
                                    failure_class="invalid_request", param=exc.param) from None

            plan = state.model_faults.get(chat.model, FaultPlan()).overlay(header_plan)
            if plan.status is not None:
                self._raise_simulated_status(plan.status, plan.retry_after)
            model = CATALOGUE.get(chat.model)
            if model is None:
                raise _PrecallError(404, "not_found_error",
                                    "model not found; GET /v1/models lists the available models",
                                    failure_class="not_found", code="model_not_found",
                                    param="model")

            policy = state.policy_for(api_key)
            decision = state.limiter.admit(
                api_key,
                rpm=policy.rpm if policy and policy.rpm else state.config.rate_limit_rpm,
                max_streams=(policy.max_concurrent_streams if policy and
                             policy.max_concurrent_streams else
                             state.config.max_concurrent_streams),
                stream=chat.stream,
            )
            if not decision.allowed:
                raise _PrecallError(
                    429, "rate_limit_error", f"rate limit reached ({decision.reason})",
                    failure_class="rate_limited", code=decision.reason,
                    headers={"retry-after": str(decision.retry_after_s)})
            stream_slot = chat.stream

            verdicts = run_guardrails(chat.caller_text, state.config.guardrails,
                                      model=chat.model, max_tokens=chat.max_tokens,
                                      policy=policy)
            blocked = first_block(verdicts)
            if blocked is not None:
                raise _PrecallError(
                    403, "guardrail_blocked", f"request blocked by the {blocked.check} guardrail",
                    failure_class="guardrail_blocked", code=f"{blocked.check}_blocked",
                    row_status="blocked",
                    anoman={"guardrails": {n: v.as_block() for n, v in verdicts.items()},
                            "blocked_by": blocked.check, "request_id": request_id})

            key: str | None = None
            if state.config.cache_enabled and plan.is_empty:
                key = cache_key(chat.model, chat.params, chat.messages)
                no_cache = "no-cache" in request.headers.get("cache-control", "").lower()
                hit = None if no_cache else state.cache.get(key)
                if hit is not None:
                    return self._cache_hit(ident, chat, model, verdicts, hit)
        except _PrecallError as refusal:
            if stream_slot:
                state.limiter.release_stream(api_key)
            self._record_precall(ident, chat, model, refusal, verdicts)
            return _json_response(
                error_body(wire, refusal.error_type, refusal.message, code=refusal.code,
                           param=refusal.param, anoman=refusal.anoman),
                refusal.status, request_id, refusal.headers)
        except BaseException:
            if stream_slot:
                state.limiter.release_stream(api_key)
            raise

        if stream_slot:
            def on_end() -> None:
                state.limiter.release_stream(api_key)
        else:
            def on_end() -> None:
                return None
        run = GenerationRun(state, ident, chat, model, plan, verdicts, key)
        return GenerationResponse(run, on_end)  # type: ignore[return-value]

    @staticmethod
    def _raise_simulated_status(code: int, retry_after: int | None = None) -> None:
        if code == 403:
            # At Anoman a 403 is a guardrail block (docs/wire-contract.md §3.1): simulate it
            # with the body a real block has, so a client's guardrail badge can be shown, and
            # say that it is simulated (the prompt was not checked) so it does not read as a
            # false positive.
            verdicts = {
                "injection": {"status": "block", "score": 0.97, "simulated": True},
                "pii": {"status": "pass", "score": 0.0},
                "moderation": {"status": "pass", "score": 0.0},
                "policy": {"status": "pass", "score": 0.0},
            }
            raise _PrecallError(
                403, "guardrail_blocked",
                "simulated guardrail block (X-Anoman-Simulate: status=403); the prompt was not "
                "checked",
                failure_class="guardrail_blocked", code="injection_blocked", row_status="blocked",
                anoman={"guardrails": verdicts, "blocked_by": "injection", "simulated": True})
        error_type, message = _STATUS_ERRORS.get(code, ("api_error", "simulated error"))
        headers = {"retry-after": str(1 if retry_after is None else retry_after)} \
            if code in (429, 503, 529) else None
        raise _PrecallError(code, error_type, message, failure_class="simulated_status",
                            code=f"simulated_{code}", headers=headers)

    def _cache_hit(self, ident: RunIdentity, chat: ChatRequest, model: SimulatedModel,
                   verdicts: dict[str, GuardrailOutcome], hit: Any) -> Response:
        state = self.state
        if chat.stream:
            state.limiter.release_stream(ident.api_key)
        anoman = anoman_block(state, verdicts, request_id=ident.request_id, cost_usd="0.000000",
                              weighted_tokens=0, cache_hit=True, request=chat,
                              playground=ident.playground)
        # docs/wire-contract.md §6: a hit is one JSON object, even for stream: true, in the
        # route's own shape: a Messages `message` on the Anthropic route, as its SDK expects.
        if chat.wire == "anthropic":
            body = anthropic_message(ident.request_id, model.name, hit.text, hit.reasoning,
                                     hit.finish_reason, hit.prompt_tokens,
                                     hit.completion_tokens, anoman)
        else:
            body = openai_completion(ident.request_id, model.name, int(ident.started_at),
                                     hit.text, hit.reasoning, hit.finish_reason,
                                     hit.prompt_tokens, hit.completion_tokens,
                                     hit.reasoning_tokens, anoman)
        now = time.time()
        self._record(ident, chat, model.name, status="cache_hit", http_status=200,
                     prompt_tokens=hit.prompt_tokens, completion_tokens=hit.completion_tokens,
                     verdicts=verdicts, failure_class=None, first_token_at=now, ended_at=now)
        return _json_response(body, 200, ident.request_id)

    def _record_precall(self, ident: RunIdentity, chat: ChatRequest | None,
                        model: SimulatedModel | None, refusal: _PrecallError,
                        verdicts: dict[str, GuardrailOutcome]) -> None:
        name = model.name if model else (chat.model if chat else "")
        self._record(ident, chat, name, status=refusal.row_status, http_status=refusal.status,
                     prompt_tokens=chat.prompt_tokens if chat else 0, completion_tokens=0,
                     verdicts=verdicts, failure_class=refusal.failure_class,
                     first_token_at=None, ended_at=time.time())

    def _record(self, ident: RunIdentity, chat: ChatRequest | None, model: str, *,
                status: RowStatus, http_status: int, prompt_tokens: int,
                completion_tokens: int, verdicts: dict[str, GuardrailOutcome],
                failure_class: str | None, first_token_at: float | None,
                ended_at: float) -> None:
        # Refusals and cache hits cost nothing: no model ran.
        row = UsageRow(
            request_id=ident.request_id, key_hint=key_hint(ident.api_key),
            endpoint=ident.endpoint, model=model, stream=bool(chat and chat.stream),
            status=status, routing_mode="realtime", http_status=http_status,
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            weighted_tokens=0, cost_usd="0.000000",
            guardrails={n: v.as_block() for n, v in verdicts.items()},
            failure_class=failure_class, started_at=ident.started_at,
            first_token_at=first_token_at, ended_at=ended_at,
            compare_id=chat.compare_id if chat else None, panel=chat.panel if chat else None,
        )
        try:
            self.state.ledger.record(row)
        except Exception:
            log.exception("could not record usage for %s", ident.request_id)

    # -- read-only endpoints -------------------------------------------------------

    def _require_key(self, request: Request) -> Response | None:
        if self.state.authenticate(_presented_key(request)) is None:
            return _json_response(error_body("openai", "authentication_error",
                                             "missing or invalid API key",
                                             code="invalid_api_key"), 401)
        return None

    async def models(self, request: Request) -> Response:
        refused = self._require_key(request)
        if refused is not None:
            return refused
        return _json_response(
            {"object": "list", "data": [m.describe() for m in CATALOGUE.values()]}, 200)

    async def usage(self, request: Request) -> Response:
        refused = self._require_key(request)
        if refused is not None:
            return refused
        raw = request.query_params.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 10_000:
            return _json_response(error_body("openai", "invalid_request_error",
                                             "limit must be an integer from 1 to 10000",
                                             param="limit"), 400)
        return _json_response({"object": "list", "data": self.state.ledger.recent(int(raw))},
                              200)

    async def health(self, request: Request) -> Response:
        return _json_response({"status": "ok", "models": len(CATALOGUE)}, 200)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kinds = {404: "not_found_error", 405: "invalid_request_error"}
    return _json_response(
        error_body("openai", kinds.get(exc.status_code, "api_error"), str(exc.detail)),
        exc.status_code, headers=dict(exc.headers or {}))


async def _internal_error(request: Request, exc: Exception) -> Response:
    # The traceback goes to the log; the client gets a generic body.
    log.error("unhandled error on %s", request.url.path, exc_info=exc)
    return _json_response(error_body("openai", "api_error", "internal gateway error"), 500)


class _DroppedConnectionFilter(logging.Filter):
    """Silence uvicorn's complaint when we close a stream on purpose (drop, shutdown)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


def _install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DroppedConnectionFilter) for f in logger.filters):
        logger.addFilter(_DroppedConnectionFilter())


def create_app(config: GatewayConfig) -> Starlette:
    """The gateway as an ASGI app; ``app.state.gateway`` is its ``GatewayState``."""
    state = GatewayState(config)
    handlers = _Gateway(state)
    _install_log_filter()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.cancel_all("gateway_shutdown")
            state.ledger.close()

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", handlers.chat_completions, methods=["POST"]),
            Route("/anthropic/v1/messages", handlers.anthropic_messages, methods=["POST"]),
            Route("/anoman/v1/playground/run", handlers.playground_run, methods=["POST"]),
            Route("/v1/models", handlers.models, methods=["GET"]),
            Route("/anoman/v1/usage", handlers.usage, methods=["GET"]),
            Route("/healthz", handlers.health, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
        lifespan=lifespan,
    )
    app.state.gateway = state
    return app
