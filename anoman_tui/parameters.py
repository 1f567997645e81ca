"""The sampling parameters a request carries (`temperature`, `max_tokens`): their valid
ranges, defined once, and the one check of each that every place a value comes from
uses before anything is sent: a flag (`--temperature`, `--max-tokens`), the config file
(top level and `[[panes]]`), a suite (TOML or promptfoo) and the screen's parameter
dialog. A value out of range is refused with one line there, never sent to come back as
a `400` from each model (which would then read as the models' failures).

Each `*_problem` takes a value as parsed (a TOML or JSON number) and returns what is
wrong with it, a phrase to put after the field's name ("must be a number from 0 to 2"),
or None; each `parse_*` reads a value typed as text. NaN and infinity are never valid.

Imports the standard library only: the command line reads it on every start-up.
"""

from __future__ import annotations

import math
from decimal import Decimal

TEMPERATURE_MIN = 0.0
TEMPERATURE_MAX = 2.0
"""The range OpenAI's API (and the local gateway) accept; Anthropic's stops at 1."""
MAX_TOKENS_MIN = 1
MAX_TOKENS_MAX = 1_000_000
"""The local gateway's ceiling, above any model's output limit today."""

TEMPERATURE_RULE = f"a number from {TEMPERATURE_MIN:g} to {TEMPERATURE_MAX:g}"
MAX_TOKENS_RULE = f"a whole number from {MAX_TOKENS_MIN} to {MAX_TOKENS_MAX}"


def shown(value: object) -> str:
    """`value` as a problem quotes it: short, one line."""
    text = f'"{value}"' if isinstance(value, str) else str(value)
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= 40 else text[:39] + "…"


def _typed(text: str) -> str:
    """Typed text as a problem quotes it: as typed, unless empty or unprintable."""
    text = text.strip()
    if not text or not text.isprintable():
        return shown(text)
    return text if len(text) <= 40 else text[:39] + "…"


def temperature_problem(value: object) -> str | None:
    """Why `value` cannot be sent as `temperature`, or None. A `Decimal` (as a suite
    file is read) is a number too."""
    if isinstance(value, Decimal):
        if value.is_finite() and TEMPERATURE_MIN <= value <= TEMPERATURE_MAX:
            return None
    elif not isinstance(value, bool) and isinstance(value, int | float) \
            and math.isfinite(value) and TEMPERATURE_MIN <= value <= TEMPERATURE_MAX:
        return None
    return f"must be {TEMPERATURE_RULE}, not {shown(value)}"


def max_tokens_problem(value: object) -> str | None:
    """Why `value` cannot be sent as `max_tokens`, or None (a float, even 5.0, is not
    a whole number here: TOML and JSON write whole numbers without a point)."""
    if isinstance(value, bool) or not isinstance(value, int) \
            or not MAX_TOKENS_MIN <= value <= MAX_TOKENS_MAX:
        return f"must be {MAX_TOKENS_RULE}, not {shown(value)}"
    return None


def parse_temperature(text: str) -> float:
    """A typed temperature; `ValueError` with the problem when it is not one."""
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"must be {TEMPERATURE_RULE}, not {_typed(text)}") from None
    if temperature_problem(value):
        raise ValueError(f"must be {TEMPERATURE_RULE}, not {_typed(text)}")
    return value


def parse_max_tokens(text: str) -> int:
    """A typed max_tokens; `ValueError` with the problem when it is not one."""
    stripped = text.strip()
    # int() also takes "1_000" and, with no length limit, thousands of digits.
    if not stripped.isascii() or not stripped.isdigit() or len(stripped) > 12:
        raise ValueError(f"must be {MAX_TOKENS_RULE}, not {_typed(text)}")
    value = int(stripped)
    problem = max_tokens_problem(value)
    if problem:
        raise ValueError(problem)
    return value
