"""A suite run as JUnit XML (`eval --junit FILE`), for CI systems that show test results.

One `<testsuite>` per model (its name is the model, as the suite writes it) and one
`<testcase>` per (case, model, repeat), named `CASE [repeat N]`:
- a judged case that failed its assertions: `<failure type="assertion">` listing each
  failed assertion's type and reason;
- a stream that failed: `<failure type=KIND message=LINE>` (the failure kind and its
  line): a failed stream fails its case (docs/suites.md), so CI counts it as a failure;
- a cell never run (the cost limit came first): `<skipped>`;
- a case the judge left undecided (its `llm-rubric` reply could not be had or read, and
  that decides the case): `<error type="judge_error">` with why: a judge's error is not a
  fail of the model, but CI should see that nothing was decided;
- each `llm-rubric` verdict (pass, score, the judge's reason) is a property;
- a case with no assertion: a passing testcase whose `<system-out>` and `judged`
  property say it was not judged (recorded, nothing checked).
The answer goes in `<system-out>`, cut at `ANSWER_LIMIT` characters (the whole answer is
in the history's comparison). A simulated model says so in a property and its output.

Written with `xml.etree.ElementTree`, which escapes text and attributes; characters XML
1.0 forbids (most C0 controls, lone surrogates, U+FFFE/U+FFFF) are removed first, since
no serializer can write them and a parser would refuse the whole file.

May import: the standard library and `anoman_tui.suites.model`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from anoman_tui.suites.model import NOT_RUN, CellResult, Suite

ANSWER_LIMIT = 4_000
"""Characters of an answer kept in `<system-out>`."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: object) -> str:
    """Text XML 1.0 can hold: the characters it forbids removed."""
    return _NOT_XML.sub("", str(text))


def _seconds(value: float | None) -> str:
    return f"{value or 0.0:.3f}"


def _testcase(suite: Suite, cell: CellResult) -> tuple[ET.Element, str]:
    """The testcase and its outcome: passed, failure, error or skipped."""
    case = ET.Element("testcase", {
        "classname": xml_text(f"{suite.name} / {cell.model}"),
        "name": xml_text(f"{cell.case} [repeat {cell.repeat}]"),
        "time": _seconds(cell.e2e_s),
    })
    properties = ET.SubElement(case, "properties")
    facts: list[tuple[str, str]] = [
        ("status", cell.status),
        ("judged", "false" if cell.passed is None else "true"),
        ("ttft_s", "" if cell.ttft_s is None else f"{cell.ttft_s:.6f}"),
        ("output_tokens_per_s", "" if cell.output_tokens_per_s is None
         else f"{cell.output_tokens_per_s:.3f}"),
        ("cost_usd", "" if cell.cost.usd is None else str(cell.cost.usd)),
        ("cost_source", cell.cost.source),
        ("comparison_id", "" if cell.comparison_id is None else str(cell.comparison_id)),
    ]
    if cell.cache_hit:
        facts.append(("cache_hit", "true"))
    if cell.simulated:
        facts.append(("simulated", "true"))
    for name, value in facts:
        ET.SubElement(properties, "property", {"name": name, "value": xml_text(value)})
    for i, verdict in enumerate(cell.assertions, start=1):
        if verdict.rubric:
            if verdict.judge_error is not None or verdict.judge_score is None:
                said = f"judge error: {verdict.judge_error or 'no verdict'}"
            else:
                said = (f"pass {str(verdict.judge_pass).lower()}, score "
                        f"{verdict.judge_score:g}: {verdict.judge_reason or ''}")
            ET.SubElement(properties, "property", {
                "name": f"judge {i} {verdict.type}", "value": xml_text(said)})

    outcome = "passed"
    if cell.status == NOT_RUN:
        outcome = "skipped"
        ET.SubElement(case, "skipped", {
            "message": "not run: the run stopped (the cost limit) before this cell started"})
    elif cell.failed and not cell.completed:
        outcome = "failure"
        line = cell.failure or f"the stream failed ({cell.status})"
        failure = ET.SubElement(case, "failure", {"type": xml_text(cell.status),
                                                  "message": xml_text(line)})
        failure.text = xml_text(line)
    elif cell.failed:
        outcome = "failure"
        failed = [a for a in cell.assertions if a.passed is False]
        first = f"{failed[0].type}: {failed[0].reason}" if failed else "the case failed"
        message = first if len(failed) <= 1 else f"{first} (and {len(failed) - 1} more)"
        failure = ET.SubElement(case, "failure", {"type": "assertion",
                                                  "message": xml_text(message)})
        failure.text = xml_text("\n".join(f"{a.type}: {a.reason}" for a in failed)
                                or "the case failed")
    elif cell.passed is None and cell.judge_errors:
        outcome = "error"
        errors = [a for a in cell.assertions if a.passed is None and a.judge_error]
        message = (f"{errors[0].type}: judge error: {errors[0].judge_error}" if errors
                   else "the judge could not decide")
        error = ET.SubElement(case, "error", {"type": "judge_error",
                                              "message": xml_text(message)})
        error.text = xml_text("\n".join(f"{a.type}: judge error: {a.judge_error}"
                                         for a in errors) or message)

    out: list[str] = []
    if cell.simulated:
        out.append(f"simulated: {cell.model} answered from the local gateway's simulated "
                   "model, generated on this machine, not by the real model of that name")
    if cell.completed and cell.passed is None and not cell.assertions:
        out.append("not judged: the case has no assertion; its answer is recorded")
    if cell.answer:
        answer = cell.answer
        if len(answer) > ANSWER_LIMIT:
            where = f" in comparison #{cell.comparison_id}" if cell.comparison_id else \
                " in the history"
            answer = (answer[:ANSWER_LIMIT] + f"\n… ({len(cell.answer) - ANSWER_LIMIT} more "
                      f"characters; the whole answer is{where})")
        out.append(answer)
    if out:
        ET.SubElement(case, "system-out").text = xml_text("\n\n".join(out))
    return case, outcome


def junit_xml(*, suite: Suite, results: Sequence[CellResult], run_id: str) -> bytes:
    """The run as a JUnit XML document (UTF-8, with its declaration)."""
    root = ET.Element("testsuites", {"name": xml_text(suite.name)})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    by_model: dict[str, list[CellResult]] = {m: [] for m in suite.models}
    for cell in results:
        by_model.setdefault(cell.model, []).append(cell)
    for model, cells in by_model.items():
        counts = {"tests": len(cells), "failures": 0, "errors": 0, "skipped": 0}
        cases: list[ET.Element] = []
        for cell in cells:
            case, outcome = _testcase(suite, cell)
            if outcome == "failure":
                counts["failures"] += 1
            elif outcome == "error":
                counts["errors"] += 1
            elif outcome == "skipped":
                counts["skipped"] += 1
            cases.append(case)
        time = sum(c.e2e_s or 0.0 for c in cells)
        testsuite = ET.SubElement(root, "testsuite", {
            "name": xml_text(model), **{k: str(v) for k, v in counts.items()},
            "time": _seconds(time)})
        properties = ET.SubElement(testsuite, "properties")
        simulated = any(c.simulated for c in cells)
        for name, value in (("run_id", run_id), ("suite", suite.name),
                            ("repeat", str(suite.repeat)),
                            ("simulated", "true" if simulated else "false")):
            ET.SubElement(properties, "property", {"name": name, "value": xml_text(value)})
        testsuite.extend(cases)
        for key in totals:
            totals[key] += counts[key]
        total_time += time
    root.attrib.update({k: str(v) for k, v in totals.items()})
    root.set("time", _seconds(total_time))
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))
