"""Reading the judge's reply: a rubric verdict or a pairwise verdict, else a JudgeError.

A reply that cannot be read is a judge error, never a pass or a fail of the model judged:
the judge failed, not the answer. The rules are strict where leniency would turn a broken
reply into a verdict: "pass" must be a JSON boolean (promptfoo counts a missing "pass" as
a pass; here it is an error), "score" a number within 0..1.

Both parsers read the judge's LAST word: the last JSON object, the last `[[X]]`. What the
judge quotes from the prompt comes before its own verdict, and the prompt's inserted texts
were defanged (`prompts.defang`), so nothing echoed from an answer can match. A raw
control character inside a string (a line break in the reason, as models write them) does
not make an object unreadable; a verdict after the last readable object that cannot be
read (a `"pass":` that does not parse) is a judge error, never a fall-back to an earlier
object: a fail read as the pass before it would be the worst reading.

Pure: the standard library only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["A", "B", "C"]
"""A pairwise verdict by position: the answer shown as A, the one shown as B, or a tie."""

VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]", re.IGNORECASE)
"""The judge's pairwise verdict token (MT-bench's "[[A]]" format, any case and spacing)."""

MAX_REASON = 500
"""Characters of the judge's reason kept: it is shown in one line of a table."""

_DECODER = json.JSONDecoder(strict=False)
"""strict=False: control characters inside strings are read as they are."""
_PASS_KEY = re.compile(r'"pass"\s*:')


class JudgeError(ValueError):
    """The judge's reply holds no usable verdict; the message names why, in one line."""


@dataclass(frozen=True)
class RubricVerdict:
    """What the judge said of one answer against one rubric."""

    passed: bool
    score: float
    reason: str


def parse_rubric(reply: str) -> RubricVerdict:
    """The verdict in the LAST top-level JSON object of `reply` that parses (fenced in
    ```json or not). Without "score", the score is 1.0 for a pass and 0.0 for a fail;
    "reason" may be missing or null (then ""), and is made one line of at most
    `MAX_REASON` characters."""
    found, end = _last_object(reply)
    if found is not None and _PASS_KEY.search(reply, end):
        raise JudgeError("the judge's last verdict is not JSON that can be read")
    if found is None:
        raise JudgeError("the judge's reply has no JSON object")
    if "pass" not in found:
        raise JudgeError('the judge\'s verdict has no "pass"')
    passed = found["pass"]
    if not isinstance(passed, bool):
        raise JudgeError(f'the judge\'s "pass" is {_show(passed)}, not true or false')
    if "score" in found:
        raw = found["score"]
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise JudgeError(f'the judge\'s "score" is {_show(raw)}, not a number')
        score = float(raw)
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            raise JudgeError(f"the judge's score {_show(raw)} is outside 0..1")
    else:
        score = 1.0 if passed else 0.0
    reason = found.get("reason")
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        raise JudgeError(f'the judge\'s "reason" is {_show(reason)}, not a string')
    return RubricVerdict(passed=passed, score=score, reason=one_line(reason, MAX_REASON))


def parse_pairwise(reply: str) -> Verdict:
    """The judge's final verdict: the LAST `[[A]]`, `[[B]]` or `[[C]]` in `reply`."""
    last: str | None = None
    for match in VERDICT.finditer(reply):
        last = match.group(1).upper()
    if last == "A":
        return "A"
    if last == "B":
        return "B"
    if last == "C":
        return "C"
    raise JudgeError("the judge's reply has no verdict [[A]], [[B]] or [[C]]")


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace runs made single spaces, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _last_object(reply: str) -> tuple[dict[str, Any] | None, int]:
    """The last JSON object that parses from some `{` of `reply`, objects nested in one
    found skipped (it is read whole), and where it ends (0 for none)."""
    last: dict[str, Any] | None = None
    last_end = 0
    start = reply.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(reply, start)
        except (ValueError, RecursionError):  # not JSON here, or nested beyond reading
            start = reply.find("{", start + 1)
            continue
        if isinstance(value, dict):  # always, from a "{"
            last, last_end = value, end
        start = reply.find("{", end)
    return last, last_end


def _show(value: object) -> str:
    """A JSON value as the judge wrote it, short enough for a one-line message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:
        text = repr(value)
    return one_line(text, 40)
