"""The assertions: each type and its negation, the problems that refuse a suite, one-line
reasons, contains-json and levenshtein against independent computations and bounded in
time on hostile answers, and a case's verdict."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anoman_tui.suites.assertions import (
    Answer,
    case_verdict,
    check,
    levenshtein_distance,
    levenshtein_within,
    problem,
)
from anoman_tui.suites.model import Assertion, AssertionResult, Case


def run(kind: str, text: str, value: object = None, threshold: float | None = None,
        negate: bool = False, **answer: object) -> AssertionResult:
    assertion = Assertion(type=kind, value=value, threshold=threshold,  # type: ignore[arg-type]
                          negate=negate)
    return check(assertion, Answer(text, **answer))  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "text", "value", "expected"), [
    ("equals", "Paris", "Paris", True),
    ("equals", "Paris ", "Paris", False),
    ("contains", "a refund in 5 days", "refund", True),
    ("contains", "a Refund", "refund", False),
    ("icontains", "a REFUND", "refund", True),
    ("icontains", "STRASSE", "straße", True),  # Unicode casefold, not lower()
    ("icontains", "no such word", "refund", False),
    ("contains", "order 42 shipped", 42.0, True),  # a number as promptfoo's String(42)
    ("contains-any", "we ship to Lyon", ("Paris", "Lyon"), True),
    ("contains-any", "we ship to Nice", ("Paris", "Lyon"), False),
    ("icontains-any", "LYON", ("paris", "lyon"), True),
    ("contains-all", "Paris and Lyon", ("Paris", "Lyon"), True),
    ("contains-all", "Paris only", ("Paris", "Lyon"), False),
    ("icontains-all", "PARIS and lyon", ("paris", "Lyon"), True),
    ("starts-with", "Yes, you can", "Yes", True),
    ("starts-with", " Yes", "Yes", False),
    ("regex", "order #1234 shipped", r"#\d{4}\b", True),
    ("regex", "order #12 shipped", r"#\d{4}\b", False),
    ("regex", "line one\nline two", r"^line two$", False),  # re.search without MULTILINE
    ("regex", "line one\nline two", r"(?m)^line two$", True),
])
def test_text_checks_and_their_negation(kind: str, text: str, value: object,
                                        expected: bool) -> None:
    assert run(kind, text, value).passed is expected
    negated = run(kind, text, value, negate=True)
    assert negated.passed is (not expected)
    assert negated.type == f"not-{kind}"


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}', True),
    ('  \n[1, 2]\t\r\n', True),  # JSON whitespace around the value, as JSON.parse allows
    ('"just a string"', True),
    ("42", True),
    ("```json\n{\"a\": 1}\n```", False),  # no fence trimming, as promptfoo
    ('Here: {"a": 1}', False),
    ("{'a': 1}", False),
    ("[NaN]", False),  # Python would read it; JSON.parse does not
    ("\u00a0{}", False),  # a no-break space is not JSON whitespace
    ("", False),
    ("1" * 5000, True),  # past Python's int-digit limit, still JSON
])
def test_is_json(text: str, expected: bool) -> None:
    assert run("is-json", text).passed is expected


@pytest.mark.parametrize(("text", "expected"), [
    ('Sure! Here it is: {"name": "kettle", "refund": true}. Anything else?', True),
    ("The list: [1, 2, 3]", True),
    ('```json\n{"a": {"b": [1, {"c": "}"}]}}\n```', True),  # braces inside strings
    ('{"note": "a } inside", "ok": 1}', True),
    ('He said "hi {there}" and left', False),
    ("Use {curly} braces or [square] ones", False),
    ('{"a": 1,} then {"b": 2}', True),  # the first fails, the second is JSON
    ('{"outer": oops {"inner": 2}}', True),  # the outer fails, the nested one is JSON
    ('[x, {"k": "v"}', True),  # an unclosed bracket around a whole object
    ('{"a": [1, 2}', False),  # mismatched
    ("[NaN]", False),
    ("no json here at all", False),
    ('"a string" is JSON but not an object or array', False),
    ('{"escaped \\" quote }": 1}', True),
])
def test_contains_json(text: str, expected: bool) -> None:
    assert run("contains-json", text).passed is expected


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=12).filter(lambda v: isinstance(v, list | dict)),
    st.text(alphabet=st.characters(blacklist_characters="{}[]\""), max_size=30),
    st.text(max_size=30))
def test_contains_json_finds_any_embedded_value(value: object, before: str,
                                                after: str) -> None:
    # Prose before without brackets or quotes; anything at all after.
    text = before + json.dumps(value) + after
    assert run("contains-json", text).passed


HOSTILE = {
    "open braces": "{" * 1_000_000,
    "deep nesting": "[" * 500_000 + "]" * 500_000,
    "deep nesting, broken": "[" * 250_000 + "x" + "]" * 250_000,
    "strings with braces": '{"x": "}' * 125_000,
    "broken chain": "[x" * 250_000 + "]" * 250_000,
    "long strings, never closed": '{"a": "' + "b" * 1_000_000,
    "many failing objects": '{"a": 1,}' * 110_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_contains_json_is_bounded_on_hostile_megabytes(name: str) -> None:
    start = time.perf_counter()
    run("contains-json", HOSTILE[name])
    # Measured 0.25-0.55 s each here (linear scan plus parses over disjoint stretches);
    # a quadratic path took 20 s on "strings with braces".
    assert time.perf_counter() - start < 4.0


def _levenshtein_by_table(a: str, b: str) -> int:
    """The textbook O(n·m) table."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


@given(st.text(alphabet="abcé", max_size=25), st.text(alphabet="abcé", max_size=25),
       st.integers(0, 8))
def test_levenshtein_equals_the_table(a: str, b: str, limit: int) -> None:
    expected = _levenshtein_by_table(a, b)
    assert levenshtein_distance(a, b) == expected
    assert levenshtein_within(a, b, limit) == (expected if expected <= limit else None)


def test_levenshtein_band_on_long_strings_equals_the_bit_vectors() -> None:
    # Past 4096 characters the numpy band runs; the bit-parallel distance checks it.
    base = ("the quick brown fox jumps over the lazy dog " * 120)[:5000]
    edited = base[:100] + "X" + base[101:2000] + base[2003:4000] + "YY" + base[4000:]
    exact = levenshtein_distance(base, edited)
    assert exact == 6
    for limit in (3, 5, 6, 10, 40):
        assert levenshtein_within(base, edited, limit) == (exact if exact <= limit else None)


def test_levenshtein_assertion() -> None:
    assert run("levenshtein", "kitten", "sitting").passed is True  # 3 ≤ default 5
    result = run("levenshtein", "kitten", "sitting", threshold=2)
    assert not result.passed and "edit distance > 2" in result.reason
    assert run("levenshtein", "kitten", "sitting", threshold=3).reason.startswith(
        "edit distance 3 ≤ 3")
    assert run("levenshtein", "kitten", "sitting", threshold=2, negate=True).passed


def test_levenshtein_on_a_100_kb_answer_is_quick() -> None:
    answer = "lorem ipsum dolor " * 5600  # about 100 KB
    start = time.perf_counter()
    far = run("levenshtein", answer, "a short expected answer")
    huge_limit = run("levenshtein", answer, "a short expected answer", threshold=200_000)
    near = run("levenshtein", answer, answer[:50_000] + "Z" + answer[50_001:])
    elapsed = time.perf_counter() - start
    assert (far.passed, huge_limit.passed, near.passed) == (False, True, True)
    assert "lengths 100800 and 23" in far.reason
    # Measured about 0.06 s for the three (the gap exit, Myers on 23 bits, the prefix and
    # suffix dropped); the full table would be 2.3 billion cells.
    assert elapsed < 2.0


@pytest.mark.parametrize(("kind", "field", "seconds", "threshold", "expected", "reason"), [
    ("latency", "e2e_s", 0.412, 500, True, "end-to-end 0.412 s ≤ 0.500 s"),
    ("latency", "e2e_s", 0.612, 500, False, "end-to-end 0.612 s > 0.500 s"),
    ("ttft", "ttft_s", 0.412, 300, False, "ttft 0.412 s > 0.300 s"),
    ("ttft", "ttft_s", 0.3, 300, True, "ttft 0.300 s ≤ 0.300 s"),
])
def test_latency_and_ttft(kind: str, field: str, seconds: float, threshold: float,
                          expected: bool, reason: str) -> None:
    figures: dict[str, Any] = {field: seconds}
    result = run(kind, "x", threshold=threshold, **figures)
    assert (result.passed, result.reason) == (expected, reason)
    assert run(kind, "x", threshold=threshold, negate=True,
               **figures).passed is (not expected)


def test_cost_compares_decimals_exactly() -> None:
    assert run("cost", "x", threshold=0.001, cost_usd=Decimal("0.001")).passed
    result = run("cost", "x", threshold=0.001, cost_usd=Decimal("0.0010001"))
    assert not result.passed and result.reason == "cost $0.0010001 > $0.001"


@pytest.mark.parametrize("negate", [False, True])
def test_unknown_figures_fail_negated_or_not(negate: bool) -> None:
    cost = run("cost", "x", threshold=1.0, negate=negate)
    assert not cost.passed and "cost unknown" in cost.reason
    ttft = run("ttft", "", threshold=100, negate=negate, completed=False)
    assert not ttft.passed and ttft.reason == "ttft unknown (the stream did not complete)"
    assert not run("latency", "x", threshold=100, negate=negate).passed


@pytest.mark.parametrize(("assertion", "fragment"), [
    (Assertion("icontain", "x"), "unknown assertion type 'icontain' (did you mean 'icontains'?)"),
    (Assertion("javascript", "x"), "unknown assertion type 'javascript'"),
    (Assertion("regex", "(unclosed"), "does not compile: missing ), unterminated subpattern"),
    (Assertion("regex", ""), "needs a non-empty value"),
    (Assertion("contains"), "contains needs a value"),
    (Assertion("contains", ""), "needs a non-empty value"),
    (Assertion("equals", ("a", "b")), "takes one value, not a list"),
    (Assertion("contains-any", "a,b"), "contains-any needs a list of values"),
    (Assertion("icontains-all", ()), "needs at least one value"),
    (Assertion("is-json", "{\"type\": \"object\"}"), "a JSON schema is not supported"),
    (Assertion("latency"), "latency needs a threshold (ms)"),
    (Assertion("ttft", threshold=-1), "threshold must be a number ≥ 0"),
    (Assertion("cost", negate=True), "not-cost needs a threshold (USD)"),
    (Assertion("cost", threshold=float("nan")), "threshold must be a number ≥ 0"),
    (Assertion("levenshtein"), "levenshtein needs a value"),
    (Assertion("levenshtein", "x", threshold=-2), "levenshtein threshold must be"),
    (Assertion("contains", "x", weight=-1), "weight must be a number ≥ 0"),
])
def test_problems(assertion: Assertion, fragment: str) -> None:
    found = problem(assertion)
    assert found is not None and fragment in found
    result = check(assertion, Answer("anything"))
    assert not result.passed and result.reason.startswith("cannot run: ")


@pytest.mark.parametrize("assertion", [
    Assertion("equals", ""), Assertion("contains", "x"), Assertion("contains-any", ("a",)),
    Assertion("regex", r"\d+"), Assertion("is-json"), Assertion("contains-json"),
    Assertion("levenshtein", "x"), Assertion("levenshtein", "x", threshold=0),
    Assertion("latency", threshold=0), Assertion("cost", threshold=0.5),
    Assertion("contains", 5.0), Assertion("icontains", "x", weight=0),
])
def test_runnable_assertions_have_no_problem(assertion: Assertion) -> None:
    assert problem(assertion) is None


def test_reasons_are_one_short_line_without_the_whole_answer() -> None:
    answer = "first line\nsecond\x1b[31m red\ttab " + "word " * 20_000 + "TAIL"
    for assertion in [Assertion("equals", "first line"), Assertion("contains", "nothing"),
                      Assertion("starts-with", "nope"), Assertion("regex", r"sec\w+"),
                      Assertion("contains-all", ("first", "absent", "b", "c", "d")),
                      Assertion("is-json"), Assertion("contains-json"),
                      Assertion("levenshtein", "first line")]:
        reason = check(assertion, Answer(answer)).reason
        assert "\n" not in reason and "\x1b" not in reason and "\t" not in reason
        assert len(reason) < 300 and "TAIL" not in reason, reason


def test_reasons_say_what_was_compared() -> None:
    assert run("contains", "no", "refund").reason == 'answer does not contain "refund"'
    assert run("equals", "Paris!", "Paris?").reason == (
        'answer "Paris!" differs from "Paris?" at character 6')
    assert run("contains-all", "a b", ("a", "x", "y")).reason == 'answer lacks "x", "y"'
    assert run("regex", "order #1234", r"#\d+").reason == (
        'answer matches /#\\d+/ at character 7: "#1234"')
    assert run("is-json", "{").reason.startswith("answer is not JSON: ")
    assert run("contains-json", 'x {"a": [1]}').reason == (
        "answer holds JSON (an object at character 3)")


def _case(*weights: float, threshold: float | None = None) -> Case:
    return Case(id="c", prompt="p", asserts=tuple(Assertion("contains", "x", weight=w)
                                                  for w in weights), threshold=threshold)


def _results(*outcomes: tuple[bool, float]) -> list[AssertionResult]:
    return [AssertionResult("contains", passed, "", weight) for passed, weight in outcomes]


def test_case_verdict() -> None:
    assert case_verdict(Case(id="c", prompt="p"), [], completed=True) is None
    assert case_verdict(Case(id="c", prompt="p"), [], completed=False) is None
    assert case_verdict(_case(1, 1), _results((True, 1), (True, 1)), completed=True)
    assert not case_verdict(_case(1, 1), _results((True, 1), (True, 1)), completed=False)
    assert not case_verdict(_case(1, 1), _results((True, 1), (False, 1)), completed=True)
    assert case_verdict(_case(1, 1, threshold=0.5), _results((True, 1), (False, 1)), True)
    assert not case_verdict(_case(3, 1, threshold=0.8), _results((False, 3), (True, 1)), True)
    assert case_verdict(_case(3, 1, threshold=0.75), _results((True, 3), (False, 1)), True)
    # 0.1 + 0.2 + 0.4 of 0.7 is a pass however the floats round.
    assert case_verdict(_case(0.1, 0.2, 0.4),
                        _results((True, 0.1), (True, 0.2), (True, 0.4)), True)
    assert case_verdict(_case(0.1, 0.2, 0.4, threshold=0.3),
                        _results((True, 0.1), (True, 0.2), (False, 0.4)), True)
    # Weight 0 is informational.
    assert case_verdict(_case(1, 0), _results((True, 1), (False, 0)), True)
