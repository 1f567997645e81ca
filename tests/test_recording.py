"""Recording streams off a loopback socket, and replaying them through the same stream core."""

from __future__ import annotations

import asyncio
import base64
import json
import math
from dataclasses import replace
from typing import Any

import httpx
import pytest

from anoman_tui.streaming import (
    ChatTurn,
    EndpointFormat,
    StreamClient,
    StreamRequest,
    StreamResult,
    TextDelta,
)
from anoman_tui.streaming.recording import (
    RECORDING_VERSION,
    RecordingCapture,
    RecordingError,
    StreamRecording,
)
from anoman_tui.streaming.replay import ReplayTransport
from tests.frames import ANOMAN_BLOCK, ANTHROPIC_ERROR_EVENT, OPENAI_ERROR_FRAME
from tests.replay_server import ReplayServer, Script

KEY = "anm-sk-record-0123456789abcdef"


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def _data(payload: object) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def token_frames(endpoint: EndpointFormat, n: int) -> list[bytes]:
    if endpoint == "anthropic":
        return [_event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": f"w{i} "}})
                for i in range(n)]
    return [_data({"choices": [{"index": 0, "delta": {"content": f"w{i} "},
                                "finish_reason": None}]}) for i in range(n)]


def opening(endpoint: EndpointFormat) -> list[bytes]:
    if endpoint == "anthropic":
        return [
            _event("message_start", {"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                "content": [], "usage": {"input_tokens": 7, "output_tokens": 1}}}),
            _event("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}}),
        ]
    return [_data({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                "finish_reason": None}]})]


def closing(endpoint: EndpointFormat, n: int) -> list[bytes]:
    if endpoint == "anthropic":
        return [
            _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": n}}),
            _event("anoman", {"type": "anoman", "_anoman": ANOMAN_BLOCK}),
            _event("message_stop", {"type": "message_stop"}),
        ]
    return [
        _data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 7, "completion_tokens": n, "total_tokens": n + 7}}),
        _data({"_anoman": ANOMAN_BLOCK}),
        b"data: [DONE]\n\n",
    ]


def paced(frames: list[bytes], gap: float) -> list[bytes | float]:
    body: list[bytes | float] = []
    for frame in frames:
        body += [gap, frame]
    return body


def stream_script(endpoint: EndpointFormat, n: int, rate: float = 200.0, **kw: Any) -> Script:
    return Script(
        headers=[("X-Request-Id", "req-42"), ("Set-Cookie", "session=secret")],
        body=[0.03, *opening(endpoint), *paced(token_frames(endpoint, n), 1 / rate),
              *closing(endpoint, n)],
        **kw,
    )


def make_request(base_url: str, model: str = "m", endpoint: EndpointFormat = "openai",
                 key: str = KEY, **kw: Any) -> StreamRequest:
    return StreamRequest(base_url=base_url, api_key=key, endpoint=endpoint, model=model,
                         messages=(ChatTurn(role="user", content="Count"),), **kw)


async def record(server: ReplayServer, endpoint: EndpointFormat = "openai",
                 cancel_after: int | None = None, **kw: Any) -> StreamResult:
    async with StreamClient() as client:
        stream = client.stream(make_request(server.base_url, endpoint=endpoint, record=True, **kw))
        texts = 0
        async for event in stream:
            if isinstance(event, TextDelta):
                texts += 1
                if texts == cancel_after:
                    stream.cancel()
        assert stream.result is not None
        return stream.result


async def play(recordings: dict[str | int, StreamRecording], speed: float = 1.0,
                 endpoint: EndpointFormat = "openai", **kw: Any) -> StreamResult:
    http = httpx.AsyncClient(transport=ReplayTransport(recordings, speed=speed))
    async with http, StreamClient(http) as client:
        # No key, and a host that does not exist: a replay never touches the network.
        request = make_request("http://replay.invalid", endpoint=endpoint, key="", **kw)
        return await client.stream(request).wait()


def assert_same(replayed: StreamResult, recorded: StreamResult) -> None:
    assert replayed.status == recorded.status
    assert replayed.text == recorded.text
    assert replayed.usage == recorded.usage
    assert replayed.http_status == recorded.http_status
    assert replayed.finish_reason == recorded.finish_reason
    assert replayed.request_id == recorded.request_id
    assert replayed.anoman_raw == recorded.anoman_raw
    assert replayed.metrics.chunks == recorded.metrics.chunks
    if recorded.failure is None:
        assert replayed.failure is None
    else:
        assert replayed.failure is not None
        assert replayed.failure.kind == recorded.failure.kind
        assert replayed.failure.message == recorded.failure.message


@pytest.mark.parametrize("endpoint", ["openai", "anthropic", "playground"])
async def test_round_trip_per_endpoint_format(replay: ReplayServer, endpoint) -> None:
    server = replay
    server.scripts["m"] = stream_script(endpoint, 20)
    recorded = await record(server, endpoint)
    assert recorded.status == "completed" and recorded.text.startswith("w0 w1 ")
    recording = recorded.recording
    assert recording is not None
    assert (recording.endpoint, recording.model, recording.status) == (endpoint, "m", 200)
    assert recording.path == server.requests[0].path
    assert recording.ending == "completed"
    # Byte-exact: every byte of the body, in the reads the core made.
    sent = b"".join(item for item in server.scripts["m"].body if isinstance(item, bytes))
    assert recording.body == sent
    assert dict(recording.headers) == {"content-type": "text/event-stream",
                                       "x-request-id": "req-42"}
    times = [at for at, _ in recording.reads]
    assert times == sorted(times) and recording.headers_at is not None
    assert 0 <= recording.headers_at <= times[0] <= recording.ended_at

    document = json.loads(json.dumps(recording.to_json()))
    again = StreamRecording.from_json(document)
    assert again == recording
    assert StreamRecording.from_json(json.dumps(document)) == recording

    replayed = await play({"m": again}, endpoint=endpoint)
    assert_same(replayed, recorded)
    assert replayed.committed
    # The recording rides along without changing what a result is or shows.
    assert replayed.recording is None and replayed == replace(replayed, recording=recording)
    assert "recording" not in repr(recorded)


@pytest.mark.parametrize("endpoint", ["anthropic", "playground"])
@pytest.mark.parametrize(("ending", "kind"),
                         [("truncate", "truncated"), ("reset", "truncated"), ("hang", "stalled")])
async def test_broken_streams_replay_the_same_in_every_format(
    replay: ReplayServer, endpoint: EndpointFormat, ending: Any, kind: str
) -> None:
    replay.scripts["m"] = Script(
        body=[*opening(endpoint), *paced(token_frames(endpoint, 4), 0.005)], ending=ending)
    recorded = await record(replay, endpoint, idle_timeout=0.2)
    assert recorded.failure is not None and recorded.failure.kind == kind
    assert recorded.recording is not None
    assert_same(await replay_of(recorded.recording, idle_timeout=0.2), recorded)


FAILURES: dict[str, tuple[Script, dict[str, Any], str]] = {
    "http_error": (
        Script(status=429, content_type="application/json",
               headers=[("Retry-After", "7"), ("X-Request-Id", "req-9")],
               body=[json.dumps({"error": {"type": "rate_limit_error",
                                           "message": "slow down"}}).encode()]),
        {}, "http_error"),
    "stream_error": (
        Script(body=[*opening("openai"), *paced(token_frames("openai", 5), 0.005),
                     OPENAI_ERROR_FRAME, b"data: [DONE]\n\n"]),
        {}, "stream_error"),
    "closed_mid_body": (
        Script(body=[*opening("openai"), *paced(token_frames("openai", 5), 0.005)],
               ending="truncate"),
        {}, "truncated"),
    "ended_without_terminator": (
        Script(body=[*opening("openai"), *paced(token_frames("openai", 5), 0.005)]),
        {}, "truncated"),
    "reset": (
        Script(body=[*opening("openai"), *paced(token_frames("openai", 5), 0.005)],
               ending="reset"),
        {}, "truncated"),
    "stalled": (
        Script(body=[*opening("openai"), *paced(token_frames("openai", 5), 0.005)],
               ending="hang"),
        {"idle_timeout": 0.3}, "stalled"),
    "malformed_frame": (
        Script(body=[*opening("openai"), *token_frames("openai", 3), b"data: {not json\n\n",
                     *token_frames("openai", 3)]),
        {}, "protocol_error"),
    "not_an_event_stream": (
        Script(content_type="text/html", body=[b"<html>oops</html>"]),
        {}, "protocol_error"),
}


@pytest.mark.parametrize("case", list(FAILURES))
async def test_every_failure_kind_replays_the_same(replay: ReplayServer, case: str) -> None:
    script, kw, kind = FAILURES[case]
    replay.scripts["m"] = script
    recorded = await record(replay, **kw)
    assert recorded.failure is not None and recorded.failure.kind == kind
    recording = recorded.recording
    assert recording is not None
    recording = StreamRecording.from_json(json.loads(json.dumps(recording.to_json())))
    replayed = await replay_of(recording, **kw)
    assert_same(replayed, recorded)
    if case == "http_error":
        assert replayed.failure is not None and replayed.failure.retry_after_s == 7
        assert recording.ending == "completed"
    expected_ending = {"closed_mid_body": "closed", "reset": "reset", "stalled": "stalled"}
    assert recording.ending == expected_ending.get(case, "completed")


async def replay_of(recording: StreamRecording, **kw: Any) -> StreamResult:
    return await play({recording.model: recording}, endpoint=recording.endpoint, **kw)


async def test_anthropic_error_event_replays_the_same(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(body=[*opening("anthropic"), *token_frames("anthropic", 4),
                                       ANTHROPIC_ERROR_EVENT])
    recorded = await record(replay, "anthropic")
    assert recorded.failure is not None and recorded.failure.kind == "stream_error"
    assert recorded.recording is not None
    assert_same(await replay_of(recorded.recording), recorded)


async def test_a_cancelled_stream_is_cancelled_at_the_same_token(replay: ReplayServer) -> None:
    replay.scripts["m"] = stream_script("openai", 30, rate=100)
    recorded = await record(replay, cancel_after=10)
    assert recorded.status == "cancelled"
    recording = recorded.recording
    assert recording is not None and recording.ending == "cancelled"
    replayed = await replay_of(recording)
    assert_same(replayed, recorded)
    assert replayed.text == recorded.text and replayed.text.startswith("w0 ")
    assert replayed.metrics.e2e_s is not None and recorded.metrics.e2e_s is not None
    assert abs(replayed.metrics.e2e_s - recorded.metrics.e2e_s) < 0.02


async def test_unreachable_server_replays_as_a_transport_error() -> None:
    sock_server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = sock_server.sockets[0].getsockname()[1]
    sock_server.close()
    await sock_server.wait_closed()
    async with StreamClient() as client:
        recorded = await client.stream(
            make_request(f"http://127.0.0.1:{port}", record=True)).wait()
    assert recorded.failure is not None and recorded.failure.kind == "transport_error"
    recording = recorded.recording
    assert recording is not None and recording.status is None and recording.ending == "reset"
    replayed = await replay_of(StreamRecording.from_json(recording.to_json()))
    assert replayed.failure is not None and replayed.failure.kind == "transport_error"
    assert replayed.status == "failed" and replayed.text == ""


async def test_replay_timing_at_speed_1(replay: ReplayServer) -> None:
    replay.scripts["m"] = stream_script("openai", 50, rate=200)
    recorded = await record(replay)
    assert recorded.recording is not None
    replayed = await replay_of(recorded.recording)
    assert_same(replayed, recorded)
    a, b = recorded.metrics, replayed.metrics
    assert a.ttft_s is not None and b.ttft_s is not None
    assert abs(a.ttft_s - b.ttft_s) < 0.010
    assert a.output_tokens_per_s is not None and b.output_tokens_per_s is not None
    assert math.isclose(a.output_tokens_per_s, b.output_tokens_per_s, rel_tol=0.03)


async def test_speed_2_halves_the_duration(replay: ReplayServer) -> None:
    replay.scripts["m"] = stream_script("openai", 50, rate=200)
    recorded = await record(replay)
    assert recorded.recording is not None
    replayed = await play({"m": recorded.recording}, speed=2)
    assert_same(replayed, recorded)
    assert recorded.metrics.e2e_s is not None and replayed.metrics.e2e_s is not None
    assert replayed.metrics.e2e_s == pytest.approx(recorded.metrics.e2e_s / 2, rel=0.15)


def test_the_chunks_of_one_socket_read_are_kept_as_one_read() -> None:
    # A fast provider's read brings many HTTP chunks, each stamped with that read: one
    # entry each cost ~100 bytes of bookkeeping, 35 MB over 3 x 100,000 tokens.
    capture = RecordingCapture(make_request("http://127.0.0.1:9", record=True))
    capture.opened(10.0, 200, {"content-type": "text/event-stream"})
    for at, chunk in [(10.1, b"data: a\n\n"), (10.1, b"data: b\n\n"), (10.2, b"data: c\n\n"),
                      (10.3, b"data: d\n\n"), (10.3, b"data: [DONE]\n\n")]:
        capture.read(at, chunk)
    recording = capture.finish(10.0, 10.4, "completed")
    assert recording is not None
    assert [(round(t, 6), c) for t, c in recording.reads] == [
        (0.1, b"data: a\n\ndata: b\n\n"), (0.2, b"data: c\n\n"),
        (0.3, b"data: d\n\ndata: [DONE]\n\n")]


async def test_recording_is_off_by_default(replay: ReplayServer) -> None:
    replay.scripts["m"] = stream_script("openai", 3)
    async with StreamClient() as client:
        result = await client.stream(make_request(replay.base_url)).wait()
    assert result.status == "completed" and result.recording is None


async def test_the_key_is_never_recorded(replay: ReplayServer) -> None:
    # A server that echoes the key back, split across two writes, in a header and the body.
    echo = json.dumps({"error": {"type": "authentication_error",
                                 "message": f"invalid key {KEY}"}}).encode()
    cut = echo.index(KEY.encode()) + 10
    replay.scripts["m"] = Script(status=401, content_type="application/json",
                                 headers=[("X-Request-Id", f"id-{KEY}"),
                                          ("WWW-Authenticate", f"Bearer {KEY}")],
                                 body=[echo[:cut], 0.01, echo[cut:]])
    recorded = await record(replay)
    recording = recorded.recording
    assert recording is not None and len(recording.reads) >= 2
    text = json.dumps(recording.to_json())
    assert KEY not in text and KEY not in repr(recording)
    assert KEY.encode() not in recording.body
    assert base64.b64encode(KEY.encode()).decode()[:20] not in text
    assert [len(c) for _, c in recording.reads] == [cut, len(echo) - cut]
    assert replay.requests[0].headers["authorization"] == f"Bearer {KEY}"
    replayed = await replay_of(recording)
    assert replayed.failure is not None and replayed.failure.kind == "http_error"
    assert replayed.failure.status == 401 and KEY not in replayed.failure.message


async def test_panes_asking_for_the_same_model_replay_their_own_recordings(
    replay: ReplayServer,
) -> None:
    replay.scripts["m"] = stream_script("openai", 3)
    first = (await record(replay, pane=0)).recording
    replay.scripts["m"] = stream_script("openai", 6)
    second = (await record(replay, pane=1)).recording
    assert first is not None and second is not None and first.pane == 0
    one = await play({0: first, 1: second}, pane=0)
    two = await play({0: first, 1: second}, pane=1)
    assert one.text == "w0 w1 w2 " and two.text.startswith("w0 w1 w2 w3 w4 w5")
    missing = await play({"other": first})
    assert missing.failure is not None and missing.failure.kind == "http_error"
    assert missing.failure.status == 404
    elsewhere = await play({0: first}, pane=0, endpoint="anthropic")
    assert elsewhere.failure is not None and elsewhere.failure.status == 404
    assert "recording is of POST /v1/chat/completions" in elsewhere.failure.message


def valid_document() -> dict[str, Any]:
    return StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model="m", status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.01,
        reads=((0.02, b"data: {}\n\n"), (0.03, b"data: [DONE]\n\n")),
        ending="completed", ended_at=0.04,
    ).to_json()


def _with(**changes: Any) -> dict[str, Any]:
    return {**valid_document(), **changes}


def _without(name: str) -> dict[str, Any]:
    document = valid_document()
    del document[name]
    return document


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ([1, 2], "not a JSON object"),
        ("{not json", "not valid JSON"),
        (_with(version=2), "version 2 is not supported"),
        (_with(version="1"), "is not supported"),
        (_with(format="other"), "not a stream recording"),
        (_without("reads"), "has no 'reads'"),
        (_without("status"), "has no 'status'"),
        (_with(reads=[[0.02, "!!not base64!!"]]), "not valid base64"),
        (_with(reads=[[0.02, "ZGF0YQ"]]), "not valid base64"),
        (_with(reads=[[-1, "ZGF0YQ=="]]), "negative"),
        (_with(reads=[[0.03, "ZGF0YQ=="], [0.02, "ZGF0YQ=="]]), "earlier than"),
        (_with(headers_at=0.05), "earlier than"),
        (_with(ended_at=0.0), "earlier than"),
        (_with(reads=[[float("nan"), "ZGF0YQ=="]]), "not finite"),
        (_with(reads=[[True, "ZGF0YQ=="]]), "not a number"),
        (_with(reads=[["0.1", "ZGF0YQ=="]]), "not a number"),
        (_with(reads=[[0.02]]), "not a [seconds, base64] pair"),
        (_with(reads={"a": 1}), "not a list"),
        (_with(reads=[[0.02, "ZGF0YQ=="]] * 1_000_001), "more than 1000000 reads"),
        (_with(status=999), "not an HTTP status"),
        (_with(status=None), "status without a time"),
        (_with(endpoint="grpc"), "endpoint 'grpc'"),
        (_with(ending="exploded"), "ending 'exploded'"),
        (_with(path="no-slash"), "does not start with '/'"),
        (_with(model=""), "model is not a string"),
        (_with(model="m\x1b[2J"), "control characters"),
        (_with(headers=[["authorization", "Bearer x"]]), "never keep"),
        (_with(headers=[["content-type"]]), "list of [name, value]"),
        (_with(headers=[["content-type", "x"]] * 50), "short list"),
        (_with(pane=-1), "pane"),
    ],
)
def test_hostile_documents_are_refused_with_a_reason(document: object, reason: str) -> None:
    with pytest.raises(RecordingError) as caught:
        StreamRecording.from_json(document)
    message = str(caught.value)
    assert reason in message
    assert message.endswith(".") and "\n" not in message
    assert caught.value.reason == message


def test_deeply_nested_json_is_refused_not_crashed() -> None:
    with pytest.raises(RecordingError, match=r"not valid JSON|cannot be read"):
        StreamRecording.from_json("[" * 100_000 + "]" * 100_000)


def test_version_constant_and_valid_document() -> None:
    document = valid_document()
    assert document["version"] == RECORDING_VERSION
    recording = StreamRecording.from_json(document)
    assert recording.reads[1] == (0.03, b"data: [DONE]\n\n")
    assert recording.to_json() == document


async def test_a_slowed_replay_keeps_long_gaps_without_stalling(replay: ReplayServer) -> None:
    replay.scripts["m"] = Script(body=[*opening("openai"), 0.15, *token_frames("openai", 2),
                                       *closing("openai", 2)])
    recorded = await record(replay, idle_timeout=0.25)
    assert recorded.status == "completed" and recorded.recording is not None
    # At half speed the 0.15 s gap lasts 0.3 s, longer than the idle timeout: still no stall.
    replayed = await play({"m": recorded.recording}, speed=0.5, idle_timeout=0.25)
    assert_same(replayed, recorded)
