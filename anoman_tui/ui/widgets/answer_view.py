"""`AnswerView`: the body of one answer pane, streaming Markdown at a bounded cost.

Model text arrives as many small deltas (up to ~1,000 tokens/s per pane, three panes at
once). Textual's `Markdown` widget is a tree of widgets, one per block; its streaming
helper (`Markdown.get_stream()` / `MarkdownStream`) batches fragments, but each update
still re-parses from the last block and updates or mounts block widgets, laying out the
tree again: feeding three `Markdown` widgets through it at 3 x 150 tokens/s saturated one
core and fell behind (a 10 s stream took 14 s to feed). So this is a Line-API widget
(`ScrollView`) instead; in the app it measured display lag p99 66 ms at 3 x 300 tok/s
(benchmarks/README.md, Performance).

* `append()` only buffers. The app's `FrameClock` (ticking only while something waits)
  flushes every view with new text on one grid and then draws the screen at once, so
  panes that stream together are composited in one frame.
* A flush feeds the text to `BlockSplitter` (`anoman_tui.ui.render.markdown_blocks`), which
  cuts the source into Markdown blocks at blank lines outside fenced code, keeps list
  continuations with their list, and cuts very long blocks into bounded pieces. Parsing
  per flush is time-boxed (`FLUSH_BUDGET`); the rest waits for the next tick.
* A finished block is rendered once with Rich (`anoman_tui.ui.render.markdown_render`:
  `Markdown` -> `Console.render_lines` at the content width) into cached `Strip`s. Only
  the open (trailing) block is re-rendered per flush and only its changed rows are
  redrawn; a long open code fence is rendered in stable chunks so that cost stays
  bounded, and re-rendered whole by `finish()`.
* Rendering is lazy: blocks get a height estimate and are rendered when they come into
  view, so a resize re-wraps a huge answer without freezing the UI (the view stays
  anchored at the bottom, or at the block at the top). Strips of blocks far above the
  view are dropped (heights kept) so memory and GC work stay bounded.
* Drawn rows keep their styled lines across scrolls, the scrollbar repaints only when
  its thumb moves, and a new virtual size updates the scrollbars without a screen
  layout; those rely on Textual internals, all in `anoman_tui.ui.textual_internals`.
* Model output is never markup: it only goes through Markdown parsing, links are shown
  as text (no hyperlinks), unknown code languages render as plain text (Pygments would
  import plugin packages to look them up), and control sequences are removed by
  `terminal_safe` -- line by line in the splitter, carrying an unterminated OSC/DCS
  string across lines and deltas, and again on each block's source at render time.
* A conversation is a series of turns (`begin_turn()` / `end_turn()`): each turn's
  prompt is a block of its own (plain text on a tinted band, never Markdown), and a
  finished turn's blocks stay in the view as they are, so a new turn costs what a new
  answer costs: nothing above the open block is re-rendered while it streams. A turn
  that was not committed is drawn dimmed, with a note saying how it ended.
* A turn's parts are ordered here, and only here: its prompt, then the model's reasoning
  (`append_reasoning()`: a "Reasoning" row, then the text dimmed; collapsed to that row
  when the turn ends, a click on the row toggles it), then the answer. Reasoning
  that arrives after the answer has begun is put in its place, above the answer, when
  the turn ends.
* Mouse selection works like `Log`: every row carries offset metadata; copying gives the
  (sanitised) source of wholly selected blocks and the rendered text of partly selected
  ones.

Costs measured with benchmarks/answer_view_lag.py are in its output. Tail latency there is
dominated by Textual's compositor and by CPython's cyclic GC; an app that calls
`gc.freeze()` after its first paint avoids most of the GC pauses.

May import: the standard library, `rich`, `textual`, `anoman_tui.streaming.safe_text`,
`anoman_tui.ui.render.markdown_blocks`, `anoman_tui.ui.render.code_themes`,
`anoman_tui.ui.render.markdown_render` (where a block is first rendered, after the first
paint), `anoman_tui.ui.textual_internals` and `anoman_tui.ui.widgets.frame_clock`. Nothing else
from the project; no Textual private except through `textual_internals`.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from itertools import pairwise
from math import ceil
from typing import ClassVar, Self

from rich.cells import cell_len
from rich.color import Color
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Offset, Region, Size
from textual.message import Message
from textual.reactive import Reactive, reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.selection import Selection
from textual.strip import Strip

from anoman_tui.streaming.safe_text import terminal_safe
from anoman_tui.ui.render.code_themes import CODE_THEME, LIGHT_CODE_THEME
from anoman_tui.ui.render.markdown_blocks import (
    NOTE_ERROR,
    PROMPT,
    PROMPT_MORE,
    Block,
    BlockSplitter,
    note_block,
    ordered_items,
    prompt_blocks,
)
from anoman_tui.ui.textual_internals import (
    made_vertical_scrollbar,
    update_scrollbars,
    use_row_styles_cache,
    vertical_scrollbar,
)
from anoman_tui.ui.widgets.frame_clock import FrameClock, when_laid_out

__all__ = ["AnswerView"]

SOFT_CHUNK_LINES = 24  # an open code fence is rendered in stable chunks of this size
MIN_RENDER_WIDTH = 16
INGEST_CHUNK = 16_384  # characters fed to the splitter between budget checks
THUMB_REPAINT_INTERVAL = 0.5  # seconds between scrollbar repaints for streaming text
KEEP_ROWS = 300  # rendered rows kept above the view; older blocks re-render on demand
REASONING = "reasoning"  # the kind of a reasoning section's first row ("▼ Reasoning")
_REASONING_HEAD_STYLES = {True: Style(color="#a5b4c8", bold=True),
                          False: Style(color="#4a5a70", bold=True)}


@dataclass(eq=False)
class _Reasoning:
    """One turn's reasoning: its heading row and the blocks of its text (hidden while
    collapsed)."""

    head: Block[Strip]
    body: list[Block[Strip]] = field(default_factory=list)
    collapsed: bool = False
    words: int = 0


def _reasoning_head() -> Block[Strip]:
    return Block(raw="Reasoning", prefix="", suffix="", joiner="\n\n", gap=True,
                 trim_top=False, trim_bottom=False, serial=0, nlines=1, kind=REASONING)


def render_reasoning_head(console: Console, width: int, *, dark: bool, collapsed: bool,
                          words: int) -> list[list[Segment]]:
    """The heading row of a reasoning section: `▼ Reasoning`, or `▶ Reasoning · N words`
    while collapsed (plain text, never markup)."""
    plural = "s" if words != 1 else ""
    label = f"▶ Reasoning · {words} word{plural}" if collapsed else "▼ Reasoning"
    text = Text(label, style=_REASONING_HEAD_STYLES[dark], end="")
    return [list(row.render(console, end=""))
            for row in text.wrap(console, max(1, width), overflow="fold")]


def _keep_equal_rows(new: list[Strip], old: list[Strip]) -> int:
    """Put the rows of `old` in `new` where they are equal, index for index (the same
    objects are drawn from the row cache); return the index of the first that differs."""
    first_changed = min(len(old), len(new))
    for index in range(first_changed):
        if new[index] == old[index]:
            new[index] = old[index]
        elif first_changed > index:
            first_changed = index
    return first_changed


class _Gutter:
    """An empty column in one style (a Rich renderable)."""

    def __init__(self, style: Style) -> None:
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        row = Segment(" " * options.max_width, self.style)
        for _ in range(options.height or 1):
            yield row
            yield Segment.line()


class _ThumbScrollBar(ScrollBar):
    """A vertical scrollbar that repaints only when its thumb moves on screen.

    While an answer streams, its virtual height and scroll position change on every
    flush and Textual's `ScrollBar` repaints its whole height each time: profiled at
    3 x 300 tok/s, scrollbars cost as much frame time as the answers themselves. The
    thumb, drawn in eighths of a cell, moves far less often.
    """

    window_virtual_size: Reactive[int] = Reactive(100, repaint=False)
    window_size: Reactive[int] = Reactive(0, repaint=False)
    position: Reactive[float] = Reactive(0, repaint=False)

    _thumb: tuple[int, int | None, int | None] | None = None
    _rows: dict[tuple[Segment, ...], Strip] | None = None  # see render_lines
    _rows_context: tuple[object, ...] = ()
    _check_pending = False
    _painted_at = 0.0
    lazy = False
    """True while the owning view updates the bar for new text: repaints are throttled."""

    def _thumb_cells(self) -> tuple[int, int | None, int | None]:
        # The geometry ScrollBarRender.render_bar draws, in eighths of a cell.
        size = self.size.height
        virtual_size = ceil(self.window_virtual_size)
        window = ceil(self.window_size if self.window_size < self.window_virtual_size else 0)
        if not (window and size and virtual_size and size != virtual_size):
            return size, None, None
        thumb = max(1, window / (virtual_size / size))
        ratio = self.position / (virtual_size - window)
        start = int((size - thumb) * ratio * 8)
        return size, start, start + ceil(thumb * 8)

    def _schedule_check(self) -> None:
        # Size and position are set one after the other: judge the final state only.
        if not self.lazy:
            self.call_next(self._repaint_if_moved)  # the user scrolled: at once
            return
        if self._check_pending:
            return
        # New text moves the thumb by a fraction of a cell per flush: at most 2 Hz, and
        # in a frame the answers draw anyway.
        self._check_pending = True
        FrameClock.of(self.app).request(self._repaint_when_due)

    def _repaint_when_due(self) -> None:
        if time.monotonic() < self._painted_at + THUMB_REPAINT_INTERVAL:
            FrameClock.of(self.app).request(self._repaint_when_due)
        elif self.is_mounted:
            self._repaint_if_moved()

    def _repaint_if_moved(self) -> None:
        self._check_pending = False
        thumb = self._thumb_cells()
        if thumb != self._thumb:
            self._thumb = thumb
            self._painted_at = time.monotonic()
            super().refresh()

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        if self.lazy and not (regions or layout or recompose):
            self._schedule_check()
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def watch_window_virtual_size(self) -> None:
        self._schedule_check()

    def watch_window_size(self) -> None:
        self._schedule_check()

    def watch_position(self) -> None:
        self._schedule_check()

    def on_resize(self) -> None:
        self._thumb = None  # a resize repaints the bar anyway

    def render_lines(self, crop: Region) -> list[Strip]:
        """The bar's rows, each drawn once per look and kept.

        A bar has few distinct rows (track, thumb, the eighth-cell ends of the thumb;
        the gutter's blank), but Textual draws each of them every repaint (profiled:
        2-3 ms a bar, up to 9 ms of a 3 x 300 tok/s frame with the three bars). Here
        the rows come from the same `ScrollBarRender.render_bar()` (or `_Gutter`), each
        the strip Textual drew for the same row before; a row not seen before is drawn
        by Textual, alone, and kept.
        """
        renderable = self.render()
        width, height = self.size
        if isinstance(renderable, _Gutter):
            lines = [[Segment(" " * width, renderable.style)]] * height
        elif isinstance(renderable, ScrollBarRender) and renderable.vertical:
            style = renderable.style
            assert isinstance(style, Style)
            bar = renderable.render_bar(
                size=height,
                window_size=renderable.window_size,
                virtual_size=renderable.virtual_size,
                position=renderable.position,
                thickness=width,
                vertical=True,
                back_color=style.bgcolor or Color.parse("#555555"),
                bar_color=style.color or Color.parse("bright_magenta"),
            )
            # (A vertical bar is one segment a row, `new_lines` between them.)
            lines = ([[segment] for segment in bar.segments] if bar.new_lines
                     else list(Segment.split_lines(bar.segments)))
        else:
            return super().render_lines(crop)
        styles = self.styles
        context = (crop.x, crop.width, self.size, self.rich_style, styles.tint,
                   styles.opacity, self.app.ansi_color, self.app.theme)
        rows = self._rows
        if rows is None or context != self._rows_context or len(rows) > 256:
            rows = self._rows = {}
            self._rows_context = context
        strips: list[Strip] = []
        fresh = False
        for y in range(crop.y, crop.bottom):
            key = tuple(lines[y]) if y < len(lines) else ()
            strip = rows.get(key)
            if strip is None:
                if not fresh:
                    # Textual draws from what it rendered at its last repaint, which may
                    # be an older thumb (repaints are throttled): make it render now.
                    super().refresh()
                    fresh = True
                strip = rows[key] = super().render_lines(Region(crop.x, y, crop.width, 1))[0]
            strips.append(strip)
        return strips

    def render(self) -> RenderableType:
        # A view may show its bar always (`overflow-y: scroll`: the panes' answers, see
        # anoman.tcss), so that an answer growing past the view's height does not lay the
        # screen out again (5-8 ms a pane, as the answers flow); until then the bar is
        # drawn as the empty gutter it replaces.
        if self.window_virtual_size <= self.window_size:
            if self.parent is None:  # removed while a frame was being drawn (the app quits)
                return _Gutter(Style())
            return _Gutter(Style(bgcolor=self.parent.background_colors[1].rich_color))
        return super().render()




class AnswerView(ScrollView, can_focus=True):
    """Streams one Markdown answer; see the module docstring for how."""

    ALLOW_SELECT = True
    # The scroll keys of a focused view, with ids so a `[keymap]` can move them (the
    # inherited ones have none). No horizontal scrolling: the text wraps.
    INHERIT_BINDINGS = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_up", "Scroll up", show=False, id="answer_line_up"),
        Binding("down", "scroll_down", "Scroll down", show=False, id="answer_line_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="answer_page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="answer_page_down"),
        Binding("home", "scroll_home", "Top", show=False, id="answer_top"),
        Binding("end", "scroll_end", "End", show=False, id="answer_end"),
    ]
    DEFAULT_CSS = """
    AnswerView {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
        &.-dimmed { text-opacity: 55%; }
    }
    """

    FLUSH_BUDGET: ClassVar[float] = 0.02
    """Seconds of parsing one flush may spend before leaving the rest to the next."""
    FINISH_BUDGET: ClassVar[float] = 0.04
    """The same for `finish()`: a huge backlog is finished over several timer ticks."""
    CODE_THEME: ClassVar[str] = CODE_THEME
    LIGHT_CODE_THEME: ClassVar[str] = LIGHT_CODE_THEME
    """Pygments theme for code fences under a light app theme."""

    dimmed: reactive[bool] = reactive(False)
    """Draw the answer dimmed (partial output of a failed stream)."""

    class Flushed(Message):
        """A flush drew new text (posted only with `report_flushes=True`)."""

        def __init__(self, answer_view: AnswerView, appended_at_latest: float) -> None:
            super().__init__()
            self.answer_view = answer_view
            self.appended_at_latest = appended_at_latest
            """`time.monotonic()` when the newest delta included in this flush arrived."""

        @property
        def control(self) -> AnswerView:
            return self.answer_view

    def __init__(
        self,
        *,
        report_flushes: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._report_flushes = report_flushes
        self._scheduled = False  # waiting for the flush clock
        self._flush_height: int | None = None  # the view's height during a flush
        self._awaiting_size = False  # a flush waits for the layout that gives the size
        self._width = 0  # render width; 0 until the size is known
        self._follow = True
        # The row a finished turn was revealed at (`_reveal_turn`) while the reader has
        # not scrolled since: a resize reveals it again (None: no reveal holds).
        self._revealed_y: int | None = None
        self._revealed_height = 0  # the view's height when the turn was revealed
        self._style: Style | None = None  # cached self.rich_style (costly per line)
        # Styled rows are kept across scrolls: see textual_internals.RowStylesCache.
        self._row_styles = use_row_styles_cache(self, self._row, self._paint_line,
                                                self._rich_style)
        self._placeholder: Text | None = None  # (clear() keeps it: see set_placeholder)
        self._placeholder_rows: tuple[int, list[Strip]] | None = None  # (width, rows)
        self._reset_content()

    def _reset_content(self) -> None:
        self._text_parts: list[str] = []
        self._text_recent: list[str] = []
        self._text_cache: str | None = ""
        # (text, arrival, is reasoning): reasoning is queued only before the answer begins.
        self._inbox: deque[tuple[str, float, bool]] = deque()
        self._splitter = BlockSplitter()
        self._blocks: list[Block[Strip]] = []
        self._starts: list[int] = []  # first row of each block (including its gap)
        self._valid = 0  # how many entries of _starts are up to date
        self._tail: list[Strip] = []
        self._tail_key: tuple[int, str] | None = None  # (serial, source) _tail was made from
        self._tail_gap = 0
        self._soft: list[Strip] = []  # stable chunks of the open fence
        self._soft_serial = 0
        self._soft_lines = 0
        self._soft_opener = ""  # fence opener line used by the soft chunks
        # The open numbered list's finished items: (serial, source, rows) each.
        self._items: list[tuple[int, str, list[Strip]]] = []
        self._finishing = False
        self._dirty_from: int | None = None  # first row changed since the last refresh
        self._rows_drawn = 0  # rows of content at the last refresh (below: blank)
        self._evict_from = 0  # blocks before this index have had their strips dropped
        self._turn_from = 0  # index of the latest turn's first (prompt) block
        self._answer_from = 0  # index of the latest turn's first answer block
        self._turn_end: tuple[bool, str | None, bool, bool] | None = None  # see end_turn
        self._turn_dimmed = False
        self._reset_reasoning()
        self._reasoning_by_head: dict[Block[Strip], _Reasoning] = {}  # every turn's
        self._row_styles.forget_rows()

    @property
    def placeholder(self) -> Text | None:
        """Text shown while the view has nothing to show (`set_placeholder`)."""
        return self._placeholder

    def set_placeholder(self, text: Text | None) -> None:
        """Show `text` while the view has nothing else (a hint before the first turn): not
        part of `text`, of a selection or of a copy. None removes it. A repaint, never a
        layout: the view keeps its size."""
        if text is None and self._placeholder is None:
            return
        self._placeholder = text
        self._placeholder_rows = None
        self._row_styles.forget_rows()
        self.refresh()

    def _placeholder_row(self, y: int) -> Strip | None:
        text = self._placeholder
        if text is None:
            return None
        width = max(MIN_RENDER_WIDTH, self.scrollable_content_region.width)
        rows = self._placeholder_rows
        if rows is None or rows[0] != width:
            console = self.app.console
            lines = console.render_lines(text, console.options.update_width(width), pad=False)
            rows = self._placeholder_rows = (width, [Strip(line) for line in lines])
        return rows[1][y] if y < len(rows[1]) else None

    def _reset_reasoning(self) -> None:
        """The latest turn has no reasoning yet, and its answer has not begun."""
        self._feeding_reasoning = False  # the splitter is fed the reasoning, not the answer
        self._reasoning: _Reasoning | None = None  # the latest turn's
        self._reasoning_parts: list[str] = []
        self._late_reasoning: list[str] = []  # arrived after the answer had begun
        self._answer_begun = False

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        return vertical_scrollbar(self, self._make_vertical_scrollbar)

    def _make_vertical_scrollbar(self) -> ScrollBar:
        return _ThumbScrollBar(
            vertical=True, name="vertical", thickness=self.scrollbar_size_vertical
        )

    # -- public interface --------------------------------------------------------------
    def append(self, text: str, at: float | None = None) -> None:
        """Buffer a delta; it is drawn by the next flush.

        `at`: the `time.monotonic()` instant the delta came off the network (default:
        now); `Flushed` reports it, so measured lag starts where the bytes arrived.
        """
        if not text:
            return
        now = time.monotonic() if at is None else at
        self._text_recent.append(text)
        if len(self._text_recent) >= 512:  # keeps `text` O(n) overall, few objects
            self._text_parts.append("".join(self._text_recent))
            self._text_recent.clear()
        self._text_cache = None
        self._answer_begun = True
        self._inbox.append((text, now, False))
        self._finishing = False
        self._schedule()

    def append_reasoning(self, text: str, at: float | None = None) -> None:
        """Buffer a delta of the latest turn's reasoning, drawn between its prompt and its
        answer (dimmed, under a "Reasoning" row); as `append()` otherwise."""
        if not text:
            return
        self._reasoning_parts.append(text)
        if self._answer_begun:
            # Its place is above the answer, which is already drawn: inserted at the end.
            self._late_reasoning.append(text)
            return
        self._inbox.append((text, time.monotonic() if at is None else at, True))
        self._finishing = False
        self._schedule()

    @property
    def reasoning_text(self) -> str:
        """The latest turn's reasoning so far, sanitised as displayed."""
        return terminal_safe("".join(self._reasoning_parts))

    @property
    def reasoning_collapsed(self) -> bool | None:
        """Whether the latest turn's reasoning is collapsed (None: it has none shown)."""
        return None if self._reasoning is None else self._reasoning.collapsed

    def set_reasoning_collapsed(self, collapsed: bool) -> None:
        """Collapse (or expand) the latest turn's reasoning, if it has any."""
        if self._reasoning is not None:
            self._set_collapsed(self._reasoning, collapsed)

    def on_click(self, event: events.Click) -> None:
        """A click on a "Reasoning" row collapses or expands that turn's reasoning."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        y = offset.y + self.scroll_offset.y
        if y >= self._ensure_starts():
            return
        index = bisect_right(self._starts, y) - 1
        block = self._blocks[index]
        section = self._reasoning_by_head.get(block)
        if section is not None and y >= self._starts[index] + block.top_gap:
            event.stop()
            self._set_collapsed(section, not section.collapsed)

    def _set_collapsed(self, section: _Reasoning, collapsed: bool) -> None:
        if section.collapsed == collapsed:
            return
        section.collapsed = collapsed
        for block in section.body:
            block.hidden = collapsed
        head = section.head
        head.strips = None  # its label says whether it is collapsed
        index = self._blocks.index(head)
        self._ensure_starts()
        self._mark_dirty(self._starts[index])
        self._valid = min(self._valid, index)
        if section is self._reasoning and self._feeding_reasoning:
            self._tail_key = None  # the open block of the reasoning shows or hides too
            self._render_tail()
        self._row_styles.forget_rows()
        self._relayout()
        self.refresh()

    def finish(self) -> None:
        """Flush everything now and render the whole answer in its final form."""
        self._finishing = True
        self._flush(final=True)

    def begin_turn(self, prompt: str) -> None:
        """Start a new turn below the ones shown: draw `prompt`, then stream its answer.

        Whatever the previous turn still had buffered is finished first; from here on
        `append()` feeds the new turn and `text` is its answer only.
        """
        self._close_turn()
        self._reset_reasoning()
        self._turn_from = len(self._blocks)
        self._add_blocks(prompt_blocks(prompt))
        self._answer_from = len(self._blocks)
        self._splitter = BlockSplitter(gap=True)
        self._text_parts, self._text_recent, self._text_cache = [], [], ""
        self._soft, self._soft_lines, self._soft_serial = [], 0, 0
        self._items = []
        self._turn_dimmed = False
        self._follow = True
        self._revealed_y = None
        self._relayout()

    def end_turn(
        self, *, dim: bool = False, note: str | None = None, error: bool = False,
        reveal: bool = True,
    ) -> None:
        """Finish the latest turn (as `finish()`), then mark how it ended.

        `dim`: draw its answer dimmed (not committed); `note`: a line under it (`error`
        picks the error colour); `reveal`: if the view was following the end, scroll back
        so the turn reads from its prompt (its start stays in view when it fits). Its
        reasoning, if any, is collapsed to its "Reasoning" row.
        """
        self._turn_end = (dim, note, error, reveal)
        self.finish()

    @property
    def caught_up(self) -> bool:
        """Everything appended is drawn and the turn's end (if asked) applied: a finished
        stream's last text can still be drawing, a frame budget at a time."""
        return not (self._inbox or self._scheduled or self._finishing)

    @property
    def turn_dimmed(self) -> bool:
        """The latest turn's answer is drawn dimmed (it ended without being committed)."""
        return self._turn_dimmed

    def clear(self) -> None:
        """Remove all text (every turn)."""
        self._reset_content()
        self._follow = True
        self._revealed_y = None
        self._set_virtual_size(Size(self._width, 0))  # (a screen layout only if needed)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def text(self) -> str:
        """Everything appended so far, sanitised as displayed."""
        if self._text_cache is None:
            self._text_cache = terminal_safe("".join(self._text_parts) + "".join(self._text_recent))
        return self._text_cache

    def watch_dimmed(self, dimmed: bool) -> None:
        self.set_class(dimmed, "-dimmed")

    # -- flushing ----------------------------------------------------------------------
    def _schedule(self) -> None:
        if not self._scheduled and self.is_mounted:
            self._scheduled = True
            FrameClock.of(self.app).request(self._on_flush_timer)

    def flush_now(self) -> None:
        """Take what is buffered into the view's lines now rather than at the next frame
        (a pane shown mid-stream: its text so far is in the screen's first frame)."""
        if self._inbox:
            self._flush(final=self._finishing)

    def _wait_for_size(self) -> None:
        if not self._awaiting_size:
            self._awaiting_size = True
            when_laid_out(self, self._laid_out)

    def _laid_out(self) -> None:
        self._awaiting_size = False
        if not (self._inbox or self._finishing):
            return
        if self._width > 0 or self._update_width():
            self._schedule()
        else:
            self._wait_for_size()  # still hidden: the next layout, then

    def _on_flush_timer(self) -> None:
        self._scheduled = False
        self._flush(final=self._finishing)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self._update_width()
        if self._inbox or self._finishing:
            self._schedule()

    def on_show(self) -> None:
        # Shown inside a container that was hidden (the reasoning box), the view may get
        # its size without a Resize event (seen in Textual 8): take the size from here.
        if self._width <= 0 and self._update_width() and (self._inbox or self._finishing):
            self._schedule()

    def _flush(self, *, final: bool) -> None:
        if self._width <= 0 and not self._update_width():
            # Size unknown yet (hidden, e.g. a tab not shown): flushed once a layout gives
            # it one. Not left to Resize or Show alone: a view shown by focusing it can
            # get neither (see `when_laid_out`), and its text then never drew.
            self._wait_for_size()
            return
        # The view's height, once: each lookup walks up the DOM (profiled: 12% of a
        # flush's layout work), and nothing lays the screen out during a flush.
        self._flush_height = max(1, self.scrollable_content_region.height)
        try:
            self._flush_text(final=final)
        finally:
            self._flush_height = None

    def _flush_text(self, *, final: bool) -> None:
        started = time.perf_counter()
        budget = self.FINISH_BUDGET if final else self.FLUSH_BUDGET
        latest = 0.0
        new_blocks: list[Block[Strip]] = []
        inbox = self._inbox
        while inbox and time.perf_counter() - started < budget:
            text, arrived, reasoning = inbox.popleft()
            if len(text) > INGEST_CHUNK:
                inbox.appendleft((text[INGEST_CHUNK:], arrived, reasoning))
                text = text[:INGEST_CHUNK]
            else:
                latest = arrived
            new_blocks = self._feed(text, reasoning, new_blocks)
        drained = not inbox
        if drained and final:
            new_blocks.extend(self._close_splitter())
        self._add_blocks(new_blocks)
        self._render_tail()
        reveal = False
        if drained and final:
            self._finalise_approx()
            self._finishing = False
            reveal = self._apply_turn_end()
        self._relayout()
        if reveal and self._follow:
            self._reveal_turn()
        if latest and self._report_flushes:
            self.call_after_refresh(self.post_message, self.Flushed(self, latest))
        if not drained:
            self._schedule()

    def _add_blocks(self, blocks: list[Block[Strip]]) -> None:
        if not blocks:
            return
        self._mark_dirty(self._ensure_starts())
        existing = self._blocks
        tail_key = self._tail_key
        for block in blocks:
            block.top_gap = 1 if block.gap and existing else 0
            if tail_key is not None and tail_key == (block.serial, block.source):
                block.strips = self._tail  # the last tail render is exactly this block
            elif self._soft and self._soft_serial == block.serial:
                block.strips = self._soft + self._render_rest(block, self._soft_lines)
                block.approx = True
            elif tail_key is not None and tail_key[0] == block.serial and self._tail:
                # The open block just closed with more text than its last render: render
                # it now, keeping the rows that did not change as the same objects, so
                # that they are drawn from the row cache (profiled at 3 x 1,000 tok/s:
                # 1,549 of the 3,605 rows painted in a run were such rows).
                _keep_equal_rows(self._render_block(block), self._tail)
            if block.strips is not None:
                block.height = len(block.strips)
            else:
                block.height = block.estimate(self._width)
            existing.append(block)
        if self._soft_serial != self._splitter.serial:
            self._soft = []
            self._soft_lines = 0
        self._tail_key = None
        self._tail = []
        self._evict_far_above()

    def _evict_far_above(self) -> None:
        """Drop the strips of blocks far above the view: memory and GC work stay bounded
        for huge answers. Heights are kept, so re-rendering them later moves nothing."""
        finished_rows = self._ensure_starts()
        bottom_top = finished_rows - self._viewport_height()
        top = bottom_top if self._follow else self.scroll_offset.y
        limit = top - KEEP_ROWS
        blocks, starts = self._blocks, self._starts
        index = self._evict_from
        while index < len(blocks) and starts[index] + blocks[index].rows < limit:
            blocks[index].strips = None
            index += 1
        self._evict_from = index

    def _feed(self, text: str, reasoning: bool,
              pending: list[Block[Strip]]) -> list[Block[Strip]]:
        """Feed `text` to its section's splitter; returns the blocks not added yet (those
        of `pending` are added first when the text starts the other section)."""
        if reasoning != self._feeding_reasoning:
            self._add_blocks(pending)
            pending = []
            if reasoning:
                self._begin_reasoning()
            else:
                self._end_reasoning()
        blocks = self._splitter.feed(text)
        if reasoning:
            self._in_reasoning(blocks)
        pending.extend(blocks)
        return pending

    def _close_splitter(self) -> list[Block[Strip]]:
        blocks = self._splitter.close()
        if self._feeding_reasoning:
            self._in_reasoning(blocks)
        return blocks

    def _begin_reasoning(self) -> None:
        """The turn's reasoning starts: its heading row, then its text (under the prompt:
        reasoning is queued only while the answer has not begun)."""
        head = _reasoning_head()
        section = self._reasoning = _Reasoning(head)
        self._reasoning_by_head[head] = section
        self._add_blocks([head])
        self._new_splitter(gap=False)  # its text right under the heading
        self._feeding_reasoning = True

    def _end_reasoning(self) -> None:
        """The answer starts: close the reasoning, the answer's blocks follow it."""
        self._add_blocks(self._close_splitter())
        self._feeding_reasoning = False
        self._answer_from = len(self._blocks)
        self._new_splitter(gap=True)

    def _new_splitter(self, *, gap: bool) -> None:
        self._splitter = BlockSplitter(gap=gap)
        self._soft, self._soft_lines, self._soft_serial = [], 0, 0
        self._items = []

    def _in_reasoning(self, blocks: list[Block[Strip]]) -> None:
        section = self._reasoning
        assert section is not None
        for block in blocks:
            block.dim = True
            block.hidden = section.collapsed
            section.words += len(block.raw.split())
        section.body.extend(blocks)

    def _place_late_reasoning(self) -> None:
        """Put reasoning that came after the answer had begun above the answer."""
        late, self._late_reasoning = self._late_reasoning, []
        if not late:
            return
        splitter = BlockSplitter()
        text = "".join(late)
        blocks = [*splitter.feed(text), *splitter.close()]
        section = self._reasoning
        if section is None:
            head = _reasoning_head()
            section = self._reasoning = _Reasoning(head)
            self._reasoning_by_head[head] = section
            blocks.insert(0, head)
            body = blocks[1:]
        else:
            body = blocks
        for block in body:
            block.dim = True
            block.hidden = section.collapsed
            section.words += len(block.raw.split())
        section.body.extend(body)
        at = self._answer_from
        for block in blocks:
            block.top_gap = 1 if block.gap else 0
            block.height = block.estimate(self._width) if self._width > 0 else 1
        self._blocks[at:at] = blocks
        self._answer_from += len(blocks)
        self._evict_from = min(self._evict_from, at)
        self._valid = min(self._valid, at)
        self._mark_dirty(self._starts[at] if at < len(self._starts) else self._ensure_starts())
        self._row_styles.forget_rows()
        self.refresh()

    def _close_turn(self) -> None:
        """End the open turn now, with whatever it has buffered (a new turn begins)."""
        splitter = self._splitter
        if self._inbox or splitter.has_open or splitter.partial or self._finishing:
            blocks: list[Block[Strip]] = []
            while self._inbox:
                text, _arrived, reasoning = self._inbox.popleft()
                blocks = self._feed(text, reasoning, blocks)
            blocks.extend(self._close_splitter())
            self._add_blocks(blocks)
            self._finalise_approx()
            self._finishing = False
        self._apply_turn_end()
        self._tail, self._tail_gap, self._tail_key = [], 0, None

    def _apply_turn_end(self) -> bool:
        """Dim and annotate the finished turn as `end_turn()` asked; True to reveal it."""
        if self._feeding_reasoning and not (self._inbox or self._splitter.has_open
                                            or self._splitter.partial):
            self._feeding_reasoning = False  # a turn of reasoning alone: it is closed
            self._answer_from = len(self._blocks)
        self._place_late_reasoning()
        end, self._turn_end = self._turn_end, None
        if end is None:
            return False
        if self._reasoning is not None:
            self._set_collapsed(self._reasoning, True)
        dim, note, error, reveal = end
        if dim:
            self._turn_dimmed = True
            for block in self._blocks[self._answer_from :]:
                block.dim = True
                block.strips = None  # re-rendered dimmed when in view; its height stays
            self._row_styles.forget_rows()
            self._mark_dirty(0)
            self.refresh()
        if note:
            self._add_blocks([note_block(note, error=error)])
        return reveal

    def _reveal_turn(self) -> None:
        """Scroll up so the finished turn reads from its prompt, if the view followed it.

        Only when it does not fit (else it is in view at the bottom already). A long
        prompt is not shown whole: a third of the view of it, then the answer's start.
        """
        if self._turn_from >= len(self._blocks):
            return
        self._ensure_starts()
        height = self._viewport_height()
        first = self._blocks[self._turn_from]
        top = self._starts[self._turn_from] + first.top_gap
        answer_top = top
        if self._answer_from < len(self._blocks):
            answer_top = self._starts[self._answer_from]
        target = max(top, answer_top - max(3, height // 3))
        if target < self.max_scroll_y:
            self.scroll_to(y=target, animate=False, immediate=True)
        else:  # it fits: at the bottom
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        # Following means "at the bottom" (watch_scroll_y), but that watcher runs only
        # when the offset changes: when the view has shrunk under a turn revealed at its
        # end, the same offset is no longer the bottom, and a stale True scrolled the
        # next layout to the end, past the prompt.
        self._follow = round(self.scroll_y) >= self.max_scroll_y
        # Decided at the view's height as the turn ends, but the view often shrinks just
        # after (the pane's footer grows, its marks appear): it left the turn a row off,
        # or scrolled to its end. Kept, to be done again at each resize until the reader
        # scrolls.
        self._revealed_y = round(self.scroll_y)
        self._revealed_height = height

    def _finalise_approx(self) -> None:
        for index, block in enumerate(self._blocks):
            if block.approx:
                block.approx = False
                block.strips = None
                self._valid = min(self._valid, index + 1)

    # -- rendering ---------------------------------------------------------------------
    def _render_source(
        self, source: str, *, trim_top: bool = False, trim_bottom: bool = False,
        dim: bool | None = None,
    ) -> list[Strip]:
        """`dim` None: dimmed if it is the reasoning's (the open block, its chunks)."""
        if dim is None:
            dim = self._feeding_reasoning
        app = self.app
        dark = app.current_theme.dark
        # Imported with the first block, not with the view: Rich's Markdown, markdown-it
        # and Pygments are ~85 ms of the start-up's CPU, and the first paint shows no
        # answer (the app's warm-up thread imports them just after it).
        from anoman_tui.ui.render.markdown_render import render_block

        lines = render_block(
            app.console,
            source,
            self._width,
            dark=dark,
            code_theme=self.CODE_THEME if dark else self.LIGHT_CODE_THEME,
            trim_top=trim_top,
            trim_bottom=trim_bottom,
            dim=dim,
        )
        return [Strip(line) for line in lines]

    def _render_block(self, block: Block[Strip]) -> list[Strip]:
        kind = block.kind
        if kind == "markdown":
            strips = self._render_source(
                block.source, trim_top=block.trim_top, trim_bottom=block.trim_bottom,
                dim=block.dim,
            )
        else:
            from anoman_tui.ui.render.markdown_render import render_note, render_prompt

            console, dark = self.app.console, self.app.current_theme.dark
            if kind in (PROMPT, PROMPT_MORE):
                lines = render_prompt(console, block.raw, self._width, dark=dark,
                                      header=kind == PROMPT)
            elif kind == REASONING:
                section = self._reasoning_by_head.get(block)
                lines = render_reasoning_head(
                    console, self._width, dark=dark,
                    collapsed=section is not None and section.collapsed,
                    words=section.words if section is not None else 0)
            else:
                lines = render_note(console, block.raw, self._width, dark=dark,
                                    error=kind == NOTE_ERROR)
            strips = [Strip(line) for line in lines]
        block.strips = strips
        block.height = len(strips)
        return strips

    def _render_rest(self, block: Block[Strip], soft_lines: int) -> list[Strip]:
        """Render a fence block's lines after its soft chunks."""
        rest_lines = block.raw.split("\n")[soft_lines:]
        opener = self._soft_opener
        source = opener + "\n" + "\n".join(rest_lines) + block.suffix
        return self._render_source(source, trim_top=True, trim_bottom=block.trim_bottom)

    def _render_tail(self) -> None:
        """Re-render the open block if it changed (bounded by the splitter's caps)."""
        splitter = self._splitter
        old = self._tail
        collapsed = self._feeding_reasoning and self._reasoning is not None \
            and self._reasoning.collapsed
        if not splitter.has_open or collapsed:
            new: list[Strip] = []
            self._tail_key = None
        else:
            raw = splitter.open_raw()
            key = (splitter.serial, splitter.prefix + raw)
            if key == self._tail_key:
                return
            new = self._render_open(raw)
            self._tail_key = key
        # Keep unchanged rows (same objects) so only the rows that changed are redrawn.
        first_changed = _keep_equal_rows(new, old)
        self._tail = new
        self._tail_gap = 1 if new and splitter.gap and self._blocks else 0
        self._mark_dirty(self._ensure_starts() + self._tail_gap + first_changed)

    def _mark_dirty(self, row: int) -> None:
        if self._dirty_from is None or row < self._dirty_from:
            self._dirty_from = row

    def _render_open(self, raw: str) -> list[Strip]:
        splitter = self._splitter
        if self._soft_serial != splitter.serial:
            self._soft, self._soft_lines, self._soft_serial = [], 0, splitter.serial
        lines = splitter.lines
        if splitter.fence is not None:
            # Inside a long open fence: render complete chunks once, the rest per flush.
            self._soft_opener = splitter.fence_opener
            closer = "\n" + splitter.fence[0] * splitter.fence[1]
            while len(lines) - self._soft_lines > 2 * SOFT_CHUNK_LINES:
                end = max(self._soft_lines + SOFT_CHUNK_LINES, splitter.fence_start + 2)
                while end < len(lines) and not lines[end - 1].strip():
                    end += 1  # a chunk must not end on a blank line (Rich drops it)
                if end >= len(lines):
                    break
                if self._soft_lines == 0:
                    source = splitter.prefix + "\n".join(lines[:end]) + closer
                    chunk = self._render_source(
                        source, trim_top=splitter.trim_top, trim_bottom=True
                    )
                else:
                    source = (
                        self._soft_opener + "\n" + "\n".join(lines[self._soft_lines : end]) + closer
                    )
                    chunk = self._render_source(source, trim_top=True, trim_bottom=True)
                self._soft.extend(chunk)
                self._soft_lines = end
        if self._soft:
            rest = lines[self._soft_lines :]
            source = self._soft_opener + "\n" + "\n".join(rest)
            if splitter.partial:
                source += "\n" + splitter.partial
            return self._soft + self._render_source(source, trim_top=True)
        if (splitter.is_list and splitter.fence is None and not splitter.prefix
                and not splitter.trim_top and not splitter.blank_run):
            items = self._render_open_items(raw, len(lines))
            if items is not None:
                return items
        return self._render_source(splitter.prefix + raw, trim_top=splitter.trim_top)

    def _render_open_items(self, raw: str, complete: int) -> list[Strip] | None:
        """The open numbered list drawn item by item, each finished item rendered once
        (`ordered_items` says when that draws as the whole list would); None if not.

        A bullet list is cut into a block per item by the splitter; a numbered one stays
        one block (Rich aligns its numbers), and rendering it whole every frame was the
        dearest open block but tables (profiled: 0.7-1.2 ms at 3 x 100 tok/s).
        """
        lines = raw.split("\n")
        starts = ordered_items(lines[:complete])  # the partial line joins the last item
        if starts is None or len(starts) < 2:
            return None
        serial = self._splitter.serial
        kept = self._items
        strips: list[Strip] = []
        for index, (start, end) in enumerate(pairwise(starts)):
            source = "\n".join(lines[start:end])
            if index < len(kept) and kept[index][0] == serial and kept[index][1] == source:
                rows = kept[index][2]
            else:
                rows = self._render_source(source)
                del kept[index:]
                kept.append((serial, source, rows))
            strips.extend(rows)
        return strips + self._render_source("\n".join(lines[starts[-1]:]))

    # -- layout ------------------------------------------------------------------------
    def _ensure_starts(self) -> int:
        """Bring the row index up to date; return the rows of all finished blocks."""
        blocks, starts = self._blocks, self._starts
        valid = self._valid
        if valid < len(blocks):
            del starts[valid:]
            y = starts[-1] + blocks[valid - 1].rows if valid else 0
            append = starts.append
            for block in blocks[valid:]:
                append(y)
                y += block.rows
            self._valid = len(blocks)
        return starts[-1] + blocks[-1].rows if blocks else 0

    def _total_rows(self) -> int:
        return self._ensure_starts() + self._tail_gap + len(self._tail)

    def _relayout(self) -> None:
        """Render what is in view, update the virtual size and follow the bottom."""
        if self._width <= 0:
            return
        # Kept until notify_style_update(), which Textual calls on every descendant whose
        # ancestor's styles changed (DOMNode.rich_style walks all ancestors: once per
        # flush was ~2% of the UI thread at 3 x 100 tok/s, profiled).
        self._rich_style()
        full = self._render_viewport()
        total = self._total_rows()
        bar = made_vertical_scrollbar(self)
        if isinstance(bar, _ThumbScrollBar):
            bar.lazy = True  # (update_scrollbars also repaints the bar every time)
        try:
            self._set_virtual_size(Size(self._width, total))
            scroll_before = self.scroll_offset.y
            bottom = self.max_scroll_y
            if self._revealed_y is not None and round(self.scroll_y) == self._revealed_y:
                # A finished turn shown from its prompt, not scrolled since: a layout at
                # another height (the pane's footer grew; it can come before or after the
                # Resize event) shows it so again, rather than following the bottom.
                if self._viewport_height() != self._revealed_height:
                    self._reveal_turn()
            elif self._follow and (self.scroll_y != bottom or self.scroll_target_y != bottom):
                # (A flush that adds no row has nothing to scroll.)
                self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        finally:
            if isinstance(bar, _ThumbScrollBar):
                bar.lazy = False
        dirty, self._dirty_from = self._dirty_from, None
        if full:
            self._refresh_text()
        elif dirty is not None and self.scroll_offset.y == scroll_before:
            # Appending only changes rows at the end: redraw from the first changed row
            # to the end of the content, before or after (below it the rows stay blank:
            # profiled at 3 x 100 tok/s, most rows redrawn were those).
            top = self.scroll_offset.y
            bottom = min(top + self._viewport_height(), max(total, self._rows_drawn))
            if dirty < bottom:
                start = max(dirty, top)
                self._refresh_text(start - top, bottom - start)
        self._rows_drawn = total
        # A scroll redraws the text by itself (watch_scroll_y).

    def _refresh_text(self, top: int = 0, rows: int | None = None) -> None:
        """Repaint `rows` rows of text from row `top` of the view (default: all of it).

        Not the scrollbar's column: ScrollView's own repaints (`refresh_lines`, its scroll
        watcher) span the content width, the bar's column included, so the bar was
        recomposited with every scroll and every new row (profiled at 3 x 300 tok/s: a
        bar's whole height, ~20 times a second per pane). The bar repaints itself when its
        thumb moves (`_ThumbScrollBar`).
        """
        height = self.size.height
        self.refresh(Region(0, top, self.scrollable_content_region.width,
                            height - top if rows is None else rows))

    def _set_virtual_size(self, size: Size) -> None:
        if size == self.virtual_size:
            return
        height = self.styles.height
        if height is not None and height.is_auto:
            self.virtual_size = size  # our height follows the content: lay out again
            return
        # Assigning virtual_size asks for a screen layout, and a layout makes the frame
        # ~3x dearer (measured); unless our own height depends on it, updating the
        # scrollbars is all that is needed (they still ask for a layout when they
        # appear or disappear).
        self.set_reactive(AnswerView.virtual_size, size)
        update_scrollbars(self, size)

    def _viewport_height(self) -> int:
        if self._flush_height is not None:
            return self._flush_height
        return max(1, self.scrollable_content_region.height)

    def _render_viewport(self) -> bool:
        """Render the unrendered blocks that are (or would be) on screen; True if any."""
        blocks = self._blocks
        if not blocks:
            return False
        height = self._viewport_height()
        if self._follow:
            covered = self._tail_gap + len(self._tail)
            index = len(blocks) - 1
            lowest_changed = len(blocks)
            while index >= 0 and covered < height:
                block = blocks[index]
                if block.strips is None and not block.hidden:
                    self._render_block(block)
                    lowest_changed = index
                covered += block.rows
                index -= 1
            self._valid = min(self._valid, lowest_changed + 1)
            return lowest_changed < len(blocks)
        finished_rows = self._ensure_starts()
        top = round(self.scroll_y)
        if top >= finished_rows:
            return False
        index = bisect_right(self._starts, top) - 1
        y = self._starts[index]
        changed = False
        while index < len(blocks) and y < top + height:
            block = blocks[index]
            if block.strips is None and not block.hidden:
                self._render_block(block)
                if not changed:
                    self._valid = min(self._valid, index + 1)
                changed = True
            y += block.rows
            index += 1
        return changed

    def _on_theme_changed(self, _theme: object) -> None:
        # Rendered strips carry the old theme's colours: render again, as after a resize.
        if self._width > 0:
            self._update_width(force=True)
            self.refresh()

    def _update_width(self, *, force: bool = False) -> bool:
        width = self.scrollable_content_region.width
        if width <= 0:
            return False
        width = max(width, MIN_RENDER_WIDTH)
        if width == self._width and not force:
            return False
        anchor: tuple[int, float] | None = None
        if not self._follow and self._blocks:
            finished_rows = self._ensure_starts()
            top = round(self.scroll_y)
            if top < finished_rows:
                index = bisect_right(self._starts, top) - 1
                block = self._blocks[index]
                anchor = (index, (top - self._starts[index]) / max(1, block.rows))
        self._width = width
        for block in self._blocks:
            block.strips = None
            block.approx = False
            block.height = block.estimate(width)
        self._valid = 0
        self._soft, self._soft_lines, self._soft_serial = [], 0, 0
        self._items = []
        self._tail_key = None
        self._render_tail()
        if anchor is not None:
            index, fraction = anchor
            self._render_block(self._blocks[index])
            self._valid = 0
            self._ensure_starts()
            block = self._blocks[index]
            y = self._starts[index] + int(fraction * block.rows)
            self._set_virtual_size(Size(width, self._total_rows()))
            self.scroll_to(y=y, animate=False, immediate=True)
        self._relayout()
        return True

    def on_resize(self, event: events.Resize) -> None:
        revealed, self._revealed_y = self._revealed_y, None
        y = round(self.scroll_y)
        if revealed is not None and (y == revealed or y == round(self.max_scroll_y) < revealed):
            # The reader has not scrolled since (or a taller view clamped the scroll).
            self._update_width()
            self._reveal_turn()
        elif not self._update_width() and self._follow:
            # The height changed (e.g. `height: auto`): stay at the bottom.
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        if self._inbox or self._finishing:
            self._schedule()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        # As ScrollView.watch_scroll_y, repainting the text only (see _refresh_text).
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = new_value
        if round(old_value) != round(new_value):
            self._refresh_text()
        self._follow = round(new_value) >= self.max_scroll_y
        if not self._follow and self._width > 0:
            # Scrolled into blocks that may only have an estimated height so far.
            before = self._total_rows()
            self._render_viewport()
            after = self._total_rows()
            if after != before:
                self._set_virtual_size(Size(self._width, after))

    # -- drawing -----------------------------------------------------------------------
    def _row(self, y: int) -> Strip | None:
        if self._placeholder is not None and not self._blocks and not self._tail:
            return self._placeholder_row(y)
        finished_rows = self._ensure_starts()
        if y < finished_rows:
            index = bisect_right(self._starts, y) - 1
            block = self._blocks[index]
            row = y - self._starts[index] - block.top_gap
            if row < 0:
                return None
            strips = block.strips
            if strips is None:
                # Not rendered yet (e.g. a scrollbar jump); heights are fixed up next.
                old = block.height
                strips = self._render_block(block)
                if block.height != old:
                    self._valid = min(self._valid, index + 1)
                    self.call_later(self._relayout)
            return strips[row] if row < len(strips) else None
        row = y - finished_rows - self._tail_gap
        if 0 <= row < len(self._tail):
            return self._tail[row]
        return None

    def render_line(self, y: int) -> Strip:
        """Row `y` of the view with each cell's text offset in its style's meta.

        Textual reads those offsets here, calling this for the row under the mouse, to
        know where a selection starts and ends; the rows drawn on screen come from
        `_paint_line()`, without them.
        """
        return self._line(y)

    def _paint_line(self, y: int) -> Strip:
        """Row `y` as drawn (through `RowStylesCache`): no offsets in its styles.

        Nothing reads them from the screen, and making a style per cell for them was
        most of the cost of a new row (profiled at 3 x 2,000 tok/s: ~50 of ~100 us).
        The width is the cache's, taken once per render (it costs a walk up the DOM).
        """
        return self._line(y, self._row_styles.width, offsets=False)

    def _line(self, y: int, width: int | None = None, *, offsets: bool = True) -> Strip:
        if width is None:
            width = self.scrollable_content_region.width
        rich_style = self._rich_style()
        virtual_y = self.scroll_offset.y + y
        source = self._row(virtual_y)
        if source is None:
            return Strip.blank(width, rich_style)
        # (Drawn rows are kept, styled, by RowStylesCache: no cache of our own here.)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(virtual_y)) is not None:
            strip = self._highlight(source.apply_style(rich_style), *span)
            strip = strip.crop_extend(0, width, rich_style)
            return strip.apply_offsets(0, virtual_y) if offsets else strip
        return self._draw(source, virtual_y if offsets else None, width, rich_style)

    @staticmethod
    def _draw(source: Strip, y: int | None, width: int, style: Style) -> Strip:
        """`apply_style` + `crop_extend` (+ `apply_offsets` for row `y`) in one pass.

        The Strip methods cache each intermediate Strip on its parent; for rows that are
        redrawn every flush that garbage kept the cyclic GC busy (measured: gen-2 pauses
        of 20-70 ms).
        """
        if source.cell_length > width:
            strip = source.apply_style(style).crop_extend(0, width, style)
            return strip.apply_offsets(0, y) if y is not None else strip
        segments: list[Segment] = []
        append = segments.append
        if y is None:
            for text, segment_style, control in source:
                append(Segment(text, style + segment_style if segment_style is not None
                               else style, control))
            if source.cell_length < width:
                append(Segment(" " * (width - source.cell_length), style))
            return Strip(segments, width)
        x = 0
        for text, segment_style, control in source:
            base = style + segment_style if segment_style is not None else style
            append(Segment(text, base + Style.from_meta({"offset": (x, y)}), control))
            x += len(text)
        if source.cell_length < width:
            pad = width - source.cell_length
            append(Segment(" " * pad, style + Style.from_meta({"offset": (x, y)})))
        return Strip(segments, width)

    def _rich_style(self) -> Style:
        """`rich_style`, kept until the styles change (`notify_style_update`)."""
        style = self._style
        if style is None:
            style = self._style = self.rich_style
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None
        self._row_styles.forget_rows()

    def _highlight(self, strip: Strip, start: int, end: int) -> Strip:
        text = strip.text
        if end < 0 or end > len(text):
            end = len(text)
        if start >= end:
            return strip
        style = self.screen.get_component_rich_style("screen--selection")
        cut1, cut2 = cell_len(text[:start]), cell_len(text[:end])
        middle = strip.crop(cut1, cut2)
        middle = Strip(Segment.apply_style(list(middle), post_style=style), middle.cell_length)
        return Strip.join([strip.crop(0, cut1), middle, strip.crop(cut2)])

    # -- selection ---------------------------------------------------------------------
    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """Whole blocks copy as their source; partly selected blocks as rendered text."""
        if selection.start is None and selection.end is None:
            return self.text, "\n"
        finished_rows = self._ensure_starts()
        total = self._total_rows()
        if total == 0:
            return None
        start = selection.start or Offset(0, 0)
        end = selection.end or Offset(1 << 30, total - 1)
        # (first row, gap rows, block) for each block in range; block None is the tail.
        units: list[tuple[int, int, Block[Strip] | None]] = []
        if start.y < finished_rows:
            first = max(0, bisect_right(self._starts, start.y) - 1)
            stop = len(self._blocks)
            if end.y < finished_rows:
                stop = bisect_right(self._starts, end.y)
            units.extend(
                (self._starts[i], self._blocks[i].top_gap, self._blocks[i])
                for i in range(first, stop) if not self._blocks[i].hidden
            )
        if end.y >= finished_rows and self._tail:
            units.append((finished_rows, self._tail_gap, None))
        parts: list[str] = []
        for unit_start, gap, block in units:
            if block is not None:
                strips, height = block.strips, block.height
                raw, joiner = block.raw, block.joiner
            else:
                strips, height = self._tail, len(self._tail)
                raw, joiner = self._splitter.open_raw(), self._splitter.joiner
            top = unit_start + gap
            bottom = top + height - 1
            if bottom < start.y or top > end.y:
                continue
            if parts:
                parts.append("\n\n" if gap else ("\n" if joiner else ""))
            whole_top = start.y < top or (start.y == top and start.x == 0)
            whole_bottom = end.y > bottom
            if not whole_bottom and end.y == bottom and strips is not None:
                whole_bottom = end.x >= len(strips[-1].text.rstrip())
            if whole_top and whole_bottom:
                parts.append(terminal_safe(raw))
                continue
            if strips is None:
                assert block is not None
                strips = self._render_block(block)
            rows: list[str] = []
            for y in range(max(top, start.y), min(top + len(strips) - 1, end.y) + 1):
                text = strips[y - top].text
                if y == end.y:
                    text = text[: end.x]
                if y == start.y:
                    text = text[start.x :]
                rows.append(text.rstrip())
            parts.append("\n".join(rows))
        return "".join(parts), "\n"

    # -- test / debugging hook -------------------------------------------------------------
    def _rendered_lines(self) -> list[str]:
        """Every row as plain text, rendering any block not rendered yet (for tests)."""
        rows: list[str] = []
        rendered_any = False
        for index, block in enumerate(self._blocks):
            if block.hidden:
                continue
            strips = block.strips
            if strips is None:
                strips = self._render_block(block)
                self._valid = min(self._valid, index + 1)
                rendered_any = True
            rows.extend([""] * block.top_gap)
            rows.extend(strip.text.rstrip() for strip in strips)
        rows.extend([""] * self._tail_gap)
        rows.extend(strip.text.rstrip() for strip in self._tail)
        if rendered_any:
            self._relayout()
        return rows
