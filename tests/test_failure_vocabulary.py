"""One vocabulary for failures: the exception mapping and the words every view shares.

`failures.failure_from_exception` is the one place an exception becomes a failure
kind; `vocabulary.describe_failure` the one place a failure becomes words. The
pane's badge, `compare`'s summary and JSON, and the log line all show those words.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging

import httpx
import pytest

from anoman_tui.headless import CompareSpec, PaneSpec
from anoman_tui.headless.compare import _compare_main
from anoman_tui.streaming import (
    ChatTurn,
    StreamClient,
    StreamFailure,
    StreamRequest,
    cost_of,
    describe_failure,
)
from anoman_tui.streaming.failures import ProtocolViolation, failure_from_exception
from anoman_tui.ui.widgets.pane import failure_badge
from anoman_tui.wire import GuardrailVerdict
from tests.frames import OPENAI_EXAMPLE_STREAM
from tests.replay_server import ReplayServer, Script

CONTEXT = dict(opened=True, chunks=5, completion_tokens=6, idle_timeout=2.5,
               host="127.0.0.1:9")


def _refused() -> httpx.ConnectError:
    exc = httpx.ConnectError("All connection attempts failed")
    exc.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    return exc


@pytest.mark.parametrize(
    ("exc", "opened", "kind", "words"),
    [
        (asyncio.CancelledError(), True, "cancelled", "CANCELLED after 6 tokens"),
        (ProtocolViolation("frame is not valid JSON: '{'"), True, "protocol_error",
         "PROTOCOL ERROR: frame is not valid JSON"),
        (httpx.ReadTimeout("timed out"), True, "stalled",
         "STALLED: no bytes for 2.5 s after 5 chunks"),
        (httpx.ConnectTimeout("timed out"), False, "transport_error",
         "GATEWAY UNREACHABLE: cannot reach 127.0.0.1:9: ConnectTimeout"),
        (_refused(), False, "transport_error",
         "GATEWAY UNREACHABLE: cannot reach 127.0.0.1:9: connection refused"),
        (httpx.RemoteProtocolError("peer closed connection without sending complete message"),
         True, "truncated", "TRUNCATED: connection lost (peer closed the connection) after 5"),
        (KeyError("bug"), True, "protocol_error", "unexpected client error: KeyError"),
    ],
)
def test_every_exception_maps_to_one_kind_with_its_words(exc, opened, kind, words) -> None:
    failure = failure_from_exception(exc, **{**CONTEXT, "opened": opened})
    assert failure.kind == kind
    assert words in failure.message
    assert failure.message == describe_failure(failure).text


@pytest.mark.parametrize(
    ("failure", "line", "severity"),
    [
        (StreamFailure("http_error", "bad key", status=401, key_env="ANOMAN_API_KEY"),
         "✗ 401 UNAUTHORIZED: check your API key (ANOMAN_API_KEY) (bad key)", "error"),
        (StreamFailure("http_error", "slow down", status=429, retry_after_s=7),
         "◷ 429 RATE LIMITED: retry in 7 s (slow down)", "warning"),
        (StreamFailure("http_error", "", status=429), "◷ 429 RATE LIMITED: retry later",
         "warning"),
        (StreamFailure("http_error", "request blocked", status=403,
                       guardrails={"pii": GuardrailVerdict(status="block", score=0.97)}),
         "⊘ BLOCKED by the pii guardrail (score 0.97) before streaming", "error"),
        (StreamFailure("http_error", "busy", status=503), "✗ 503 GATEWAY ERROR: busy", "error"),
        (StreamFailure("stream_error", "upstream stream interrupted", completion_tokens=42,
                       failure_class="upstream_error"),
         "✗ STREAM INTERRUPTED after 42 tokens: partial answer not committed", "error"),
        (StreamFailure("cancelled", completion_tokens=3),
         "■ CANCELLED after 3 tokens: partial answer not committed", "muted"),
    ],
)
def test_badge_and_message_are_the_same_description(failure, line, severity) -> None:
    described = describe_failure(failure)
    assert described.line == line and described.severity == severity
    badge, css_class = failure_badge(failure, retry_hint=False)
    assert badge == line and css_class == f"-{severity}"
    assert failure.message == line.split(" ", 1)[1]
    assert failure.to_json()["message"] == failure.message


def test_the_ui_adds_key_hints_but_never_rewords() -> None:
    badge, _ = failure_badge(StreamFailure("http_error", "", status=429, retry_after_s=2))
    assert badge.startswith("◷ 429 RATE LIMITED: retry in 2 s") and "Ctrl+R" in badge
    badge, _ = failure_badge(StreamFailure("http_error", "", status=404))
    assert badge.startswith("✗ 404 MODEL NOT FOUND: check the model name") and "Ctrl+P" in badge


async def test_log_compare_and_badge_share_the_words(replay: ReplayServer, caplog) -> None:
    body = {"error": {"type": "rate_limit_error", "message": "slow down"}}
    replay.scripts["limited"] = Script(status=429, content_type="application/json",
                                       headers=[("Retry-After", "7")],
                                       body=[json.dumps(body).encode()])
    caplog.set_level(logging.INFO, logger="anoman_tui.streaming.client")
    request = StreamRequest(base_url=replay.base_url, api_key="anm-sk-test-0000",
                            endpoint="openai", model="limited",
                            messages=(ChatTurn(role="user", content="hi"),))
    async with StreamClient() as client:
        stream = client.stream(request)
        async for _ in stream:
            pass
    assert stream.result is not None and stream.result.failure is not None
    words = describe_failure(stream.result.failure).text
    assert words == "429 RATE LIMITED: retry in 7 s (slow down)"
    assert any(words in record.getMessage() for record in caplog.records)


async def test_compare_summary_shows_estimated_cost_and_shared_words(
    replay: ReplayServer, capsys, monkeypatch
) -> None:
    # A provider without Anoman blocks, whose model list carries prices.
    no_block = [f for f in OPENAI_EXAMPLE_STREAM if b"_anoman" not in f]
    replay.scripts["priced"] = Script(body=list(no_block))
    replay.scripts["limited"] = Script(
        status=429, content_type="application/json",
        body=[b'{"error":{"type":"rate_limit_error","message":"slow down"}}'])
    listing = {"data": [{"id": "priced", "anoman": {"pricing": {
        "input_usd_per_mtok": "3", "output_usd_per_mtok": "15"}}}, {"id": "limited"}]}
    replay.scripts["/v1/models"] = Script(content_type="application/json",
                                          body=[json.dumps(listing).encode()], chunked=False)
    spec = CompareSpec(prompt="story", panes=(PaneSpec("priced"), PaneSpec("limited")),
                       base_url=replay.base_url, api_key="anm-sk-test-0000")
    monkeypatch.setenv("COLUMNS", "200")
    code = await _compare_main(spec, as_json=False, store=None)  # no history here
    text = capsys.readouterr().out
    assert code == 1
    # 7 prompt tokens at $3/Mtok + 4 completion tokens at $15/Mtok
    assert "~$0.000081 (est.)" in text
    # No Retry-After: the server's words, not a guessed wait.
    assert "429 RATE LIMITED: slow down" in text


def test_cost_text_prefers_the_gateway_figure() -> None:
    from decimal import Decimal

    from anoman_tui.streaming import ModelInfo
    from anoman_tui.wire import AnomanBlock, Usage

    usage = Usage(prompt_tokens=1000, completion_tokens=1000, total_tokens=2000)
    info = ModelInfo(id="m", input_usd_per_mtok=Decimal(1), output_usd_per_mtok=Decimal(2))
    assert cost_of(AnomanBlock.model_validate({"cost_usd": "0.5"}), usage, info).shown() == "$0.5"
    assert cost_of(None, usage, info).shown() == "~$0.003000 (est.)"
    assert cost_of(None, usage, None).shown() == "—"
