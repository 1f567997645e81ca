"""Fault injection (`X-Anoman-Simulate` and per-model config) and its ledger rows."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from anoman_tui.gateway.config import ModelDefaults
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.gateway.helpers import auth, chat_body, fast_config, parse_sse, post_stream, wait_row
from tests.helpers import LocalGateways, loopback_client

FAST = "ttft=0,rate=2000"


def _simulate(spec: str) -> dict[str, str]:
    return {"X-Anoman-Simulate": f"{FAST},{spec}"}


def test_interrupt_after_openai(gateway: EmbeddedGateway) -> None:
    response, frames = post_stream(gateway, "/v1/chat/completions", chat_body(),
                                   _simulate("interrupt-after=5"))
    assert response.status_code == 200
    assert frames[-1].data == "[DONE]"
    error = frames[-2].json()["error"]
    assert error == {"type": "provider_error", "code": "stream_interrupted",
                     "message": "upstream stream interrupted",
                     "_anoman": {"failure_class": "upstream_error", "completion_tokens": 5}}
    content = [f for f in frames[1:-2] if "choices" in f.json()]
    assert len(content) == 5
    assert not any("_anoman" in f.json() and "error" not in f.json() for f in frames[:-1])
    row = wait_row(gateway, response.headers["x-request-id"])
    assert (row["status"], row["failure_class"], row["completion_tokens"]) == (
        "failed", "upstream_error", 5)


def test_interrupt_after_anthropic(gateway: EmbeddedGateway) -> None:
    body = {"model": "anoman-lite", "max_tokens": 100, "stream": True,
            "messages": [{"role": "user", "content": "Explain the CAP theorem"}]}
    _, frames = post_stream(gateway, "/anthropic/v1/messages", body,
                            _simulate("interrupt-after=3"))
    assert frames[-1].event == "error"
    payload = frames[-1].json()
    assert payload["type"] == "error"
    assert payload["error"]["_anoman"]["completion_tokens"] == 3
    assert "message_stop" not in [f.event for f in frames]


def test_drop_after_closes_without_terminator(gateway: EmbeddedGateway) -> None:
    received = b""
    with loopback_client(gateway.base_url) as client, client.stream(
            "POST", "/v1/chat/completions", json=chat_body(),
            headers={**auth(gateway), **_simulate("drop-after=4")}) as response:
        rid = response.headers["x-request-id"]
        with pytest.raises(httpx.RemoteProtocolError):
            for chunk in response.iter_raw():
                received += chunk
    frames = parse_sse(received)
    assert len(frames) == 5  # role chunk + 4 tokens
    assert b"[DONE]" not in received and b"_anoman" not in received
    row = wait_row(gateway, rid)
    assert (row["status"], row["failure_class"], row["completion_tokens"]) == (
        "failed", "dropped", 4)


def test_stall_after_keeps_the_connection_open(gateway: EmbeddedGateway) -> None:
    sock = socket.create_connection(("127.0.0.1", gateway.port))
    body = json.dumps(chat_body()).encode()
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {gateway.api_key}\r\nX-Anoman-Simulate: {FAST},"
          f"stall-after=3\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    sock.settimeout(0.5)
    data = b""
    # Until the third token's frame is complete (its chunk ends the read).
    while data.count(b'{"content":"') < 3 or not data.endswith(b"\n\n\r\n"):
        data += sock.recv(65536)
    with pytest.raises(TimeoutError):
        data += sock.recv(65536)  # nothing more is sent, and the connection stays open
    rid = data.split(b"x-request-id: ")[1].split(b"\r\n")[0].decode()
    assert gateway.state.ledger.get(rid) is None  # still in flight
    closed_at = time.time()
    sock.close()
    row = wait_row(gateway, rid)
    assert (row["status"], row["routing_mode"], row["completion_tokens"]) == (
        "cancelled", "streaming_cancelled", 3)
    assert row["ended_at"] - closed_at < 0.05


def test_malformed_after_sends_one_invalid_frame(gateway: EmbeddedGateway) -> None:
    response, frames = post_stream(gateway, "/v1/chat/completions", chat_body(),
                                   _simulate("malformed-after=2,tokens=6"))
    invalid = []
    for f in frames:
        if f.data == "[DONE]":
            continue
        try:
            json.loads(f.data)
        except json.JSONDecodeError:
            invalid.append(f)
    assert len(invalid) == 1
    assert frames.index(invalid[0]) == 3  # after the role chunk and two tokens
    row = wait_row(gateway, response.headers["x-request-id"])
    assert (row["status"], row["failure_class"]) == ("failed", "protocol_error")


def test_tokens_sets_the_exact_answer_length(gateway: EmbeddedGateway) -> None:
    for n in (1, 17, 1500):
        _, frames = post_stream(gateway, "/v1/chat/completions", chat_body(),
                                {"X-Anoman-Simulate": f"ttft=0,rate=100000,tokens={n}"})
        deltas = [f for f in frames[1:-3]]
        assert len(deltas) == n
        assert frames[-3].json()["usage"]["completion_tokens"] == n


def test_fault_after_the_last_token_applies_at_the_end(gateway: EmbeddedGateway) -> None:
    _, frames = post_stream(gateway, "/v1/chat/completions", chat_body(),
                            _simulate("tokens=4,interrupt-after=50"))
    assert frames[-2].json()["error"]["_anoman"]["completion_tokens"] == 4


def test_non_streaming_interrupt_is_a_502(gateway: EmbeddedGateway) -> None:
    with loopback_client(gateway.base_url, headers=auth(gateway)) as client:
        response = client.post("/v1/chat/completions", json=chat_body(stream=False),
                               headers=_simulate("interrupt-after=4"))
    assert response.status_code == 502
    assert response.json()["error"]["_anoman"]["completion_tokens"] == 4
    row = wait_row(gateway, response.headers["x-request-id"])
    assert (row["status"], row["failure_class"], row["http_status"]) == (
        "failed", "upstream_error", 502)


def test_non_streaming_drop_truncates_the_body(gateway: EmbeddedGateway) -> None:
    with loopback_client(gateway.base_url, headers=auth(gateway)) as client, \
            pytest.raises(httpx.RemoteProtocolError):
        client.post("/v1/chat/completions", json=chat_body(stream=False),
                    headers=_simulate("drop-after=4"))


def test_non_streaming_malformed_body(gateway: EmbeddedGateway) -> None:
    with loopback_client(gateway.base_url, headers=auth(gateway)) as client:
        response = client.post("/v1/chat/completions", json=chat_body(stream=False),
                               headers=_simulate("malformed-after=1"))
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.content)


def test_non_streaming_timeout_is_a_504(make_local_gateway: LocalGateways) -> None:
    gw = make_local_gateway(fast_config(non_stream_timeout_s=0.3))
    with loopback_client(gw.base_url, headers=auth(gw)) as client:
        started = time.monotonic()
        slow = client.post("/v1/chat/completions", json=chat_body(stream=False),
                           headers={"X-Anoman-Simulate": "ttft=5"})
        took = time.monotonic() - started
        stalled = client.post("/anthropic/v1/messages", json=chat_body(stream=False),
                              headers=_simulate("stall-after=2"))
        streamed = client.post("/v1/chat/completions", json=chat_body(stream=True),
                               headers={"X-Anoman-Simulate": "ttft=0.5,rate=1000,tokens=5"})
    assert slow.status_code == 504 and slow.json()["error"]["code"] == "timeout"
    assert 0.3 <= took < 1.5
    assert stalled.status_code == 504 and stalled.json()["type"] == "error"
    assert streamed.status_code == 200  # the proxy timeout does not apply to streams
    assert streamed.text.rstrip().endswith("[DONE]")
    row = wait_row(gw, slow.headers["x-request-id"])
    assert (row["status"], row["failure_class"], row["http_status"]) == (
        "failed", "timeout", 504)


def test_per_model_faults_from_config(make_local_gateway: LocalGateways) -> None:
    cfg = fast_config(models={"anoman-lite": ModelDefaults(
        simulate="ttft=0,rate=5000,interrupt-after=2")})
    gw = make_local_gateway(cfg)
    _, frames = post_stream(gw, "/v1/chat/completions", chat_body("anoman-lite"))
    assert frames[-2].json()["error"]["_anoman"]["completion_tokens"] == 2
    # The header overrides the model's default.
    _, frames = post_stream(gw, "/v1/chat/completions", chat_body("anoman-lite"),
                            {"X-Anoman-Simulate": "interrupt-after=6"})
    assert frames[-2].json()["error"]["_anoman"]["completion_tokens"] == 6
    _, frames = post_stream(gw, "/v1/chat/completions", chat_body("claude-sonnet-4-6"))
    assert frames[-1].data == "[DONE]" and "_anoman" in frames[-2].json()


def test_faulted_requests_are_never_cached(make_local_gateway: LocalGateways) -> None:
    gw = make_local_gateway(fast_config())
    body = chat_body("anoman-lite")
    for _ in range(2):
        response, _ = post_stream(gw, "/v1/chat/completions", body,
                                       _simulate("tokens=5"))
        assert response.headers["content-type"].startswith("text/event-stream")
    assert len(gw.state.cache) == 0
