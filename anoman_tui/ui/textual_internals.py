"""Every use of a private Textual internal, in one place.

The answer view and the frame clock reach into Textual where its public API has no way
to do what they need at the cost they need. Those uses live here, as small named
functions (and one subclass), so that the rest of the project touches no Textual private
(tests/ui/test_textual_internals.py checks that, checks that each internal below still
has the shape used here, and fails when the installed Textual is not `TEXTUAL_VERSION`).

After a Textual upgrade, re-read each function below against the new Textual source,
then re-run the benchmark named for it and compare with benchmarks/README.md's
Performance section; a private that went away or changed meaning is replaced by what the new version
offers, or the optimisation is dropped if the benchmark shows it no longer pays.

The internals used (Textual 8.2.8):

* `App._get_screen()`, `Screen._layout_required` and `Screen._on_screen_resume()` (with
  `ScreenResume.refresh_styles`):
  `mount_offstage()` mounts the suite's case screen before it is first shown (laid out
  with `Screen._refresh_layout()` and rendered once by `Compositor.render_update()`), and
  `KeepStylesOnResume` keeps its widgets' styles when it is shown again, so Enter on a
  running case only loads the panes and draws them; its `resume_now()` calls
  `Screen._on_screen_resume()` itself as the screen is pushed (the message that follows
  then stops at its handler, `prevent_default()`), so that the Enter key's handler
  draws the case's first frame (`FrameClock.draw_now()`). Benchmark:
  `benchmarks/suite_screen.py` (a running case's text drawn after Enter); pinned by
  tests/ui/test_textual_internals.py::test_offstage_screen_internals.

* `textual._styles_cache.StylesCache` (a private module) and `Widget._styles_cache` (the
  widget's instance of it): `RowStylesCache` subclasses it, overriding `render()` and
  `render_line()` with their 8.2.8 signatures, and `use_row_styles_cache()` puts it in
  place on `AnswerView`. Textual caches styled lines by their row on screen, so every
  scroll restyled every visible row while three answers followed their ends (~60 us a
  row, profiled at 3 x 300 tok/s: the largest part of a frame); an answer row is an
  immutable `Strip` drawn the same wherever it lands, so its styled line can be
  reused. Benchmark: `benchmarks/app_display_lag.py` (with the frame clock below:
  3 x 300 tok/s display lag p99 112 -> 74 ms, CPU 73% -> 62%); pinned by
  tests/ui/test_frame_clock.py::test_scrolled_rows_reuse_their_styled_lines.
* `Screen._on_timer_update()` and `App._batch_count`: `composite_screen_now()` and
  `is_batching()`. `FrameClock` runs the answers' flushes, the panes' ticks and the
  scrollbar thumbs on one grid and then draws the screen at once, as the screen's update
  timer would on its next beat (lay out if needed, composite the dirty widgets), so all
  of it lands in one frame: 40% of frames had been for a footer or a scrollbar alone
  (3-10 ms each) and the wait for the update timer was up to 1/60 s (p99 25 ms).
  Benchmark: `benchmarks/app_display_lag.py` (the same change as above).
  `Screen._compositor_refresh()` and `App._batch_count` again: `no_composite_while_batching()`
  keeps the compare screen from compositing inside a batch, where `App._display()` draws
  nothing (at start-up the app mounts in one batch: a whole composite before the first
  paint was dropped, and the frame after it drew only what changed since). Benchmark:
  `benchmarks/startup.py`; pinned by test_screen_update_internals and the snapshots.
* `Widget._repaint_required` and `Screen._dirty_widgets`: `composite_screen_now()` takes
  the repaints asked for during the clock's tick into the screen's dirty set itself, as
  the Update message each widget posts when its queue next goes idle would, but before
  the frame is drawn: that message comes after the tick, so half the answers' repaints
  (measured at 3 x 300 tok/s: 498 of 1,000) waited for the screen's own update timer,
  a second composite up to 1/60 s later. Pinned by
  tests/ui/test_frame_clock.py::test_requests_run_together_in_one_frame.
* `textual._compositor` (a private module): `Compositor.render_partial_update()`,
  `._dirty_regions`, `._regions_to_spans()`, `.cuts`, `.visible_widgets` and
  `ChopsUpdate`: `draw_dirty_lines_only()` makes the compare screen composite a partial
  update from its dirty lines alone, each chop rendered by the widget that shows it.
  Textual renders every widget overlapping the bounding box of the dirty regions over
  its whole height: three answers side by side made every frame re-walk every row of
  every pane, scrollbar and container (compositor time at 3 x 300 tok/s 1.48 -> 0.99 s
  for the same 6.8 s stream, with the answer view's text-only repaints). Pinned by
  tests/ui/test_partial_updates.py (the terminal, fed every update, always equals a
  full render; a one-row change renders one widget's changed rows).
* `Widget._vertical_scrollbar` and `App._start_widget()`: `vertical_scrollbar()` and
  `made_vertical_scrollbar()`, as `Widget.vertical_scrollbar` but with a bar of the
  widget's own class (`AnswerView`'s bar repaints only when its thumb moves on screen;
  Textual's repaints its whole height on every flush, which cost as much frame time as
  the answers themselves: frame p50 17 -> 10 ms at 3 x 300 tok/s). Benchmarks:
  `benchmarks/app_display_lag.py` and `benchmarks/answer_view_lag.py`.
* `FooterKey._disabled` (the flag its mouse handler reads; the `-disabled` class dims
  it): `set_footer_key_enabled()` enables or dims a key of the key bar in place, where
  Textual rebuilds the whole bar when any key's enabled state changes. Opening a suite's
  running case after an ended one rebuilt its keys (mounting, styling and laying out
  ~15 widgets) in the case screen's first frame. Benchmark: `benchmarks/suite_screen.py`
  (a running case's text drawn after Enter); pinned by
  tests/ui/test_textual_internals.py::test_footer_key_internals.
* `App._watch_theme()` and `App._refresh_truecolor_filter()`: `start_with_theme()` sets
  the app's theme before it starts, doing to the app what the theme's watcher does (its
  classes and ANSI colour filter) but not what the watcher does to a running app: parse
  the whole stylesheet again and restyle every widget, which setting the theme in
  `on_mount` cost the first paint. Benchmark: `benchmarks/startup.py`; pinned by
  tests/ui/test_textual_internals.py::test_theme_internals and the snapshots.
* `textual.drivers._writer_thread` (a private module): Textual's output thread stops at
  its first failed write and its queue holds `MAX_QUEUED_WRITES` writes, so once the
  terminal has gone, the app's exit (which restores the terminal through it) can block
  forever. `end_process_if_exit_blocks()` ends the process after a grace period instead
  (`os._exit`, as a hang-up signal would end it). Seen in 1 run in 3 of
  tests/reliability/test_terminal_hangup.py beside other tests, and once in CI; pinned by
  that test and by tests/ui/test_textual_internals.py::test_output_thread_internals.
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
time frames by wrapping `Screen._compositor_refresh()`, and app_harness.py also draws each
frame as terminal output by overriding `App._display()`; the tests check both exist too.

May import: the standard library, `textual` and `rich` (its dependency). Nothing from the
project.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import MethodType
from typing import Any, ClassVar

from rich.style import Style
from textual import events
from textual._compositor import ChopsUpdate, Compositor
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
    "draw_dirty_lines_only",
    "end_process_if_exit_blocks",
    "is_batching",
    "made_vertical_scrollbar",
    "no_composite_while_batching",
    "set_footer_key_enabled",
    "start_with_theme",
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
    # A widget that asked for a repaint joins the screen's dirty set only when its own
    # message queue next goes idle (an Update message), i.e. after this call: take the
    # repaints asked for so far in now, as that message would, so they land in this frame.
    dirty = screen._dirty_widgets
    for widget in screen._compositor.visible_widgets:
        if widget._repaint_required and widget is not screen:
            widget._repaint_required = False
            dirty.add(widget)
    screen._on_timer_update()


# -- the theme at start-up (AnomanApp) -----------------------------------------------------
def start_with_theme(app: App[Any], name: str) -> None:
    """Make `name` (registered) the theme of an app that has not started: what
    `App._watch_theme` does to the app as the theme changes (its `-theme-NAME`,
    `-dark-mode` and `-light-mode` classes, its ANSI colour filter), without what it
    does to a running app (parse its CSS again and restyle every widget), as the
    stylesheet is first parsed with the theme's colours anyway."""
    app.set_reactive(App.theme, name)
    theme = app.current_theme
    classes = {c: False for c in app.classes if c.startswith("-theme-")}
    classes[f"-theme-{theme.name}"] = True
    classes["-dark-mode"] = theme.dark
    classes["-light-mode"] = not theme.dark
    app.update_classes(classes, update=False)
    app._refresh_truecolor_filter(app.ansi_theme)
    # The stylesheet took the default theme's colours as the app was made; nothing is
    # parsed yet (the app reads its CSS as it starts), so these are the ones it parses with.
    app.stylesheet.set_variables(app.get_css_variables())


def no_composite_while_batching(screen: Screen[Any],
                                first_frame: Callable[[], None] | None = None) -> None:
    """Make `screen` composite nothing inside `App.batch_update()`, asking to be drawn
    once the batch is over instead: Textual composites a layout done in a batch (its
    `call_later` comes while the batch still runs) and then draws nothing of it
    (`App._display` returns while batching), having taken the dirty regions, so the
    frame after the batch redraws only what changed since. At start-up, where the app's
    mounting is one batch, that was a whole composite of the compare screen for nothing
    before the first paint. `first_frame` is called (later, by the screen's message
    loop) once its first frame has been drawn."""
    composite = screen._compositor_refresh
    waiting = [first_frame] if first_frame is not None else []

    def compositor_refresh() -> None:
        if screen.app._batch_count:
            screen.refresh()  # a repaint of the whole screen, after the batch
            return
        composite()
        if waiting:
            screen.call_later(waiting.pop())

    screen._compositor_refresh = compositor_refresh  # type: ignore[method-assign]


# -- the key bar (KeyBar) ------------------------------------------------------------------
def set_footer_key_enabled(key: Widget, enabled: bool) -> None:
    """Enable or dim one of a footer's keys in place, as `FooterKey(disabled=...)` builds
    it: the flag its mouse handler reads and the class that dims it."""
    key._disabled = not enabled  # type: ignore[attr-defined]
    key.set_class(not enabled, "-disabled")


# -- partial screen updates (CompareScreen) ------------------------------------------------
def draw_dirty_lines_only(screen: Screen[Any]) -> None:
    """Make `screen` composite a partial update from the dirty lines alone, each part of
    a line rendered only by the widget that shows it (see `_render_dirty_lines`)."""
    compositor = screen._compositor
    compositor.render_partial_update = MethodType(  # type: ignore[method-assign]
        _render_dirty_lines, compositor
    )


def _vanished_regions(compositor: Compositor) -> list[Region]:
    """Where widgets were on screen at the last update and no longer are.

    Textual repaints a removed widget's area when a layout finds it gone; but a scroll
    rebuilds the visible map first (`reflow_visible`), without marking anything, and the
    layout after it then finds nothing changed. Seen: a toast that expired while an
    answer scrolled left its text beside the prompt box.
    """
    visible = compositor.visible_widgets
    seen = getattr(compositor, "_anoman_seen", None)
    if seen is not None and seen[0] is visible:
        return []
    shown = {widget: region.intersection(clip) for widget, (region, clip) in visible.items()}
    compositor._anoman_seen = (visible, shown)  # type: ignore[attr-defined]
    if seen is None:
        return []
    return [area for widget, area in seen[1].items() if area and widget not in shown]


def _chop_owners(compositor: Compositor) -> list[dict[int, Widget]]:
    """For each screen line, the widget that shows each of its chops (cut -> widget):
    the front-most visible widget covering it. Kept until the layout or scroll changes
    (Textual makes new `cuts` and `visible_widgets` objects then)."""
    cuts = compositor.cuts
    visible = compositor.visible_widgets
    kept = getattr(compositor, "_anoman_chop_owners", None)
    if kept is not None and kept[0] is cuts and kept[1] is visible:
        owners: list[dict[int, Widget]] = kept[2]
        return owners
    owners = [{} for _ in cuts]
    for widget, (region, clip) in visible.items():  # front to back
        x, y, width, height = region.intersection(clip)
        if not (width and height):
            continue
        right = x + width
        for line in range(max(0, y), min(len(cuts), y + height)):
            line_owners = owners[line]
            for cut in cuts[line][:-1]:
                if x <= cut < right and cut not in line_owners:
                    line_owners[cut] = widget
    compositor._anoman_chop_owners = (cuts, visible, owners)  # type: ignore[attr-defined]
    return owners


def _render_dirty_lines(self: Compositor) -> ChopsUpdate | None:
    """`Compositor.render_partial_update()`, rendering only what the update shows.

    Textual's version renders every widget that overlaps the bounding box of all dirty
    regions, each over its whole height, and then keeps only the dirty lines: with three
    answers streaming side by side, every frame re-walked every row of every pane, its
    scrollbar and the containers behind them (~10 us a row; profiled at 3 x 100 tok/s,
    that was most of the compositor's time). Here each chop (a piece of a line between
    two widget edges) that a dirty span touches is rendered by its owner only, over the
    owner's dirty lines. The update sent to the terminal is the same.
    """
    update_regions = self._dirty_regions.copy()
    self._dirty_regions.clear()
    update_regions.update(_vanished_regions(self))
    if not update_regions:
        return None
    width, height = self.size
    spans = []
    for y, x1, x2 in self._regions_to_spans(update_regions):
        x1, x2 = max(0, x1), min(width, x2)
        if 0 <= y < height and x1 < x2:
            spans.append((y, x1, x2))
    if not spans:
        return None
    cuts = self.cuts
    owners = _chop_owners(self)
    # widget -> its dirty lines -> the chops on them that it must render
    wanted: dict[Widget, dict[int, set[int]]] = {}
    for y, x1, x2 in spans:
        line_cuts = cuts[y]
        line_owners = owners[y]
        for index in range(len(line_cuts) - 1):
            cut = line_cuts[index]
            if cut < x2 and line_cuts[index + 1] > x1:
                widget = line_owners.get(cut)
                if widget is not None:
                    wanted.setdefault(widget, {}).setdefault(y, set()).add(cut)
    chops: list[dict[int, Strip | None]] = [dict.fromkeys(c[:-1]) for c in cuts]
    visible = self.visible_widgets
    for widget, lines in wanted.items():
        region, clip = visible[widget]
        left, _, render_width, _ = region.intersection(clip)
        right = left + render_width
        ys = sorted(lines)
        start = 0
        while start < len(ys):
            end = start
            while end + 1 < len(ys) and ys[end + 1] - ys[end] <= 3:
                end += 1  # a short gap is rendered through: one call is cheaper
            first, last = ys[start], ys[end]
            strips = widget.render_lines(
                Region(left - region.x, first - region.y, render_width, last - first + 1)
            )
            for y in ys[start : end + 1]:
                if y - first >= len(strips):
                    break
                strip = strips[y - first]
                own = lines[y]
                final_cuts = [cut for cut in cuts[y] if right >= cut >= left]
                pieces = strip.divide([cut - left for cut in final_cuts[1:]])
                line = chops[y]
                for cut, piece in zip(final_cuts, pieces, strict=False):
                    if cut in own:
                        line[cut] = piece
            start = end + 1
    return ChopsUpdate(chops, spans, [c[1:] for c in cuts])


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


# -- exiting when the terminal is gone (AnomanApp) ----------------------------------------
def end_process_if_exit_blocks(code: int, grace_s: float) -> None:
    """End the process with `code` in `grace_s` seconds unless it has exited by then.

    For an app whose terminal is gone: its exit writes to Textual's output thread, which
    may have stopped, and whose bounded queue then blocks the writer for ever.
    """
    watchdog = threading.Timer(grace_s, os._exit, (code,))
    watchdog.daemon = True
    watchdog.start()


def update_scrollbars(widget: Widget, virtual_size: Size) -> None:
    """Show, hide and size the scrollbars for `virtual_size`, without a screen layout."""
    widget._scroll_update(virtual_size)


# -- styled lines (AnswerView) -------------------------------------------------------------
def styles_cache(widget: Widget) -> StylesCache:
    """The cache of styled lines `widget` draws through."""
    return widget._styles_cache


def use_row_styles_cache(
    widget: Widget, row: Callable[[int], Strip | None], paint: Callable[[int], Strip],
    style: Callable[[], Style] | None = None,
) -> RowStylesCache:
    """Make `widget` draw through a `RowStylesCache` reading its rows with `row` and
    drawing its content lines with `paint` (in place of `widget.render_line`); `style`
    gives `widget.rich_style` (default: reads it, which walks the ancestors)."""
    cache = RowStylesCache(widget, row, paint, style)
    widget._styles_cache = cache
    return cache


class RowStylesCache(StylesCache):
    """Textual's per-widget cache of styled lines, keeping each content row's result.

    For a scrolling Line-API widget whose rows are immutable `Strip`s (`row(y)` gives the
    source strip of virtual row `y`, or None for a blank row; `paint(y)` draws row `y`
    of the view, the same wherever the row lands): a styled line (and, through the
    `Strip`'s own caches, its filtered and divided forms) is reused wherever the row
    lands, as long as the styles around it are the same. Rows are not kept while text
    is selected (selected rows are highlighted).
    """

    MAX_ROWS: ClassVar[int] = 1_024

    def __init__(
        self, widget: Widget, row: Callable[[int], Strip | None], paint: Callable[[int], Strip],
        style: Callable[[], Style] | None = None,
    ) -> None:
        super().__init__()
        self._widget = widget
        self._style = style or (lambda: widget.rich_style)
        self._row = row
        self._paint = paint
        self._rows: dict[int, tuple[Strip, Strip]] = {}  # virtual row -> (source, styled)
        self._blank: Strip | None = None  # the styled blank row
        self._context: tuple[object, ...] = ()
        self._gutter_top = 0
        self._scroll_y: int | None = None
        self.width = 0  # the widget's content width in the render under way (for `paint`)

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
            id(ansi_theme), native_ansi, self._style(),
        )
        if context != self._context:
            self._context = context
            self.forget_rows()
        self._gutter_top = styles.gutter.top
        # Per render, not per row (each costs a walk up the DOM).
        widget = self._widget
        self._scroll_y = widget.scroll_offset.y if widget.text_selection is None else None
        self.width = widget.scrollable_content_region.width
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
            self._paint, border_title, border_subtitle, opacity, ansi_theme, native_ansi,
        )
        if cacheable:
            if source is None:
                self._blank = strip
            else:
                self._rows[virtual_y] = (source, strip)
        return strip


async def mount_offstage(app: App[Any], screen: Screen[Any],
                         before_layout: Callable[[], None] | None = None) -> None:
    """Compose, mount and lay out an installed `screen` without showing it
    (`App._get_screen`, as `push_screen` does before it puts a screen on the stack; then
    `Screen._refresh_layout`, which draws nothing for a screen not shown), so a later push
    only resumes and paints it. The suite screen readies its case screen this way: built
    on Enter, its panes' text came 600-1,000 ms later (benchmarks/suite_screen.py)."""
    if not screen.is_running:
        await app._get_screen(screen)[1]
    if before_layout is not None:
        before_layout()  # e.g. lines whose height the screen will have when shown
    if screen.is_attached and not screen.is_current:
        screen._refresh_layout(app.size)
        # As the screen's update timer does after a layout: a layout asked for before
        # this one is done (else the first frame shown lays it out again: 26-34 ms).
        screen._layout_required = False
        # Render it once, the result thrown away: its widgets keep their rendered lines,
        # so the first time it is shown only what changed since is rendered again.
        screen._compositor.render_update(full=True)


class KeepStylesOnResume:
    """A screen mixin: resumed (pushed again, or shown after `mount_offstage`) with the
    styles its widgets already have, unless the theme changed while it was away.

    Textual restyles every widget of a screen each time it is pushed (`ScreenResume`'s
    `refresh_styles`, handled by `Screen._on_screen_resume`, which runs after this
    class's handler of the same name): for the suite's case screen, ~130 widgets, the
    largest part of the time from Enter to its first frame (benchmarks/suite_screen.py);
    for the compare screen, styled as it mounts at start-up, a second styling of its
    ~80 widgets before the first paint (benchmarks/startup.py; `keep_styles_always`
    off: only that first time).
    """

    keep_styles_always: ClassVar[bool] = True
    """False: only the first resume keeps them (the push that shows the screen, just
    composed and styled as it mounted); later ones restyle as Textual's do."""

    _styled_theme: str | None = None
    _resumed_early = False
    _resumed = False

    def _on_mount(self, event: Any) -> None:
        self._styled_theme = self.app.theme  # type: ignore[attr-defined]  # styled as mounted

    def _on_screen_resume(self, event: Any) -> None:
        if self._resumed_early:
            # `resume_now` did this already: the message that follows the push changes
            # nothing (Textual's handler would repaint the whole screen a second time).
            self._resumed_early = False
            event.prevent_default()
            return
        app = self.app  # type: ignore[attr-defined]
        if self._styled_theme == app.theme and (self.keep_styles_always or not self._resumed):
            event.refresh_styles = False
        self._styled_theme = app.theme
        self._resumed = True

    def resume_now(self) -> None:
        """Just pushed (and on top): resume now, as the `ScreenResume` that `push_screen`
        posted will ask (`Screen._on_screen_resume`: its styles, layout and a whole
        repaint), so the caller can draw the screen in this same turn of the loop; the
        message, when it comes, then does nothing. The suite's case screen is drawn in
        the Enter key's handler this way: the message came 8-22 ms later, with 32 streams
        in flight (benchmarks/suite_screen.py)."""
        screen: Any = self
        if screen.app.screen is not screen:
            return
        event = events.ScreenResume()
        self._on_screen_resume(event)
        Screen._on_screen_resume(screen, event)
        self._resumed_early = True
