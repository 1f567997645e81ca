"""Pictures drawn in the terminal: figures with their intervals, distributions, and cost
against pass rate. Pure functions returning multi-line Rich `Text`, no Textual.

* `interval_chart`: a point estimate (●) with its 95% interval (├──┤) per row, every row
  on one shared horizontal axis, as Chatbot Arena plots ratings with their confidence
  intervals: a pass rate with its Wilson interval, a Bradley–Terry rating with its
  bootstrap interval (the scoreboard screen draws one under its table).
* `distribution_chart`: per row, a box plot of a sample on one shared axis (TTFT per
  model): whiskers p5–p95 (─, ├ ┤ at the ends), box p25–p75 (━), median ●. The quantiles
  are numpy's default ("linear", Hyndman & Fan's type 7; `quantiles`).
* `scatter_chart`: cost (x) against pass rate (y) per model, each model a letter on a
  small grid, with a legend in words.

What every picture promises:

* it fits the `width` it is given (each line at most `width` cells, `rich.cells.cell_len`)
  and degrades when narrow: labels are cut in the middle with an ellipsis (`claude…et-4-6`:
  model names differ at their ends), ticks become fewer, and a row takes two or three
  lines (label and figures, then the picture) before a figure is shortened;
  it is meant for widths of 30 and more, and never raises on empty input, a single row,
  None or non-finite values, zero-width intervals or all-equal values;
* each figure is also in words beside the picture (`72% [61%–81%]`, `p50 0.41 s · p95
  0.93 s · n 300`, `1043 [1012–1071]`): colour only repeats what the words say;
* labels (model names) are untrusted: control sequences are removed (`terminal_safe`),
  whitespace (newlines included) is folded so a label stays on one line, and the text is
  appended, never parsed as markup, so `[bold red]x[/]` shows as typed;
* a simulated model says so in words: ` (simulated)` after its name, or ` (sim)` where the
  room is short.

Colours come in a `ChartStyle` (Rich style strings or `Style`s). A widget maps the app's
theme onto it through component classes (as `RerunDelta` does for its line, and the
scoreboard screen's `RatingChart` for its picture): in its CSS
`RatingChart > .rating-chart--point { color: $accent; text-style: bold; }`, `--interval
{ color: $primary; }`, `--axis` and `--muted { color: $text-muted; }` (a label may take
`$foreground`, or stay "" for the widget's own colour), each read back with
`get_component_rich_style(...)` when it renders, so a theme change redraws in the new
colours; `simulated` keeps `SIMULATED_STYLE` of `anoman_tui.ui.widgets.pane` (bold italic
dark orange, the default here too) or takes `$warning`. The theme files (themes/*.toml,
loaded by `anoman_tui.ui.themes`) set `primary`, `secondary`, `accent`, `foreground`,
`background`, `surface`, `panel`, `success`, `warning` and `error`; Textual derives
`$text-muted` and the other shades from them.

May import: the standard library, `rich`, `anoman_tui.streaming.safe_text`,
`anoman_tui.quantiles` and `anoman_tui.report.axes` (the one tick rule). Never Textual, and
nothing else of `anoman_tui.ui` (the `ui-render-without-textual` contract in
`.importlinter` checks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from rich.cells import cell_len, set_cell_size
from rich.style import StyleType
from rich.text import Text

from anoman_tui.quantiles import sorted_percentile
from anoman_tui.report.axes import nice_ticks
from anoman_tui.streaming.safe_text import terminal_safe

__all__ = [
    "DASH",
    "POINT",
    "ChartStyle",
    "IntervalRow",
    "SampleRow",
    "ScatterPoint",
    "distribution_chart",
    "interval_chart",
    "number",
    "one_line",
    "percent",
    "quantiles",
    "scatter_chart",
]

DASH = "—"
ELLIPSIS = "…"
POINT = "●"
SIMULATED = " (simulated)"
SIMULATED_SHORT = " (sim)"
NOTHING = "nothing to draw"
MIN_PLOT = 20  # the narrowest picture column beside a label and its figures
MIN_LABEL_BESIDE = 16  # a label cut shorter than this moves the picture under it
MIN_LABEL = 10  # a label cut shorter than this moves the figures under it too
MAX_TICKS = 5
GAP = "  "
INDENT = "  "  # the picture's line when a row takes more than one


@dataclass(frozen=True, slots=True)
class ChartStyle:
    """The pictures' styles; the defaults read on dark and light terminals alike."""

    point: StyleType = "bold"
    """The point estimate ●, a median ●, a scatter letter."""
    interval: StyleType = ""
    """An interval's line ├──┤, a box's whiskers and box."""
    axis: StyleType = "dim"
    """Axis lines and tick labels."""
    label: StyleType = ""
    """Row labels (model names)."""
    muted: StyleType = "dim"
    """What is missing: `—`, `no samples`, `not plotted: …`."""
    simulated: StyleType = "bold italic dark_orange"
    """The ` (simulated)` tag (as `SIMULATED_STYLE` of the compare panes)."""


@dataclass(frozen=True, slots=True)
class IntervalRow:
    """One row of `interval_chart`: a figure and its interval, any of them unknown."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    simulated: bool = False


@dataclass(frozen=True, slots=True)
class SampleRow:
    """One row of `distribution_chart`: the raw sample (None or empty: no samples)."""

    label: str
    values: Sequence[float] | None
    simulated: bool = False


@dataclass(frozen=True, slots=True)
class ScatterPoint:
    """One model of `scatter_chart`: its cost in USD and its pass rate in percent
    (0–100); either may be unknown."""

    label: str
    cost_usd: float | Decimal | None
    pass_rate: float | None
    simulated: bool = False


# --- small formatters -----------------------------------------------------------------


def one_line(text: str) -> str:
    """Untrusted text for one line: control sequences removed, whitespace folded."""
    return " ".join(terminal_safe(str(text)).split())


def number(value: float) -> str:
    """About three significant digits: `1043`, `12.3`, `0.41`, `0.0042`."""
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def percent(value: float) -> str:
    """A percentage already in 0–100: `72%`."""
    return f"{value:.0f}%"


def _step_number(value: float, step: float) -> str:
    """A tick value with the decimals its step needs: 0.25 → `0.25`, 50 → `1050`."""
    exponent = Decimal(repr(step)).normalize().as_tuple().exponent
    decimals = max(0, -exponent) if isinstance(exponent, int) else 0
    text = f"{value:.{decimals}f}"
    return "0" if text.strip("-0.") == "" else text


def _money(value: float) -> str:
    """A cost with three significant digits below a dollar: `$0.0123`, `$1.50`, `$0`."""
    if value == 0:
        return "$0"
    size = abs(value)
    decimals = 2 if size >= 1 else -math.floor(math.log10(size)) + 2
    sign = "-" if value < 0 else ""
    return f"{sign}${size:.{decimals}f}"


def _finite(value: float | Decimal | None) -> float | None:
    if value is None:
        return None
    try:
        number_ = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number_ if math.isfinite(number_) else None


# --- quantiles ------------------------------------------------------------------------


def quantiles(values: Iterable[float | None], qs: Sequence[float]) -> list[float] | None:
    """The `qs` percentiles (each 0–100) of the finite values: linear interpolation
    between the closest ranks, numpy.percentile's default method ("linear", type 7), to
    the last bit. None and non-finite values are left out; None when none is left."""
    ordered = sorted(v for v in (_finite(x) for x in values) if v is not None)
    if not ordered:
        return None
    return [sorted_percentile(ordered, min(100.0, max(0.0, float(q)))) for q in qs]


# --- the shared axis ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Axis:
    low: float
    high: float
    width: int
    ticks: tuple[tuple[int, int, str], ...]  # (tick column, label start, label)

    def column(self, value: float) -> int:
        span = self.high - self.low
        where = (value - self.low) / span * (self.width - 1) if span > 0 else 0.0
        return min(self.width - 1, max(0, round(where))) if math.isfinite(where) else 0


def _domain(values: Iterable[float], lo: float | None, hi: float | None
            ) -> tuple[float, float, bool, bool]:
    """The axis's ends and whether each is fixed (given, and no figure beyond it)."""
    data = [v for v in values if math.isfinite(v)]
    lo, hi = _finite(lo), _finite(hi)
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    fix_lo = lo is not None and (not data or min(data) >= lo)
    fix_hi = hi is not None and (not data or max(data) <= hi)
    low = lo if fix_lo and lo is not None else min(data, default=lo if lo is not None else 0.0)
    high = hi if fix_hi and hi is not None else max(data, default=hi if hi is not None else 1.0)
    if high <= low:  # all equal, a single point, or a zero-width interval
        pad = abs(low) * 0.05 or 1.0
        if fix_lo and not fix_hi:
            high = low + pad
        elif fix_hi and not fix_lo:
            low = high - pad
        else:
            fix_lo = fix_hi = False
            low, high = low - pad, high + pad
    return low, high, fix_lo, fix_hi


def _place(values: list[float], low: float, high: float, width: int, step: float,
           label_of: Callable[[float, float], str]) -> tuple[tuple[int, int, str], ...] | None:
    """Tick columns and labels, each label centred on its tick within the axis and apart
    from the next; None when they do not fit."""
    axis = _Axis(low, high, width, ())
    placed: list[tuple[int, int, str]] = []
    end = -1
    for value in values:
        label = one_line(label_of(value, step))
        if placed and label == placed[-1][2]:
            continue  # a formatter too coarse for the step: the tick says nothing new
        size = cell_len(label)
        if size > width:
            return None
        column = axis.column(value)
        start = min(max(0, column - size // 2), width - size)
        if start <= end:
            return None
        placed.append((column, start, label))
        end = start + size
    return tuple(placed) if len(placed) >= 2 else None


def _axis(low: float, high: float, fix_lo: bool, fix_hi: bool, width: int,
          label_of: Callable[[float, float], str]) -> _Axis:
    """The axis for `width` columns: 2 to 5 ticks at round values whose labels fit
    (the ends widened to a round value unless fixed); fewer when nothing fits."""
    width = max(1, width)
    span = high - low
    if not math.isfinite(span) or span <= 0:  # figures near the float's limits
        return _Axis(low, high, width, ())
    tried = (low, high, span)
    for intervals in (4, 3, 2, 1):
        axis = nice_ticks(low, high, intervals, fix_low=fix_lo, fix_high=fix_hi)
        a, b = axis.low, axis.high
        tried = (a, b, axis.step)
        if len(axis.values) > MAX_TICKS:
            continue
        placed = _place(list(axis.values), a, b, width, axis.step, label_of)
        if placed is not None:
            return _Axis(a, b, width, placed)
    # Not even two round ticks fit: the low end alone, if it does.
    a, b, step = tried
    label = one_line(label_of(a, step))
    ticks = ((0, 0, label),) if cell_len(label) <= width else ()
    return _Axis(a, b, width, ticks)


def _axis_lines(axis: _Axis, offset: int, style: ChartStyle) -> list[Text]:
    line = ["─"] * axis.width
    for column, _, _ in axis.ticks:
        line[column] = "┬"
    labels = [" "] * axis.width
    for _, start, label in axis.ticks:
        labels[start:start + cell_len(label)] = [label] + [""] * (cell_len(label) - 1)
    pad = " " * offset
    return [Text(pad + "".join(line), style=style.axis),
            Text(pad + "".join(labels).rstrip(), style=style.axis)]


def _cells(cells: list[tuple[str, StyleType]]) -> Text:
    """One line from (character, style) cells, a span per run of one style."""
    text = Text()
    run, run_style = "", cells[0][1] if cells else ""
    for char, cell_style in cells:
        if cell_style != run_style:
            text.append(run, style=run_style)
            run, run_style = "", cell_style
        run += char
    text.append(run, style=run_style)
    return text


# --- labels and the row layout --------------------------------------------------------


def _cut(text: str, room: int) -> str:
    """`text` in at most `room` cells, an ellipsis ending it when cut."""
    if room <= 0:
        return ""
    if cell_len(text) <= room:
        return text
    return set_cell_size(text, room - 1) + ELLIPSIS


def _cut_middle(text: str, room: int) -> str:
    """`text` in at most `room` cells, cut in the middle (`claude…et-4-6`): model names
    tend to differ at their ends (versions, sizes)."""
    if cell_len(text) <= room:
        return text
    if room < 7:
        return _cut(text, room)
    tail_room = (room - 1) // 2
    tail = ""
    for char in reversed(text):
        if cell_len(char + tail) > tail_room:
            break
        tail = char + tail
    return set_cell_size(text, room - 1 - cell_len(tail)) + ELLIPSIS + tail


def _label_len(name: str, simulated: bool) -> int:
    return cell_len(one_line(name)) + (len(SIMULATED) if simulated else 0)


def _label(name: str, simulated: bool, room: int, style: ChartStyle) -> Text:
    """A model's name in `room` cells: ` (simulated)` after it, ` (sim)` when short of
    room, the name cut in the middle with an ellipsis before the tag is."""
    name = one_line(name)
    text = Text()
    if not simulated:
        text.append(_cut_middle(name, room), style=style.label)
        return text
    for tag in (SIMULATED, SIMULATED_SHORT):
        if cell_len(name) + len(tag) <= room:
            text.append(name, style=style.label)
            text.append(tag, style=style.simulated)
            return text
    keep = room - len(SIMULATED_SHORT)
    if keep >= 2:
        text.append(_cut_middle(name, keep), style=style.label)
        text.append(SIMULATED_SHORT, style=style.simulated)
    else:  # narrower than any chart is meant for: the tag first
        text.append(_cut("sim " + name, room), style=style.simulated)
    return text


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    simulated: bool
    figures: tuple[Text, ...]  # the figures in words, longest form first
    draw: Callable[[_Axis], list[tuple[str, StyleType]]]  # the picture's cells


def _padded(text: Text, room: int) -> Text:
    out = text.copy()
    out.truncate(room, overflow="ellipsis", pad=True)
    return out


def _lay_out(rows: list[_Row], width: int, low: float, high: float, fix_lo: bool,
             fix_hi: bool, label_of: Callable[[float, float], str], style: ChartStyle
             ) -> Text:
    """Rows on one axis: `label  picture  figures` on one line when there is room,
    else `label  figures` over the picture, else label, figures and picture on three
    lines; the axis and its tick labels under the rows."""
    if not rows:
        return _joined([Text(NOTHING, style=style.muted)], width)
    width = max(1, width)
    label_need = max(_label_len(r.name, r.simulated) for r in rows)
    label_min = min(label_need, MIN_LABEL)
    forms = len(rows[0].figures)
    lines: list[Text] = []
    layout: tuple[int, int, int] | None = None  # lines a row takes, label room, form
    for form in range(forms):
        figures = max(r.figures[form].cell_len for r in rows)
        room = width - figures - 2 * len(GAP)
        label = min(label_need, max(label_min, room - max(MIN_PLOT, room // 2)))
        if label >= min(label_need, MIN_LABEL_BESIDE) and room - label >= MIN_PLOT:
            layout = (1, label, form)
            break
    if layout is None:
        for form in range(forms):
            figures = max(r.figures[form].cell_len for r in rows)
            label = min(label_need, width - figures - len(GAP))
            if label >= label_min:
                layout = (2, label, form)
                break
    if layout is None:
        form = next((f for f in range(forms) if max(r.figures[f].cell_len for r in rows)
                     <= width - len(INDENT)), forms - 1)
        layout = (3, width, form)
    kind, label_room, form = layout
    if kind == 1:
        figures = max(r.figures[form].cell_len for r in rows)
        offset = label_room + len(GAP)
        plot = width - offset - len(GAP) - figures
    else:
        offset = len(INDENT)
        plot = width - offset
    axis = _axis(low, high, fix_lo, fix_hi, max(1, plot), label_of)
    for row in rows:
        name = _label(row.name, row.simulated, label_room, style)
        picture = _cells(row.draw(axis))
        if kind == 1:
            line = _padded(name, label_room)
            line.append(GAP)
            line.append_text(picture)
            line.append(GAP)
            line.append_text(row.figures[form])
            lines.append(line)
        elif kind == 2:
            line = _padded(name, label_room)
            line.append(GAP)
            line.append_text(row.figures[form])
            lines.append(line)
        else:
            lines.extend([name, Text(INDENT) + row.figures[form]])
        if kind > 1 and picture.plain.strip():  # (a row with nothing drawn: no blank line)
            lines.append(Text(INDENT) + picture)
    lines.extend(_axis_lines(axis, offset, style))
    return _joined(lines, width)


def _joined(lines: list[Text], width: int) -> Text:
    for line in lines:
        line.rstrip()
        if line.cell_len > width:  # only below the widths the charts are meant for
            line.truncate(max(1, width), overflow="ellipsis")
    return Text("\n", no_wrap=True, overflow="ellipsis").join(lines)


# --- 1. figures with their intervals ---------------------------------------------------


def interval_chart(rows: Sequence[IntervalRow], width: int, *,
                   fmt: Callable[[float], str] = number, lo: float | None = None,
                   hi: float | None = None, style: ChartStyle | None = None) -> Text:
    """Each row's figure (●) and its interval (├──┤) on one shared axis, with the
    figures in words beside it (`1043 [1012–1071]`), and the axis with 2–5 ticks
    under the rows.

    `fmt` writes a figure (the ticks too): `number` by default, `percent` for a pass
    rate in 0–100, `lambda v: f"{v:.0f}"` for a rating. `lo` and `hi` are the axis's
    ends (0 and 100 for a rate); an end not given, or with a figure beyond it, is the
    figures' own, widened to a round value. A row without a value shows `—` and no
    marks; an unknown end of its interval shows `?` and is not drawn."""
    style = style or ChartStyle()
    built: list[_Row] = []
    data: list[float] = []
    for row in rows:
        value, low, high = _finite(row.value), _finite(row.low), _finite(row.high)
        if value is None:
            figures = Text(DASH, style=style.muted)
            built.append(_Row(row.label, row.simulated, (figures,), _nothing))
            continue
        if low is not None and high is not None and low > high:
            low, high = high, low
        words = fmt(value)
        if low is not None or high is not None:
            words += (f" [{DASH if low is None else fmt(low)}"
                      f"–{DASH if high is None else fmt(high)}]")
            words = words.replace(f"[{DASH}–", "[?–").replace(f"–{DASH}]", "–?]")
        data.extend(v for v in (value, low, high) if v is not None)
        built.append(_Row(row.label, row.simulated, (Text(one_line(words)),),
                          _interval_marks(value, low, high, style)))
    low_end, high_end, fix_lo, fix_hi = _domain(data, lo, hi)
    return _lay_out(built, width, low_end, high_end, fix_lo, fix_hi,
                    lambda v, _step: fmt(v), style)


def _nothing(axis: _Axis) -> list[tuple[str, StyleType]]:
    return [(" ", "")] * axis.width


def _interval_marks(value: float, low: float | None, high: float | None, style: ChartStyle
                    ) -> Callable[[_Axis], list[tuple[str, StyleType]]]:
    def draw(axis: _Axis) -> list[tuple[str, StyleType]]:
        cells: list[tuple[str, StyleType]] = [(" ", "")] * axis.width
        if low is not None or high is not None:
            a = axis.column(value if low is None else low)
            b = axis.column(value if high is None else high)
            a, b = min(a, b), max(a, b)
            for column in range(a, b + 1):
                cells[column] = ("─", style.interval)
            if low is not None:
                cells[a] = ("├" if a < b else "│", style.interval)
            if high is not None:
                cells[b] = ("┤" if a < b else "│", style.interval)
        cells[axis.column(value)] = (POINT, style.point)
        return cells

    return draw


# --- 2. distributions ----------------------------------------------------------------


def distribution_chart(rows: Sequence[SampleRow], width: int, *, unit: str = "s",
                       lo: float | None = 0.0, hi: float | None = None,
                       whisker: float = 5.0, style: ChartStyle | None = None) -> Text:
    """Per row a box plot of its sample on one shared axis: whiskers from the
    `whisker`-th to the (100 − `whisker`)-th percentile (p5–p95 by default; 0 for min
    and max), box p25–p75, median ●; beside it `p50 0.41 s · p95 0.93 s · n 300`
    (shorter when narrow), and the axis with its ticks (in `unit`) under the rows.

    The percentiles are `quantiles` (numpy's default method) of the row's finite
    values. The axis starts at `lo` (0 by default; None: the lowest whisker) and ends at
    `hi` (None: the highest whisker, widened to a round value). A row without samples
    says `no samples` and draws nothing."""
    style = style or ChartStyle()
    whisker = min(50.0, max(0.0, _finite(whisker) or 0.0))
    space = " " if unit else ""
    built: list[_Row] = []
    data: list[float] = []
    for row in rows:
        values = [v for v in (_finite(x) for x in (row.values or ())) if v is not None]
        found = quantiles(values, (whisker, 25.0, 50.0, 75.0, 100.0 - whisker))
        if found is None:
            empty = Text("no samples", style=style.muted)
            built.append(_Row(row.label, row.simulated, (empty, empty), _nothing))
            continue
        median, p95 = quantiles(values, (50.0, 95.0)) or (0.0, 0.0)
        p50s, p95s = f"{number(median)}{space}{unit}", f"{number(p95)}{space}{unit}"
        full = Text(f"p50 {p50s} · p95 {p95s} · n {len(values)}")
        short = Text(f"p50 {p50s}·p95 {p95s}·n {len(values)}")
        data.extend((found[0], found[-1]))
        built.append(_Row(row.label, row.simulated, (full, short),
                          _box_marks(found, style)))
    low_end, high_end, fix_lo, fix_hi = _domain(data, lo, hi)
    return _lay_out(built, width, low_end, high_end, fix_lo, fix_hi,
                    lambda v, step: f"{_step_number(v, step)}{space}{unit}", style)


def _box_marks(found: list[float], style: ChartStyle
               ) -> Callable[[_Axis], list[tuple[str, StyleType]]]:
    def draw(axis: _Axis) -> list[tuple[str, StyleType]]:
        cells: list[tuple[str, StyleType]] = [(" ", "")] * axis.width
        start, q1, median, q3, end = (axis.column(v) for v in found)
        for column in range(start, end + 1):
            cells[column] = ("─", style.interval)
        if start < end:
            cells[start], cells[end] = ("├", style.interval), ("┤", style.interval)
        for column in range(q1, q3 + 1):
            cells[column] = ("━", style.interval)
        cells[median] = (POINT, style.point)
        return cells

    return draw


# --- 3. cost against pass rate --------------------------------------------------------

_MARKERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
Y_LABEL = 4  # "100%"


def _marker(index: int) -> str:
    return _MARKERS[index] if index < len(_MARKERS) else "#"


def scatter_chart(points: Sequence[ScatterPoint], width: int, height: int = 8, *,
                  x_label: str = "cost per answer (USD)", y_label: str = "pass rate",
                  style: ChartStyle | None = None) -> Text:
    """Cost (x, USD, from $0) against pass rate (y, 0–100%) per model: each model a
    letter (A, B, C, …) at its place on a grid `height` rows high (at least 3), the axes
    with their ticks, a line naming the axes, then the legend in words, one model a
    line (`A claude-sonnet-4-6: 72% at $0.0123`).

    Letters that would touch or overlap on a row are written together, comma-separated
    (`A,B`), so each stays readable; the legend gives every position exactly. A model
    without a cost or a pass rate is not plotted and says so in the legend (`not plotted:
    no cost known`). A pass rate outside 0–100 is drawn at the nearer edge."""
    style = style or ChartStyle()
    width = max(1, width)
    rows = max(3, height)
    plotted: list[tuple[str, ScatterPoint, float, float]] = []
    missing: list[tuple[ScatterPoint, float | None, float | None]] = []
    for point in points:
        cost, rate = _finite(point.cost_usd), _finite(point.pass_rate)
        if cost is None or rate is None:
            missing.append((point, cost, rate))
        else:
            plotted.append((_marker(len(plotted)), point, cost, rate))
    if not plotted and not missing:
        return _joined([Text(NOTHING, style=style.muted)], width)
    lines: list[Text] = []
    if plotted:
        lines.extend(_grid(plotted, width, rows, style))
        lines.append(Text(_cut(f"y: {one_line(y_label)} · x: {one_line(x_label)}", width),
                          style=style.axis))
    for marker, point, cost, rate in plotted:
        words = f": {percent(rate)} at {_money(cost)}"
        line = Text(f"{marker} ", style=style.simulated if point.simulated else style.point)
        line.append_text(_label(point.label, point.simulated,
                                max(1, width - 2 - len(words)), style))
        line.append(words)
        lines.append(line)
    for point, cost, rate in missing:
        if cost is None and rate is None:
            forms = ["not plotted: no cost or pass rate known", "not plotted: no figures"]
        elif cost is None:
            forms = [f"not plotted: no cost known (pass rate {percent(rate or 0.0)})",
                     "not plotted: no cost known"]
        else:
            forms = [f"not plotted: no pass rate known (cost {_money(cost)})",
                     "not plotted: no pass rate known", "not plotted: no pass rate"]
        need = min(_label_len(point.label, point.simulated), MIN_LABEL)
        line = Text("  ")
        beside = next((w for w in forms if width - 4 - len(w) >= need), None)
        if beside is not None:  # `  name: not plotted: …`
            line.append_text(_label(point.label, point.simulated, width - 4 - len(beside),
                                    style))
            line.append(": " + beside, style=style.muted)
            lines.append(line)
        else:  # the name, then the words under it
            words = next((w for w in forms if len(w) <= width - 4), forms[-1])
            line.append_text(_label(point.label, point.simulated, width - 3, style))
            line.append(":")
            lines.extend([line, Text("    " + words, style=style.muted)])
    return _joined(lines, width)


def _grid(plotted: list[tuple[str, ScatterPoint, float, float]], width: int, rows: int,
          style: ChartStyle) -> list[Text]:
    offset = Y_LABEL + 2  # "100% ┤"
    plot = max(1, width - offset)
    low, high, fix_lo, fix_hi = _domain([c for _, _, c, _ in plotted], 0.0, None)
    axis = _axis(low, high, fix_lo, fix_hi, plot,
                 lambda v, step: "$" + _step_number(v, step) if v >= 0
                 else "-$" + _step_number(-v, step))
    # The letters on each grid row, by column.
    at: dict[int, dict[int, list[tuple[str, bool]]]] = {}
    for marker, point, cost, rate in plotted:
        line = round((100.0 - min(100.0, max(0.0, rate))) / 100.0 * (rows - 1))
        at.setdefault(line, {}).setdefault(axis.column(cost), []).append(
            (marker, point.simulated))
    y_ticks = {round((100 - y) / 100 * (rows - 1)): f"{y}%"
               for y in ((0, 25, 50, 75, 100) if rows >= 9 else (0, 50, 100))}
    lines = []
    for line_no in range(rows):
        cells: list[tuple[str, StyleType]] = [(" ", "")] * plot
        for start, letters in _clusters(at.get(line_no, {}), plot):
            for i, (char, simulated) in enumerate(letters):
                if start + i < plot:
                    char_style = style.axis if char == "," else (
                        style.simulated if simulated else style.point)
                    cells[start + i] = (char, char_style)
        tick = y_ticks.get(line_no)
        head = Text(f"{tick or '':>{Y_LABEL}} {'┤' if tick else '│'}", style=style.axis)
        lines.append(head + _cells(cells))
    lines.extend(_axis_lines(axis, offset, style))
    lines[-2] = Text(" " * (offset - 1) + "└", style=style.axis) + lines[-2][offset:]
    return lines


def _clusters(columns: dict[int, list[tuple[str, bool]]], width: int
              ) -> list[tuple[int, list[tuple[str, bool]]]]:
    """The letters of one grid row as runs placed left to right: letters that would
    touch or overlap are joined with commas (`A,B`), runs kept a space apart and within
    the row; a run longer than the row is cut."""
    runs: list[tuple[int, list[tuple[str, bool]]]] = []
    for column in sorted(columns):
        letters = columns[column]
        if runs and column <= runs[-1][0] + len(runs[-1][1]):
            runs[-1][1].append((",", False))
        else:
            runs.append((column, []))
        for i, letter in enumerate(letters):
            if i:
                runs[-1][1].append((",", False))
            runs[-1][1].append(letter)
    placed: list[tuple[int, list[tuple[str, bool]]]] = []
    end = 0
    for column, letters in runs:
        start = max(end, min(column, width - len(letters)))
        placed.append((start, letters))
        end = start + len(letters) + 1
    return placed
