"""One definition of a failed cell (`CellResult.failed`): the terminal summary, the
Markdown and HTML reports, the `eval --json` document and the JUnit file list the same
cells for a run holding each kind of outcome (an assertion failed, a stream failed with
and without assertions, the judge could not decide, a cell never run, a cell not judged,
a cell passed)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console

from anoman_tui.report.suite_html import suite_html
from anoman_tui.report.suite_json import run_json
from anoman_tui.report.suite_junit import junit_xml
from anoman_tui.report.suite_markdown import suite_markdown
from anoman_tui.report.suite_terminal import print_summary
from anoman_tui.suites.model import Assertion, AssertionResult, Case, CellResult, Suite
from anoman_tui.suites.summary import summarize

CASES = ("assertion", "stream", "bare-stream", "judge", "cost-limit", "plain", "pass")
SUITE = Suite(name="kinds", models=("m-a",), repeat=1,
              cases=tuple(Case(c, "prompt", asserts=(Assertion("icontains", "x"),))
                          for c in CASES))
FAILED = {("assertion", "m-a", 1), ("stream", "m-a", 1), ("bare-stream", "m-a", 1)}
Key = tuple[str, str, int]


def _cells() -> list[CellResult]:
    judged_out = AssertionResult("llm-rubric", None, "the judge's reply was unreadable",
                                 judge_error="no JSON in the reply")
    return [
        CellResult("assertion", "m-a", 1, "completed", False,
                   (AssertionResult("icontains", False, "no 'x'"),), ttft_s=0.3),
        CellResult("stream", "m-a", 1, "stream_error", False,
                   failure="STREAM INTERRUPTED after 7 tokens"),
        CellResult("bare-stream", "m-a", 1, "http_error", None, failure="HTTP 500"),
        CellResult("judge", "m-a", 1, "completed", None, (judged_out,), ttft_s=0.3,
                   judge_calls=1, judge_errors=1),
        CellResult("cost-limit", "m-a", 1, "not_run"),
        CellResult("plain", "m-a", 1, "completed", None, ttft_s=0.3),
        CellResult("pass", "m-a", 1, "completed", True,
                   (AssertionResult("icontains", True, "has 'x'"),), ttft_s=0.3),
    ]


def _text(cells: list[CellResult]) -> set[Key]:
    out = io.StringIO()
    print_summary(Console(file=out, width=200, force_terminal=False, color_system=None),
                  suite=SUITE, results=cells, summary=summarize(SUITE.models, cells),
                  run_id="r1", finished=True, stopped=None)
    listed = out.getvalue().split("Failed (")[1].split("run r1")[0]
    return {(case, model, int(n))
            for case, model, n in re.findall(r"^  (\S+)  (\S+)  #(\d+)  ", listed, re.M)}


def _markdown(cells: list[CellResult]) -> set[Key]:
    text = suite_markdown(suite=SUITE, results=cells, summary=summarize(SUITE.models, cells),
                          run_id="r1", created_at=0.0, finished=True, stopped=None)
    listed = text.split("## Failed (")[1]
    return {(case, model, int(n))
            for case, model, n in re.findall(r"^\| (\S+) \| (\S+) \| (\d+) \|", listed, re.M)}


def _html(cells: list[CellResult]) -> set[Key]:
    page = suite_html(suite=SUITE, results=cells, summary=summarize(SUITE.models, cells),
                      run_id="r1", created_at=0.0, finished=True, stopped=None)
    return {(case, model, int(n)) for case, model, n in re.findall(
        r'<li id="f\d+"><span class="where">(\S+) · (\S+) · repeat (\d+)</span>', page)}


def _json(cells: list[CellResult]) -> set[Key]:
    document = json.loads(json.dumps(run_json(
        run_id="r1", suite=SUITE, results=cells, summary=summarize(SUITE.models, cells),
        finished=True, stopped=None)))
    # What a reader of the document finds failed, read back through the one definition.
    return {CellResult.from_json(r).key for r in document["results"]
            if CellResult.from_json(r).failed}


def _junit(cells: list[CellResult]) -> set[Key]:
    root = ET.fromstring(junit_xml(suite=SUITE, results=cells, run_id="r1"))
    failed = set()
    for case in root.iter("testcase"):
        if case.find("failure") is not None:
            name, repeat = re.fullmatch(r"(\S+) \[repeat (\d+)\]", case.attrib["name"]).groups()
            failed.add((name, case.attrib["classname"].split(" / ")[1], int(repeat)))
    return failed


def test_every_report_lists_the_same_failed_cells() -> None:
    cells = _cells()
    assert {c.key for c in cells if c.failed} == FAILED
    for report in (_text, _markdown, _html, _json, _junit):
        assert report(cells) == FAILED, report.__name__


def test_the_predicate_is_written_once() -> None:
    """No report decides for itself which cells failed."""
    report = Path(__file__).resolve().parents[2] / "anoman_tui" / "report"
    for path in report.glob("suite_*.py"):
        source = path.read_text(encoding="utf-8")
        assert "passed is False or" not in source and "not in (\"completed\"" not in source, path
