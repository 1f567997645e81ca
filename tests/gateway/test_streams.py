"""The three generation endpoints, streaming and not, frame by frame.

What they must send: docs/wire-contract.md §1 and §2.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest

from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.gateway.generation import GenerationRun
from anoman_tui.gateway.tokenizer import count_prompt_tokens
from tests.gateway.helpers import auth, chat_body, post_stream, prompt, wait_row
from tests.helpers import loopback_client


def _check_anoman(block: dict[str, Any], model: str, prompt_tokens: int,
                  completion_tokens: int) -> None:
    m = CATALOGUE[model]
    assert set(block["guardrails"]) == {"injection", "pii", "moderation", "policy"}
    for verdict in block["guardrails"].values():
        assert verdict["status"] in ("pass", "flag", "block")
        assert 0.0 <= verdict["score"] <= 1.0
    assert block["routing"] == {"mode": "realtime", "region": "id"}
    assert block["cache"] == {"hit": False}
    assert isinstance(block["cost_usd"], str)
    expected_cost = (Decimal(prompt_tokens) * m.input_usd_per_mtok
                     + Decimal(completion_tokens) * m.output_usd_per_mtok) / Decimal(10**6)
    assert Decimal(block["cost_usd"]) == expected_cost.quantize(Decimal("0.000001"))
    assert block["weighted_tokens"] == (prompt_tokens + completion_tokens) * m.weight


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/anoman/v1/playground/run"])
def test_openai_stream_frames(gateway: EmbeddedGateway, path: str) -> None:
    text = prompt("Tell me a short story about a lighthouse")
    body = chat_body("claude-sonnet-4-6", text, compare_id="cmp-1", panel=2)
    response, frames = post_stream(gateway, path, body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert all(f.event is None for f in frames)
    assert frames[-1].data == "[DONE]"
    chunks = [f.json() for f in frames[:-1]]
    first, *middle, last, anoman = chunks
    assert first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all(c["id"] == first["id"] for c in chunks[:-1])
    deltas = [c["choices"][0]["delta"]["content"] for c in middle]
    assert all(d for d in deltas) and all(c["choices"][0]["finish_reason"] is None
                                          for c in middle)
    assert last["choices"][0]["finish_reason"] == "stop"
    assert last["choices"][0]["delta"] == {}
    usage = last["usage"]
    prompt_tokens = count_prompt_tokens([("user", text)])
    assert usage == {"prompt_tokens": prompt_tokens, "completion_tokens": len(deltas),
                     "total_tokens": prompt_tokens + len(deltas)}
    assert "choices" not in anoman and set(anoman) == {"_anoman"}
    block = anoman["_anoman"]
    _check_anoman(block, "claude-sonnet-4-6", prompt_tokens, len(deltas))
    answer = "".join(deltas)
    assert "lighthouse" in answer.lower()
    if path.endswith("playground/run"):
        assert block["playground"] == {"compare_id": "cmp-1", "panel": 2}
    else:
        assert "playground" not in block
    row = wait_row(gateway, response.headers["x-request-id"])
    assert row["status"] == "completed" and row["routing_mode"] == "realtime"
    assert row["completion_tokens"] == len(deltas) and row["prompt_tokens"] == prompt_tokens
    assert row["cost_usd"] == block["cost_usd"]
    assert row["weighted_tokens"] == block["weighted_tokens"]
    assert row["endpoint"] == path
    assert row["started_at"] <= row["first_token_at"] <= row["ended_at"]


def test_openai_thinking_model_streams_reasoning_first(gateway: EmbeddedGateway) -> None:
    _, frames = post_stream(gateway, "/v1/chat/completions",
                            chat_body("deepseek-r1", prompt("Why do leaves change colour?")))
    chunks = [f.json() for f in frames[1:-3]]
    kinds = ["reasoning" if "reasoning_content" in c["choices"][0]["delta"] else "text"
             for c in chunks]
    assert kinds[0] == "reasoning" and kinds[-1] == "text"
    assert kinds == sorted(kinds)  # all reasoning, then all text
    usage = frames[-3].json()["usage"]
    assert usage["completion_tokens"] == len(chunks)
    assert usage["completion_tokens_details"]["reasoning_tokens"] == kinds.count("reasoning")


def test_anthropic_stream_events(gateway: EmbeddedGateway) -> None:
    text = prompt("Summarize the history of the printing press")
    body = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True,
            "system": "You are concise.", "messages": [{"role": "user", "content": text}]}
    response, frames = post_stream(gateway, "/anthropic/v1/messages", body,
                                   headers={"Authorization": "", **auth(gateway, "x-api-key")})
    assert response.status_code == 200
    events = [f.event for f in frames]
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert events[-2] == "anoman" and events[-3] == "message_delta"
    assert "[DONE]" not in response.text
    for f in frames:
        assert f.json()["type"] == f.event
    start = frames[0].json()["message"]
    prompt_tokens = count_prompt_tokens([("system", "You are concise."), ("user", text)])
    assert start["usage"]["input_tokens"] == prompt_tokens
    deltas = [f.json()["delta"]["text"] for f in frames if f.event == "content_block_delta"]
    final = frames[-3].json()
    assert final["delta"]["stop_reason"] == "end_turn"
    assert final["usage"] == {"input_tokens": prompt_tokens, "output_tokens": len(deltas)}
    assert events.count("content_block_start") == events.count("content_block_stop") == 1
    _check_anoman(frames[-2].json()["_anoman"], "claude-sonnet-4-6", prompt_tokens, len(deltas))
    assert "printing" in "".join(deltas).lower()


def test_anthropic_thinking_block(gateway: EmbeddedGateway) -> None:
    body = {"model": "claude-opus-4-6", "max_tokens": 2048, "stream": True,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": prompt("Plan a migration from MySQL to Postgres")}]}]}
    _, frames = post_stream(gateway, "/anthropic/v1/messages", body)
    starts = [f.json() for f in frames if f.event == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["thinking", "text"]
    delta_types = [f.json()["delta"]["type"] for f in frames if f.event == "content_block_delta"]
    assert delta_types[0] == "thinking_delta" and "signature_delta" in delta_types
    assert delta_types[-1] == "text_delta"
    counted = sum(t in ("thinking_delta", "text_delta") for t in delta_types)
    assert frames[-3].json()["usage"]["output_tokens"] == counted


def test_max_tokens_truncates_with_length(gateway: EmbeddedGateway) -> None:
    _, frames = post_stream(gateway, "/v1/chat/completions",
                            chat_body("gpt-5-mini", max_tokens=7))
    assert frames[-3].json()["choices"][0]["finish_reason"] == "length"
    assert frames[-3].json()["usage"]["completion_tokens"] == 7
    body = {"model": "gpt-5-mini", "max_tokens": 5, "stream": True,
            "messages": [{"role": "user", "content": prompt()}]}
    _, frames = post_stream(gateway, "/anthropic/v1/messages", body)
    assert frames[-3].json()["delta"]["stop_reason"] == "max_tokens"


def test_same_seed_same_answer_other_seed_other_answer(gateway: EmbeddedGateway) -> None:
    text = prompt("Explain vector clocks")
    nocache = {"Cache-Control": "no-cache"}

    def answer(seed: int) -> str:
        _, frames = post_stream(gateway, "/v1/chat/completions",
                                chat_body("claude-sonnet-4-6", text, seed=seed), nocache)
        return "".join(f.json()["choices"][0]["delta"].get("content", "")
                       for f in frames[:-3])

    assert answer(1) == answer(1)
    assert answer(1) != answer(2)


def test_openai_non_streaming(gateway: EmbeddedGateway) -> None:
    text = prompt("What is a B-tree?")
    with loopback_client(gateway.base_url, headers=auth(gateway)) as client:
        response = client.post("/v1/chat/completions",
                               json=chat_body("deepseek-r1", text, stream=False))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["object"] == "chat.completion"
    message = body["choices"][0]["message"]
    assert message["role"] == "assistant" and "b-tree" in message["content"].lower()
    assert message["reasoning_content"]
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    _check_anoman(body["_anoman"], "deepseek-r1", usage["prompt_tokens"],
                  usage["completion_tokens"])
    row = wait_row(gateway, response.headers["x-request-id"])
    assert row["status"] == "completed" and row["stream"] is False


def test_playground_non_streaming_echoes_compare_id(gateway: EmbeddedGateway) -> None:
    with loopback_client(gateway.base_url, headers=auth(gateway)) as client:
        response = client.post("/anoman/v1/playground/run", json=chat_body(
            "anoman-lite", stream=False, compare_id="c-9", panel=0))
    assert response.json()["_anoman"]["playground"] == {"compare_id": "c-9", "panel": 0}
    row = wait_row(gateway, response.headers["x-request-id"])
    assert (row["compare_id"], row["panel"]) == ("c-9", 0)


def test_anthropic_non_streaming(gateway: EmbeddedGateway) -> None:
    body = {"model": "claude-opus-4-6", "max_tokens": 4096,
            "messages": [{"role": "user", "content": prompt("Explain CRDTs")}]}
    with loopback_client(gateway.base_url, headers=auth(gateway, "x-api-key")) as client:
        response = client.post("/anthropic/v1/messages", json=body)
    assert response.status_code == 200
    message = response.json()
    assert message["type"] == "message" and message["stop_reason"] == "end_turn"
    assert [b["type"] for b in message["content"]] == ["thinking", "text"]
    assert "crdts" in message["content"][1]["text"].lower()
    assert message["_anoman"]["cache"] == {"hit": False}


def test_models_endpoint_lists_prices_and_weights(gateway: EmbeddedGateway) -> None:
    with loopback_client(gateway.base_url) as client:
        assert client.get("/v1/models").status_code == 401
        listing = client.get("/v1/models", headers=auth(gateway)).json()
    assert listing["object"] == "list"
    by_id = {m["id"]: m for m in listing["data"]}
    assert set(by_id) == set(CATALOGUE)
    sonnet = by_id["claude-sonnet-4-6"]["anoman"]
    assert sonnet["weight"] == 4
    assert sonnet["pricing"] == {"input_usd_per_mtok": "3.00", "output_usd_per_mtok": "15.00"}


def test_pacing_follows_ttft_and_rate(gateway: EmbeddedGateway) -> None:
    sent = time.monotonic()
    arrivals: list[float] = []
    headers = {**auth(gateway), "X-Anoman-Simulate": "ttft=0.3,rate=100,tokens=30"}
    with loopback_client(gateway.base_url, timeout=10) as client, client.stream(
            "POST", "/v1/chat/completions", json=chat_body(), headers=headers) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"content":"' in line and '"role"' not in line:
                arrivals.append(time.monotonic())
    assert len(arrivals) == 30
    ttft = arrivals[0] - sent
    assert 0.28 <= ttft <= 0.8
    rate_span = arrivals[-1] - arrivals[0]  # 29 intervals of 10 ms
    assert 0.25 <= rate_span <= 0.7


def test_frames_are_written_as_they_are_due(gateway: EmbeddedGateway) -> None:
    # Each token arrives in its own read: nothing is buffered up and sent in bulk.
    headers = {**auth(gateway), "X-Anoman-Simulate": "ttft=0,rate=50,tokens=10"}
    reads = 0
    with loopback_client(gateway.base_url) as client, client.stream(
            "POST", "/v1/chat/completions", json=chat_body(), headers=headers) as response:
        for raw in response.iter_raw():
            reads += 1
            assert raw.count(b'"content":"') <= 2
    assert reads >= 10


def test_tokens_already_due_go_out_in_one_write(gateway: EmbeddedGateway,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # At 4,000 tok/s tokens fall due faster than the loop wakes: those due by a wake-up
    # are written together, each still its own event, in order and none lost.
    writes: list[bytes] = []
    original = GenerationRun.stream

    async def stream(self: GenerationRun, send: Any) -> None:
        async def counted(message: Any) -> None:
            if message["type"] == "http.response.body":
                writes.append(message["body"])
            await send(message)

        await original(self, counted)

    monkeypatch.setattr(GenerationRun, "stream", stream)
    headers = {**auth(gateway), "X-Anoman-Simulate": "ttft=0,rate=4000,tokens=400"}
    texts: list[str] = []
    with loopback_client(gateway.base_url, timeout=10) as client, client.stream(
            "POST", "/v1/chat/completions", json=chat_body(), headers=headers) as response:
        for line in response.iter_lines():
            if line.startswith("data: {") and '"choices":[{' in line:
                delta = json.loads(line[6:])["choices"][0]["delta"]
                if delta.get("content"):
                    texts.append(delta["content"])
    assert len(texts) == 400
    body = b"".join(writes)
    assert body.count(b"\n\ndata: ") + 1 >= 400  # one event per token
    assert len(writes) < 200, f"{len(writes)} writes for 400 tokens"


def test_every_frame_is_valid_json_for_every_model(gateway: EmbeddedGateway) -> None:
    for name in CATALOGUE:
        _, frames = post_stream(gateway, "/v1/chat/completions", chat_body(name),
                                {"X-Anoman-Simulate": "ttft=0,rate=100000"})
        for f in frames[:-1]:
            json.loads(f.data)
