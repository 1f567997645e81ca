"""The gateway's one tokenizer, used for prompts and completions alike.

A GPT-2-style pre-tokenizer (words with their leading space, digit runs,
punctuation runs, whitespace) with long runs cut into pieces, so counts look
like a BPE tokenizer's without shipping a vocabulary. The simulated models
stream exactly these pieces, one per frame, so the usage a stream reports is
the number of text pieces that crossed the wire.

Invariant: ``"".join(tokenize(text)) == text`` for every string.
Imports only the standard library.
"""

from __future__ import annotations

import re

# Long words and digit runs are split: real BPE vocabularies rarely hold
# more than ~8 letters or 3 digits in one token.
_PIECE = re.compile(
    r" ?[^\W\d_]{1,8}"  # a word fragment, with its leading space
    r"| ?\d{1,3}"  # up to three digits
    r"| ?[^\s\w]{1,4}"  # punctuation (Markdown markers such as ``` or **)
    r"| ?_{1,4}"  # underscores are \w but not letters
    r"|\s+(?!\S)"  # trailing whitespace / blank lines
    r"|\s+",
)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens whose concatenation is ``text``."""
    return _PIECE.findall(text)


def count_tokens(text: str) -> int:
    """Number of tokens in ``text``."""
    return len(_PIECE.findall(text))


# Chat formatting costs a few tokens per message, as with real providers.
MESSAGE_OVERHEAD_TOKENS = 3


def count_prompt_tokens(messages: list[tuple[str, str]]) -> int:
    """Tokens of a normalized conversation: (role, text) pairs."""
    return sum(MESSAGE_OVERHEAD_TOKENS + count_tokens(text) for _, text in messages)
