"""Every use of a private Textual internal, in one place.

The answer view and the frame clock reach into Textual where its public API has no way
to do what they need at the cost they need. Those uses live here, as small named
functions (and one subclass), so that the rest of the project touches no Textual private
(tests/ui/test_textual_internals.py checks that, checks that each internal below still
has the shape used here, and fails when the installed Textual is not `TEXTUAL_VERSION`).

After a Textual upgrade, re-read each function below against the new Textual source,
then re-run the benchmark named for it and compare with the README's Performance
section; a private that went away or changed meaning is replaced by what the new version
offers, or the optimisation is dropped if the benchmark shows it no longer pays.

The internals used (Textual 8.2.8):

* `textual._styles_cache.StylesCache` (a private module) and `Widget._styles_cache` (the
  widget's instance of it): `RowStylesCache` subclasses it, overriding `render()` and
  `render_line()` with their 8.2.8 signatures, and `use_row_styles_cache()` puts it in
  place on `AnswerView`. Textual caches styled lines by their row on screen, so every
  scroll restyled every visible row while three answers followed their ends (~60 us a
  row, profiled at 3 x 300 tok/s: the largest part of a frame); an answer row is an
  immutable `Strip` carrying its own offsets, so its styled line can be reused wherever
  it lands. Benchmark: `benchmarks/app_display_lag.py` (with the frame clock below:
  3 x 300 tok/s display lag p99 112 -> 74 ms, CPU 73% -> 62%); pinned by
  tests/ui/test_frame_clock.py::test_scrolled_rows_reuse_their_styled_lines.
* `Screen._on_timer_update()` and `App._batch_count`: `composite_screen_now()` and
  `is_batching()`. `FrameClock` runs the answers' flushes, the panes' ticks and the
  scrollbar thumbs on one grid and then draws the screen at once, as the screen's update
  timer would on its next beat (lay out if needed, composite the dirty widgets), so all
  of it lands in one frame: 40% of frames had been for a footer or a scrollbar alone
  (3-10 ms each) and the wait for the update timer was up to 1/60 s (p99 25 ms).
  Benchmark: `benchmarks/app_display_lag.py` (the same change as above).
* `Widget._vertical_scrollbar` and `App._start_widget()`: `vertical_scrollbar()` and
  `made_vertical_scrollbar()`, as `Widget.vertical_scrollbar` but with a bar of the
  widget's own class (`AnswerView`'s bar repaints only when its thumb moves on screen;
  Textual's repaints its whole height on every flush, which cost as much frame time as
  the answers themselves: frame p50 17 -> 10 ms at 3 x 300 tok/s). Benchmarks:
  `benchmarks/app_display_lag.py` and `benchmarks/answer_view_lag.py`.
* `Widget._scroll_update()`: `update_scrollbars()`. Assigning `virtual_size` asks for a
  screen layout, which makes a frame ~3x dearer; `AnswerView` sets it with
  `set_reactive()` and updates only its scrollbars when its own height does not depend
  on its content. Benchmark: `benchmarks/answer_view_lag.py`.

Public API used instead of internals that were used before: `Strip.__eq__` (in 8.2.8 the
same comparison of segments as reading `Strip._segments`), a public `on_key` handler in
`PromptBox` instead of overriding `TextArea._on_key`, and `on_resize` instead of
`_on_resize` in the answer's scrollbar. `textual.cache.LRUCache` is not used for
`RowStylesCache`'s rows: they are a dict emptied when full, read once per drawn row,
cheaper than an LRU's bookkeeping on that path.

Outside the package, `benchmarks/answer_view_lag.py` and `benchmarks/app_harness.py`
time frames by wrapping `Screen._compositor_refresh()`; the tests check it exists too.

May import: the standard library and `textual`. Nothing from the project.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual._styles_cache import StylesCache
from textual.app import App
from textual.color import Color
from textual.css.styles import StylesBase
from textual.geometry import Region, Size, Spacing
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

__all__ = [
    "TEXTUAL_VERSION",
    "RowStylesCache",
    "StylesCache",
    "composite_screen_now",
    "is_batching",
    "made_vertical_scrollbar",
    "styles_cache",
    "update_scrollbars",
    "use_row_styles_cache",
    "vertical_scrollbar",
]

TEXTUAL_VERSION = "8.2.8"
"""The Textual version the functions here were written and measured against."""


# -- screen updates (FrameClock) -----------------------------------------------------------
def is_batching(app: App[Any]) -> bool:
    """True inside `App.batch_update()`: the screen must not be drawn yet."""
    return bool(app._batch_count)


def composite_screen_now(screen: Screen[Any]) -> None:
    """Do what the screen's update timer does on its next beat, now: lay out if needed,
    then composite the dirty widgets (and run callbacks waiting for the refresh)."""
    screen._on_timer_update()


# -- scrollbars (AnswerView) ---------------------------------------------------------------
def vertical_scrollbar(widget: Widget, make: Callable[[], ScrollBar]) -> ScrollBar:
    """`widget.vertical_scrollbar`, made by `make()` on first use (as Textual makes its own:
    hidden until the layout shows it, started as a child of `widget`)."""
    bar = widget._vertical_scrollbar
    if bar is None:
        bar = widget._vertical_scrollbar = make()
        bar.display = False
        widget.app._start_widget(widget, bar)
    return bar


def made_vertical_scrollbar(widget: Widget) -> ScrollBar | None:
    """The widget's vertical scrollbar if it has been made (without making it)."""
    return widget._vertical_scrollbar


def update_scrollbars(widget: Widget, virtual_size: Size) -> None:
    """Show, hide and size the scrollbars for `virtual_size`, without a screen layout."""
    widget._scroll_update(virtual_size)


# -- styled lines (AnswerView) -------------------------------------------------------------
def styles_cache(widget: Widget) -> StylesCache:
    """The cache of styled lines `widget` draws through."""
    return widget._styles_cache


def use_row_styles_cache(
    widget: Widget, row: Callable[[int], Strip | None]
) -> RowStylesCache:
    """Make `widget` draw through a `RowStylesCache` reading its rows with `row`."""
    cache = RowStylesCache(widget, row)
    widget._styles_cache = cache
    return cache


class RowStylesCache(StylesCache):
    """Textual's per-widget cache of styled lines, keeping each content row's result.

    For a scrolling Line-API widget whose rows are immutable `Strip`s carrying their own
    offsets (`row(y)` gives the source strip of virtual row `y`, or None for a blank
    row): a styled line (and, through the `Strip`'s own caches, its filtered and divided
    forms) is reused wherever the row lands, as long as the styles around it are the
    same. Rows are not kept while text is selected (selected rows are highlighted).
    """

    MAX_ROWS: ClassVar[int] = 1_024

    def __init__(self, widget: Widget, row: Callable[[int], Strip | None]) -> None:
        super().__init__()
        self._widget = widget
        self._row = row
        self._rows: dict[int, tuple[Strip, Strip]] = {}  # virtual row -> (source, styled)
        self._blank: Strip | None = None  # the styled blank row
        self._context: tuple[object, ...] = ()
        self._gutter_top = 0
        self._scroll_y: int | None = None

    def forget_rows(self) -> None:
        """Drop every kept row (the rows or the widget's style changed)."""
        self._rows.clear()
        self._blank = None

    def render(
        self,
        styles: StylesBase,
        size: Size,
        base_background: Color,
        background: Color,
        render_content_line: Any,
        filters: Any,
        border_title: Any,
        border_subtitle: Any,
        content_size: Size | None = None,
        padding: Spacing | None = None,
        crop: Region | None = None,
        opacity: float = 1.0,
        ansi_theme: Any = None,
        native_ansi: bool = False,
    ) -> list[Strip]:
        # Everything a styled content row depends on besides its own source strip.
        context = (
            size, content_size, padding, base_background, background, opacity,
            styles.text_opacity, styles.tint, styles.border, styles.outline,
            styles.hatch if styles.has_rule("hatch") else None,
            id(ansi_theme), native_ansi, self._widget.rich_style,
        )
        if context != self._context:
            self._context = context
            self.forget_rows()
        self._gutter_top = styles.gutter.top
        # Per render, not per row (each costs a walk up the DOM).
        widget = self._widget
        self._scroll_y = widget.scroll_offset.y if widget.text_selection is None else None
        if len(self._rows) > self.MAX_ROWS:
            self._rows.clear()
        return super().render(
            styles, size, base_background, background, render_content_line, filters,
            border_title, border_subtitle, content_size=content_size, padding=padding,
            crop=crop, opacity=opacity, ansi_theme=ansi_theme, native_ansi=native_ansi,
        )

    def render_line(
        self,
        styles: StylesBase,
        y: int,
        size: Size,
        content_size: Size,
        padding: Spacing,
        base_background: Color,
        background: Color,
        render_content_line: Any,
        border_title: Any,
        border_subtitle: Any,
        opacity: float,
        ansi_theme: Any,
        native_ansi: bool,
    ) -> Strip:
        content_y = y - self._gutter_top
        cacheable = False
        source: Strip | None = None
        virtual_y = 0
        scroll_y = self._scroll_y  # None while text is selected: rows are highlighted
        if scroll_y is not None and 0 <= content_y < content_size.height:
            cacheable = True
            virtual_y = scroll_y + content_y
            source = self._row(virtual_y)
            if source is None:
                # Gaps between blocks and rows past the end: one blank, styled once.
                if self._blank is not None:
                    return self._blank
            else:
                hit = self._rows.get(virtual_y)
                if hit is not None and hit[0] is source:
                    return hit[1]
        strip = super().render_line(
            styles, y, size, content_size, padding, base_background, background,
            render_content_line, border_title, border_subtitle, opacity, ansi_theme,
            native_ansi,
        )
        if cacheable:
            if source is None:
                self._blank = strip
            else:
                self._rows[virtual_y] = (source, strip)
        return strip
