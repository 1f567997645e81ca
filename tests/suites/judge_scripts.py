"""What the judge tests share: a model slot on a server, and a judge's reply scripted
byte for byte for tests/replay_server.py."""

from __future__ import annotations

from pydantic import SecretStr

from anoman_tui.targets import Connection, ModelSlot, gateway_target
from tests.replay_server import Script, sse


def slot_at(base_url: str, key: str, model: str, pane: int) -> ModelSlot:
    target = gateway_target(base_url, SecretStr(key))
    return ModelSlot(spec=model, model=model, pane=pane,
                     connection=Connection(target=target, base_url=base_url,
                                           api_key=SecretStr(key)))


def reply(text: str, *, cost: str | None = "0.000010") -> Script:
    """The judge's reply streamed in three pieces, as a provider would."""
    third = max(1, len(text) // 3)
    pieces = [text[:third], text[third:2 * third], text[2 * third:]]
    frames = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
              for p in pieces if p]
    last: dict[str, object] = {
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}}
    if cost is not None:
        last["_anoman"] = {"cost_usd": cost}
    return Script(body=[*sse(*frames), *sse(last), *sse("[DONE]")])
