"""The stream core over real loopback sockets against scripted byte streams."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from decimal import Decimal

import pytest

from anoman_tui.streaming import (
    AnomanMetadata,
    ChatTurn,
    EndpointFormat,
    RoleStarted,
    StreamClient,
    StreamDone,
    StreamFailed,
    StreamFinished,
    StreamOpened,
    StreamRequest,
    TextDelta,
)
from tests.frames import (
    ANOMAN_BLOCK,
    ANTHROPIC_ERROR_EVENT,
    ANTHROPIC_EXAMPLE_STREAM,
    OPENAI_ERROR_FRAME,
    OPENAI_EXAMPLE_STREAM,
)
from tests.helpers import STREAM_KEY as KEY
from tests.helpers import make_request
from tests.replay_server import ReplayServer, Script


async def collect(server: ReplayServer, model: str, endpoint: EndpointFormat = "openai", **kw):
    async with StreamClient() as client:
        stream = client.stream(make_request(server, model, endpoint, **kw))
        events = [event async for event in stream]
    assert isinstance(events[-1], StreamDone)
    assert sum(isinstance(e, StreamDone) for e in events) == 1
    return events, events[-1].result


@pytest.mark.parametrize("endpoint", ["openai", "playground"])
async def test_openai_spec_stream_yields_typed_events(replay: ReplayServer, endpoint) -> None:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM))
    events, result = await collect(replay, "m", endpoint)

    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "StreamOpened",
        "RoleStarted",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "StreamFinished",
        "AnomanMetadata",
        "StreamDone",
    ]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Once ", "upon a ", "time..."]
    assert result.status == "completed" and result.committed
    assert result.text == "Once upon a time..."
    assert result.finish_reason == "stop"
    assert result.usage is not None and result.usage.total_tokens == 11
    assert result.anoman is not None
    assert result.anoman.cost_usd == Decimal("0.000041")
    assert result.anoman.weighted_tokens == 44
    assert result.anoman_raw == ANOMAN_BLOCK
    assert result.failure is None
    m = result.metrics
    assert m.chunks == 3 and m.ttft_s is not None and m.e2e_s is not None
    assert 0 < m.ttft_s <= m.e2e_s
    assert len(m.itl_s) == 2
    # every event is stamped on arrival, in order
    stamps = [e.at for e in events]
    assert stamps == sorted(stamps)
    expected_path = "/v1/chat/completions" if endpoint == "openai" else "/anoman/v1/playground/run"
    assert replay.requests[0].path == expected_path


async def test_anthropic_spec_stream(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(body=list(ANTHROPIC_EXAMPLE_STREAM))
    events, result = await collect(replay, "m", "anthropic")
    assert isinstance(events[1], RoleStarted)
    assert result.status == "completed"
    assert result.text == "Once upon a time..."
    assert result.finish_reason == "end_turn"
    assert result.usage is not None
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 4)
    assert result.anoman is not None and result.anoman.weighted_tokens == 44
    finished = [e for e in events if isinstance(e, StreamFinished)]
    assert len(finished) == 1
    meta = [e for e in events if isinstance(e, AnomanMetadata)]
    assert meta[0].raw == ANOMAN_BLOCK


async def test_request_shape_per_format(replay: ReplayServer) -> None:
    for name, frames in (("o", OPENAI_EXAMPLE_STREAM), ("a", ANTHROPIC_EXAMPLE_STREAM)):
        replay.scripts[name] = Script(body=list(frames))
    common = dict(
        system="Be brief.",
        temperature=0.2,
        max_tokens=64,
        extra_headers=(("Cache-Control", "no-cache"),),
        compare_id="cmp-1",
        pane=2,
    )
    await collect(replay, "o", "openai", **common)
    await collect(replay, "o", "playground", **common)
    await collect(replay, "a", "anthropic", **common)
    openai_req, playground_req, anthropic_req = replay.requests

    assert openai_req.headers["authorization"] == f"Bearer {KEY}"
    assert openai_req.headers["cache-control"] == "no-cache"
    assert openai_req.body["stream"] is True
    assert openai_req.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert openai_req.body["temperature"] == 0.2 and openai_req.body["max_tokens"] == 64
    assert "compare_id" not in openai_req.body

    assert playground_req.body["compare_id"] == "cmp-1" and playground_req.body["panel"] == 2

    assert anthropic_req.path == "/anthropic/v1/messages"
    assert anthropic_req.headers["x-api-key"] == KEY
    assert "authorization" not in anthropic_req.headers
    assert anthropic_req.headers["anthropic-version"]
    assert anthropic_req.body["system"] == "Be brief."
    assert anthropic_req.body["messages"] == [
        {"role": "user", "content": "Tell me a short story"}
    ]


@pytest.mark.parametrize(
    ("endpoint", "frames", "error"),
    [
        ("openai", OPENAI_EXAMPLE_STREAM, OPENAI_ERROR_FRAME),
        ("anthropic", ANTHROPIC_EXAMPLE_STREAM, ANTHROPIC_ERROR_EVENT),
    ],
)
async def test_mid_stream_error_frame_fails_and_commits_nothing(
    replay: ReplayServer, endpoint, frames, error
) -> None:
    body = [*frames[:4], error]
    if endpoint == "openai":
        body.append(b"data: [DONE]\n\n")
    replay.scripts["m"] = Script(body=body)
    events, result = await collect(replay, "m", endpoint)
    assert result.status == "failed" and not result.committed
    failure = result.failure
    assert failure is not None and failure.kind == "stream_error"
    assert failure.failure_class == "upstream_error"
    assert failure.completion_tokens == 42
    assert failure.code == "stream_interrupted"
    assert "after 42 tokens" in failure.message
    assert result.text  # the partial text stays available, marked uncommitted
    assert any(isinstance(e, StreamFailed) for e in events)


@pytest.mark.parametrize(
    ("status", "headers", "body", "expect"),
    [
        (401, [], {"error": {"type": "authentication_error", "message": "invalid key"}}, "API key"),
        (404, [], {"error": {"type": "not_found_error", "message": "no such model"}}, "model"),
        (
            429,
            [("Retry-After", "7")],
            {"error": {"type": "rate_limit_error", "message": "slow down"}},
            "retry in 7 s",
        ),
        (503, [], {"error": {"type": "overloaded_error", "message": "busy"}}, "503"),
        (400, [], {"error": {"type": "invalid_request_error", "message": "bad"}},
         "400 BAD REQUEST: bad"),
    ],
)
async def test_http_errors_before_the_stream(replay, status, headers, body, expect) -> None:
    replay.scripts["m"] = Script(
        status=status,
        content_type="application/json",
        headers=headers,
        body=[json.dumps(body).encode()],
    )
    events, result = await collect(replay, "m")
    assert [type(e).__name__ for e in events] == ["StreamFailed", "StreamDone"]
    failure = result.failure
    assert failure is not None and failure.kind == "http_error"
    assert failure.status == status
    assert failure.type == body["error"]["type"]
    assert expect in failure.message
    assert result.status == "failed"
    if status == 429:
        assert failure.retry_after_s == 7


async def test_guardrail_block_names_the_check(replay: ReplayServer) -> None:
    body = {
        "error": {"type": "guardrail_blocked", "message": "request blocked by guardrails"},
        "_anoman": {
            "guardrails": {
                "injection": {"status": "pass", "score": 0.1},
                "pii": {"status": "block", "score": 1.0},
            }
        },
    }
    replay.scripts["m"] = Script(
        status=403, content_type="application/json", body=[json.dumps(body).encode()]
    )
    _, result = await collect(replay, "m")
    failure = result.failure
    assert failure is not None and failure.status == 403
    assert failure.blocking_guardrail is not None
    assert failure.blocking_guardrail[0] == "pii"
    assert "pii guardrail" in failure.message and "1.00" in failure.message


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"), (None, b"")],
)
async def test_http_error_with_html_or_empty_body(replay, content_type, body) -> None:
    replay.scripts["m"] = Script(status=502, content_type=content_type, body=[body] if body else [])
    _, result = await collect(replay, "m")
    assert result.failure is not None and result.failure.kind == "http_error"
    assert result.failure.status == 502
    assert "<" not in result.failure.message
    assert ("Bad Gateway" in result.failure.message) == bool(body)


@pytest.mark.parametrize("endpoint", ["openai", "anthropic"])
@pytest.mark.parametrize("ending", ["complete", "truncate", "reset"])
async def test_connection_closed_before_terminator_is_truncated(replay, endpoint, ending) -> None:
    frames = OPENAI_EXAMPLE_STREAM if endpoint == "openai" else ANTHROPIC_EXAMPLE_STREAM
    replay.scripts["m"] = Script(body=[*frames[:4], frames[4][:20]], ending=ending)
    _, result = await collect(replay, "m", endpoint)
    assert result.status == "failed"
    assert result.failure is not None and result.failure.kind == "truncated"
    assert result.text and not result.committed


async def test_stall_is_detected_by_idle_timeout(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM[:3]), ending="hang")
    started = time.monotonic()
    _, result = await collect(replay, "m", idle_timeout=0.3)
    assert result.failure is not None and result.failure.kind == "stalled"
    assert "0.3 s" in result.failure.message
    assert 0.25 < time.monotonic() - started < 5
    assert result.text == "Once upon a "


@pytest.mark.parametrize(
    ("script", "expect"),
    [
        (Script(body=[OPENAI_EXAMPLE_STREAM[0], b"data: {not json\n\n"]), "not valid JSON"),
        (Script(body=[b'data: [1, 2]\n\n']), "not a JSON object"),
        (Script(content_type="text/html", body=[b"<html></html>"]), "text/event-stream"),
        (Script(content_type=None, body=[b"data: {}\n\n"]), "text/event-stream"),
        (
            Script(
                content_type="application/json",
                body=[json.dumps({"choices": [], "_anoman": {"cache": {"hit": False}}}).encode()],
            ),
            "not a cache hit",
        ),
        (
            Script(body=[b'data: {"choices":[{"index":0,"delta":{"content":5,"role":7}}]}\n\n']),
            "unexpected shape",
        ),
    ],
)
async def test_protocol_errors(replay: ReplayServer, script: Script, expect: str) -> None:
    replay.scripts["m"] = script
    _, result = await collect(replay, "m")
    assert result.failure is not None and result.failure.kind == "protocol_error"
    assert expect in result.failure.message
    assert not result.committed


@pytest.mark.parametrize("endpoint", ["openai", "anthropic"])
async def test_cache_hit_json_is_a_completed_answer(replay: ReplayServer, endpoint) -> None:
    anoman = {**ANOMAN_BLOCK, "cache": {"hit": True}}
    if endpoint == "openai":
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Cached story."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            "_anoman": anoman,
        }
    else:
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Cached story."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 7, "output_tokens": 3},
            "_anoman": anoman,
        }
    replay.scripts["m"] = Script(
        content_type="application/json; charset=utf-8", body=[json.dumps(body).encode()]
    )
    _, result = await collect(replay, "m", endpoint)
    assert result.status == "completed" and result.committed
    assert result.cache_hit
    assert result.text == "Cached story."
    assert result.usage is not None and result.usage.completion_tokens == 3


async def test_refused_connection_is_a_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    request = StreamRequest(
        base_url=f"http://127.0.0.1:{port}",
        api_key=KEY,
        model="m",
        messages=(ChatTurn(role="user", content="hi"),),
    )
    async with StreamClient() as client:
        result = await client.stream(request).wait()
    assert result.failure is not None and result.failure.kind == "transport_error"
    assert "refused" in result.failure.message
    assert f"127.0.0.1:{port}" in result.failure.message


async def _first_text_then(replay: ReplayServer, action) -> tuple[float, object]:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM[:3]), ending="hang")
    async with StreamClient() as client:
        stream = client.stream(make_request(replay, "m"))
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        closed_at = await action(stream)
        result = stream.result
    # wait for the server to notice
    for _ in range(100):
        if replay.requests[0].client_closed_at is not None:
            break
        await asyncio.sleep(0.005)
    return closed_at, result


async def test_explicit_cancel_closes_the_socket_within_50ms(replay: ReplayServer) -> None:
    async def cancel(stream):
        at = time.monotonic()
        stream.cancel()
        async for _ in stream:
            pass
        return at

    cancelled_at, result = await _first_text_then(replay, cancel)
    closed = replay.requests[0].client_closed_at
    assert closed is not None and closed - cancelled_at < 0.05
    assert result is not None
    assert result.status == "cancelled" and not result.committed
    assert result.failure is not None and result.failure.kind == "cancelled"
    assert result.text == "Once upon a "


async def test_cancelling_the_consuming_task_closes_the_socket(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM[:3]), ending="hang")
    got_text = asyncio.Event()

    async def consume(client: StreamClient) -> None:
        async for event in client.stream(make_request(replay, "m")):
            if isinstance(event, TextDelta):
                got_text.set()

    async with StreamClient() as client:
        task = asyncio.create_task(consume(client))
        await got_text.wait()
        at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if replay.requests[0].client_closed_at is not None:
                break
            await asyncio.sleep(0.005)
    closed = replay.requests[0].client_closed_at
    assert closed is not None and closed - at < 0.05


async def test_connections_are_reused(replay: ReplayServer) -> None:
    # The end of the chunked body comes as its own write after [DONE]: the client must
    # read it, or the connection cannot go back to the pool.
    replay.scripts["m"] = Script(body=[*OPENAI_EXAMPLE_STREAM, 0.02])
    async with StreamClient() as client:
        for _ in range(3):
            result = await client.stream(make_request(replay, "m")).wait()
            assert result.committed
    assert len(replay.requests) == 3
    assert len({request.peer for request in replay.requests}) == 1, "one connection for all"


async def test_a_server_that_keeps_the_body_open_after_the_terminator(replay) -> None:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM), ending="hang")
    async with StreamClient() as client:
        started = time.monotonic()
        stream = client.stream(make_request(replay, "m"))
        result = await stream.wait()
        elapsed = time.monotonic() - started
    assert result.committed
    assert elapsed < 1.0, "the wait for the rest of the body is bounded"
    # E2E ends at the terminator, not when the client gave up on the connection.
    assert result.metrics.e2e_s is not None and result.metrics.e2e_s < elapsed - 0.03


async def test_ttft_starts_when_the_request_goes_onto_the_wire(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Building the request is slowed down (as by a busy UI holding the GIL): that time is
    # the client's, not the model's, and must not count in TTFT.
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM))
    original = StreamRequest.headers

    def slow_headers(self: StreamRequest) -> dict[str, str]:
        time.sleep(0.08)
        return original(self)

    monkeypatch.setattr(StreamRequest, "headers", slow_headers)
    async with StreamClient() as client:
        before = time.monotonic()
        stream = client.stream(make_request(replay, "m"))
        result = await stream.wait()
    assert result.committed and stream.sent_at is not None
    received = replay.requests[0].received_at
    assert before + 0.08 <= stream.sent_at <= received
    assert received - stream.sent_at < 0.06  # the provisional stamp would be >= 0.08 early


async def test_key_never_in_repr_or_failure_text(replay: ReplayServer) -> None:
    request = make_request(replay, "m")
    assert KEY not in repr(request) and KEY not in str(request)
    body = {"error": {"type": "authentication_error", "message": f"unknown key {KEY}"}}
    replay.scripts["m"] = Script(
        status=401, content_type="application/json", body=[json.dumps(body).encode()]
    )
    events, result = await collect(replay, "m")
    assert result.failure is not None
    assert KEY not in result.failure.message
    assert KEY not in repr(events) and KEY not in repr(result)


async def test_sse_details_over_the_wire(replay: ReplayServer) -> None:
    """Comments, CRLF, retry/id lines, events without data and byte-by-byte writes."""
    raw = b"".join(OPENAI_EXAMPLE_STREAM).replace(b"\n", b"\r\n")
    raw = b": keep-alive\r\n\r\nretry: 3000\r\nid: 1\r\nevent: noop\r\n\r\n" + raw
    replay.scripts["m"] = Script(body=[raw[i : i + 1] for i in range(len(raw))])
    events, result = await collect(replay, "m")
    assert result.committed and result.text == "Once upon a time..."
    assert isinstance(events[0], StreamOpened)


async def test_cancel_before_the_first_step_still_ends_with_a_result(replay) -> None:
    replay.scripts["m"] = Script(body=list(OPENAI_EXAMPLE_STREAM))
    async with StreamClient() as client:
        stream = client.stream(make_request(replay, "m"))
        stream.cancel()
        result = await asyncio.wait_for(stream.wait(), 5)
    assert result.status == "cancelled"
    assert replay.requests == []


def test_a_stream_read_in_one_go_has_no_rate_rather_than_a_made_up_one() -> None:
    # docs/wire-contract.md §7: every token at one instant gives no time to divide by.
    from anoman_tui.streaming.events import TextDelta
    from anoman_tui.streaming.recorder import ResultRecorder

    recorder = ResultRecorder(sent_at=10.0)
    for text in ("a", "b", "c"):
        recorder.record(TextDelta(text=text, at=10.5))
    metrics = recorder.result(ended_at=10.5, completed=True).metrics
    assert metrics.output_tokens_per_s is None and metrics.to_json()["output_tokens_per_s"] is None
    assert metrics.ttft_s == 0.5 and metrics.chunks == 3
    spread = ResultRecorder(sent_at=10.0)
    for i, text in enumerate(("a", "b", "c")):
        spread.record(TextDelta(text=text, at=10.5 + i * 0.1))
    assert spread.result(ended_at=10.8, completed=True).metrics.output_tokens_per_s == \
        pytest.approx(10.0)
