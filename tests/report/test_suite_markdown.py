"""The suite run as Markdown: the figures, the failed cells, and untrusted text that can
neither end a table cell nor start markup."""

from __future__ import annotations

from anoman_tui.report.suite_markdown import suite_markdown
from anoman_tui.suites.model import AssertionResult, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize

HOSTILE = "evil|model <script>alert(1)</script> **bold** [x](http://e)\nnew line"


def test_a_run_in_markdown_keeps_every_figure_and_escapes_what_came_from_outside() -> None:
    suite = Suite(name="s | t", models=("good", HOSTILE), cases=(
        Case(id="c|1", prompt="p"),), repeat=1)
    results = [
        CellResult(case="c|1", model="good", repeat=1, status="completed", passed=True,
                   ttft_s=0.25),
        CellResult(case="c|1", model=HOSTILE, repeat=1, status="completed", passed=False,
                   ttft_s=0.5, assertions=(AssertionResult(
                       type="icontains", passed=False, reason="no | pipe <b>"),)),
    ]
    summary = summarize(suite.models, results)
    text = suite_markdown(suite=suite, results=results, summary=summary, run_id="run-x",
                          created_at=0.0, finished=True, stopped=None)
    table = [line for line in text.splitlines() if line.startswith("| good")]
    assert table and "1/1" in table[0] and "0.25 s" in table[0]
    for line in text.splitlines():
        if line.startswith("|"):
            # Each row has as many unescaped cell separators as its header.
            assert line.replace("\\|", "").count("|") in (10, 8, 5, 7), line
    assert "<script>" not in text and "\\<script\\>" in text
    assert "**bold**" not in text and "\n new line" not in text
    assert "## Failed (1)" in text and "icontains: no \\| pipe" in text
