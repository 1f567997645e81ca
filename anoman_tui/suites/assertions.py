"""The assertions of a suite: whether one can run (`problem`), its verdict on one answer
(`check`), and a case's verdict from its assertions' (`case_verdict`).

The types and their meaning are promptfoo's (src/assertions/ in promptfoo/promptfoo), so a
reader of either knows both; where this differs, the function says so:

- `regex` uses Python's `re` syntax and `re.search` (promptfoo: JavaScript's RegExp.test).
  A pattern that backtracks catastrophically is the suite author's to avoid: `re` has no
  time limit.
- `is-json` and `contains-json` take no schema (promptfoo's optional JSON-schema value).
- `-any`/`-all` need a list (promptfoo also splits a comma-separated string; the suite
  loaders give a list).
- `latency`, `ttft` and `cost` need a threshold (promptfoo records a named metric without
  one); an unknown figure fails, negated or not.

Every result's `reason` is one line saying what was compared, with excerpts of the answer
(shortened, single-line, control characters blanked): never the whole answer. Every check
is bounded in time on long answers (contains-json and levenshtein are the ones to watch).

Pure functions. May import: the standard library, numpy, `anoman_tui.suites.model` and
(for types) `anoman_tui.judges`.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np

from anoman_tui.suites.model import (
    ASSERTION_TYPES,
    JUDGE_TYPES,
    RUBRIC_THRESHOLD,
    Assertion,
    AssertionResult,
    Case,
)

if TYPE_CHECKING:
    from anoman_tui.judges.parse import RubricVerdict

LEVENSHTEIN_DEFAULT_THRESHOLD = 5.0
"""promptfoo's default largest distance (`assertion.threshold || 5`)."""

JSON_MAX_NESTING = 256
"""contains-json reads no candidate nested deeper: Python's parser recurses per level and
refuses about a thousand anyway, and skipping them keeps hostile answers linear."""

EXCERPT_CHARS = 60

_JSON_SPACE = " \t\r\n"

_BIT_PARALLEL_MAX = 4096
"""Past this many characters in the shorter string, each of Myers' steps works on integers
so long that the numpy band is faster (measured: 100 K against 100 K, about 5 s one way)."""

_TEXT_TYPES = ("equals", "contains", "icontains", "starts-with", "regex")
_LIST_TYPES = ("contains-any", "icontains-any", "contains-all", "icontains-all")
_JSON_TYPES = ("is-json", "contains-json")
_METRIC_TYPES = ("latency", "ttft", "cost")
_NON_EMPTY = ("contains", "icontains", "starts-with", "regex")
"""An empty value would pass every answer: a mistake in the suite (promptfoo refuses an
empty `contains` value too)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the assertions see of one stream."""

    text: str
    ttft_s: float | None = None
    e2e_s: float | None = None
    cost_usd: Decimal | None = None
    """Spent cost (gateway figure, else provider, else estimate); None when unknown."""
    completed: bool = True


def problem(assertion: Assertion) -> str | None:
    """Why `assertion` cannot run (one phrase, no trailing period), or None when it can.
    The loaders call it to refuse a bad suite before anything is sent."""
    kind = assertion.type
    if kind not in ASSERTION_TYPES:
        close = difflib.get_close_matches(kind.removeprefix("not-"), ASSERTION_TYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown assertion type {kind!r}{hint}"
    if not _finite_number(assertion.weight) or assertion.weight < 0:
        return f"{assertion.name}: weight must be a number ≥ 0 (got {assertion.weight!r})"
    value = assertion.value
    if kind in _TEXT_TYPES or kind == "levenshtein":
        if value is None:
            return f"{assertion.name} needs a value"
        if isinstance(value, tuple):
            return f"{assertion.name} takes one value, not a list"
        if isinstance(value, bool):
            return f"{assertion.name} needs a text value (got {value!r})"
        text = _text_value(value)
        if kind in _NON_EMPTY and not text:
            return f"{assertion.name} needs a non-empty value"
        if kind == "regex":
            try:
                re.compile(text)
            except re.error as exc:
                return f"regex {_excerpt(text)} does not compile: {exc}"
    elif kind in _LIST_TYPES:
        if not isinstance(value, tuple):
            return f"{assertion.name} needs a list of values"
        if not value:
            return f"{assertion.name} needs at least one value"
        if not all(isinstance(v, str) for v in value):
            return f"{assertion.name} needs a list of texts"
    elif kind in _JSON_TYPES and value is not None:
        return f"{assertion.name} takes no value (a JSON schema is not supported)"
    elif kind in JUDGE_TYPES:
        if not isinstance(value, str) or not value.strip():
            return f"{assertion.name} needs a rubric: a non-empty text value"
        threshold = assertion.threshold
        if threshold is not None and (not _finite_number(threshold)
                                      or not 0 <= threshold <= 1):
            return f"{assertion.name} threshold must be a score from 0 to 1 (got {threshold!r})"
    threshold = assertion.threshold
    if kind == "levenshtein" and threshold is not None and (
            not _finite_number(threshold) or threshold < 0):
        return f"levenshtein threshold must be a distance ≥ 0 (got {threshold!r})"
    if kind in _METRIC_TYPES:
        unit = "USD" if kind == "cost" else "ms"
        if assertion.threshold is None:
            return f"{assertion.name} needs a threshold ({unit})"
        if not _finite_number(assertion.threshold) or assertion.threshold < 0:
            return (f"{assertion.name} threshold must be a number ≥ 0 ({unit}; got "
                    f"{assertion.threshold!r})")
    return None


def check(assertion: Assertion, answer: Answer) -> AssertionResult:
    """The verdict of `assertion` on `answer`. The reason states the fact found (`answer
    contains "refund"`), which reads right whether or not the assertion is negated."""
    trouble = problem(assertion)
    if trouble is not None:
        return _result(assertion, False, f"cannot run: {trouble}")
    kind = assertion.type
    if kind in JUDGE_TYPES:
        # Decided by the judge model (the engine's, with `rubric_result`), never here.
        return AssertionResult(type=assertion.name, passed=None, reason="not judged",
                               weight=assertion.weight, judge_error="no judge model")
    if kind in _METRIC_TYPES:
        held, fact = _check_metric(assertion, answer)
        if held is None:  # unknown figure: nothing to negate
            return _result(assertion, False, fact)
    elif kind in _LIST_TYPES:
        held, fact = _check_list(kind, assertion.value, answer.text)  # type: ignore[arg-type]
    elif kind == "is-json":
        held, fact = _check_is_json(answer.text)
    elif kind == "contains-json":
        held, fact = _check_contains_json(answer.text)
    elif kind == "levenshtein":
        limit = (LEVENSHTEIN_DEFAULT_THRESHOLD if assertion.threshold is None
                 else assertion.threshold)
        held, fact = _check_levenshtein(answer.text, _text_value(assertion.value), limit)
    else:
        held, fact = _check_text(kind, answer.text, _text_value(assertion.value))
    return _result(assertion, held != assertion.negate, fact)


def case_verdict(case: Case, results: Sequence[AssertionResult], completed: bool) -> bool | None:
    """Whether a case's answer passes: None when the case has no assertion (recorded, not
    judged); False when its stream did not complete, whatever the assertions; else the
    passing assertions' weight ≥ threshold × the total weight, threshold None meaning all
    of it (1.0).

    As the issue words it, a weight-0 assertion is informational: it never fails a case
    (promptfoo fails a test on any failing assertion when no threshold is set).
    """
    if not case.judged:
        return None
    if not completed:
        return False
    threshold = 1.0 if case.threshold is None else float(case.threshold)
    total = math.fsum(r.weight for r in results)
    passed = math.fsum(r.weight for r in results if r.passed)
    undecided = math.fsum(r.weight for r in results if r.passed is None)
    # Float weights (0.1 + 0.2 ...) must not fail a case by a rounding error.
    need = threshold * total - 1e-9 * max(1.0, total)
    if passed >= need:
        return True
    if undecided and passed + undecided >= need:
        return None  # the judge's errors decide it: neither a pass nor a fail
    return False


def rubric_result(assertion: Assertion, verdict: RubricVerdict | None,
                  error: str | None) -> AssertionResult:
    """An `llm-rubric`'s result from the judge's verdict, or from why there is none.

    It passes when the judge said `pass` true and its score is at least the threshold
    (default 0.5), as promptfoo's llm-rubric does; `not-llm-rubric` passes otherwise. A
    reply that could not be read leaves it undecided (`passed` None): a judge's error is
    never a pass or a fail of the model.
    """
    threshold = RUBRIC_THRESHOLD if assertion.threshold is None else float(assertion.threshold)
    if verdict is None:
        return AssertionResult(type=assertion.name, passed=None,
                               reason=f"judge error: {error or 'no verdict'}",
                               weight=assertion.weight, judge_error=error or "no verdict")
    held = verdict.passed and verdict.score >= threshold
    fact = (f"judge: pass {str(verdict.passed).lower()}, score {verdict.score:g} "
            f"{'≥' if verdict.score >= threshold else '<'} {threshold:g}")
    return AssertionResult(type=assertion.name, passed=held != assertion.negate, reason=fact,
                           weight=assertion.weight, judge_pass=verdict.passed,
                           judge_score=verdict.score, judge_reason=verdict.reason)


# --- the checks: each returns (what was found holds, the fact as one line) ---------------


def _check_text(kind: str, text: str, value: str) -> tuple[bool, str]:
    shown = _excerpt(value)
    if kind == "equals":
        if text == value:
            return True, f"answer equals {shown}"
        at = _first_difference(text, value)
        return False, (f"answer {_excerpt(text, start=max(0, at - 20))} differs from "
                       f"{shown} at character {at + 1}")
    if kind == "contains":
        if value in text:
            return True, f"answer contains {shown}"
        return False, f"answer does not contain {shown}"
    if kind == "icontains":
        if value.casefold() in text.casefold():
            return True, f"answer contains {shown} (ignoring case)"
        return False, f"answer does not contain {shown} (ignoring case)"
    if kind == "starts-with":
        if text.startswith(value):
            return True, f"answer starts with {shown}"
        return False, f"answer starts {_excerpt(text, limit=max(len(value), 10))}, not {shown}"
    # regex: problem() has checked that it compiles.
    match = re.search(value, text)
    pattern = f"/{_single_line(value, EXCERPT_CHARS)}/"
    if match is None:
        return False, f"answer does not match {pattern}"
    return True, (f"answer matches {pattern} at character {match.start() + 1}: "
                  f"{_excerpt(match.group(0))}")


def _check_list(kind: str, values: tuple[str, ...], text: str) -> tuple[bool, str]:
    fold = kind.startswith("i")
    haystack = text.casefold() if fold else text
    found = [v for v in values if (v.casefold() if fold else v) in haystack]
    missing = [v for v in values if v not in found]
    case = " (ignoring case)" if fold else ""
    if kind.endswith("-any"):
        if found:
            return True, f"answer contains {_excerpt(found[0])}{case}"
        return False, f"answer contains none of {_listed(values)}{case}"
    if not missing:
        return True, f"answer contains all {len(values)} of {_listed(values)}{case}"
    return False, f"answer lacks {_listed(missing)}{case}"


def _check_metric(assertion: Assertion, answer: Answer) -> tuple[bool | None, str]:
    limit = float(assertion.threshold or 0.0)
    if assertion.type == "cost":
        if answer.cost_usd is None:
            return None, "cost unknown (no gateway, provider or estimated figure)"
        # The threshold as written (0.001 stays 0.001), compared exactly with the cost.
        bound = Decimal(repr(limit))
        sign = "≤" if answer.cost_usd <= bound else ">"
        return answer.cost_usd <= bound, f"cost ${answer.cost_usd} {sign} ${bound}"
    seconds = answer.ttft_s if assertion.type == "ttft" else answer.e2e_s
    label = "ttft" if assertion.type == "ttft" else "end-to-end"
    if seconds is None:
        why = "" if answer.completed else " (the stream did not complete)"
        return None, f"{label} unknown{why}"
    held = seconds * 1000.0 <= limit  # the threshold is in ms, as promptfoo's
    sign = "≤" if held else ">"
    return held, f"{label} {seconds:.3f} s {sign} {limit / 1000.0:.3f} s"


def _check_is_json(text: str) -> tuple[bool, str]:
    # JSON.parse in promptfoo: the whole text is one JSON value; whitespace around it (space,
    # tab, CR, LF, as JSON defines it) is allowed, a code fence is not. Python's json.loads
    # allows exactly that whitespace; NaN and Infinity, which it would accept, are refused.
    try:
        _STRICT_JSON.decode(text)
    except json.JSONDecodeError as exc:
        return False, f"answer is not JSON: {exc.msg} at character {exc.pos + 1}"
    except (ValueError, RecursionError) as exc:
        return False, f"answer is not JSON: {_single_line(str(exc), EXCERPT_CHARS)}"
    return True, f"answer is JSON ({_json_kind(text.lstrip(_JSON_SPACE)[:1])})"


def _check_contains_json(text: str) -> tuple[bool, str]:
    found = _find_json(text)
    if found is None:
        return False, "answer holds no JSON object or array"
    return True, f"answer holds JSON ({_json_kind(text[found])} at character {found + 1})"


def _check_levenshtein(text: str, value: str, limit: float) -> tuple[bool, str]:
    shown = _excerpt(value)
    gap = abs(len(text) - len(value))
    if gap > limit:  # the distance is at least the difference in length: no need to compute
        return False, (f"edit distance ≥ {gap} > {limit:g} from {shown} (lengths "
                       f"{len(text)} and {len(value)})")
    distance = levenshtein_within(text, value, math.floor(limit))
    if distance is None:
        return False, f"edit distance > {limit:g} from {shown}"
    return True, f"edit distance {distance} ≤ {limit:g} from {shown}"


# --- contains-json: every bracketed candidate, in linear time -----------------------------


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# parse_int=str: the value is never used, and int() refuses over 4,300 digits where JSON
# (and promptfoo's JSON.parse) does not.
_STRICT_JSON = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=str)
# Only these characters matter to the bracket pairing; the prose between is skipped in C.
_STRUCTURAL = re.compile(r'[][{}"\\]')
_CLOSER = {"{": "}", "[": "]"}


def _find_json(text: str) -> int | None:
    """Where the first object or array inside `text` that parses as JSON starts.

    One pass pairs the brackets (quote-aware inside brackets, so a `}` in a JSON string
    does not close anything; quotes in the prose around are ignored). Each pair is a
    candidate, tried outermost first with `raw_decode` at its opening bracket (no copy).
    When a candidate fails at position p, every candidate nested in it that spans p would
    fail at p too (JSON values parse the same wherever they stand), so those are skipped;
    the parses that run then cover disjoint stretches of the text. Candidates nested more
    than `JSON_MAX_NESTING` deep are not read, so the slices copied cost at most that many
    times the text: linear in its length however hostile the answer.
    """
    pairs: list[tuple[int, int, int]] = []  # (start, end, nesting height)
    starts: list[int] = []  # the open brackets
    heights: list[int] = []  # the nesting height of what each holds so far
    in_string = False
    escaped_at = -1  # the index a backslash in a string escapes
    for match in _STRUCTURAL.finditer(text):
        index = match.start()
        char = text[index]
        if not starts:
            if char == "{" or char == "[":
                starts.append(index)
                heights.append(0)
        elif in_string:
            if char == '"' and index != escaped_at:
                in_string = False
            elif char == "\\" and index != escaped_at:
                escaped_at = index + 1
        elif char == '"':
            in_string = True
        elif char == "{" or char == "[":
            starts.append(index)
            heights.append(0)
        else:
            start, height = starts.pop(), heights.pop() + 1
            if _CLOSER[text[start]] != char:
                starts.clear()  # mismatched: what was open cannot be JSON
                heights.clear()
                continue
            pairs.append((start, index, height))
            if heights and heights[-1] < height:
                heights[-1] = height
    pairs.sort()
    failed: list[tuple[int, int]] = []  # (end, failure position) of enclosing failures
    for start, end, height in pairs:
        while failed and failed[-1][0] < start:
            failed.pop()
        if failed and start <= failed[-1][1] <= end:
            continue
        if height > JSON_MAX_NESTING:
            continue
        try:
            # A slice, not raw_decode(text, start): a JSONDecodeError counts the lines of
            # its whole document, which would make every failure cost the text so far.
            # A candidate that is JSON ends at its closing bracket, so nothing is lost.
            _STRICT_JSON.decode(text[start:end + 1])
        except json.JSONDecodeError as exc:
            failed.append((end, start + exc.pos))
            continue
        except (ValueError, RecursionError):
            continue
        return start
    return None


# --- levenshtein --------------------------------------------------------------------------


def levenshtein_within(a: str, b: str, limit: int) -> int | None:
    """The edit distance (insertions, deletions, substitutions) between `a` and `b` when it
    is at most `limit`, else None.

    Common prefix and suffix are dropped first (a near-miss answer is mostly those). Then,
    for a small limit against long strings, Ukkonen's band: only cells within `limit` of
    the diagonal, stopping as soon as a whole row exceeds it (O(n·limit), and usually
    far less); otherwise Myers' bit-parallel algorithm (Hyyrö's form of the global
    distance) over the longer string with the shorter one as one integer bit vector
    (O(n·m / word)). A 100 KB answer against a short value: a few tens of milliseconds.
    """
    if limit < 0:
        return None
    a, b = _strip_common(a, b)
    if len(a) < len(b):
        a, b = b, a
    if len(a) - len(b) > limit:
        return None
    if not b:
        return len(a)
    if len(b) > _BIT_PARALLEL_MAX and 2 * limit + 1 < len(b):
        return _banded(a, b, limit)
    distance = _bit_parallel(a, b)
    return distance if distance <= limit else None


def levenshtein_distance(a: str, b: str) -> int:
    """The edit distance between `a` and `b` (unbounded: Myers' algorithm throughout)."""
    a, b = _strip_common(a, b)
    if len(a) < len(b):
        a, b = b, a
    return _bit_parallel(a, b) if b else len(a)


def _strip_common(a: str, b: str) -> tuple[str, str]:
    prefix = 0
    shortest = min(len(a), len(b))
    while prefix < shortest and a[prefix] == b[prefix]:
        prefix += 1
    a, b = a[prefix:], b[prefix:]
    suffix = 0
    shortest = min(len(a), len(b))
    while suffix < shortest and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return (a[:-suffix], b[:-suffix]) if suffix else (a, b)


def _bit_parallel(a: str, b: str) -> int:
    """Myers/Hyyrö: `b` (not empty) is the bit vector; one step per character of `a`."""
    m = len(b)
    peq: dict[str, int] = {}
    for i, char in enumerate(b):
        peq[char] = peq.get(char, 0) | (1 << i)
    full = (1 << m) - 1
    top = 1 << (m - 1)
    pv, mv, score = full, 0, m
    for char in a:
        eq = peq.get(char, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & full)
        mh = pv & xh
        if ph & top:
            score += 1
        elif mh & top:
            score -= 1
        ph = ((ph << 1) | 1) & full  # row 0 grows by one per column: a global distance
        mh = (mh << 1) & full
        pv = mh | (~(xv | ph) & full)
        mv = ph & xv
    return score


def _banded(a: str, b: str, limit: int) -> int | None:
    """Ukkonen's band, one numpy row at a time: the distance if ≤ limit (len(a) - len(b) ≤
    limit), else None. Row i holds columns i - limit .. i + limit; within a row the
    insertions chain is a running minimum (cur[t] = t + min over s ≤ t of cand[s] - s)."""
    over = limit + 1  # every value above the limit is the same to us
    width = 2 * limit + 1
    m = len(b)
    offsets = np.arange(width, dtype=np.int64)
    # b's code points padded so row i reads b[j - 1] for its columns as padded[i : i + width];
    # -1 never equals a code point.
    padded = np.full(m + 3 * limit + 2, -1, dtype=np.int64)
    padded[limit + 1:limit + 1 + m] = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    codes = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    columns = offsets - limit  # the column j of each slot in row 0
    previous = np.where((columns >= 0) & (columns <= m), np.minimum(np.abs(columns), over), over)
    above = np.empty(width, dtype=np.int64)
    for i in range(1, len(a) + 1):
        columns += 1
        substitute = previous + (padded[i:i + width] != codes[i - 1])
        above[:-1] = previous[1:] + 1
        above[-1] = over
        candidate = np.minimum(substitute, above)
        if i <= limit:
            candidate[limit - i] = i  # column 0: all of a's first i characters deleted
        candidate[(columns < 0) | (columns > m)] = over
        current = np.minimum.accumulate(candidate - offsets) + offsets
        np.minimum(current, over, out=current)
        if int(current.min()) > limit:
            return None
        previous = current
    distance = int(previous[m - len(a) + limit])
    return distance if distance <= limit else None


# --- the one-line reasons -----------------------------------------------------------------


def _result(assertion: Assertion, passed: bool, reason: str) -> AssertionResult:
    return AssertionResult(type=assertion.name, passed=passed, reason=reason,
                           weight=assertion.weight)


def _single_line(text: str, limit: int) -> str:
    """At most `limit` characters of `text` on one line: whitespace and control characters
    become single spaces (an answer is never written raw to a terminal), `…` marks a cut."""
    window = text[: limit * 2]  # never walk a whole long answer for an excerpt
    cleaned = "".join(char if char.isprintable() else " " for char in window)
    collapsed = re.sub(r" {2,}", " ", cleaned)
    cut = len(collapsed) > limit or len(text) > len(window)
    return collapsed[:limit] + ("…" if cut else "")


def _excerpt(text: str, *, start: int = 0, limit: int = EXCERPT_CHARS) -> str:
    lead = "…" if start > 0 else ""
    return f'"{lead}{_single_line(text[start:], limit)}"'


def _listed(values: Sequence[str], shown: int = 3) -> str:
    listed = ", ".join(_excerpt(v, limit=30) for v in values[:shown])
    more = len(values) - shown
    return listed + (f" and {more} more" if more > 0 else "")


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _json_kind(first: str) -> str:
    """What a JSON value is, from its first character."""
    return {"{": "an object", "[": "an array", '"': "a string"}.get(first, "a scalar")


def _text_value(value: str | tuple[str, ...] | float | None) -> str:
    """A text check's value as text; a number written as promptfoo's String(5) would (5,
    not 5.0)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _finite_number(value: object) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))
