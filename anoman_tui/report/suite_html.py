"""A suite run as one self-contained HTML page (`eval --html FILE`): inline CSS, inline
SVG charts, no scripts, no network.

The page holds the run's header (simulated models marked, and a note on top when any
is), the per-model summary, the pairs, three charts each followed by its figures in
words (TTFT distribution per model, cost against pass rate, each pair's TTFT difference
with its interval), the pass matrix (cases x models, repeats folded; every cell has a
glyph and a count as well as a colour) and, per failing cell, why it failed. Answers are
not embedded: a 10,000-result run stays a page a browser opens, and every answer is in
the history (`anoman-tui runs show`, or its comparison).

Every string from a suite, a model or a server (suite name, case ids, prompts, model
names, reasons, failure lines) goes through `html_page.escape`, inside SVG too (the
page is parsed as HTML, so an escaped `</svg>` is text). The page is `html_page`'s shell,
the comparison report's too: the same Content-Security-Policy (no scripts, no fetch, a
second fence) and palette, so both reports look alike. Its charts' ticks follow the one
rule of every chart (`report.axes`).

May import: the standard library, `anoman_tui.suites.model`, `anoman_tui.suites.stats`
and the report's own modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from anoman_tui.report.axes import nice_ticks
from anoman_tui.report.html_page import COLOURS, escape, html_page
from anoman_tui.report.suite_json import simulated_models
from anoman_tui.report.suite_text import (
    DASH,
    SIMULATED,
    created_iso,
    failed_reasons,
    failures_text,
    interval_seconds,
    judge_line,
    p_text,
    percent,
    rate,
    seconds,
    signed_seconds,
    usd,
)
from anoman_tui.suites.model import (
    NOT_RUN,
    CellResult,
    JudgeSummary,
    ModelRating,
    ModelSummary,
    PairSummary,
    RunSummary,
    Suite,
)
from anoman_tui.suites.stats import percentile
from anoman_tui.suites.summary import timed_ttfts

REASON_LIMIT = 400
"""Characters of one failure reason shown in the page (the rest is in the history)."""
_LABEL_LIMIT = 30
"""Characters of a model name drawn inside a chart; the full name is in its <title>."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- axes -----------------------------------------------------------------------------


def _ticks(low: float, high: float) -> list[float]:
    """Round ticks from at or below `low` to at or above `high` (`report.axes`, the rule
    of every chart): the axis spans them all, so no figure falls off its end."""
    return list(nice_ticks(low, high, 5).values)


def _time_label(value: float, in_ms: bool, signed: bool = False) -> str:
    sign = "+" if signed and value > 0 else ""
    if in_ms:
        return f"{sign}{value * 1000:.0f} ms"
    return f"{sign}{value:g} s"


def _time_words(value: float | None) -> str:
    """A time for the figures in words: milliseconds below 1 s."""
    if value is None:
        return DASH
    return f"{value * 1000:.0f} ms" if abs(value) < 1 else f"{value:.2f} s"


def _signed_time_words(value: float) -> str:
    return ("+" if value > 0 else "") + _time_words(value)


# --- charts ---------------------------------------------------------------------------

_CHART_WIDTH = 760
_PLOT_LEFT = 230
_PLOT_RIGHT = 30


@dataclass(frozen=True, slots=True)
class Box:
    """One model's TTFT distribution as the box plot draws it (seconds)."""

    model: str
    simulated: bool
    n: int
    low: float
    """5th percentile: the whisker's left end."""
    q1: float
    median: float
    q3: float
    high: float
    """95th percentile: the whisker's right end."""
    minimum: float
    maximum: float


def _percentile(series: Sequence[float], q: float) -> float:
    value = percentile(series, q)
    assert value is not None  # only asked of a non-empty series
    return value


def ttft_boxes(summary: RunSummary, results: Iterable[CellResult]) -> list[Box]:
    """Per model, the percentiles of TTFT over its timed cells (completed, not a cache
    hit), as the summary counts them."""
    cells: dict[str, list[CellResult]] = {m.model: [] for m in summary.models}
    for cell in results:
        if cell.model in cells:
            cells[cell.model].append(cell)
    boxes = []
    for m in summary.models:
        series = sorted(timed_ttfts(cells[m.model]))
        if not series:
            continue
        low, q1, median, q3, high = (_percentile(series, q) for q in (5, 25, 50, 75, 95))
        boxes.append(Box(m.model, m.simulated, len(series), low, q1, median, q3, high,
                         series[0], series[-1]))
    return boxes


def _model_label_svg(x: float, y: float, model: str, simulated: bool) -> str:
    shown = _cut(model, _LABEL_LIMIT) + (f" ({SIMULATED})" if simulated else "")
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end" class="label">'
            f"<title>{escape(model)}</title>{escape(shown)}</text>")


def _svg(height: float, label: str, body: str) -> str:
    return (f'<svg class="chart" viewBox="0 0 {_CHART_WIDTH} {height:.0f}" '
            f'width="{_CHART_WIDTH}" height="{height:.0f}" role="img" '
            f'aria-label="{escape(label)}"><title>{escape(label)}</title>{body}</svg>')


def _x_axis(ticks: list[float], x_of: Callable[[float], float], top: float, bottom: float,
            label_of: Callable[[float], str], zero_line: bool = False) -> str:
    parts = []
    for t in ticks:
        x = x_of(t)
        cls = "zero" if zero_line and t == 0 else "grid"
        parts.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" '
                     f'class="{cls}"/>'
                     f'<text x="{x:.1f}" y="{bottom + 16:.1f}" text-anchor="middle" '
                     f'class="tick">{escape(label_of(t))}</text>')
    return "".join(parts)


def ttft_chart(boxes: Sequence[Box]) -> str:
    """A box plot per model on one axis: whiskers p5–p95, box p25–p75, median line."""
    title = "TTFT distribution per model"
    if not boxes:
        return _figure(title, '<p class="none">No answer was timed (none completed).</p>',
                       "")
    top_value = max(b.high for b in boxes) or max(b.maximum for b in boxes) or 1.0
    ticks = _ticks(0.0, top_value * 1.05)
    axis_max = ticks[-1]
    in_ms = axis_max < 2.0
    plot_w = _CHART_WIDTH - _PLOT_LEFT - _PLOT_RIGHT
    row = 36
    top = 12
    bottom = top + row * len(boxes)

    def x_of(v: float) -> float:
        return _PLOT_LEFT + v / axis_max * plot_w

    parts = [_x_axis(ticks, x_of, top, bottom, lambda t: _time_label(t, in_ms))]
    for i, b in enumerate(boxes):
        cy = top + row * i + row / 2
        parts.append(_model_label_svg(_PLOT_LEFT - 8, cy + 4, b.model, b.simulated))
        parts.append(
            f'<g class="box"><title>{escape(b.model)}: p5 {_time_words(b.low)}, p25 '
            f"{_time_words(b.q1)}, median {_time_words(b.median)}, p75 {_time_words(b.q3)}, "
            f"p95 {_time_words(b.high)} ({b.n} timed)</title>"
            f'<line x1="{x_of(b.low):.1f}" y1="{cy:.1f}" x2="{x_of(b.high):.1f}" '
            f'y2="{cy:.1f}" class="whisker"/>'
            f'<line x1="{x_of(b.low):.1f}" y1="{cy - 7:.1f}" x2="{x_of(b.low):.1f}" '
            f'y2="{cy + 7:.1f}" class="whisker"/>'
            f'<line x1="{x_of(b.high):.1f}" y1="{cy - 7:.1f}" x2="{x_of(b.high):.1f}" '
            f'y2="{cy + 7:.1f}" class="whisker"/>'
            f'<rect x="{x_of(b.q1):.1f}" y="{cy - 11:.1f}" '
            f'width="{max(x_of(b.q3) - x_of(b.q1), 1.0):.1f}" height="22" class="iqr"/>'
            f'<line x1="{x_of(b.median):.1f}" y1="{cy - 11:.1f}" x2="{x_of(b.median):.1f}" '
            f'y2="{cy + 11:.1f}" class="median"/></g>')
    svg = _svg(bottom + 40, title + " (box p25–p75, line at the median, whiskers p5–p95)",
               "".join(parts) + f'<text x="{_PLOT_LEFT + plot_w / 2:.1f}" y="{bottom + 34:.1f}"'
               ' text-anchor="middle" class="axis-title">time to first token</text>')
    words = "".join(
        f"<li><strong>{escape(b.model)}</strong>{_sim_badge(b.simulated)}: median "
        f"{_time_words(b.median)}; p25–p75 {_time_words(b.q1)}–{_time_words(b.q3)}; "
        f"p5–p95 {_time_words(b.low)}–{_time_words(b.high)}; min {_time_words(b.minimum)},"
        f" max {_time_words(b.maximum)}; {b.n} timed answer{'' if b.n == 1 else 's'}</li>"
        for b in boxes)
    note = ("Whiskers span the 5th to the 95th percentile (not the minimum and maximum); "
            "the box spans the 25th to the 75th, the line is the median. Cache hits and "
            "failed streams are left out.")
    return _figure(title, svg, f'<p class="note">{note}</p><ul class="words">{words}</ul>')


def cost_chart(models: Sequence[ModelSummary]) -> str:
    """Total cost (x) against pass rate (y), one labelled point per model with its 95%
    Wilson interval as a vertical bar."""
    title = "Cost against pass rate"
    plotted = [m for m in models if m.cost_usd is not None and m.pass_rate is not None]
    left_out = [m for m in models if m not in plotted]
    words = []
    for m in models:
        ci = "" if m.pass_rate_ci is None else \
            f" (95% CI {percent(m.pass_rate_ci[0])}–{percent(m.pass_rate_ci[1])})"
        words.append(f"<li><strong>{escape(m.model)}</strong>{_sim_badge(m.simulated)}: "
                     f"pass rate {escape(percent(m.pass_rate))}{escape(ci)}, cost "
                     f"{escape(usd(m.cost_usd, m.cost_estimated))}"
                     + ("" if m in plotted else " — not plotted: "
                        + ("no cost known" if m.cost_usd is None else "nothing judged"))
                     + "</li>")
    if not plotted:
        return _figure(title, '<p class="none">Nothing to plot: no model has both a known '
                       "cost and a judged case.</p>", f'<ul class="words">{"".join(words)}</ul>')
    top_cost = max(float(m.cost_usd or 0) for m in plotted)
    ticks = _ticks(0.0, (top_cost or 1e-6) * 1.05)
    axis_max = ticks[-1]
    plot_w = _CHART_WIDTH - 80 - 40
    height, top, plot_h = 330, 14, 260
    bottom = top + plot_h

    def x_of(v: float) -> float:
        return 80 + v / axis_max * plot_w

    def y_of(share: float) -> float:
        return bottom - share * plot_h

    step = ticks[1] - ticks[0] if len(ticks) > 1 else axis_max
    digits = max(0, -math.floor(math.log10(step))) if step > 0 else 2
    parts = [_x_axis(ticks, x_of, top, bottom, lambda t: f"${t:.{digits}f}")]
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(share)
        parts.append(f'<line x1="80" y1="{y:.1f}" x2="{80 + plot_w:.1f}" y2="{y:.1f}" '
                     f'class="grid"/><text x="72" y="{y + 4:.1f}" text-anchor="end" '
                     f'class="tick">{share * 100:.0f}%</text>')
    for m in plotted:
        x, y = x_of(float(m.cost_usd or 0)), y_of(m.pass_rate or 0.0)
        bar = ""
        if m.pass_rate_ci is not None:
            y_low, y_high = y_of(m.pass_rate_ci[0]), y_of(m.pass_rate_ci[1])
            bar = (f'<line x1="{x:.1f}" y1="{y_low:.1f}" x2="{x:.1f}" y2="{y_high:.1f}" '
                   f'class="ci"/><line x1="{x - 5:.1f}" y1="{y_low:.1f}" x2="{x + 5:.1f}" '
                   f'y2="{y_low:.1f}" class="ci"/><line x1="{x - 5:.1f}" y1="{y_high:.1f}" '
                   f'x2="{x + 5:.1f}" y2="{y_high:.1f}" class="ci"/>')
        anchor, dx = ("end", -9) if x > 80 + plot_w * 0.6 else ("start", 9)
        shown = _cut(m.model, _LABEL_LIMIT) + (f" ({SIMULATED})" if m.simulated else "")
        parts.append(f'<g class="point"><title>{escape(m.model)}: pass rate '
                     f"{escape(percent(m.pass_rate))}, cost "
                     f"{escape(usd(m.cost_usd, m.cost_estimated))}</title>{bar}"
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5"/>'
                     f'<text x="{x + dx:.1f}" y="{y - 6:.1f}" text-anchor="{anchor}" '
                     f'class="label">{escape(shown)}</text></g>')
    parts.append(f'<text x="{80 + plot_w / 2:.1f}" y="{bottom + 36:.1f}" '
                 'text-anchor="middle" class="axis-title">total cost (USD)</text>'
                 f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
                 f'class="axis-title" transform="rotate(-90 16 {top + plot_h / 2:.1f})">'
                 "pass rate</text>")
    svg = _svg(height, title + " (vertical bars: 95% Wilson intervals)", "".join(parts))
    note = "Each vertical bar is the pass rate's 95% Wilson interval."
    if any(m.cost_estimated for m in plotted):
        note += " Costs marked ~ are (partly) estimates from listed prices."
    if left_out:
        note += f" {len(left_out)} model(s) not plotted (see below)."
    return _figure(title, svg, f'<p class="note">{escape(note)}</p>'
                   f'<ul class="words">{"".join(words)}</ul>')


def _estimate_marks(x: float, interval: tuple[float, float] | None, cy: float) -> str:
    """A square at the estimate over its interval's bar with end ticks (both charted)."""
    marks = ""
    if interval is not None:
        lo, hi = interval
        marks = (f'<line x1="{lo:.1f}" y1="{cy:.1f}" x2="{hi:.1f}" y2="{cy:.1f}" class="ci"/>'
                 + "".join(f'<line x1="{end:.1f}" y1="{cy - 6:.1f}" x2="{end:.1f}" '
                           f'y2="{cy + 6:.1f}" class="ci"/>' for end in (lo, hi)))
    return marks + (f'<rect x="{x - 5:.1f}" y="{cy - 5:.1f}" width="10" height="10" '
                    'class="estimate"/>')


def forest_chart(pairs: Sequence[PairSummary]) -> str:
    """Each pair's median TTFT difference (a − b) with its 95% bootstrap interval,
    around a line at 0."""
    title = "Median TTFT difference per pair (a − b)"
    drawn = [p for p in pairs if p.ttft_diff_s is not None]
    words = []
    for p in pairs:
        if p.ttft_diff_s is None:
            words.append(f"<li><strong>{escape(p.a)} − {escape(p.b)}</strong>: no cell completed "
                         "for both, nothing to compare</li>")
            continue
        ci = "no interval (too few pairs)" if p.ttft_diff_ci is None else \
            (f"95% CI {_signed_time_words(p.ttft_diff_ci[0])} to "
             f"{_signed_time_words(p.ttft_diff_ci[1])}")
        faster = p.a if p.ttft_diff_s < 0 else p.b
        words.append(f"<li><strong>{escape(p.a)} − {escape(p.b)}</strong>: median "
                     f"{_signed_time_words(p.ttft_diff_s)} ({ci}; {p.ttft_pairs} paired "
                     f"answers)" + ("" if p.ttft_diff_s == 0 else
                                     f"; {escape(faster)} is faster to its first token")
                     + "</li>")
    if not drawn:
        return _figure(title, '<p class="none">No pair of models has a case both completed.'
                       "</p>", f'<ul class="words">{"".join(words)}</ul>')
    reach = max(max(abs(p.ttft_diff_s or 0.0), *(abs(v) for v in p.ttft_diff_ci or ()))
                for p in drawn) or 0.001
    ticks = _ticks(-reach * 1.05, reach * 1.05)
    low, high = ticks[0], ticks[-1]
    in_ms = max(-low, high) < 2.0
    plot_w = _CHART_WIDTH - _PLOT_LEFT - _PLOT_RIGHT
    row, top = 32, 12
    bottom = top + row * len(drawn)

    def x_of(v: float) -> float:
        return _PLOT_LEFT + (v - low) / (high - low) * plot_w

    parts = [_x_axis(ticks, x_of, top, bottom, lambda t: _time_label(t, in_ms, signed=True),
                     zero_line=True)]
    for i, p in enumerate(drawn):
        cy = top + row * i + row / 2
        label = f"{_cut(p.a, 14)} − {_cut(p.b, 14)}"
        parts.append(f'<text x="{_PLOT_LEFT - 8}" y="{cy + 4:.1f}" text-anchor="end" '
                     f'class="label"><title>{escape(p.a)} − {escape(p.b)}</title>'
                     f"{escape(label)}</text>")
        interval = None if p.ttft_diff_ci is None else (
            x_of(p.ttft_diff_ci[0]), x_of(p.ttft_diff_ci[1]))
        parts.append(_estimate_marks(x_of(p.ttft_diff_s or 0.0), interval, cy))
    parts.append(f'<text x="{_PLOT_LEFT + plot_w / 2:.1f}" y="{bottom + 34:.1f}" '
                 'text-anchor="middle" class="axis-title">a − b: left of 0, a is faster; '
                 "right of 0, b is faster</text>")
    svg = _svg(bottom + 42, title + " with 95% bootstrap intervals", "".join(parts))
    return _figure(title, svg, '<p class="note">Squares: the median of TTFT(a) − TTFT(b) '
                   "over the cells both completed; bars: its paired bootstrap 95% interval. "
                   "An interval that crosses 0 does not show a difference.</p>"
                   f'<ul class="words">{"".join(words)}</ul>')


def ratings_chart(ratings: Sequence[ModelRating], self_judge: bool,
                  simulated: set[str] | frozenset[str] = frozenset()) -> str:
    """The judge's ratings with their 95% intervals, best first, as Chatbot Arena plots
    its leaderboard's."""
    title = "Judge ratings (Bradley–Terry, Elo scale)"
    ranked = sorted(ratings, key=lambda r: (-r.rating, r.model))
    words = [f"<li><strong>{escape(r.model)}</strong>{_sim_badge(r.model in simulated)}: "
             f"{r.rating:.0f} (95% CI "
             f"{r.ci[0]:.0f} to {r.ci[1]:.0f}); {r.wins} won, {r.ties} tied, {r.losses} lost"
             "</li>" for r in ranked]
    if self_judge:
        words.append("<li>Self-judged: the judge is one of the models under test, and a "
                     "judge favours its own answers.</li>")
    reach_low = min(min(r.ci[0], r.rating) for r in ranked)
    reach_high = max(max(r.ci[1], r.rating) for r in ranked)
    pad = max(10.0, (reach_high - reach_low) * 0.05)
    ticks = _ticks(reach_low - pad, reach_high + pad)
    low, high = ticks[0], ticks[-1]
    plot_w = _CHART_WIDTH - _PLOT_LEFT - _PLOT_RIGHT
    row, top = 32, 12
    bottom = top + row * len(ranked)

    def x_of(v: float) -> float:
        return _PLOT_LEFT + (v - low) / (high - low) * plot_w

    parts = [_x_axis(ticks, x_of, top, bottom, lambda t: f"{t:.0f}")]
    for i, r in enumerate(ranked):
        cy = top + row * i + row / 2
        parts.append(_model_label_svg(_PLOT_LEFT - 8, cy + 4, r.model, r.model in simulated))
        parts.append(_estimate_marks(x_of(r.rating), (x_of(r.ci[0]), x_of(r.ci[1])), cy))
    parts.append(f'<text x="{_PLOT_LEFT + plot_w / 2:.1f}" y="{bottom + 34:.1f}" '
                 'text-anchor="middle" class="axis-title">rating: further right is '
                 "preferred by the judge; the mean rating is 1000</text>")
    svg = _svg(bottom + 42, title + " with 95% bootstrap intervals", "".join(parts))
    return _figure(title, svg, '<p class="note">Squares: each model\'s rating from the '
                   "judge's pairwise verdicts, both orders of every pair (a pair whose two "
                   "orders disagree is a tie); bars: the 95% interval over resampled cases. "
                   "Overlapping intervals do not show a difference.</p>"
                   f'<ul class="words">{"".join(words)}</ul>')


def _bias_list(judge: JudgeSummary) -> str:
    if judge.position_consistency is None and judge.first_position_wins is None:
        return ""
    def share(value: float | None) -> str:
        return "not counted" if value is None else f"{value:.0%}"
    return ('<ul class="words">'
            f"<li>position consistency: {share(judge.position_consistency)} of judged pairs "
            "gave the same winner in both orders</li>"
            f"<li>first-position wins: {share(judge.first_position_wins)} of the verdicts "
            "that picked an answer picked the one shown first</li>"
            f"<li>longer answer wins: {share(judge.longer_wins)} of the pairs decided after "
            "the swap</li></ul>")


def _figure(title: str, chart: str, words: str) -> str:
    return (f'<figure class="chart-box"><h3>{escape(title)}</h3>{chart}'
            f"<figcaption>{words}</figcaption></figure>")


# --- tables ---------------------------------------------------------------------------


def _sim_badge(simulated: bool) -> str:
    return f' <span class="simulated">{SIMULATED}</span>' if simulated else ""


def _summary_table(summary: RunSummary) -> str:
    heads = ("model", "passed / judged", "pass rate", "95% CI", "failures", "TTFT p50",
             "TTFT p95", "tok/s p50", "e2e p50", "e2e p95", "cost", "cost per pass")
    rows = []
    for m in summary.models:
        ci = DASH if m.pass_rate_ci is None else \
            f"{percent(m.pass_rate_ci[0])}–{percent(m.pass_rate_ci[1])}"
        cells = [f"{m.passed} / {m.judged}" if m.judged else "not judged",
                 percent(m.pass_rate), ci]
        fails = failures_text(m.failures, m.not_run)
        figures = [seconds(m.ttft_p50_s), seconds(m.ttft_p95_s), rate(m.tokens_per_s_p50),
                   seconds(m.e2e_p50_s), seconds(m.e2e_p95_s),
                   usd(m.cost_usd, m.cost_estimated),
                   usd(m.cost_per_pass_usd, m.cost_estimated)]
        rows.append(
            f'<tr data-model="{escape(m.model)}"><th scope="row">{escape(m.model)}'
            f"{_sim_badge(m.simulated)}</th>"
            + "".join(f'<td class="fig">{escape(c)}</td>' for c in cells)
            + f'<td class="{"error" if m.failures else ""}">{escape(fails)}</td>'
            + "".join(f'<td class="fig">{escape(c)}</td>' for c in figures) + "</tr>")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in heads)
    return (f'<div class="table-wrap"><table class="summary"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _pairs_table(pairs: Sequence[PairSummary], simulated: set[str]) -> str:
    if not pairs:
        return '<p class="none">One model: no pair to compare.</p>'
    heads = ("a vs b", "paired", "a only", "b only", "McNemar p (Holm)",
             "median TTFT a − b", "95% CI", "TTFT pairs")
    rows = []
    for p in pairs:
        cells = [str(p.paired), str(p.a_only), str(p.b_only), p_text(p),
                 signed_seconds(p.ttft_diff_s), interval_seconds(p.ttft_diff_ci),
                 str(p.ttft_pairs)]
        rows.append(f'<tr><th scope="row">{escape(p.a)}{_sim_badge(p.a in simulated)} vs '
                    f"{escape(p.b)}{_sim_badge(p.b in simulated)}</th>"
                    + "".join(f'<td class="fig">{escape(c)}</td>' for c in cells) + "</tr>")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in heads)
    return (f'<div class="table-wrap"><table class="pairs"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
            '<p class="note">a only: passed for a and failed for b; b only: the reverse. '
            "p: exact two-sided McNemar test, Holm-corrected across the pairs.</p>")


@dataclass(slots=True)
class _Fold:
    """A (case, model)'s repeats, folded into one matrix cell."""

    passed: int = 0
    judged: int = 0
    errors: int = 0
    not_run: int = 0
    recorded: int = 0
    failing: int = -1
    """Index of this cell's first entry in the failures list, or -1."""


def _fold_cell(f: _Fold) -> tuple[str, str, str]:
    """(class, text, words): the colour class, the glyph and count shown, and a sentence."""
    extra = f" ⚠{f.errors}" if f.errors else ""
    words_err = f", {f.errors} stream(s) failed" if f.errors else ""
    if f.judged:
        if f.passed == f.judged:
            cls, glyph = "pass", "✓"
        elif f.passed == 0:
            cls, glyph = "fail", "✗"
        else:
            cls, glyph = "partial", "◐"
        return (cls, f"{glyph} {f.passed}/{f.judged}{extra}",
                f"{f.passed} of {f.judged} judged repeats passed{words_err}")
    if f.errors:
        recorded = f" ○{f.recorded}" if f.recorded else ""
        return ("fail", f"⚠{f.errors}{recorded}",
                f"not judged: {f.recorded} answer(s) recorded{words_err}")
    if f.recorded:
        return "muted", f"○ {f.recorded}", f"{f.recorded} answer(s) recorded, not judged"
    if f.not_run:
        return "notrun", "· not run", "not run"
    return "notrun", DASH, "no result"


def _matrix_and_failures(case_ids: Sequence[str], models: Sequence[str],
                         results: Sequence[CellResult]) -> tuple[str, str]:
    folds: dict[tuple[str, str], _Fold] = {}
    failures: list[str] = []
    for cell in results:
        fold = folds.get((cell.case, cell.model))
        if fold is None:
            fold = folds[(cell.case, cell.model)] = _Fold()
        if cell.status == NOT_RUN:
            fold.not_run += 1
            continue
        if not cell.completed:
            fold.errors += 1
        if cell.passed is not None:
            fold.judged += 1
            fold.passed += cell.passed
        elif cell.completed:
            fold.recorded += 1
        if cell.failed:
            if fold.failing < 0:
                fold.failing = len(failures)
            reasons = "".join(f"<li>{escape(_cut(r, REASON_LIMIT))}</li>"
                              for r in failed_reasons(cell))
            failures.append(
                f'<li id="f{len(failures)}"><span class="where">{escape(cell.case)} · '
                f"{escape(cell.model)} · repeat {cell.repeat}</span>"
                + (f" · comparison #{cell.comparison_id}" if cell.comparison_id else "")
                + f"<ul>{reasons}</ul></li>")
    known = set(case_ids)
    order = list(case_ids) + list(dict.fromkeys(c.case for c in results if c.case not in known))
    head = "".join(f'<th scope="col">{escape(m)}</th>' for m in models)
    rows = []
    empty = _Fold()
    for case in order:
        tds = []
        for model in models:
            fold = folds.get((case, model), empty)
            cls, text, words = _fold_cell(fold)
            title = escape(f"{case} · {model}: {words}")
            inner = escape(text)
            if fold.failing >= 0:
                inner = f'<a href="#f{fold.failing}">{inner}</a>'
            tds.append(f'<td class="{cls}" title="{title}">{inner}</td>')
        rows.append(f'<tr><th scope="row">{escape(case)}</th>{"".join(tds)}</tr>')
    legend = ('<p class="legend"><span class="pass">✓ all passed</span> '
              '<span class="partial">◐ some passed</span> <span class="fail">✗ none passed'
              '</span> <span class="fail">⚠N streams failed</span> <span class="muted">○ '
              'recorded, not judged</span> <span class="notrun">· not run</span> — '
              "counts are passed/judged over the repeats; a failing cell links to why.</p>")
    matrix = (f'{legend}<div class="table-wrap matrix-wrap"><table class="matrix"><thead><tr>'
              f'<th scope="col">case</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
              "</table></div>")
    failure_list = ('<p class="none">No cell failed.</p>' if not failures else
                    f'<ol class="failures">{"".join(failures)}</ol>')
    return matrix, failure_list


# --- the page -------------------------------------------------------------------------


def _css() -> str:
    c = COLOURS
    return f"""
h2 {{ font-size: 18px; color: {c['primary']}; margin: 26px 0 8px;
  border-bottom: 1px solid {c['panel']}; padding-bottom: 4px; }}
h3 {{ font-size: 15px; margin: 0 0 6px; color: {c['foreground']}; }}
.meta {{ margin-bottom: 10px; }}
.models {{ display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 12px; }}
.model {{ background: {c['surface']}; border: 1px solid {c['panel']}; border-radius: 4px;
  padding: 2px 10px; overflow-wrap: anywhere; }}
.simulated {{ font-size: 12px; font-weight: 600; color: {c['warning']};
  border: 1px solid currentColor; border-radius: 10px; padding: 0 7px; white-space: nowrap; }}
.stopped-note {{ color: {c['warning']}; border: 1px solid {c['warning']};
  border-radius: 4px; padding: 6px 12px; }}
.simulated-note, .stopped-note {{ margin: 0 0 12px; }}
.table-wrap {{ margin: 0 0 8px; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ border: 1px solid {c['panel']}; padding: 4px 8px; text-align: left;
  vertical-align: top; }}
thead th {{ background: {c['panel']}; color: {c['primary']}; white-space: nowrap; }}
tbody th {{ font-weight: 600; overflow-wrap: anywhere; max-width: 360px; }}
td.fig {{ white-space: nowrap; text-align: right; font-variant-numeric: tabular-nums; }}
td.error {{ color: {c['error']}; }}
.note {{ color: {c['muted']}; font-size: 13px; margin: 4px 0; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 18px; }}
.chart-box {{ margin: 0; background: {c['surface']}; border: 1px solid {c['panel']};
  border-radius: 6px; padding: 12px 14px; max-width: 800px; }}
.chart-box figcaption {{ font-size: 13px; }}
.chart-box ul.words {{ margin: 4px 0 0; padding-left: 18px; overflow-wrap: anywhere; }}
svg.chart {{ display: block; max-width: 100%; height: auto; }}
svg.chart text {{ font: 12px system-ui, sans-serif; fill: {c['foreground']}; }}
svg.chart text.tick {{ fill: {c['muted']}; font-size: 11px; }}
svg.chart text.axis-title {{ fill: {c['muted']}; }}
svg.chart line.grid {{ stroke: {c['panel']}; stroke-width: 1; }}
svg.chart line.zero {{ stroke: {c['muted']}; stroke-width: 1.5; stroke-dasharray: 4 3; }}
svg.chart line.whisker {{ stroke: {c['foreground']}; stroke-width: 1.5; }}
svg.chart rect.iqr {{ fill: {c['primary']}; fill-opacity: 0.35; stroke: {c['primary']}; }}
svg.chart line.median {{ stroke: {c['accent']}; stroke-width: 3; }}
svg.chart line.ci {{ stroke: {c['secondary']}; stroke-width: 2; }}
svg.chart circle {{ fill: {c['accent']}; }}
svg.chart rect.estimate {{ fill: {c['accent']}; }}
.legend span {{ margin-right: 10px; white-space: nowrap; padding: 0 4px;
  border-radius: 3px; }}
table.matrix td {{ white-space: nowrap; text-align: center; min-width: 70px;
  font-variant-numeric: tabular-nums; }}
.matrix-wrap {{ max-height: 80vh; overflow: auto; }}
table.matrix thead th {{ position: sticky; top: 0; }}
.pass {{ color: {c['success']}; }}
.fail {{ color: {c['error']}; }}
.partial {{ color: {c['warning']}; }}
.muted {{ color: {c['muted']}; }}
.notrun {{ color: {c['muted']}; font-style: italic; }}
td.pass {{ background: rgba(95, 211, 141, 0.10); }}
td.fail {{ background: rgba(255, 107, 107, 0.12); }}
td.partial {{ background: rgba(245, 196, 81, 0.12); }}
td a {{ color: inherit; }}
ol.failures {{ font-size: 13px; padding-left: 28px; }}
ol.failures li {{ margin-bottom: 4px; overflow-wrap: anywhere; }}
ol.failures .where {{ font-weight: 600; }}
ol.failures ul {{ margin: 0; padding-left: 18px; color: {c['muted']}; }}
ol.failures li:target {{ outline: 1px solid {c['accent']}; }}
footer {{ margin-top: 24px; }}
"""


def suite_html(*, suite: Suite, results: Sequence[CellResult], summary: RunSummary,
               run_id: str, created_at: float, finished: bool, stopped: str | None) -> str:
    """The run as one self-contained HTML page (see the module's docstring)."""
    simulated = simulated_models(suite, results, summary)
    sim_set = set(simulated)
    models = list(dict.fromkeys([*suite.models, *(m.model for m in summary.models)]))
    cases = len(suite.cases)
    title = f"Suite {suite.name} · run {run_id}"
    state = "finished" if finished else "stopped" + (f" ({stopped})" if stopped else "")
    head = [
        f"<h1>Suite: {escape(suite.name)}</h1>",
        f'<div class="meta">run {escape(run_id)} · {escape(created_iso(created_at))} · {cases} '
        f"case{'' if cases == 1 else 's'} × {len(models)} model"
        f"{'' if len(models) == 1 else 's'} × {suite.repeat} repeat"
        f"{'' if suite.repeat == 1 else 's'} · {len(results)} results · {escape(state)}</div>",
        '<div class="models">' + "".join(
            f'<span class="model">{escape(m)}{_sim_badge(m in sim_set)}</span>' for m in models)
        + "</div>",
    ]
    if simulated:
        which = "every model" if sim_set >= set(models) else ", ".join(simulated)
        head.append(f'<p class="simulated-note">Simulated: {escape(which)} answered from the '
                    "local gateway's simulated models, generated on this machine, not by the "
                    "real models of those names; their figures say nothing of those models."
                    "</p>")
    if not finished:
        head.append(f'<p class="stopped-note">This run stopped before every cell ran'
                    f"{' (' + escape(stopped) + ')' if stopped else ''}; continue it with "
                    f"<code>anoman-tui eval --resume {escape(run_id)}</code>.</p>")
    if suite.skipped:
        head.append('<p class="stopped-note">Skipped as unsupported: '
                    + escape("; ".join(suite.skipped)) + "</p>")
    matrix, failure_list = _matrix_and_failures([c.id for c in suite.cases], models, results)
    body = (
        "".join(head)
        + "<h2>Summary</h2>" + _summary_table(summary)
        + '<p class="note">passed / judged counts results (case × repeat); the interval is '
          "95% Wilson. A failed stream is judged, and fails. Costs marked ~ are (partly) "
          "estimates.</p>"
        + "<h2>Pairs</h2>" + _pairs_table(summary.pairs, sim_set)
        + (f'<h2>Judge</h2><p class="{"stopped-note" if summary.judge.self_judge else "note"}">'
           + escape(judge_line(summary.judge, results)) + "</p>"
           + _bias_list(summary.judge)
           + (ratings_chart(summary.ratings, summary.judge.self_judge, sim_set)
              if summary.ratings else "") if summary.judge else "")
        + '<h2>Charts</h2><div class="charts">'
        + ttft_chart(ttft_boxes(summary, results)) + cost_chart(summary.models)
        + (forest_chart(summary.pairs) if summary.pairs else "") + "</div>"
        + "<h2>Pass matrix</h2>" + matrix
        + "<h2>Why cells failed</h2>" + failure_list
        + f"<footer>Made by anoman-tui. Answers are not in this page: open them with "
          f"<code>anoman-tui runs show {escape(run_id)}</code> or their comparison in the "
          "history.</footer>"
    )
    return html_page(title=title, css=_css(), body=body)
