"""What the third-party tests share besides their fixtures (``conftest.py``): the mock
answers LiteLLM is configured with and what the ``litellm_proxy`` fixture gives."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

OPENAI_MOCK_TEXT = "Hello from the LiteLLM mock, in several small chunks."
ANTHROPIC_MOCK_TEXT = "Bonjour from the Anthropic-style LiteLLM mock."


@dataclass(frozen=True)
class LiteLLMProxy:
    base_url: str
    master_key: str
    openai_model: str  # OpenAI provider, mock answer OPENAI_MOCK_TEXT
    anthropic_model: str  # Anthropic provider, mock answer ANTHROPIC_MOCK_TEXT
    # Anthropic provider whose upstream is the local gateway: streams on /v1/messages,
    # where LiteLLM answers every mock with a single JSON message instead.
    messages_model: str
    # OpenAI provider whose upstream is the local gateway: paced like a real model.
    paced_model: str
    rate_limited_model: str  # mock that raises LiteLLM's RateLimitError
    startup_s: float
    log_path: Path
