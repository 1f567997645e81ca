"""Per-model TTFT is computed one way (`suites.summary.ttft_p50_p95`): the suite screen's
live figure beside the matrix, the run's summary (terminal, Markdown, JSON) and the HTML
report's boxes count the same cells, timed ones only (a stream that failed after its
first token, or a cache hit, is left out of latency)."""

from __future__ import annotations

from anoman_tui.report.suite_html import ttft_boxes
from anoman_tui.suites.model import CellResult
from anoman_tui.suites.summary import summarize, ttft_p50_p95
from anoman_tui.ui.screens.suite import model_figures

CELLS = [
    CellResult("a", "m", 1, "completed", None, ttft_s=0.20),
    CellResult("b", "m", 1, "completed", None, ttft_s=0.40),
    CellResult("c", "m", 1, "completed", None, ttft_s=0.90),
    # Left out: a stream that failed after its first token, and an answer from the cache.
    CellResult("d", "m", 1, "stream_error", None, ttft_s=5.0, failure="cut"),
    CellResult("e", "m", 1, "completed", None, ttft_s=0.001, cache_hit=True),
    CellResult("f", "m", 1, "not_run"),
]


def test_the_live_figure_and_the_summary_count_the_same_cells() -> None:
    summary = summarize(["m"], CELLS).models[0]
    assert ttft_p50_p95(CELLS) == (summary.ttft_p50_s, summary.ttft_p95_s)
    assert summary.ttft_p50_s == 0.40
    live = [part for part in model_figures(CELLS) if part.startswith("TTFT")]
    assert live == [f"TTFT p50 {summary.ttft_p50_s:.2f} s · p95 {summary.ttft_p95_s:.2f} s"]
    box = ttft_boxes(summarize(["m"], CELLS), CELLS)[0]
    assert (box.n, box.median) == (3, summary.ttft_p50_s)


def test_no_timed_cell_gives_no_figure() -> None:
    cells = CELLS[3:]
    assert ttft_p50_p95(cells) == (None, None)
    assert not [part for part in model_figures(cells) if part.startswith("TTFT")]
