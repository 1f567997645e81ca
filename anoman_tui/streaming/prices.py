"""Estimated cost from a maintained price library, for servers that send no figure.

`genai-prices` ships its price table inside the package (no network at import or at
lookup; its optional updater is never started here). Importing it takes about 0.1 s,
so it is imported on the first estimate, never at start-up.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any

# Provider ids as the price library names them, for the hints a caller may give
# (a target's kind or name, or the prefix of a LiteLLM-style "provider/model" name).
_PROVIDER_ALIASES = {
    "openai-compatible": None,
    "anoman": None,
    "local": None,
    "ollama": None,
    "claude": "anthropic",
    "gemini": "google",
    "vertex_ai": "google",
    "mistralai": "mistral",
}


@functools.cache
def _library() -> Any:
    try:
        import genai_prices
    except ImportError:  # an install without it still runs; estimates say "—"
        return None
    return genai_prices


def preload_price_library() -> bool:
    """Import the price library now (e.g. in a worker thread at start-up), so the first
    estimate does not pause the caller; False when it is not installed."""
    return _library() is not None


def estimate_from_price_library(
    model: str, prompt_tokens: int, completion_tokens: int, provider: str | None = None
) -> Decimal | None:
    """The cost of `prompt_tokens` in and `completion_tokens` out at `model`'s list price.

    `provider` is a hint (e.g. "openai", "anthropic", "openrouter"); a model named
    "provider/model" (LiteLLM, OpenRouter) is also tried as that provider's model.
    None when the library does not know the model: never a made-up zero.
    """
    library = _library()
    if library is None or not model:
        return None
    usage = library.Usage(input_tokens=prompt_tokens, output_tokens=completion_tokens)
    for ref, hint in _candidates(model, provider):
        try:
            price = library.calc_price(usage, model_ref=ref, provider_id=hint)
        except (LookupError, ValueError):
            continue
        total = Decimal(str(price.total_price))
        return total.quantize(Decimal("0.000001"))
    return None


def _candidates(model: str, provider: str | None) -> list[tuple[str, str | None]]:
    hint = _PROVIDER_ALIASES.get(provider.lower(), provider.lower()) if provider else None
    out: list[tuple[str, str | None]] = []
    if hint:
        out.append((model, hint))
    out.append((model, None))
    if "/" in model:
        prefix, _, rest = model.partition("/")
        prefix_hint = _PROVIDER_ALIASES.get(prefix.lower(), prefix.lower())
        if prefix_hint:
            out.append((rest, prefix_hint))
        out.append((rest, None))
    return list(dict.fromkeys(out))
