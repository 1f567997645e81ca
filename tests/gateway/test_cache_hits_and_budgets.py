"""The local gateway as real clients see it: a cache hit on the Anthropic route in the
Messages shape (read by the `anthropic` SDK and by the app's own stream client), the cache
turned off for a whole server, and thinking tokens counted within `max_tokens`
(docs/wire-contract.md §6, §9.6)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.streaming import ChatTurn, StreamClient, StreamDone, StreamRequest
from tests.gateway.helpers import (
    auth,
    chat_body,
    fast_config,
    parse_sse,
    post_stream,
    prompt,
    start_serve,
    wait_row,
)
from tests.helpers import LocalGateways, loopback_client

if TYPE_CHECKING:  # the SDKs take seconds to import: only the tests using them do
    import anthropic

MESSAGE_KEYS = {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence",
                "usage", "_anoman"}


@pytest.fixture
def ant(gateway: EmbeddedGateway) -> anthropic.Anthropic:
    import anthropic

    return anthropic.Anthropic(base_url=f"{gateway.base_url}/anthropic",
                               api_key=gateway.api_key, max_retries=0)


def test_anthropic_sdk_reads_a_cache_hit_as_a_message(ant: anthropic.Anthropic,
                                                      gateway: EmbeddedGateway) -> None:
    request: dict[str, Any] = {
        "model": "claude-opus-4-6", "max_tokens": 3000,
        "messages": [{"role": "user", "content": prompt("Explain binary search")}]}
    with ant.messages.stream(**request) as stream:
        for _ in stream:
            pass
        first = stream.get_final_message()
    first_id = first.id.removeprefix("msg_")
    assert wait_row(gateway, first_id)["status"] == "completed"

    # A non-streaming read through the SDK: a complete message, marked as a hit.
    hit = ant.messages.create(**request)
    assert hit.type == "message" and hit.role == "assistant" and hit.model == "claude-opus-4-6"
    assert [b.type for b in hit.content] == ["thinking", "text"]
    assert hit.content[1].text == first.content[1].text  # type: ignore[union-attr]
    assert hit.content[0].thinking == first.content[0].thinking  # type: ignore[union-attr]
    assert hit.stop_reason == "end_turn"
    assert (hit.usage.input_tokens, hit.usage.output_tokens) == (
        first.usage.input_tokens, first.usage.output_tokens)
    anoman = (hit.model_extra or {})["_anoman"]
    assert anoman["cache"] == {"hit": True}
    assert anoman["cost_usd"] == "0.000000" and anoman["weighted_tokens"] == 0

    # The raw JSON: the Messages object and the Anoman block, nothing of chat.completion.
    raw = ant.messages.with_raw_response.create(**request)
    assert raw.headers["content-type"] == "application/json"
    body = raw.http_response.json()
    assert set(body) == MESSAGE_KEYS
    assert body["id"] == f"msg_{raw.headers['x-request-id']}"
    assert body["usage"] == {"input_tokens": first.usage.input_tokens,
                             "output_tokens": first.usage.output_tokens}
    first_text = first.content[1].text  # type: ignore[union-attr]
    assert body["content"][1] == {"type": "text", "text": first_text}
    row = wait_row(gateway, raw.headers["x-request-id"])
    assert (row["status"], row["endpoint"]) == ("cache_hit", "/anthropic/v1/messages")

    # A streaming request is answered with the same JSON (docs/wire-contract.md §6).
    with loopback_client(gateway.base_url, timeout=30) as client:
        streamed = client.post("/anthropic/v1/messages", json={**request, "stream": True},
                               headers=auth(gateway, "x-api-key"))
    assert streamed.headers["content-type"] == "application/json"
    assert set(streamed.json()) == MESSAGE_KEYS
    assert [b["type"] for b in streamed.json()["content"]] == ["thinking", "text"]
    assert streamed.json()["content"][1] == body["content"][1]
    assert streamed.json()["content"][0]["thinking"] == body["content"][0]["thinking"]


def test_stream_client_reads_an_anthropic_hit_as_a_complete_answer(
        gateway: EmbeddedGateway) -> None:
    request = StreamRequest(
        base_url=gateway.base_url, api_key=gateway.api_key, endpoint="anthropic",
        model="deepseek-r1", max_tokens=4000,
        messages=(ChatTurn(role="user", content=prompt("Why is the sky blue?")),))

    async def run() -> list[Any]:
        results = []
        async with StreamClient() as client:
            for _ in range(2):
                events = [event async for event in client.stream(request)]
                done = events[-1]
                assert isinstance(done, StreamDone)
                results.append(done.result)
                assert done.result.request_id is not None
                wait_row(gateway, done.result.request_id)
        return results

    first, hit = asyncio.run(run())
    assert not first.cache_hit and first.status == "completed"
    assert hit.cache_hit and hit.status == "completed" and hit.committed
    assert hit.failure is None
    assert (hit.text, hit.reasoning) == (first.text, first.reasoning)
    assert hit.text and hit.reasoning
    assert hit.finish_reason == first.finish_reason == "end_turn"
    assert hit.usage == first.usage
    assert hit.anoman is not None and hit.anoman.cache_hit


def _hits_nothing(gw: EmbeddedGateway, path: str = "/v1/chat/completions") -> None:
    """The same request twice streams twice: no hit, and nothing was cached."""
    body = chat_body("anoman-lite", prompt("Explain DNS caching"))
    for _ in range(2):
        response, frames = post_stream(gw, path, body)
        assert response.headers["content-type"].startswith("text/event-stream")
        assert frames[-1].data == "[DONE]"
        row = wait_row(gw, response.headers["x-request-id"])
        assert row["status"] == "completed"
    assert len(gw.state.cache) == 0


def test_cache_enabled_false_turns_the_cache_off(make_local_gateway: LocalGateways,
                                                 tmp_path: Path) -> None:
    config_file = tmp_path / "gw.toml"
    config_file.write_text("cache_enabled = false\ntime_scale = 0.02\n")
    assert GatewayConfig.load(config_file).cache_enabled is False
    _hits_nothing(make_local_gateway(fast_config(cache_enabled=False)))
    # The same setup with the cache on answers the second request from it.
    gw = make_local_gateway(fast_config())
    body = chat_body("anoman-lite", prompt("Explain DNS caching"))
    response, _ = post_stream(gw, "/v1/chat/completions", body)
    wait_row(gw, response.headers["x-request-id"])
    with loopback_client(gw.base_url) as client:
        again = client.post("/v1/chat/completions", json=body, headers=auth(gw))
    assert again.headers["content-type"] == "application/json"


def test_serve_no_cache_flag(tmp_path: Path) -> None:
    config_file = tmp_path / "gw.toml"
    config_file.write_text("time_scale = 0.02\n")
    proc, url, _ = start_serve("--port", "0", "--api-key", "anm-sk-nocache-1234",
                                "--config", str(config_file), "--db", str(tmp_path / "s.db"),
                                "--no-cache", cli=True)
    try:
        body = chat_body("anoman-lite", prompt("Explain DNS caching"))
        with loopback_client(url, timeout=10,
                          headers={"x-api-key": "anm-sk-nocache-1234"}) as client:
            kinds = []
            for _ in range(2):
                response = client.post("/v1/chat/completions", json=body)
                assert response.status_code == 200
                kinds.append(response.headers["content-type"].split(";")[0])
                assert parse_sse(response.content)[-1].data == "[DONE]"
        assert kinds == ["text/event-stream", "text/event-stream"]
        proc.terminate()
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        proc.communicate()


# -- thinking within max_tokens ------------------------------------------------------------

FAST = {"X-Anoman-Simulate": "ttft=0,rate=200000", "Cache-Control": "no-cache"}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/anthropic/v1/messages",
         "playground": "/anoman/v1/playground/run"}


def _post(gw: EmbeddedGateway, wire: str, model: str, question: str, max_tokens: int | None,
          stream: bool) -> tuple[httpx.Response, dict[str, Any]]:
    """One request; returns the response and what it said: reasoning and text (strings and
    token counts, as streamed or as reported), finish, completion tokens, Anoman block."""
    # Temperature 0: every budget cuts the same answer.
    body: dict[str, Any] = {"model": model, "stream": stream, "temperature": 0,
                            "messages": [{"role": "user", "content": question}]}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    with loopback_client(gw.base_url, timeout=30) as client:
        response = client.post(PATHS[wire], json=body, headers={**auth(gw), **FAST})
    assert response.status_code == 200, response.text
    out: dict[str, Any] = {}
    if not stream:
        payload = response.json()
        out["anoman"] = payload["_anoman"]
        if wire == "anthropic":
            blocks = payload["content"]
            out["reasoning"] = "".join(b.get("thinking", "") for b in blocks)
            out["text"] = "".join(b.get("text", "") for b in blocks)
            out["finish"] = payload["stop_reason"]
            out["completion"] = payload["usage"]["output_tokens"]
            out["prompt"] = payload["usage"]["input_tokens"]
        else:
            message = payload["choices"][0]["message"]
            out["reasoning"] = message.get("reasoning_content", "")
            out["text"] = message["content"]
            out["finish"] = payload["choices"][0]["finish_reason"]
            out["completion"] = payload["usage"]["completion_tokens"]
            out["prompt"] = payload["usage"]["prompt_tokens"]
            out["reasoning_count"] = payload["usage"].get(
                "completion_tokens_details", {}).get("reasoning_tokens", 0)
        return response, out
    frames = parse_sse(response.content)
    reasoning: list[str] = []
    text: list[str] = []
    if wire == "anthropic":
        for frame in frames:
            data = frame.json()
            if data["type"] == "content_block_delta":
                delta = data["delta"]
                if delta["type"] == "thinking_delta":
                    reasoning.append(delta["thinking"])
                elif delta["type"] == "text_delta":
                    text.append(delta["text"])
            elif data["type"] == "message_start":
                out["prompt"] = data["message"]["usage"]["input_tokens"]
            elif data["type"] == "message_delta":
                out["finish"] = data["delta"]["stop_reason"]
                out["completion"] = data["usage"]["output_tokens"]
            elif data["type"] == "anoman":
                out["anoman"] = data["_anoman"]
    else:
        for frame in frames[1:]:
            if frame.data == "[DONE]":
                continue
            data = frame.json()
            if "_anoman" in data:
                out["anoman"] = data["_anoman"]
                continue
            delta = data["choices"][0]["delta"]
            if "reasoning_content" in delta:
                reasoning.append(delta["reasoning_content"])
            if delta.get("content"):
                text.append(delta["content"])
            if data["choices"][0]["finish_reason"]:
                out["finish"] = data["choices"][0]["finish_reason"]
                usage = data["usage"]
                out["completion"] = usage["completion_tokens"]
                out["prompt"] = usage["prompt_tokens"]
                out["reasoning_count"] = usage.get(
                    "completion_tokens_details", {}).get("reasoning_tokens", 0)
    out.update(reasoning="".join(reasoning), text="".join(text),
               streamed=(len(reasoning), len(text)))
    return response, out


@pytest.mark.parametrize("model", ["deepseek-r1", "claude-opus-4-6"])
@pytest.mark.parametrize("wire", ["openai", "anthropic", "playground"])
def test_thinking_counts_within_max_tokens(gateway: EmbeddedGateway, wire: str,
                                           model: str) -> None:
    text = prompt("Explain how a hash map handles collisions")
    # The unbounded answer, streamed: how many reasoning and text tokens it has.
    _, full = _post(gateway, "openai", model, text, None, True)
    n_reasoning, n_text = full["streamed"]
    assert n_reasoning > 20 and n_text > 20
    assert full["completion"] == n_reasoning + n_text and full["finish"] == "stop"
    length = "max_tokens" if wire == "anthropic" else "length"
    stop = "end_turn" if wire == "anthropic" else "stop"
    sim = CATALOGUE[model]

    cases = [
        (n_reasoning + n_text // 2, n_reasoning, n_text // 2, length),  # out during the answer
        (n_reasoning // 2, n_reasoning // 2, 0, length),  # out during the thinking
        (n_reasoning + n_text, n_reasoning, n_text, stop),  # exactly enough
    ]
    for budget, want_reasoning, want_text, finish in cases:
        for stream in (True, False):
            response, got = _post(gateway, wire, model, text, budget, stream)
            where = f"{wire} {model} max_tokens={budget} stream={stream}"
            assert got["finish"] == finish, where
            assert got["completion"] == want_reasoning + want_text <= budget, where
            assert full["reasoning"].startswith(got["reasoning"]), where
            assert full["text"].startswith(got["text"]), where
            assert bool(got["text"]) == (want_text > 0), where
            if stream:
                assert got["streamed"] == (want_reasoning, want_text), where
            if "reasoning_count" in got:
                assert got["reasoning_count"] == want_reasoning, where
            prompt_tokens = got["prompt"]
            anoman = got["anoman"]
            assert anoman["cost_usd"] == str(sim.cost_usd(prompt_tokens, got["completion"]))
            assert anoman["weighted_tokens"] == (prompt_tokens + got["completion"]) * sim.weight
            row = wait_row(gateway, response.headers["x-request-id"])
            assert (row["completion_tokens"], row["cost_usd"], row["weighted_tokens"]) == (
                got["completion"], anoman["cost_usd"], anoman["weighted_tokens"]), where


def test_sdk_streams_skip_the_cache_with_the_no_cache_header(ant: anthropic.Anthropic,
                                                             gateway: EmbeddedGateway) -> None:
    """What the README tells SDK users: a hit answers a streaming call with JSON, which the
    SDKs' stream readers yield nothing from; `Cache-Control: no-cache` keeps it a stream."""
    import openai

    oai = openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=gateway.api_key,
                        max_retries=0)
    # At temperature 0 a fresh stream has the cached answer's text, to compare with.
    msgs: list[Any] = [{"role": "user", "content": prompt("Explain DNS caching")}]
    create = oai.chat.completions.create
    first = list(create(model="anoman-lite", messages=msgs, stream=True, temperature=0))
    assert wait_row(gateway, first[0].id.removeprefix("chatcmpl-"))["status"] == "completed"
    assert list(create(model="anoman-lite", messages=msgs, stream=True,
                       temperature=0)) == []  # a hit: JSON, no chunks
    again = list(create(model="anoman-lite", messages=msgs, stream=True, temperature=0,
                        extra_headers={"Cache-Control": "no-cache"}))
    assert len(again) == len(first)

    fixed: dict[str, Any] = {"model": "anoman-lite", "max_tokens": 1000, "messages": msgs,
                             "extra_body": {"temperature": 0}}
    with ant.messages.stream(**fixed) as stream:
        text = "".join(stream.text_stream)
    rid = stream.get_final_message().id.removeprefix("msg_")
    assert text and wait_row(gateway, rid)["status"] == "completed"
    with ant.messages.stream(**fixed) as stream:
        assert "".join(stream.text_stream) == ""  # a hit
    with ant.messages.stream(**fixed, extra_headers={"Cache-Control": "no-cache"}) as stream:
        assert "".join(stream.text_stream) == text
