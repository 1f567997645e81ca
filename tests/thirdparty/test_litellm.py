"""The client against a real LiteLLM proxy (installed from the package index, mock models).

Through the stream core (`StreamClient`) and through `anoman-tui compare` in a
subprocess: the OpenAI format, LiteLLM's Anthropic `/v1/messages` route, and the error
bodies LiteLLM really sends, which must reach the badge in LiteLLM's own words.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import httpx
import pytest

from anoman_tui.streaming import (
    ChatTurn,
    StreamClient,
    StreamRequest,
    StreamResult,
    describe_failure,
)
from tests.thirdparty.helpers import (
    ANTHROPIC_MOCK_TEXT,
    OPENAI_MOCK_TEXT,
    LiteLLMProxy,
)

# One proxy for the session: both files run on the same worker.
pytestmark = [pytest.mark.thirdparty, pytest.mark.xdist_group("litellm"),
              pytest.mark.usefixtures("clean_env")]

PROMPT = (ChatTurn(role="user", content="Say hello in one sentence."),)


async def stream(proxy: LiteLLMProxy, model: str, **fields: object) -> StreamResult:
    values: dict[str, object] = {
        "base_url": proxy.base_url, "api_key": proxy.master_key, "model": model,
        "messages": PROMPT, "idle_timeout": 20.0,
    }
    values.update(fields)
    async with StreamClient() as client:
        return await client.stream(StreamRequest(**values)).wait()  # type: ignore[arg-type]


def badge(result: StreamResult) -> str:
    assert result.failure is not None, result
    return describe_failure(result.failure).line


# -- the OpenAI format ----------------------------------------------------------------


async def test_openai_format_streams_the_mock_answer_with_usage(
        litellm_proxy: LiteLLMProxy) -> None:
    result = await stream(litellm_proxy, litellm_proxy.openai_model)
    assert result.status == "completed", result.failure
    assert result.text == OPENAI_MOCK_TEXT
    assert result.finish_reason == "stop"
    # LiteLLM sends usage only because the client asks (stream_options.include_usage).
    assert result.usage is not None and result.usage.completion_tokens > 0
    assert result.usage.total_tokens == result.usage.prompt_tokens + result.usage.completion_tokens
    assert result.metrics.ttft_s is not None and result.metrics.ttft_s > 0
    assert result.metrics.chunks > 1


async def test_anthropic_style_model_over_the_openai_format(
        litellm_proxy: LiteLLMProxy) -> None:
    result = await stream(litellm_proxy, litellm_proxy.anthropic_model)
    assert result.status == "completed", result.failure
    assert result.text == ANTHROPIC_MOCK_TEXT
    assert result.usage is not None and result.usage.completion_tokens > 0


async def test_paced_stream_has_ttft_and_tokens_per_second(litellm_proxy: LiteLLMProxy) -> None:
    # Mock answers arrive in one burst; a model paced like a real one (the local
    # gateway behind LiteLLM's OpenAI provider) gives a rate to measure.
    result = await stream(litellm_proxy, litellm_proxy.paced_model, max_tokens=40)
    assert result.status == "completed", result.failure
    assert result.text
    assert result.usage is not None and result.usage.completion_tokens > 1
    metrics = result.metrics
    assert metrics.ttft_s is not None and metrics.e2e_s is not None
    assert 0 < metrics.ttft_s <= metrics.e2e_s
    assert metrics.output_tokens_per_s is not None and metrics.output_tokens_per_s > 0


async def test_final_chunk_carries_usage_and_litellm_cost(litellm_proxy: LiteLLMProxy) -> None:
    """What LiteLLM itself sends, byte for byte: the frames the cost display reads."""
    body = {"model": litellm_proxy.openai_model, "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}]}
    frames: list[dict[str, object]] = []
    async with httpx.AsyncClient(timeout=20) as http, http.stream(
            "POST", litellm_proxy.base_url + "/v1/chat/completions", json=body,
            headers={"Authorization": f"Bearer {litellm_proxy.master_key}"}) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                frames.append(json.loads(line[len("data: "):]))
    with_usage = [f for f in frames if f.get("usage")]
    assert len(with_usage) == 1 and with_usage[0] is frames[-1]
    usage = with_usage[0]["usage"]
    assert isinstance(usage, dict)
    assert isinstance(usage.get("cost"), float) and usage["cost"] > 0


# -- the Anthropic format on LiteLLM's /v1/messages -----------------------------------


async def test_anthropic_format_on_litellm_messages_route(litellm_proxy: LiteLLMProxy) -> None:
    # LiteLLM serves the Messages API at /v1/messages, not the Anoman gateway's
    # /anthropic/v1/messages; the request names the path.
    result = await stream(litellm_proxy, litellm_proxy.messages_model, endpoint="anthropic",
                          path="/v1/messages", max_tokens=40)
    assert result.status == "completed", result.failure and describe_failure(result.failure)
    assert result.text
    assert result.finish_reason in ("end_turn", "max_tokens")
    assert result.usage is not None and result.usage.completion_tokens > 0
    assert result.metrics.ttft_s is not None


async def test_anthropic_default_path_401_shows_litellm_own_words(
        litellm_proxy: LiteLLMProxy) -> None:
    # LiteLLM answers /anthropic/v1/messages (its Anthropic pass-through) with a 401
    # about its own upstream credentials, in a FastAPI {"detail": ...} body.
    result = await stream(litellm_proxy, litellm_proxy.messages_model, endpoint="anthropic",
                          max_tokens=40)
    assert result.status == "failed"
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 401
    assert "No Anthropic credential is configured" in badge(result)


@pytest.mark.parametrize(("model", "status", "said"), [
    ("mock-rate-limited", 429, "this is a mock rate limit error"),
    ("no-such-model", 400, "Invalid model name passed in model=no-such-model"),
])
async def test_anthropic_format_errors_on_messages_route(
        litellm_proxy: LiteLLMProxy, model: str, status: int, said: str) -> None:
    # On /v1/messages LiteLLM answers in the Anthropic error shape
    # ({"type": "error", "error": {...}}).
    result = await stream(litellm_proxy, model, endpoint="anthropic", path="/v1/messages",
                          max_tokens=40)
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == status, badge(result)
    assert said in badge(result)


# -- errors, in LiteLLM's words --------------------------------------------------------


@pytest.mark.parametrize("key", ["sk-not-the-master-key-0000", "wrong-key-0000"])
async def test_key_other_than_master_key_carries_litellm_message(
        litellm_proxy: LiteLLMProxy, key: str) -> None:
    # Without a database LiteLLM knows no key but its master key, and says so with a
    # 400 before it looks at the key's shape: no 401 for a wrong key here.
    result = await stream(litellm_proxy, litellm_proxy.openai_model, api_key=key)
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 400
    line = badge(result)
    assert "No connected db" in line, line
    assert key not in line


async def test_missing_key_plain_text_500(litellm_proxy: LiteLLMProxy) -> None:
    # LiteLLM's handler for "No api key passed in." needs the database client, which
    # `litellm[proxy]` does not install: the answer is a text/plain 500.
    result = await stream(litellm_proxy, litellm_proxy.openai_model, api_key="")
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 500
    assert "Internal Server Error" in badge(result)


async def test_unknown_model_carries_litellm_message(litellm_proxy: LiteLLMProxy) -> None:
    result = await stream(litellm_proxy, "no-such-model")
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 400
    assert "Invalid model name passed in model=no-such-model" in badge(result)


async def test_unknown_path_404_names_the_path_not_the_model(
        litellm_proxy: LiteLLMProxy) -> None:
    # The playground route is the Anoman gateway's own; LiteLLM has none.
    result = await stream(litellm_proxy, litellm_proxy.openai_model, endpoint="playground")
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 404
    line = badge(result)
    # LiteLLM's own words are FastAPI's generic {"detail": "Not Found"}: the badge must
    # say what was not found, the route, and not send the user after the model name.
    assert "not found" in line.lower(), line
    assert "/anoman/v1/playground/run" in line, line
    assert "MODEL NOT FOUND" not in line and "check the model name" not in line, line


async def test_mock_rate_limit_429_carries_litellm_message(litellm_proxy: LiteLLMProxy) -> None:
    result = await stream(litellm_proxy, litellm_proxy.rate_limited_model)
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 429
    assert result.failure.retry_after_s is None  # LiteLLM sends no Retry-After
    line = badge(result)
    assert "this is a mock rate limit error" in line, line
    assert "retry in later" not in line


# -- `anoman-tui compare` -------------------------------------------------------------


async def run_compare(proxy: LiteLLMProxy, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = dict(os.environ)  # clean_env: no ANOMAN_* of ours
    env["ANOMAN_CONFIG"] = os.devnull  # never the developer's own config or history
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", "compare", "Say hello in one sentence.",
        "--base-url", proxy.base_url, "--api-key", proxy.master_key, "--no-history", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_compare_json_against_litellm(litellm_proxy: LiteLLMProxy, tmp_path: Path) -> None:
    code, out, err = await run_compare(
        litellm_proxy, tmp_path, "-m", litellm_proxy.openai_model,
        "-m", litellm_proxy.anthropic_model, "-m", litellm_proxy.rate_limited_model, "--json",
    )
    assert code == 1, err  # one pane failed
    doc = json.loads(out)
    first, second, third = doc["panels"]
    assert (first["status"], first["text"]) == ("completed", OPENAI_MOCK_TEXT)
    assert (second["status"], second["text"]) == ("completed", ANTHROPIC_MOCK_TEXT)
    for pane in (first, second):
        assert pane["usage"]["completion_tokens"] > 0
        assert pane["metrics"]["ttft_s"] is not None
    assert third["status"] == "failed"
    assert third["failure"]["kind"] == "http_error" and third["failure"]["status"] == 429
    assert "this is a mock rate limit error" in third["failure"]["message"]

