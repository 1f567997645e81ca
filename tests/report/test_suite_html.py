"""The suite's HTML report: one self-contained page (no script, no fetch), hostile text
inert everywhere (tables, SVG, titles), the summary's numbers shown as they are, the
pass matrix readable without colour, charts with their figures in words, and a
10,000-result run rendered in time."""

from __future__ import annotations

import html
import random
import re
import time
from decimal import Decimal

from anoman_tui.report.suite_html import suite_html, ttft_boxes
from anoman_tui.report.suite_text import seconds, usd
from anoman_tui.streaming.cost import Cost
from anoman_tui.suites.model import (
    Assertion,
    AssertionResult,
    Case,
    CellResult,
    ModelSummary,
    PairSummary,
    RunSummary,
    Suite,
)
from anoman_tui.suites.stats import percentile, wilson
from tests.report.page import Page

HOSTILE_MODEL = 'evil"><script>alert(1)</script></svg><svg onload=alert(2)>'
HOSTILE_CASE = "</td></table><script>alert(3)</script>'\""
HOSTILE_REASON = "<img src=https://tracker.example/p.png> </svg><script>alert(4)</script>"


def _assert_inert(page: str) -> Page:
    parsed = Page(page)
    names = {t for t, _ in parsed.tags}
    assert not names & {"script", "iframe", "object", "embed", "img", "link", "base", "form",
                        "image", "use", "foreignobject"}, names
    for tag, attrs in parsed.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in ("src", "srcset", "xlink:href"), (tag, name)
            if name == "href":
                assert tag == "a" and (value or "").startswith("#"), (tag, value)
    assert "<script" not in page.lower()
    assert "url(" not in page and "@import" not in page
    return parsed


def _run() -> tuple[Suite, list[CellResult], RunSummary]:
    asserts = (Assertion("icontains", "refund"),)
    suite = Suite(name="support <b>answers</b>", models=("m-a", HOSTILE_MODEL), repeat=3,
                  cases=(Case("refund", "How do I <b>refund</b>?", asserts=asserts),
                         Case(HOSTILE_CASE, "x", asserts=asserts), Case("free", "hello")))
    ok = AssertionResult("icontains", True, "found")
    bad = AssertionResult("icontains", False, HOSTILE_REASON)
    cells = []
    for r, (a_pass, b_pass) in enumerate([(True, True), (True, False), (True, False)], 1):
        cells.append(CellResult("refund", "m-a", r, "completed", a_pass, (ok,),
                                ttft_s=0.2 + 0.05 * r, e2e_s=1.0, output_tokens_per_s=90.0,
                                cost=Cost(Decimal("0.001"), "gateway")))
        cells.append(CellResult("refund", HOSTILE_MODEL, r, "completed", b_pass,
                                (ok if b_pass else bad,), ttft_s=0.6 + 0.1 * r, e2e_s=2.0,
                                cost=Cost(Decimal("0.0005"), "estimate"), simulated=True,
                                comparison_id=10 + r))
        cells.append(CellResult(HOSTILE_CASE, "m-a", r, "completed", False, (bad,),
                                ttft_s=0.3, e2e_s=1.0, cost=Cost(Decimal("0.001"), "gateway")))
        cells.append(CellResult(HOSTILE_CASE, HOSTILE_MODEL, r, "stream_error", False,
                                failure=f"STREAM INTERRUPTED {HOSTILE_REASON}",
                                simulated=True))
        cells.append(CellResult("free", "m-a", r, "completed", None, ttft_s=0.25, e2e_s=1.0,
                                answer="<script>alert(5)</script>"))
        cells.append(CellResult("free", HOSTILE_MODEL, r, "not_run", simulated=True))
    a = ModelSummary("m-a", 9, 6, 3, 0.5, wilson(3, 6), 0.25, 0.295, 90.0, 1.0, 1.0,
                     Decimal("0.009"), False, Decimal("0.003"), {}, 0, 0, False)
    b = ModelSummary(HOSTILE_MODEL, 9, 6, 1, 1 / 6, wilson(1, 6), 0.8, 0.89, None, 2.0, 2.0,
                     Decimal("0.0015"), True, Decimal("0.0015"), {"stream_error": 3}, 3, 0,
                     True)
    pair = PairSummary("m-a", HOSTILE_MODEL, 6, 2, 0, 0.5, 0.5, 3, -0.45, (-0.6, -0.3))
    return suite, cells, RunSummary((a, b), (pair,))


def _page(**overrides: object) -> str:
    suite, cells, summary = _run()
    args: dict[str, object] = dict(suite=suite, results=cells, summary=summary, run_id="r42",
                                   created_at=1_764_554_726.0, finished=True, stopped=None)
    args.update(overrides)
    return suite_html(**args)  # type: ignore[arg-type]


def test_hostile_text_stays_inert_everywhere() -> None:
    page = _page()
    parsed = _assert_inert(page)
    text = "".join(parsed.text)
    assert HOSTILE_MODEL in text and HOSTILE_CASE in text and HOSTILE_REASON in text
    assert "support <b>answers</b>" in text
    assert "<script>alert(5)</script>" not in text  # answers are not in the page
    assert page.count("<svg") == page.count("</svg>") == 3  # no SVG closed early
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "http://" not in page and "https://" not in page.replace(
        "https://tracker.example", "")  # the only URL is the reason's, as text


def _row(page: str, table: str, key: str) -> list[str]:
    body = page.split(f'<table class="{table}">', 1)[1].split("</table>", 1)[0]
    for row in re.findall(r"<tr.*?</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>",
                                                                 row, re.S)]
        if cells and html.unescape(cells[0]).startswith(key):
            return [html.unescape(c) for c in cells]
    raise AssertionError(f"no row {key!r}")


def test_the_summary_table_shows_the_summary_figures() -> None:
    page = _page()
    _, _, summary = _run()
    a, _ = summary.models
    row = _row(page, "summary", "m-a")
    assert row[1:] == ["3 / 6", "50.0%", "18.8%–81.2%", "—", "0.25 s", "0.29 s", "90.0",
                       "1.00 s", "1.00 s", "$0.009000", "$0.003000"]
    assert a.pass_rate_ci is not None
    low, high = (float(x.rstrip("%")) / 100 for x in row[3].split("–"))
    assert abs(low - a.pass_rate_ci[0]) < 0.0005 and abs(high - a.pass_rate_ci[1]) < 0.0005
    assert row[5] == seconds(a.ttft_p50_s) and row[10] == usd(a.cost_usd)
    b_row = _row(page, "summary", HOSTILE_MODEL)
    assert b_row[0] == f"{HOSTILE_MODEL} simulated"
    assert b_row[1:5] == ["1 / 6", "16.7%", "3.0%–56.4%", "stream_error 3, not run 3"]
    assert b_row[10:] == ["~$0.001500 (est.)", "~$0.001500 (est.)"]
    pair = _row(page, "pairs", "m-a")
    assert pair[1:] == ["6", "2", "0", "0.5 (Holm 0.5)", "-0.450 s", "[-0.600, -0.300] s", "3"]


def test_simulated_models_say_so() -> None:
    page = _page()
    assert page.count('<span class="simulated">simulated</span>') >= 4  # header, tables
    note = page.split('<p class="simulated-note">', 1)[1].split("</p>", 1)[0]
    assert "Simulated:" in note and "evil&quot;&gt;&lt;script&gt;" in note
    assert "(simulated)" in page.split("<h3>TTFT distribution", 1)[1].split("</svg>", 1)[0]


def test_the_pass_matrix_folds_repeats_with_a_glyph_and_links_failures() -> None:
    page = _page()
    refund = _row(page, "matrix", "refund")
    assert refund[1:] == ["✓ 3/3", "◐ 1/3"]
    hostile = _row(page, "matrix", HOSTILE_CASE)
    assert hostile[1:] == ["✗ 0/3", "✗ 0/3 ⚠3"]
    free = _row(page, "matrix", "free")
    assert free[1:] == ["○ 3", "· not run"]
    matrix = page.split('<table class="matrix">', 1)[1].split("</table>", 1)[0]
    anchors = re.findall(r'href="#(f\d+)"', matrix)
    assert len(anchors) == 3  # every failing (case, model) links to its first failure
    for anchor in anchors:
        assert f'<li id="{anchor}">' in page
    failures = page.split('<ol class="failures">', 1)[1].split("</ol>", 1)[0]
    assert failures.count('<li id="f') == 2 + 3 + 3  # refund b x2, hostile a x3, b x3
    assert "stream_error: STREAM INTERRUPTED &lt;img" in failures
    assert "comparison #12" in failures


def test_the_charts_say_their_figures_in_words() -> None:
    _, cells, summary = _run()
    page = _page()
    (a_box, b_box) = ttft_boxes(summary, cells)
    a_times = [c.ttft_s for c in cells if c.model == "m-a" and c.timed and c.ttft_s is not None]
    assert a_box.n == len(a_times) == 9
    assert a_box.median == percentile(a_times, 50) and a_box.high == percentile(a_times, 95)
    assert a_box.low == percentile(a_times, 5) and a_box.q1 == percentile(a_times, 25)
    assert b_box.n == 3 and b_box.minimum == 0.7 and b_box.maximum == 0.9
    ttft = page.split("<h3>TTFT distribution per model</h3>", 1)[1].split("</figure>", 1)[0]
    assert "Whiskers span the 5th to the 95th percentile" in ttft
    assert f"median {a_box.median * 1000:.0f} ms" in ttft and "9 timed answers" in ttft
    assert re.search(r">\d+ ms</text>", ttft)  # the axis is labelled in units
    cost = page.split("<h3>Cost against pass rate</h3>", 1)[1].split("</figure>", 1)[0]
    assert "pass rate 50.0% (95% CI 18.8%–81.2%), cost $0.009000" in cost
    assert cost.count("<circle") == 2
    forest = page.split("<h3>Median TTFT difference", 1)[1].split("</figure>", 1)[0]
    assert "median -450 ms (95% CI -600 ms to -300 ms; 3 paired answers); m-a is faster" \
        in forest
    assert 'class="zero"' in forest


def test_one_model_nothing_timed_and_a_stopped_run() -> None:
    suite = Suite(name="s", models=("m",), cases=(Case("c", "p"),))
    cells = [CellResult("c", "m", 1, "not_run")]
    summary = RunSummary((ModelSummary("m", 1, 0, 0, None, None, None, None, None, None, None,
                                       None, False, None, {}, 1, 0, False),), ())
    page = suite_html(suite=suite, results=cells, summary=summary, run_id="r1",
                      created_at=0.0, finished=False, stopped="cost limit reached")
    _assert_inert(page)
    assert "No answer was timed" in page and "Nothing to plot" in page
    assert "no pair to compare" in page and "Median TTFT difference" not in page
    assert "eval --resume r1" in page and '<p class="simulated-note">' not in page


def _big_run(cases: int, models: tuple[str, ...], repeat: int) -> tuple[Suite, list[CellResult],
                                                                        RunSummary]:
    rnd = random.Random(7)
    suite = Suite(name="big", models=models, repeat=repeat, cases=tuple(
        Case(f"case-{i}", f"prompt {i}", asserts=(Assertion("contains", "x"),))
        for i in range(cases)))
    cells = []
    for case in suite.cases:
        for model in models:
            for r in range(1, repeat + 1):
                ok = rnd.random() < 0.8
                cells.append(CellResult(
                    case.id, model, r, "completed", ok,
                    (AssertionResult("contains", ok, "found" if ok else "no 'x' in it"),),
                    ttft_s=rnd.uniform(0.1, 1.5), e2e_s=rnd.uniform(1, 5),
                    cost=Cost(Decimal("0.0001"), "gateway"), answer="y" * 2000))
    summaries = tuple(ModelSummary(m, cases * repeat, cases * repeat, 0, 0.8, (0.79, 0.81),
                                   0.8, 1.4, None, 3.0, 4.8, Decimal("1"), False, None, {}, 0,
                                   0, False) for m in models)
    pairs = tuple(PairSummary(a, b, cases * repeat, 10, 12, 0.8, 1.0, cases * repeat, 0.01,
                              (-0.02, 0.04)) for i, a in enumerate(models)
                  for b in models[i + 1:])
    return suite, cells, RunSummary(summaries, pairs)


def test_ten_thousand_results_render_in_time() -> None:
    suite, cells, summary = _big_run(1112, ("m-a", "m-b", "m-c"), 3)
    assert len(cells) >= 10_000
    started = time.perf_counter()
    page = suite_html(suite=suite, results=cells, summary=summary, run_id="big",
                      created_at=0.0, finished=True, stopped=None)
    elapsed = time.perf_counter() - started
    print(f"suite_html of {len(cells)} results: {elapsed:.2f} s, {len(page) / 1e6:.1f} MB")
    assert elapsed < 10.0  # the target is 3 s; the bound is generous for CI
    assert len(page) < 20_000_000  # no answer embedded (2 KB each would be 20 MB alone)
    assert "y" * 100 not in page
    assert page.count("<tr><th scope=\"row\">case-") == 1112
