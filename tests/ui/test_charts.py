"""The pictures drawn in the terminal (`anoman_tui.ui.render.charts`): where the marks land
on the shared axis, the figures in words beside them, quantiles against numpy, the width
they are given, untrusted labels printed as typed, missing figures, and the scatter's
legend and overlapping letters."""

from __future__ import annotations

import random
from decimal import Decimal

import numpy as np
import pytest
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from anoman_tui.ui.render.charts import (
    POINT,
    ChartStyle,
    IntervalRow,
    SampleRow,
    ScatterPoint,
    distribution_chart,
    interval_chart,
    number,
    percent,
    quantiles,
    scatter_chart,
)

WIDTHS = [36, 60, 80, 120, 200]
HOSTILE = "[bold red]x[/] \x1b[31mred\x1b[0m\nsecond line\ttab"


def lines(text: Text) -> list[str]:
    return text.plain.split("\n")


def fits(text: Text, width: int) -> bool:
    return all(cell_len(line) <= width for line in lines(text))


def axis_ends(text: Text) -> tuple[int, int, list[int]]:
    """The axis line's first and last columns and its tick columns."""
    axis = next(line for line in lines(text) if "┬" in line)
    ticks = [i for i, ch in enumerate(axis) if ch == "┬"]
    drawn = [i for i, ch in enumerate(axis) if ch in "─┬"]
    return drawn[0], drawn[-1], ticks


def tick_labels(text: Text) -> list[str]:
    all_lines = lines(text)
    index = next(i for i, line in enumerate(all_lines) if "┬" in line)
    return all_lines[index + 1].split()


def picture_line(text: Text, label: str) -> str:
    """The line holding a row's marks: its label's own line, or the next ones when the
    row is laid out over two or three lines."""
    all_lines = lines(text)
    index = next(i for i, line in enumerate(all_lines) if line.startswith(label))
    for line in all_lines[index:index + 3]:
        if set(line) & set("●├┤│"):
            return line
    raise AssertionError(f"no picture for {label!r}")


# --- interval_chart -------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_a_point_at_the_middle_of_its_interval_lands_in_the_middle(width: int) -> None:
    rows = [IntervalRow("mid", 50.0, 0.0, 100.0), IntervalRow("quarter", 25.0, 10.0, 40.0)]
    chart = interval_chart(rows, width, fmt=percent, lo=0, hi=100)
    first, last, ticks = axis_ends(chart)
    line = picture_line(chart, "mid")
    # The interval runs from the axis's 0 to its 100; the point halfway.
    assert line.index("├") == first == ticks[0] and line.index("┤") == last == ticks[-1]
    assert abs(line.index(POINT) - (first + last) / 2) <= 1
    quarter = picture_line(chart, "quarter")
    assert abs(quarter.index(POINT) - (first + (last - first) * 0.25)) <= 1
    assert abs(quarter.index("├") - (first + (last - first) * 0.10)) <= 1
    assert abs(quarter.index("┤") - (first + (last - first) * 0.40)) <= 1
    labels = tick_labels(chart)
    assert labels[0] == "0%" and labels[-1] == "100%" and 2 <= len(labels) <= 5
    assert "50% [0%–100%]" in chart.plain and "25% [10%–40%]" in chart.plain


def test_the_ticks_sit_under_their_values() -> None:
    chart = interval_chart([IntervalRow("a", 1043, 1012, 1071),
                            IntervalRow("b", 980, 940, 1010)], 80, fmt=lambda v: f"{v:.0f}")
    all_lines = lines(chart)
    index = next(i for i, line in enumerate(all_lines) if "┬" in line)
    axis, labels = all_lines[index], all_lines[index + 1]
    ticks = [i for i, ch in enumerate(axis) if ch == "┬"]
    values = [int(v) for v in labels.split()]
    assert len(ticks) == len(values) >= 2
    first, last = ticks[0], ticks[-1]
    for column, value in zip(ticks, values, strict=True):
        # each label is written across its tick's column
        start = labels.index(str(value))
        assert start <= column < start + len(str(value)) + 1
        expected = first + (value - values[0]) / (values[-1] - values[0]) * (last - first)
        assert abs(column - expected) <= 1
    # A figure lands where the axis says it is.
    line = picture_line(chart, "a")
    where = values[0] + (line.index(POINT) - first) / (last - first) * (values[-1] - values[0])
    assert abs(where - 1043) <= (values[-1] - values[0]) / (last - first)
    assert "1043 [1012–1071]" in chart.plain and "980 [940–1010]" in chart.plain


@pytest.mark.parametrize("width", [30, *WIDTHS])
def test_every_picture_fits_its_width(width: int) -> None:
    intervals = [IntervalRow("claude-sonnet-4-6", 1043, 1012, 1071),
                 IntervalRow("anoman-lite", 980, 940, 1010, simulated=True),
                 IntervalRow(HOSTILE, 1001, None, 1020), IntervalRow("x" * 90, None),
                 IntervalRow("模型名称很长的模型名称很长的模型", 990, 990, 990)]
    rng = random.Random(width)
    samples = [SampleRow("claude-sonnet-4-6", [rng.lognormvariate(-1, 0.5) for _ in range(300)]),
               SampleRow("anoman-lite", [0.2] * 5, simulated=True), SampleRow(HOSTILE, None),
               SampleRow("y" * 80, [1.0])]
    points = [ScatterPoint("claude-sonnet-4-6", 0.0123, 72), ScatterPoint("gpt-4o", 0.0123, 72),
              ScatterPoint("anoman-lite", 0, 40, simulated=True), ScatterPoint(HOSTILE, 0.004, 90),
              ScatterPoint("z" * 70, None, 50), ScatterPoint("norate", Decimal("0.01"), None),
              ScatterPoint("nothing known", None, None)]
    for chart in (interval_chart(intervals, width), distribution_chart(samples, width),
                  scatter_chart(points, width, 8), scatter_chart(points, width, 3)):
        assert fits(chart, width), "\n" + chart.plain
        assert "\x1b" not in chart.plain and "\t" not in chart.plain


def test_nothing_breaks_on_empty_single_none_or_equal_input() -> None:
    for width in (30, 36, 80):
        assert interval_chart([], width).plain == "nothing to draw"
        assert distribution_chart([], width).plain == "nothing to draw"
        assert scatter_chart([], width, 5).plain == "nothing to draw"
        one = interval_chart([IntervalRow("only", 5.0, 5.0, 5.0)], width)  # zero width
        assert POINT in picture_line(one, "only") and "5.00 [5.00–5.00]" in one.plain
        same = interval_chart([IntervalRow("a", 7, 6, 8), IntervalRow("b", 7, 6, 8)], width)
        assert picture_line(same, "a")[1:] == picture_line(same, "b")[1:]
        empty = interval_chart([IntervalRow("none", None, 1, 2)], width, lo=0, hi=1)
        assert "—" in empty.plain and POINT not in empty.plain and "├" not in empty.plain
        odd = interval_chart([IntervalRow("nan", float("nan"), float("inf"), None)], width)
        assert "—" in odd.plain and POINT not in odd.plain
        assert fits(distribution_chart([SampleRow("all equal", [3.0] * 4)], width), width)
        assert fits(scatter_chart([ScatterPoint("free", 0, 100)], width, 1), width)
        for chart in (one, same, empty, odd):
            assert fits(chart, width)


def test_an_unknown_end_of_an_interval_says_so_and_is_not_drawn() -> None:
    chart = interval_chart([IntervalRow("half", 50, None, 70), IntervalRow("other", 10, 0, 90)],
                           80, fmt=percent, lo=0, hi=100)
    assert "50% [?–70%]" in chart.plain
    line = picture_line(chart, "half")
    assert "├" not in line and line.index(POINT) < line.index("┤")
    # low > high is read as the interval it means
    swapped = interval_chart([IntervalRow("s", 5, 9, 1)], 60)
    assert "5.00 [1.00–9.00]" in swapped.plain


def test_labels_are_untrusted_text_on_one_line() -> None:
    rows = [IntervalRow(HOSTILE, 1000, 990, 1010), IntervalRow("plain", 990, 980, 1000)]
    chart = interval_chart(rows, 120, fmt=lambda v: f"{v:.0f}")
    assert len(lines(chart)) == 2 + 2  # one line a row, the axis and its labels
    assert "[bold red]x[/] red second line tab" in chart.plain
    assert "\x1b" not in chart.plain
    # Never read as markup: no span styled from the label's brackets.
    assert not any("red" in str(span.style) for span in chart.spans)
    samples = distribution_chart([SampleRow(HOSTILE, [1.0, 2.0])], 120)
    assert "[bold red]x[/] red second line tab" in samples.plain
    scatter = scatter_chart([ScatterPoint(HOSTILE, 0.01, 50)], 120, 5)
    assert "A [bold red]x[/] red second line tab: 50% at $0.0100" in scatter.plain


def test_narrow_pictures_cut_labels_with_an_ellipsis_and_keep_the_figures() -> None:
    rows = [IntervalRow("claude-sonnet-4-5-with-a-very-long-suffix", 1043, 1012, 1071),
            IntervalRow("claude-sonnet-4-6-with-a-very-long-suffix", 1000, 980, 1010)]
    wide = interval_chart(rows, 200, fmt=lambda v: f"{v:.0f}")
    assert "claude-sonnet-4-5-with-a-very-long-suffix" in wide.plain
    for width in (30, 36, 60):
        narrow = interval_chart(rows, width, fmt=lambda v: f"{v:.0f}")
        assert fits(narrow, width)
        assert "…" in narrow.plain
        assert "1043 [1012–1071]" in narrow.plain and "1000 [980–1010]" in narrow.plain
        assert 1 <= len(tick_labels(narrow)) <= 5
    # Cut in the middle, the two names stay apart.
    narrow = interval_chart([IntervalRow("claude-sonnet-4-5", 1, 0, 2),
                             IntervalRow("claude-sonnet-4-6", 1, 0, 2)], 30)
    first, second = (line for line in lines(narrow) if line.startswith("claude"))
    assert first.split()[0] != second.split()[0]


def test_a_simulated_model_says_so_in_words() -> None:
    rows = [IntervalRow("anoman-lite", 1000, 990, 1010, simulated=True),
            IntervalRow("gpt-4o", 1010, 1000, 1020)]
    assert "anoman-lite (simulated)" in interval_chart(rows, 120).plain
    long = [IntervalRow("anoman-lite-with-a-long-long-name", 1000, 990, 1010, simulated=True)]
    assert "(sim)" in interval_chart(long, 36).plain
    samples = distribution_chart([SampleRow("anoman-lite", [1, 2, 3], simulated=True)], 120)
    assert "anoman-lite (simulated)" in samples.plain
    scatter = scatter_chart([ScatterPoint("anoman-lite", 0.01, 50, simulated=True)], 80, 5)
    assert "A anoman-lite (simulated): 50% at $0.0100" in scatter.plain


def test_styles_are_the_callers_and_colour_only_repeats_the_words() -> None:
    style = ChartStyle(point="red", interval="blue", axis="green", label="yellow",
                       muted="magenta", simulated=Style(italic=True))
    chart = interval_chart([IntervalRow("a", 5, 4, 6), IntervalRow("b", None),
                            IntervalRow("s", 4.5, None, None, simulated=True)], 80,
                           style=style)
    styled = {chart.plain[span.start:span.end]: str(span.style) for span in chart.spans}
    assert styled[POINT] == "red" and styled["—"] == "magenta"
    assert any(text.startswith("├─") and s == "blue" for text, s in styled.items())
    assert styled[" (simulated)"] == "italic"
    assert chart.plain == interval_chart(
        [IntervalRow("a", 5, 4, 6), IntervalRow("b", None),
         IntervalRow("s", 4.5, None, None, simulated=True)], 80).plain


# --- distribution_chart ---------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 4, 10, 99, 301])
def test_quantiles_are_numpys_linear_percentiles(size: int) -> None:
    rng = random.Random(size)
    values = [rng.lognormvariate(-1, 0.8) for _ in range(size)]
    qs = [0, 5, 12.5, 25, 50, 75, 95, 99.9, 100]
    assert quantiles(values, qs) == [float(np.percentile(values, q, method="linear"))
                                     for q in qs]
    assert quantiles([*values, None, float("nan"), float("inf")], qs) == quantiles(values, qs)
    assert quantiles([], qs) is None and quantiles([None], [50]) is None


@pytest.mark.parametrize("width", WIDTHS)
def test_a_box_plot_marks_its_percentiles_on_the_shared_axis(width: int) -> None:
    uniform = [i / 100 for i in range(1001)]  # 0..10, so p5 = 0.5, p25 = 2.5, ...
    rows = [SampleRow("even", uniform), SampleRow("narrow", [4.0, 5.0, 6.0])]
    chart = distribution_chart(rows, width, lo=0, hi=10)
    first, last, _ = axis_ends(chart)

    def column(value: float) -> float:
        return first + value / 10 * (last - first)

    line = picture_line(chart, "even")
    assert abs(line.index("├") - column(0.5)) <= 1 and abs(line.index("┤") - column(9.5)) <= 1
    assert abs(line.index("━") - column(2.5)) <= 1 and abs(line.rindex("━") - column(7.5)) <= 1
    assert abs(line.index(POINT) - column(5.0)) <= 1
    p50, p95 = np.percentile(uniform, [50, 95])
    assert f"p50 {number(p50)} s" in chart.plain and f"p95 {number(p95)} s" in chart.plain
    assert "n 1001" in chart.plain and "n 3" in chart.plain
    assert tick_labels(chart)[0] == "0" and tick_labels(chart)[-1] == "s"  # "10 s"
    assert fits(chart, width)


def test_a_distribution_names_its_figures_and_says_when_it_has_none() -> None:
    rng = random.Random(7)
    ttft = [rng.lognormvariate(-1, 0.5) for _ in range(300)]
    chart = distribution_chart([SampleRow("claude-sonnet-4-6", ttft),
                                SampleRow("silent", []), SampleRow("none", None)], 120)
    p50, p95 = np.percentile(ttft, [50, 95])
    assert f"p50 {number(p50)} s · p95 {number(p95)} s · n 300" in chart.plain
    assert chart.plain.count("no samples") == 2
    assert picture_line(chart, "claude-sonnet-4-6").count(POINT) == 1
    ms = distribution_chart([SampleRow("a", [120.0, 340.0])], 80, unit="ms")
    assert "p50 230 ms" in ms.plain and "ms" in tick_labels(ms)


# --- scatter_chart --------------------------------------------------------------------


def grid(text: Text) -> list[str]:
    return [line for line in lines(text) if line[5:6] in ("┤", "│")]


def test_the_scatter_places_each_letter_and_lists_it_in_words() -> None:
    points = [ScatterPoint("claude-sonnet-4-6", 0.0123, 72),
              ScatterPoint("cheap-and-good", 0, 100),
              ScatterPoint("dear-and-bad", Decimal("0.02"), 0)]
    chart = scatter_chart(points, 80, 11)
    rows = grid(chart)
    assert len(rows) == 11
    top, bottom = rows[0], rows[-1]
    assert top.startswith("100% ┤") and bottom.startswith("  0% ┤")
    assert top[6] == "B"  # cost $0: the axis's first column
    first, last, _ = axis_ends(chart)
    assert bottom.index("C") == last  # the dearest: the axis's last column
    row_a = next(i for i, line in enumerate(rows) if "A" in line)
    assert row_a == round((100 - 72) / 100 * 10)
    assert abs(rows[row_a].index("A") - (first + 0.0123 / 0.02 * (last - first))) <= 1
    legend = lines(chart)
    assert "A claude-sonnet-4-6: 72% at $0.0123" in legend
    assert "B cheap-and-good: 100% at $0" in legend
    assert "C dear-and-bad: 0% at $0.0200" in legend
    assert tick_labels(chart)[0] == "$0"
    assert "y: pass rate · x: cost per answer (USD)" in legend


@pytest.mark.parametrize("width", [30, *WIDTHS])
def test_overlapping_points_both_stay_readable(width: int) -> None:
    points = [ScatterPoint("one", 0.01, 50), ScatterPoint("two", 0.01, 50),
              ScatterPoint("near", 0.0101, 50), ScatterPoint("far", 0.02, 90)]
    chart = scatter_chart(points, width, 5)
    middle = next(line for line in grid(chart) if line.startswith(" 50%"))
    assert "A,B" in middle and "C" in middle[6:]
    letters = [ch for line in grid(chart) for ch in line[6:] if ch.isalpha()]
    assert sorted(letters) == ["A", "B", "C", "D"]
    assert fits(chart, width)


def test_a_point_without_cost_or_pass_rate_is_listed_as_not_plotted() -> None:
    points = [ScatterPoint("priced", 0.01, 50), ScatterPoint("free-unknown", None, 64),
              ScatterPoint("unrated", 0.002, None), ScatterPoint("nothing", None, None),
              ScatterPoint("infinite", float("inf"), 10)]
    chart = scatter_chart(points, 100, 5)
    legend = lines(chart)
    assert "  free-unknown: not plotted: no cost known (pass rate 64%)" in legend
    assert "  unrated: not plotted: no pass rate known (cost $0.00200)" in legend
    assert "  nothing: not plotted: no cost or pass rate known" in legend
    assert "  infinite: not plotted: no cost known (pass rate 10%)" in legend
    letters = [ch for line in grid(chart) for ch in line[6:] if ch.isalpha()]
    assert letters == ["A"]
    only_missing = scatter_chart([ScatterPoint("x", None, 5)], 60, 5)
    assert only_missing.plain == "  x: not plotted: no cost known (pass rate 5%)"
    narrow = scatter_chart(points, 30, 5)
    assert "not plotted: no cost known" in narrow.plain and fits(narrow, 30)
