"""`eval --junit`: read back by a real JUnit parser (junitparser) and by ElementTree;
hostile answers stay text and characters XML 1.0 forbids never reach the file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from decimal import Decimal

from junitparser import Failure, JUnitXml, Skipped

from anoman_tui.report.suite_junit import ANSWER_LIMIT, junit_xml, xml_text
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import (
    Assertion,
    AssertionResult,
    Case,
    CellResult,
    Suite,
)

HOSTILE = '<script>alert(1)</script> ]]> "q" & \'x\' </testcase>'
CONTROLS = "a\x00b\x01c\x08d\x0be\x1bf\ud800g\ufffeh\tI\nJ"
SUITE = Suite(name="support answers", models=("m-a", "sim-b"), repeat=2,
              cases=(Case("refund", "Say refund", asserts=(Assertion("icontains", "refund"),
                                                           Assertion("ttft", None, 300.0))),
                     Case("free", "Anything")))


def _cells() -> list[CellResult]:
    ok = AssertionResult("icontains", True, "found 'refund'")
    bad = AssertionResult("icontains", False, f"no 'refund' in {HOSTILE}")
    slow = AssertionResult("ttft", False, "ttft 0.412 s > 0.300 s")
    return [
        CellResult("refund", "m-a", 1, "completed", True, (ok,), ttft_s=0.2, e2e_s=1.25,
                   cost=Cost(Decimal("0.0004"), "gateway"), comparison_id=1,
                   answer=f"refund {HOSTILE} {CONTROLS}"),
        CellResult("refund", "m-a", 2, "completed", False, (bad, slow), ttft_s=0.412,
                   e2e_s=2.5, comparison_id=2, answer="x" * (ANSWER_LIMIT + 500)),
        CellResult("refund", "sim-b", 1, "stream_error", False,
                   failure="STREAM INTERRUPTED after 7 tokens: partial answer not committed",
                   e2e_s=0.75, simulated=True, comparison_id=1),
        CellResult("refund", "sim-b", 2, "not_run", simulated=True),
        CellResult(f"free{CONTROLS}", "m-a", 1, "completed", None, ttft_s=0.1, e2e_s=0.5,
                   answer="anything"),
    ]


def test_a_junit_parser_reads_every_outcome() -> None:
    data = junit_xml(suite=SUITE, results=_cells(), run_id="r9")
    xml = JUnitXml.fromstring(data.decode("utf-8"))
    suites = {s.name: s for s in xml}
    assert list(suites) == ["m-a", "sim-b"]
    a, b = suites["m-a"], suites["sim-b"]
    assert (a.tests, a.failures, a.errors, a.skipped) == (3, 1, 0, 0)
    assert (b.tests, b.failures, b.errors, b.skipped) == (2, 1, 0, 1)
    assert abs(a.time - 4.25) < 1e-9 and abs(b.time - 0.75) < 1e-9
    cases = {c.name: c for c in a}
    assert set(cases) == {"refund [repeat 1]", "refund [repeat 2]",
                          "freeabcdefgh\tI\nJ [repeat 1]"}
    passed = cases["refund [repeat 1]"]
    assert passed.is_passed and passed.classname == "support answers / m-a"
    assert abs(passed.time - 1.25) < 1e-9
    failed = cases["refund [repeat 2]"]
    (failure,) = failed.result
    assert isinstance(failure, Failure) and failure.type == "assertion"
    assert failure.message.startswith("icontains: no 'refund' in <script>")
    assert failure.message.endswith("(and 1 more)")
    assert failure.text.splitlines()[-1] == "ttft: ttft 0.412 s > 0.300 s"
    assert HOSTILE in failure.text
    out = failed.system_out or ""
    assert out.startswith("x" * ANSWER_LIMIT) and "500 more characters" in out
    assert "comparison #2" in out and len(out) < ANSWER_LIMIT + 200
    b_cases = {c.name: c for c in b}
    # A failed stream fails its case: a failure element, its type the failure kind.
    (stream_failure,) = b_cases["refund [repeat 1]"].result
    assert isinstance(stream_failure, Failure) and stream_failure.type == "stream_error"
    assert stream_failure.message == \
        "STREAM INTERRUPTED after 7 tokens: partial answer not committed"
    (skipped,) = b_cases["refund [repeat 2]"].result
    assert isinstance(skipped, Skipped) and "not run" in (skipped.message or "")
    assert "simulated" in (b_cases["refund [repeat 1]"].system_out or "")


def test_xml_text_removes_only_what_xml_forbids() -> None:
    assert xml_text(CONTROLS) == "abcdefgh\tI\nJ"
    assert xml_text("é 😀 \r ok") == "é 😀 \r ok"


def test_hostile_text_stays_text_and_the_file_parses() -> None:
    data = junit_xml(suite=SUITE, results=_cells(), run_id="r9")
    assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    assert b"\x00" not in data and b"\x1b" not in data and b"\x01" not in data
    assert b"<script>" not in data  # escaped by the serializer
    root = ET.fromstring(data)
    assert root.tag == "testsuites" and root.get("name") == "support answers"
    assert (root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == ("5", "2", "0", "1")
    first = root.find("testsuite/testcase")
    assert first is not None
    out = first.findtext("system-out") or ""
    assert HOSTILE in out and "abcdefgh" in out  # the answer, its controls removed
    props = {p.get("name"): p.get("value") for p in root.iterfind("testsuite/properties/"
                                                                  "property")}
    assert props["run_id"] == "r9"
    sims = [s.find("properties/property[@name='simulated']") for s in root.iter("testsuite")]
    assert [p.get("value") for p in sims if p is not None] == ["false", "true"]


def test_an_unjudged_case_passes_and_says_it_was_not_judged() -> None:
    root = ET.fromstring(junit_xml(suite=SUITE, results=_cells(), run_id="r9"))
    (case,) = [c for c in root.iter("testcase") if (c.get("name") or "").startswith("free")]
    assert case.find("failure") is None and case.find("error") is None
    assert case.find("skipped") is None
    judged = case.find("properties/property[@name='judged']")
    assert judged is not None and judged.get("value") == "false"
    assert (case.findtext("system-out") or "").startswith("not judged")


def test_a_model_with_no_result_is_an_empty_testsuite() -> None:
    data = junit_xml(suite=SUITE, results=_cells()[:2], run_id="r9")
    suites = {s.name: s for s in JUnitXml.fromstring(data.decode())}
    assert suites["sim-b"].tests == 0 and suites["m-a"].tests == 2
