"""Wire models: the contract's shapes, Decimal cost, unknown fields and events kept or ignored."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal

import pytest

from anoman_tui.wire import (
    AnomanBlock,
    AnomanEvent,
    ChatCompletionChunk,
    ContentBlockDeltaEvent,
    ErrorBody,
    MessageDeltaEvent,
    PingEvent,
    StreamErrorFrame,
    ThinkingDeltaPayload,
    UnknownAnthropicEvent,
    UnknownDeltaPayload,
    parse_anthropic_event,
)
from tests.frames import ANOMAN_BLOCK, OPENAI_EXAMPLE_STREAM


def test_anoman_block_parses_cost_as_decimal_and_keeps_unknown_keys() -> None:
    raw = {**ANOMAN_BLOCK, "trace_id": "tr_1", "playground": {"compare_id": "c", "panel": 3}}
    block = AnomanBlock.model_validate(raw)
    assert block.cost_usd == Decimal("0.000041")
    assert isinstance(block.cost_usd, Decimal)
    assert block.weighted_tokens == 44
    assert block.guardrails["injection"].score == 0.02
    assert block.routing is not None and block.routing.region == "id"
    assert not block.cache_hit
    assert block.playground is not None and block.playground.panel == 3
    assert block.model_extra == {"trace_id": "tr_1"}
    assert block.model_dump(mode="json", exclude_none=True)["cost_usd"] == "0.000041"


def test_anoman_block_tolerates_odd_values() -> None:
    block = AnomanBlock.model_validate({"cost_usd": "not-a-number", "guardrails": {"x": "pass"}})
    assert block.cost_usd is None and block.guardrails == {}
    assert AnomanBlock.model_validate({"cost_usd": 0.1}).cost_usd == Decimal("0.1")


def test_chunk_models_accept_the_spec_frames_and_unknown_fields() -> None:
    chunks = [
        ChatCompletionChunk.model_validate(json.loads(f[6:]))
        for f in OPENAI_EXAMPLE_STREAM
        if not f.startswith(b"data: [DONE]")
    ]
    assert chunks[0].choices is not None and chunks[0].choices[0].delta.role == "assistant"
    assert chunks[4].usage is not None and chunks[4].usage.total_tokens == 11
    assert chunks[5].choices is None and chunks[5].anoman is not None
    odd = ChatCompletionChunk.model_validate(
        {"choices": [{"delta": {"content": "x", "new": 1}, "logprobs": None}], "system_fp": "y"}
    )
    assert odd.choices is not None and odd.choices[0].delta.content == "x"


def test_error_frame_and_bodies() -> None:
    frame = StreamErrorFrame.model_validate(
        {
            "error": {
                "type": "provider_error",
                "code": "stream_interrupted",
                "message": "upstream stream interrupted",
                "_anoman": {"failure_class": "upstream_error", "completion_tokens": 42},
            }
        }
    )
    assert frame.error.anoman is not None and frame.error.anoman.completion_tokens == 42
    body = ErrorBody.model_validate(
        {"error": {"type": "guardrail_blocked", "code": 403,
                   "_anoman": {"guardrails": {"pii": {"status": "block", "score": 0.97}}}}}
    )
    assert body.error.code == "403"
    assert body.guardrails is not None and body.guardrails.guardrails["pii"].status == "block"
    assert ErrorBody.model_validate({"error": "plain text"}).error.message == "plain text"


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        ({"type": "ping"}, PingEvent),
        ({"type": "anoman", "_anoman": ANOMAN_BLOCK}, AnomanEvent),
        ({"type": "brand_new_event", "x": 1}, UnknownAnthropicEvent),
        ({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
          "usage": {"output_tokens": 9}}, MessageDeltaEvent),
    ],
)
def test_anthropic_events_by_type(payload, kind) -> None:
    assert isinstance(parse_anthropic_event(payload), kind)


def test_anthropic_deltas() -> None:
    thinking = parse_anthropic_event(
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "hmm"}}
    )
    assert isinstance(thinking, ContentBlockDeltaEvent)
    assert isinstance(thinking.delta, ThinkingDeltaPayload) and thinking.delta.thinking == "hmm"
    sig = parse_anthropic_event(
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "abc"}}
    )
    assert isinstance(sig, ContentBlockDeltaEvent) and isinstance(sig.delta, UnknownDeltaPayload)
    # the SSE event name stands in for a missing type
    assert isinstance(parse_anthropic_event({}, "ping"), PingEvent)


def test_client_side_never_imports_textual() -> None:
    code = (
        "import sys, anoman_tui.wire, anoman_tui.streaming;"
        "import importlib.util as u;"
        "u.find_spec('anoman_tui.gateway') and __import__('anoman_tui.gateway.app');"
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
