"""The gateway's own example streams, byte for byte, for both formats (docs/wire-contract.md §2)."""

from __future__ import annotations

import json

ANOMAN_BLOCK = {
    "guardrails": {"injection": {"status": "pass", "score": 0.02}},
    "routing": {"mode": "realtime", "region": "id"},
    "cache": {"hit": False},
    "cost_usd": "0.000041",
    "weighted_tokens": 44,
}

# Verbatim from the gateway's public streaming page, as docs/wire-contract.md §2 restates it.
OPENAI_EXAMPLE_STREAM = [
    b'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1709876543,"model":"claude-sonnet-4-6","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
    b'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Once "},"finish_reason":null}]}\n\n',
    b'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"upon a "},"finish_reason":null}]}\n\n',
    b'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"time..."},"finish_reason":null}]}\n\n',
    b'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":4,"total_tokens":11}}\n\n',
    b'data: {"_anoman":{"guardrails":{"injection":{"status":"pass","score":0.02}},"routing":{"mode":"realtime","region":"id"},"cache":{"hit":false},"cost_usd":"0.000041","weighted_tokens":44}}\n\n',
    b"data: [DONE]\n\n",
]

OPENAI_ERROR_FRAME = (
    b'data: {"error":{"type":"provider_error","code":"stream_interrupted",'
    b'"message":"upstream stream interrupted",'
    b'"_anoman":{"failure_class":"upstream_error","completion_tokens":42}}}\n\n'
)


def _event(name: str, payload: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


ANTHROPIC_EXAMPLE_STREAM = [
    _event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_abc",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 7, "output_tokens": 1},
            },
        },
    ),
    _event(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    _event("ping", {"type": "ping"}),
    _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Once "}},
    ),
    _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "upon a "}},
    ),
    _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "time..."}},
    ),
    _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
    _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 4},
        },
    ),
    _event("anoman", {"type": "anoman", "_anoman": ANOMAN_BLOCK}),
    _event("message_stop", {"type": "message_stop"}),
]

ANTHROPIC_ERROR_EVENT = _event(
    "error",
    {
        "type": "error",
        "error": {
            "type": "provider_error",
            "code": "stream_interrupted",
            "message": "upstream stream interrupted",
            "_anoman": {"failure_class": "upstream_error", "completion_tokens": 42},
        },
    },
)
