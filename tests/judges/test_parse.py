"""Reading the judge's reply: every way a reply can fail to be a verdict is a JudgeError
with a one-line message; the last JSON object and the last [[X]] are the judge's word."""

from __future__ import annotations

import time

import pytest

from anoman_tui.judges import JudgeError, RubricVerdict, parse_pairwise, parse_rubric
from anoman_tui.judges.parse import MAX_REASON

# --- rubric -----------------------------------------------------------------------------


def test_a_plain_verdict() -> None:
    verdict = parse_rubric('{"pass": true, "score": 0.75, "reason": "Mostly right."}')
    assert verdict == RubricVerdict(passed=True, score=0.75, reason="Mostly right.")


@pytest.mark.parametrize(("reply", "message"), [
    ("", "the judge's reply has no JSON object"),
    ("It passes, score 1.", "the judge's reply has no JSON object"),
    ('{"pass": tru', "the judge's reply has no JSON object"),
    ("{pass: true}", "the judge's reply has no JSON object"),
    ('{"score": 1, "reason": "fine"}', 'the judge\'s verdict has no "pass"'),
    ('{"pass": "true", "score": 1}', 'the judge\'s "pass" is "true", not true or false'),
    ('{"pass": 1, "score": 1}', 'the judge\'s "pass" is 1, not true or false'),
    ('{"pass": null}', 'the judge\'s "pass" is null, not true or false'),
    ('{"pass": true, "score": 1.4}', "the judge's score 1.4 is outside 0..1"),
    ('{"pass": false, "score": -0.1}', "the judge's score -0.1 is outside 0..1"),
    ('{"pass": true, "score": NaN}', "the judge's score NaN is outside 0..1"),
    ('{"pass": true, "score": Infinity}', "the judge's score Infinity is outside 0..1"),
    ('{"pass": true, "score": true}', 'the judge\'s "score" is true, not a number'),
    ('{"pass": true, "score": "0.9"}', 'the judge\'s "score" is "0.9", not a number'),
    ('{"pass": true, "score": 1, "reason": ["a"]}', 'the judge\'s "reason" is ["a"], not a string'),
])
def test_what_is_not_a_verdict(reply: str, message: str) -> None:
    with pytest.raises(JudgeError) as caught:
        parse_rubric(reply)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_a_judge_error_is_a_value_error() -> None:
    assert issubclass(JudgeError, ValueError)


def test_the_bounds_of_the_score_are_inside() -> None:
    assert parse_rubric('{"pass": false, "score": 0}').score == 0.0
    assert parse_rubric('{"pass": true, "score": 1}').score == 1.0
    assert isinstance(parse_rubric('{"pass": true, "score": 1}').score, float)


def test_without_a_score_a_pass_is_1_and_a_fail_0() -> None:
    assert parse_rubric('{"pass": true}') == RubricVerdict(True, 1.0, "")
    assert parse_rubric('{"pass": false}') == RubricVerdict(False, 0.0, "")


def test_the_last_object_wins() -> None:
    reply = ('First thought: {"pass": true, "score": 0.9, "reason": "first"}\n'
             'On reflection: {"pass": false, "score": 0.3, "reason": "second"} done.')
    assert parse_rubric(reply) == RubricVerdict(False, 0.3, "second")


def test_a_verdict_that_does_not_parse_after_the_last_object_is_no_verdict() -> None:
    """The judge's last word is a verdict that cannot be read: a judge error, never the
    earlier object (a fail would read as the pass before it)."""
    reply = '{"pass": true, "score": 0.8} and then {"pass": fals'
    with pytest.raises(JudgeError, match="last verdict is not JSON that can be read"):
        parse_rubric(reply)
    # Other text after the verdict does not count.
    assert parse_rubric('{"pass": true} and {not json} then {"note": 1').passed is True


@pytest.mark.parametrize("control", ["\n", "\t", "\x01", "\x1b", "\x00", "\x7f"])
def test_a_raw_control_character_in_the_verdict_does_not_let_an_earlier_object_win(
        control: str) -> None:
    """A line break (or any control character) written raw inside the reason keeps the
    last object the verdict: before, it was skipped and an earlier pass won."""
    reply = ('First thought: {"pass": true, "score": 1.0, "reason": "fine"}\n'
             f'Final: {{"pass": false, "score": 0.1, "reason": "misses{control}the point"}}')
    verdict = parse_rubric(reply)
    assert (verdict.passed, verdict.score) == (False, 0.1)
    assert verdict.reason.startswith("misses") and verdict.reason.endswith("the point")


def test_objects_nested_in_the_verdict_are_part_of_it() -> None:
    reply = '{"pass": true, "score": 0.6, "details": {"pass": false, "score": 0.0}}'
    assert parse_rubric(reply) == RubricVerdict(True, 0.6, "")


def test_a_last_object_without_pass_is_an_error_not_a_fallback() -> None:
    reply = '{"pass": true, "score": 1} PS: {"note": "be kind"}'
    with pytest.raises(JudgeError, match='no "pass"'):
        parse_rubric(reply)


def test_fenced_json_is_read() -> None:
    reply = ("Here is my grade.\n\n```json\n{\n  \"pass\": true,\n  \"score\": 0.9,\n"
             "  \"reason\": \"Covers every point\"\n}\n```\n")
    assert parse_rubric(reply) == RubricVerdict(True, 0.9, "Covers every point")


def test_the_reason_is_one_line_of_at_most_500_characters() -> None:
    verdict = parse_rubric('{"pass": true, "reason": "line one\\n\\n  line\\ttwo"}')
    assert verdict.reason == "line one line two"
    long = parse_rubric('{"pass": true, "reason": "' + "x" * 2000 + '"}').reason
    assert len(long) == MAX_REASON == 500
    assert long.endswith("…")
    assert parse_rubric('{"pass": true, "reason": null}').reason == ""


def test_a_long_unparsable_reply_is_read_quickly() -> None:
    nasty = '{"a":' * 5000 + "{" * 20000 + '{"pass": true}'
    started = time.perf_counter()
    assert parse_rubric(nasty).passed is True
    assert time.perf_counter() - started < 5


# --- pairwise ---------------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "verdict"), [
    ("[[A]]", "A"),
    ("Assistant B is clearer.\n\n[[B]]", "B"),
    ("Both are equally good. [[C]]", "C"),
    ("final: [[ b ]]", "B"),
    ("[[a]]", "A"),
    ("At first [[A]] seemed right, but on reflection [[B]]", "B"),
    ('As asked, "[[A]]" if A is better... My verdict: [[C]]', "C"),
    ("[[[A]]]", "A"),
])
def test_the_last_verdict_token_is_the_verdict(reply: str, verdict: str) -> None:
    assert parse_pairwise(reply) == verdict


@pytest.mark.parametrize("reply", ["", "A is better.", "[A]", "[[D]]", "[[AB]]", "[ [A] ]",
                                   "[\u2060[A]]"])
def test_no_verdict_token_is_a_judge_error(reply: str) -> None:
    with pytest.raises(JudgeError) as caught:
        parse_pairwise(reply)
    assert str(caught.value) == "the judge's reply has no verdict [[A]], [[B]] or [[C]]"
