"""docs/judges.md says what the code does: the prompts verbatim, the judge errors'
messages as raised, and the sections other pages fill."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from anoman_tui.judges import (
    PAIRWISE_PROMPT,
    RUBRIC_PROMPT,
    JudgeError,
    check_template,
    parse_pairwise,
    parse_rubric,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "judges.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```text\n(.*?)^```$", TEXT, re.M | re.S)


def test_the_prompts_are_shown_verbatim() -> None:
    assert RUBRIC_PROMPT in BLOCKS
    assert PAIRWISE_PROMPT in BLOCKS


@pytest.mark.parametrize("reply", [
    "no json here", '{"score": 1}', '{"pass": "yes"}', '{"pass": true, "score": "0.9"}',
    '{"pass": true, "score": 1.4}',
])
def test_the_rubric_errors_are_quoted_as_raised(reply: str) -> None:
    with pytest.raises(JudgeError) as caught:
        parse_rubric(reply)
    assert f"| {caught.value} |" in TEXT


def test_the_pairwise_error_is_quoted_as_raised() -> None:
    with pytest.raises(JudgeError) as caught:
        parse_pairwise("no verdict")
    assert f"| {caught.value} |" in TEXT


def test_the_template_problems_are_quoted_as_returned() -> None:
    for text, kind in (("x", "rubric"), ("{{answer_a}}", "pairwise"),
                       ("{{answer_b}} {{answer_a}}", "pairwise")):
        problem = check_template(text, kind)  # type: ignore[arg-type]
        assert problem is not None and problem in TEXT


def test_the_sections_other_pages_fill_are_there() -> None:
    headings = re.findall(r"^## (.+)$", TEXT, re.M)
    assert headings[-2:] == ["In a suite", "In the arena"]
