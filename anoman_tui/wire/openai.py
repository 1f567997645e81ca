"""OpenAI chat completion shapes: streamed chunks and whole (cache-hit or non-streaming) bodies."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import Field

from anoman_tui.wire.anoman import AnomanBlock
from anoman_tui.wire.base import WireModel


class Usage(WireModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    @property
    def provider_cost_usd(self) -> Decimal | None:
        """`usage.cost` in US dollars, as LiteLLM and OpenRouter send it; None when absent.

        Read from the extra fields so the usage counts keep their shape wherever they
        are dumped. Anything but a finite, non-negative number reads as absent.
        """
        return _cost((self.model_extra or {}).get("cost"))


def _cost(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        # str() first: the float's shortest form, not its binary expansion.
        cost = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return cost if cost.is_finite() and cost >= 0 else None


class ChoiceDelta(WireModel):
    role: str | None = None
    content: str | None = None
    # DeepSeek-style reasoning text; OpenRouter-style gateways call it `reasoning`.
    reasoning_content: str | None = None
    reasoning: str | None = None

    @property
    def reasoning_text(self) -> str | None:
        return self.reasoning_content or self.reasoning


class ChunkChoice(WireModel):
    index: int = 0
    delta: ChoiceDelta = Field(default_factory=ChoiceDelta)
    finish_reason: str | None = None


class ChatCompletionChunk(WireModel):
    """One `chat.completion.chunk` frame. `choices` may be absent (the Anoman frame)."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[ChunkChoice] | None = None
    usage: Usage | None = None
    anoman: AnomanBlock | None = Field(default=None, alias="_anoman")


class ChatMessage(WireModel):
    role: str = "assistant"
    content: str | None = None
    reasoning_content: str | None = None


class CompletionChoice(WireModel):
    index: int = 0
    message: ChatMessage = Field(default_factory=ChatMessage)
    finish_reason: str | None = None


class ChatCompletion(WireModel):
    """A whole `chat.completion` body: a non-streaming answer or a streaming cache hit."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[CompletionChoice] = Field(default_factory=list)
    usage: Usage | None = None
    anoman: AnomanBlock | None = Field(default=None, alias="_anoman")
