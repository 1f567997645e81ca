"""The stream core against servers that are not the Anoman gateway.

Bodies under tests/captures/litellm/ were recorded from a real LiteLLM proxy (see the
README there) and are replayed byte for byte over loopback; the other providers'
shapes (OpenAI, Anthropic, OpenRouter, vLLM, Ollama, FastAPI, nginx) are written out
from their documented forms.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from anoman_tui.streaming import (
    ChatTurn,
    EndpointFormat,
    ModelInfo,
    StreamClient,
    StreamDone,
    StreamFailure,
    StreamRequest,
    cost_of,
    describe_failure,
)
from anoman_tui.wire import AnomanBlock, Usage
from tests.frames import ANTHROPIC_EXAMPLE_STREAM
from tests.replay_server import ReplayServer, Script

CAPTURES = Path(__file__).parent / "captures" / "litellm"
KEY = "sk-master-1234"
JSON = "application/json"


def captured(name: str) -> bytes:
    return (CAPTURES / f"{name}.body").read_bytes()


def request(server: ReplayServer, model: str, endpoint: EndpointFormat = "openai",
            **kw: object) -> StreamRequest:
    return StreamRequest(base_url=server.base_url, api_key=KEY, endpoint=endpoint, model=model,
                         messages=(ChatTurn(role="user", content="hi"),), **kw)


async def run(server: ReplayServer, model: str, endpoint: EndpointFormat = "openai",
              **kw: object):
    async with StreamClient() as client:
        events = [e async for e in client.stream(request(server, model, endpoint, **kw))]
    assert isinstance(events[-1], StreamDone)
    return events[-1].result


def sse_bytes(*frames: tuple[str | None, object]) -> list[bytes]:
    out = []
    for event, payload in frames:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append((f"event: {event}\n" if event else "") .encode() + f"data: {data}\n\n".encode())
    return out


def text_chunk(text: str) -> dict[str, object]:
    return {"id": "c", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


# -- where the request goes, and what it asks for ------------------------------------


async def test_path_overrides_the_formats_default_path(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(content_type=JSON, body=[captured("anthropic_stream_xapikey")])
    await run(replay, "m", "anthropic", path="/v1/messages")
    await run(replay, "m", "anthropic")
    await run(replay, "m", "openai", path="v1/chat/completions")
    assert [r.path for r in replay.requests] == [
        "/v1/messages", "/anthropic/v1/messages", "/v1/chat/completions"]
    # The Anthropic format keeps its own headers on whatever path it is sent to.
    assert replay.requests[0].headers["x-api-key"] == KEY
    assert replay.requests[0].headers["anthropic-version"]


async def test_include_usage_asks_for_the_usage_chunk_only_when_true(replay) -> None:
    replay.scripts["m"] = Script(body=[captured("openai_stream_nousage")])
    await run(replay, "m")
    await run(replay, "m", include_usage=False)
    await run(replay, "m", "playground", include_usage=False)  # Anoman always sends it
    bodies = [r.body for r in replay.requests]
    assert bodies[0]["stream_options"] == {"include_usage": True}
    assert "stream_options" not in bodies[1]
    assert bodies[2]["stream_options"] == {"include_usage": True}


# -- usage and cost without an Anoman block ------------------------------------------


async def test_litellm_stream_keeps_usage_and_the_providers_cost(replay) -> None:
    replay.scripts["mock-gpt"] = Script(body=[captured("openai_stream")])
    result = await run(replay, "mock-gpt")
    assert result.committed and result.text == "Hello from the mock"
    assert result.finish_reason == "stop"
    assert result.usage is not None
    assert (result.usage.prompt_tokens, result.usage.completion_tokens,
            result.usage.total_tokens) == (8, 4, 12)
    assert result.anoman is None
    assert result.provider_cost is not None
    assert abs(result.provider_cost - Decimal("0.00006")) < Decimal("1e-12")
    text = cost_of(result.anoman, result.usage, None, result.provider_cost,
                   model="mock-gpt").shown()
    assert text == "$0.000060 (provider)"


async def test_final_usage_chunk_with_empty_choices(replay: ReplayServer) -> None:
    # OpenAI's own form: the usage comes alone, `choices: []`, after the finish chunk.
    body = sse_bytes(
        (None, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        (None, text_chunk("Hi")),
        (None, text_chunk(" there")),
        (None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        (None, {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2,
                                         "total_tokens": 11, "cost": 0.0000245}}),
        (None, "[DONE]"),
    )
    replay.scripts["m"] = Script(body=body)
    result = await run(replay, "m")
    assert result.committed and result.text == "Hi there"
    assert result.finish_reason == "stop"  # the usage chunk does not erase it
    assert result.usage == Usage(prompt_tokens=9, completion_tokens=2, total_tokens=11,
                                 cost=0.0000245)
    assert result.provider_cost == Decimal("0.0000245")


async def test_a_stream_without_usage_has_no_cost_to_make_up(replay) -> None:
    replay.scripts["mock-gpt"] = Script(body=[captured("openai_stream_nousage")])
    result = await run(replay, "mock-gpt", include_usage=False)
    assert result.committed and result.usage is None and result.provider_cost is None
    assert cost_of(result.anoman, result.usage, None, result.provider_cost,
                   model="mock-gpt").shown() == "—"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.00006000000000000001, Decimal("0.00006000000000000001")), ("0.5", Decimal("0.5")),
     (0, Decimal(0)), (-1, None), (True, None), ("free", None), (None, None),
     (float("nan"), None), ({"total": 1}, None)],
)
def test_usage_cost_reads_only_a_number(value, expected) -> None:
    usage = Usage.model_validate({"prompt_tokens": 1, "cost": value})
    cost = usage.provider_cost_usd
    if expected is None:
        assert cost is None
    else:
        assert cost is not None and abs(cost - expected) < Decimal("1e-15")
    # The usage counts keep their shape wherever they are dumped.
    assert set(usage.model_dump(include={"prompt_tokens", "completion_tokens",
                                         "total_tokens"})) == {
        "prompt_tokens", "completion_tokens", "total_tokens"}


def test_cost_text_order_gateway_provider_listed_library_then_nothing() -> None:
    usage = Usage(prompt_tokens=8, completion_tokens=4, total_tokens=12)
    block = AnomanBlock.model_validate({"cost_usd": "0.000041"})
    priced = ModelInfo(id="gpt-4o", input_usd_per_mtok=Decimal(3),
                       output_usd_per_mtok=Decimal(15))
    unpriced = ModelInfo(id="gpt-4o")
    provider = Decimal("0.00006000000000000001")
    assert cost_of(block, usage, priced, provider).shown() == "$0.000041"
    assert cost_of(None, usage, priced, provider).shown() == "$0.000060 (provider)"
    # Reported even without usage counts: the server said what it cost.
    assert cost_of(None, None, None, provider).shown() == "$0.000060 (provider)"
    assert cost_of(None, usage, None, Decimal("0.0000000004")).shown() == "$4e-10 (provider)"
    assert cost_of(None, usage, priced).shown() == "~$0.000084 (est.)"  # 8×3 + 4×15 per Mtok
    # gpt-4o lists at $2.50 in and $10 out per Mtok: 8×2.5 + 4×10 = 60 µ$.
    assert cost_of(None, usage, unpriced).shown() == "~$0.000060 (est.)"
    assert cost_of(None, usage, None, model="openai/gpt-4o").shown() == "~$0.000060 (est.)"
    estimate = cost_of(None, usage, None, model="gpt-4o", provider="openai")
    assert estimate.shown() == "~$0.000060 (est.)"
    # A name no price list knows (a LiteLLM alias, a local model): no figure, no zero.
    assert cost_of(None, usage, ModelInfo(id="mock-gpt")).shown() == "—"
    assert cost_of(None, usage, None, model="llama3.2:1b", provider="ollama").shown() == "—"
    assert cost_of(None, None, unpriced).shown() == "—"
    assert cost_of(None, usage, None).shown() == "—"


async def test_litellm_messages_route_answering_with_json_is_a_whole_answer(replay) -> None:
    # A mock model on LiteLLM's /v1/messages answers a streaming request with one message.
    replay.scripts["mock-claude"] = Script(content_type="application/json",
                                           body=[captured("anthropic_stream_xapikey")])
    result = await run(replay, "mock-claude", "anthropic", path="/v1/messages")
    assert result.committed and result.text == "Hello from the mock"
    assert result.finish_reason == "end_turn" and not result.cache_hit
    assert result.usage is not None and result.usage.completion_tokens == 503


async def test_anoman_json_that_is_not_a_cache_hit_stays_a_protocol_error(replay) -> None:
    body = {"choices": [{"index": 0, "message": {"content": "x"}}],
            "_anoman": {"cache": {"hit": False}}}
    replay.scripts["m"] = Script(content_type=JSON, body=[json.dumps(body).encode()])
    result = await run(replay, "m")
    assert result.failure is not None and result.failure.kind == "protocol_error"


# -- errors before the stream ---------------------------------------------------------


def _status(name: str) -> int:
    """The status each capture was recorded with (tests/captures/litellm/README.md)."""
    rows = (CAPTURES / "README.md").read_text().splitlines()
    row = next(r for r in rows if r.startswith(f"| {name}.body "))
    return int(row.split("|")[3])


@pytest.mark.parametrize(
    ("capture", "endpoint", "content_type", "words", "not_said"),
    [
        ("unknown_model", "openai", JSON,
         "400 BAD REQUEST: /chat/completions: Invalid model name passed in "
         "model=no-such-model.", None),
        ("messages_unknown_model", "anthropic", JSON,
         "400 BAD REQUEST: anthropic_messages: Invalid model name passed in model=", None),
        # LiteLLM's Anthropic pass-through speaks of its own credentials, not the key sent.
        ("unknown_path", "anthropic", JSON,
         "401 UNAUTHORIZED: No Anthropic credential is configured on this proxy", "API key"),
        # FastAPI's plain "Not Found": the path is what is missing, not a model.
        ("unknown_path_playground", "playground", JSON,
         "404 NOT FOUND: POST /anoman/v1/playground/run is not served by this server",
         "model"),
        # No Retry-After: the server's message, no made-up wait.
        ("ratelimit", "openai", JSON,
         "429 RATE LIMITED: litellm.RateLimitError: this is a mock rate limit error", "retry"),
        ("internal_error", "openai", JSON,
         "500 GATEWAY ERROR: litellm.InternalServerError: this is a mock internal server error",
         None),
        ("no_key", "openai", "text/plain; charset=utf-8",
         "500 GATEWAY ERROR: Internal Server Error", "non-JSON"),
        ("no_db_key_check", "openai", JSON, "400 BAD REQUEST: No connected db.", None),
    ],
)
async def test_litellm_error_bodies_read_as_the_server_said(
    replay, capture, endpoint, content_type, words, not_said
) -> None:
    status = _status(capture)
    replay.scripts["m"] = Script(status=status, content_type=content_type,
                                 body=[captured(capture)])
    result = await run(replay, "m", endpoint)
    failure = result.failure
    assert failure is not None and failure.kind == "http_error" and failure.status == status
    assert failure.message.startswith(words), failure.message
    if not_said:
        assert not_said not in failure.message
    assert "\n" not in failure.message and not result.committed


PROVIDER_ERRORS = {
    # OpenAI: the model does not exist.
    "openai 404 model": (404, JSON, {"error": {
        "message": "The model `gpt-9` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": None, "code": "model_not_found"}},
        "404 MODEL NOT FOUND: check the model name (The model `gpt-9` does not exist", "model"),
    # Anthropic's envelope.
    "anthropic 404 model": (404, JSON, {"type": "error", "error": {
        "type": "not_found_error", "message": "model: claude-9"}},
        "404 MODEL NOT FOUND: check the model name (model: claude-9)", "model"),
    "anthropic 529": (529, JSON, {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}},
        "529 GATEWAY ERROR: Overloaded", None),
    # vLLM: the fields at the top level.
    "vllm 404 model": (404, JSON, {"object": "error", "message": "The model `x` does not exist.",
                                   "type": "NotFoundError", "param": None, "code": 404},
                       "404 MODEL NOT FOUND: check the model name (The model `x` does not",
                       "model"),
    # Ollama: `error` is a string.
    "ollama 404 model": (404, JSON, {"error": "model \"llama9\" not found, try pulling it first"},
                         "404 MODEL NOT FOUND", "model"),
    # FastAPI: a string, and a list of field errors.
    "fastapi detail": (400, JSON, {"detail": "temperature must be at most 2"},
                       "400 BAD REQUEST: temperature must be at most 2", None),
    "fastapi field list": (422, JSON, {"detail": [
        {"type": "missing", "loc": ["body", "messages"], "msg": "Field required", "input": None},
        {"type": "float_parsing", "loc": ["body", "temperature"], "msg": "Input should be a "
         "valid number", "input": "hot"}]},
        "422 BAD REQUEST: messages: Field required; temperature: Input should be a valid number",
        None),
    "fastapi unknown path": (404, JSON, {"detail": "Not Found"},
                             "404 NOT FOUND: POST /v1/chat/completions is not served by this "
                             "server", "path"),
    "a path 404 with words": (404, "text/plain", b"no route for this address",
                              "404 NOT FOUND: POST /v1/chat/completions is not served by this "
                              "server (no route for this address)", "path"),
    # HTML pages: the title (else the first heading), never tags.
    "nginx html": (502, "text/html", b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n"
                   b"<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx"
                   b"</center>\r\n</body>\r\n</html>\r\n", "502 GATEWAY ERROR: 502 Bad Gateway",
                   None),
    "html heading only": (503, "text/html; charset=utf-8",
                          b"<!doctype html><html><body><script>var a = '<b>';</script>"
                          b"<h1>Service &amp; API <em>down</em></h1><p>later</p></body></html>",
                          "503 GATEWAY ERROR: Service & API down", None),
    "html 404 page": (404, "text/html", b"<html><head><title>404 Not Found</title></head>"
                      b"<body><h1>Not Found</h1></body></html>",
                      "404 NOT FOUND: POST /v1/chat/completions is not served by this server",
                      "path"),
    "plain text": (502, "text/plain", b"upstream connect error or disconnect/reset before headers",
                   "502 GATEWAY ERROR: upstream connect error or disconnect/reset before headers",
                   None),
    # A 401 about the key sent keeps the advice to check it.
    "openai 401": (401, JSON, {"error": {"message": "Incorrect API key provided: sk-…1234.",
                                         "type": "invalid_request_error",
                                         "code": "invalid_api_key"}},
                   "401 UNAUTHORIZED: check your API key", None),
    "proxy 401": (401, JSON, {"error": {"message": "Authentication Error, LiteLLM Virtual Key "
                                        "expected. Received=anm-sk-…, expected to start with "
                                        "'sk-'.", "type": "auth_error", "code": "401"}},
                  "401 UNAUTHORIZED: Authentication Error, LiteLLM Virtual Key expected.", None),
}


@pytest.mark.parametrize("case", list(PROVIDER_ERRORS))
async def test_provider_error_bodies_map_to_readable_words(replay, case) -> None:
    status, content_type, body, words, missing = PROVIDER_ERRORS[case]
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    replay.scripts["m"] = Script(status=status, content_type=content_type, body=[raw])
    result = await run(replay, "m")
    failure = result.failure
    assert failure is not None and failure.kind == "http_error" and failure.status == status
    assert failure.message.startswith(words), failure.message
    assert "<" not in failure.message and "\n" not in failure.message
    assert failure.not_found == missing
    if case == "proxy 401":
        assert "check your API key" not in failure.message
    # The words survive the trip through compare's JSON and the history.
    again = StreamFailure.from_json({**failure.to_json(), "detail": failure.detail})
    assert again is not None and again.message == failure.message


def test_a_404_without_a_request_line_or_words_keeps_the_model_advice() -> None:
    failure = StreamFailure("http_error", "", status=404)
    assert failure.not_found is None
    assert describe_failure(failure).text == "404 MODEL NOT FOUND: check the model name"


# -- errors after the stream opened ---------------------------------------------------


async def test_anthropic_error_event_mid_stream_says_what_and_how_many_tokens(replay) -> None:
    error = sse_bytes(("error", {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}))
    # message_start, content_block_start, two text deltas, then the error.
    replay.scripts["m"] = Script(body=[*ANTHROPIC_EXAMPLE_STREAM[:4], *error])
    result = await run(replay, "m", "anthropic")
    failure = result.failure
    assert failure is not None and failure.kind == "stream_error"
    assert failure.type == "overloaded_error"
    chunks = result.metrics.chunks
    assert chunks >= 1 and failure.completion_tokens == chunks
    assert failure.message == (f"STREAM INTERRUPTED after {chunks} tokens: Overloaded, "
                               "partial answer not committed")
    assert not result.committed and result.text


async def test_openrouter_error_chunk_is_a_stream_error_with_its_message(replay) -> None:
    error_chunk = {"id": "gen-1", "object": "chat.completion.chunk", "provider": "openai",
                   "error": {"code": 502, "message": "Provider disconnected unexpectedly"},
                   "choices": [{"index": 0, "delta": {"content": ""},
                                "finish_reason": "error"}]}
    body = sse_bytes((None, text_chunk("One")), (None, text_chunk(" two")),
                     (None, text_chunk(" three")), (None, error_chunk), (None, "[DONE]"))
    replay.scripts["m"] = Script(body=body)
    result = await run(replay, "m")
    failure = result.failure
    assert failure is not None and failure.kind == "stream_error" and failure.code == "502"
    assert failure.completion_tokens == 3
    assert failure.message == ("STREAM INTERRUPTED after 3 tokens: Provider disconnected "
                               "unexpectedly, partial answer not committed")
    assert result.text == "One two three" and not result.committed


async def test_finish_reason_error_without_an_error_object(replay) -> None:
    body = sse_bytes((None, text_chunk("One")), (None, text_chunk(" two")),
                     (None, {"choices": [{"index": 0, "delta": {}, "finish_reason": "error"}]}),
                     (None, "[DONE]"))
    replay.scripts["m"] = Script(body=body)
    result = await run(replay, "m")
    failure = result.failure
    assert failure is not None and failure.kind == "stream_error"
    assert failure.message.startswith("STREAM INTERRUPTED after 2 tokens: the server ended")
    assert not result.committed


@pytest.mark.parametrize(
    "frame",
    [{"error": {"message": "upstream timed out", "type": "server_error"}},
     {"object": "error", "message": "upstream timed out", "type": "InternalServerError",
      "code": 500}],
    ids=["openai error object", "vllm error object"],
)
async def test_mid_stream_error_without_an_anoman_count_counts_the_chunks(replay, frame) -> None:
    body = sse_bytes(*[(None, text_chunk(w)) for w in ("a", "b", "c", "d", "e")],
                     (None, frame), (None, "[DONE]"))
    replay.scripts["m"] = Script(body=body)
    result = await run(replay, "m")
    failure = result.failure
    assert failure is not None and failure.kind == "stream_error"
    assert failure.failure_class is None and failure.completion_tokens == 5
    assert failure.message == ("STREAM INTERRUPTED after 5 tokens: upstream timed out, "
                               "partial answer not committed")
    assert failure.to_json()["completion_tokens"] == 5


async def test_mid_stream_error_after_usage_counts_the_usage(replay) -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 40,
                                      "total_tokens": 43}}
    body = sse_bytes((None, text_chunk("a")), (None, usage),
                     (None, {"error": {"message": "late failure"}}))
    replay.scripts["m"] = Script(body=body)
    result = await run(replay, "m")
    assert result.failure is not None and result.failure.completion_tokens == 40


# -- the JSON endpoints ---------------------------------------------------------------


async def test_usage_ledger_on_a_server_without_one_names_the_route(replay) -> None:
    from anoman_tui.streaming import GatewayRequestError

    replay.scripts["/anoman/v1/usage?limit=5"] = Script(
        status=404, content_type=JSON, body=[captured("usage_path")], chunked=False)
    async with StreamClient() as client:
        with pytest.raises(GatewayRequestError) as caught:
            await client.fetch_usage(replay.base_url, KEY, 5)
    said = str(caught.value)
    assert said == (f"{replay.base_url}: GET /anoman/v1/usage is not served by this server "
                    "(404); it is not an Anoman gateway")
    assert "model" not in said and not caught.value.retryable


def test_the_price_library_loads_only_when_asked() -> None:
    import subprocess
    import sys

    code = ("import sys, anoman_tui.streaming as s; before = 'genai_prices' in sys.modules; "
            "ok = s.preload_price_library(); print(before, ok, 'genai_prices' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent.parent).stdout.split()
    assert out == ["False", "True", "True"]
