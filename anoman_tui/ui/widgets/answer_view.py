"""`AnswerView`: the body of one answer pane, streaming Markdown at a bounded cost.

Model text arrives as many small deltas (up to ~1,000 tokens/s per pane, three panes at
once). Textual's `Markdown` widget re-lays-out a widget tree per update and falls behind,
so this is a Line-API widget (`ScrollView`) instead:

* `append()` only buffers. The app's `FrameClock` (ticking only while something waits)
  flushes every view with new text on one grid and then draws the screen at once, so
  panes that stream together are composited in one frame.
* A flush feeds the text to `_BlockSplitter`, which cuts the source into Markdown blocks
  at blank lines outside fenced code (so a fence with blank lines is one block), keeps
  indented list continuations with their list, and cuts very long blocks into bounded
  pieces (a 2 MB line or a 100,000-line answer never becomes one huge render). Parsing
  per flush is time-boxed (`FLUSH_BUDGET`); the rest waits for the next tick.
* A finished block is rendered once with Rich (`Markdown` -> `Console.render_lines` at the
  content width) into cached `Strip`s. Only the open (trailing) block is re-rendered per
  flush and only its changed rows are redrawn; a long open code fence is rendered in
  stable chunks so that cost stays bounded, and re-rendered whole by `finish()`.
* Rendering is lazy: blocks get a height estimate and are rendered when they come into
  view, so a resize re-wraps a huge answer without freezing the UI (the view stays
  anchored at the bottom, or at the block at the top). Strips of blocks far above the
  view are dropped (heights kept) so memory and GC work stay bounded.
* Model output is never markup: it only goes through Markdown parsing, links are shown
  as text (no hyperlinks), unknown code languages render as plain text (Pygments would
  import plugin packages to look them up), and control sequences are removed by
  `terminal_safe` -- line by line in the splitter, carrying an unterminated OSC/DCS
  string across lines and deltas, and again on each block's source at render time.
* Mouse selection works like `Log`: every row carries offset metadata; copying gives the
  (sanitised) source of wholly selected blocks and the rendered text of partly selected
  ones.

Costs measured with benchmarks/answer_view_lag.py are in its output. Tail latency there is
dominated by Textual's compositor and by CPython's cyclic GC; an app that calls
`gc.freeze()` after its first paint avoids most of the GC pauses.

May import: the standard library, `rich` (and its `markdown_it` and `pygments`
dependencies), `textual`, `anoman_tui.safe_text` and `anoman_tui.ui.widgets.frame_clock`.
Nothing else from the project.
"""

from __future__ import annotations

import importlib
import io
import re
import time
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from functools import cache
from math import ceil
from typing import Any, ClassVar, Self

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.theme import Theme
from textual import events
from textual._styles_cache import StylesCache
from textual.color import Color
from textual.css.styles import StylesBase
from textual.geometry import Offset, Region, Size, Spacing
from textual.message import Message
from textual.reactive import Reactive, reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip

from anoman_tui.safe_text import terminal_safe
from anoman_tui.ui.widgets.frame_clock import FrameClock

__all__ = ["AnswerView", "warm_up"]

# Bounds on one block (one Rich render). Measured here: Rich renders ~1 ms per 700
# characters of prose and ~0.15 ms per highlighted code line.
MAX_BLOCK_LINES = 200
MAX_BLOCK_CHARS = 8_000
MAX_LINE_CHARS = 8_000  # a longer line is cut (at a space if possible) into pieces
LIST_CUT_LINES = 40  # a long tight list is cut at an item boundary
TABLE_CUT_ROWS = 50  # a long table is cut; the continuation repeats the header
SOFT_CHUNK_LINES = 24  # an open code fence is rendered in stable chunks of this size
MIN_RENDER_WIDTH = 16
INGEST_CHUNK = 16_384  # characters fed to the splitter between budget checks
THUMB_REPAINT_INTERVAL = 0.25  # seconds between scrollbar repaints for streaming text
KEEP_ROWS = 300  # rendered rows kept above the view; older blocks re-render on demand

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_LIST_ITEM = re.compile(r"^( *)(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# Terminal "string" controls (OSC, DCS, SOS, PM, APC) may span lines; terminal_safe() eats
# an unterminated one to the end of its input, so the splitter carries that state over.
_STRING_CONTROL = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c)", re.S
)
_STRING_OPENER = re.compile(r"\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]")
_STRING_END = re.compile(r"\x07|\x1b\\|\x9c")
_TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def _sanitize(line: str, in_string: bool) -> tuple[str, bool]:
    """`terminal_safe` for one line of a stream; returns (clean, inside a string control)."""
    if in_string:
        end = _STRING_END.search(line)
        if end is None:
            return "", True
        line = line[end.end() :]
    if line.isprintable():
        return line, False
    unterminated = _STRING_OPENER.search(_STRING_CONTROL.sub("", line)) is not None
    return terminal_safe(line), unterminated


@cache
def _builtin_lexers() -> frozenset[str]:
    # Pygments' own table of built-in lexers (Rich depends on Pygments); via importlib
    # because Pygments ships no type stubs.
    lexers = importlib.import_module("pygments.lexers._mapping").LEXERS
    return frozenset(alias.lower() for *_, aliases, _, _ in lexers.values() for alias in aliases)


class _CodeBlock(CodeBlock):
    """A fenced code block whose language is only ever a built-in Pygments lexer.

    Pygments looks an unknown name up in every installed plugin package, importing them
    (IPython, jedi, prompt_toolkit... measured: 200+ ms stalls). While a fence streams
    in, its info string is often a fragment ("pyt"), and model output must not make
    us import things anyway; unknown languages render as plain text.
    """

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        lexer_name = (token.info or "").partition(" ")[0].lower()
        if lexer_name not in _builtin_lexers():
            lexer_name = "text"
        return cls(lexer_name, markdown.code_theme)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # As CodeBlock, with the lexer and theme looked up once: Rich looks both up per
        # render (measured ~0.5 ms of a 1.2 ms five-line fence, re-rendered every flush
        # while the fence is open).
        code = str(self.text).rstrip()
        yield Syntax(
            code,
            _lexer(self.lexer_name),
            theme=_syntax_theme(self.theme),
            word_wrap=True,
            padding=1,
        )


@cache
def _lexer(name: str) -> Any:
    # Only built-in lexer names get here (see _CodeBlock.create); a lexer instance is
    # stateless between get_tokens() calls, so one per language is shared.
    lexers = importlib.import_module("pygments.lexers")
    return lexers.get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)


@cache
def _syntax_theme(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)


@cache
def _markdown_parser() -> MarkdownIt:
    return MarkdownIt().enable("strikethrough").enable("table")


_LIGHT_MARKDOWN = Theme(
    {
        "markdown.code": "bold #1F5FBF on #E7EAF1",
        "markdown.block_quote": "#6A4FCB",
        "markdown.link": "#1F5FBF",
        "markdown.link_url": "underline #1F5FBF",
        "markdown.h1": "bold #B35A00",
        "markdown.h2": "bold underline #1B2230",
    }
)


class _Markdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, markup: str, *, code_theme: str) -> None:
        # As Markdown.__init__, but with one shared parser: building a MarkdownIt
        # costs about as much as parsing a small block (measured 0.45 ms a render).
        self.markup = markup
        self.parsed = _markdown_parser().parse(markup)
        self.code_theme = code_theme
        self.justify: JustifyMethod | None = None
        self.style = "none"
        self.hyperlinks = False  # links are shown as text, never as terminal links
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme


def _is_blank(line: list[Segment]) -> bool:
    return all(
        not text.strip() and (style is None or style.bgcolor is None) for text, style, _ in line
    )


@dataclass(slots=True, eq=False)
class _Block:
    """A finished piece of the answer, rendered as one Rich `Markdown`."""

    raw: str  # the (sanitised) text of this piece, without synthetic lines
    prefix: str  # synthetic source before raw (fence opener / table header of a cut block)
    suffix: str  # synthetic source after raw (fence closer of a cut block)
    joiner: str  # original text between the previous piece and this one (for copying)
    gap: bool  # draw a blank row before it (False for the pieces of a cut block)
    trim_top: bool  # drop the first rendered row (code padding shared with the piece above)
    trim_bottom: bool
    serial: int  # which open block it came from (matches the soft-chunk cache)
    nlines: int
    top_gap: int = 0  # rows of gap actually drawn (no gap above the first block)
    strips: list[Strip] | None = None  # None: not rendered at the current width
    height: int = 0  # len(strips), or an estimate while strips is None
    approx: bool = False  # rendered in chunks while streaming; finish() re-renders it

    @property
    def source(self) -> str:
        return f"{self.prefix}{self.raw}{self.suffix}"

    @property
    def rows(self) -> int:
        return self.top_gap + self.height

    def estimate(self, width: int) -> int:
        # Cheap (O(1)) so a resize of a huge answer costs one pass over the blocks.
        fence = 2 if self.prefix or "```" in self.raw or "~~~" in self.raw else 0
        return max(1, self.nlines + len(self.raw) // max(1, width - 2) + fence)


class _BlockSplitter:
    """Incrementally split Markdown source into blocks; pure Python, no Textual.

    Decisions depend only on the text, never on how it was split into deltas, so any
    split of the same answer yields the same blocks.
    """

    def __init__(self) -> None:
        self.serial = 0
        self.partial = ""  # the incomplete last line (not yet sanitised)
        self.in_string = False  # inside an unterminated OSC/DCS/... string control
        self._start_block(joiner="", gap=False, prefix="", trim_top=False)

    def _start_block(self, *, joiner: str, gap: bool, prefix: str, trim_top: bool) -> None:
        self.serial += 1
        self.lines: list[str] = []
        self.chars = 0
        self.prefix = prefix
        self.joiner = joiner
        self.gap = gap
        self.trim_top = trim_top
        self.blank_run = 0
        self.is_list = False
        self.fence: tuple[str, int] | None = None
        self.fence_opener = ""
        self.fence_start = -1  # index in lines of the opener; -1 when it is in prefix
        self.table_header: str | None = None

    # -- feeding -------------------------------------------------------------------
    def feed(self, text: str) -> list[_Block]:
        out: list[_Block] = []
        data = self.partial + text
        pos = 0
        find = data.find
        while (nl := find("\n", pos)) >= 0:
            self._line(data[pos:nl], out)
            pos = nl + 1
        rest = data[pos:]
        while len(rest) > MAX_LINE_CHARS:
            rest = self._cut_long_line(rest, out)
        self.partial = rest
        return out

    def close(self) -> list[_Block]:
        """End of the answer: the open block (with any partial line) is finished."""
        out: list[_Block] = []
        if self.partial:
            self._line(self.partial, out)
            self.partial = ""
        self._emit(out, suffix="", trim_bottom=False)
        self._start_block(joiner="\n", gap=True, prefix="", trim_top=False)
        return out

    def _cut_long_line(self, line: str, out: list[_Block]) -> str:
        cut = line.rfind(" ", MAX_LINE_CHARS // 2, MAX_LINE_CHARS)
        cut = cut + 1 if cut > 0 else MAX_LINE_CHARS
        escape = line.rfind("\x1b", cut - 32, cut)
        if escape > 0:
            cut = escape  # never split an escape sequence between pieces
        self._content(line[:cut], out, fragment=True)
        self._cut(out, joiner="")
        return line[cut:]

    def _line(self, line: str, out: list[_Block]) -> None:
        while len(line) > MAX_LINE_CHARS:
            line = self._cut_long_line(line, out)
        self._content(line, out, fragment=False)
        if self.fence is not None:
            # Rich drops trailing blank lines of a code block, so never end a piece on
            # one (unless a hostile run of blank lines goes on and on).
            over = len(self.lines) >= MAX_BLOCK_LINES or self.chars >= MAX_BLOCK_CHARS
            if over and (self.lines[-1].strip() or len(self.lines) >= MAX_BLOCK_LINES + 64):
                self._cut(out, joiner="\n")
        elif self.lines and (len(self.lines) >= MAX_BLOCK_LINES or self.chars >= MAX_BLOCK_CHARS):
            self._cut(out, joiner="\n")

    def _content(self, line: str, out: list[_Block], *, fragment: bool) -> None:
        # Work on sanitised text so control sequences can neither hide a fence or a blank
        # line nor be split across blocks.
        line, self.in_string = _sanitize(line, self.in_string)
        clean = line
        if self.fence is not None:
            self._add(line)
            if not fragment and (m := _FENCE_CLOSE.match(clean)):
                char, length = self.fence
                if m.group(1)[0] == char and len(m.group(1)) >= length:
                    self.fence = None
            return
        if not clean.strip():
            if fragment:
                self._add(line)
            elif self.lines:
                if self.is_list:
                    self.blank_run += 1  # a list may continue after blank lines
                else:
                    self._emit(out, suffix="", trim_bottom=False)
                    self._start_block(joiner="\n\n", gap=True, prefix="", trim_top=False)
            else:
                self.joiner += "\n"  # blank lines between blocks (kept for copying)
            return
        if self.blank_run:
            indent = len(clean) - len(clean.lstrip(" \t"))
            if indent >= 2:
                self.lines.extend([""] * self.blank_run)  # list item continuation
                self.blank_run = 0
            else:
                joiner = "\n" * (self.blank_run + 1)
                self._emit(out, suffix="", trim_bottom=False)
                self._start_block(joiner=joiner, gap=True, prefix="", trim_top=False)
        elif self.lines and not fragment:
            long_list = self.is_list and len(self.lines) >= LIST_CUT_LINES
            long_table = self.table_header is not None and len(self.lines) >= TABLE_CUT_ROWS
            if long_table or (
                long_list and (m := _LIST_ITEM.match(clean)) and len(m.group(1)) <= 1
            ):
                self._cut(out, joiner="\n")
        if not self.lines and not self.prefix:
            self.is_list = _LIST_ITEM.match(clean) is not None
        elif (
            len(self.lines) == 1
            and self.table_header is None
            and not self.prefix
            and "|" in self.lines[0]
            and _TABLE_DELIMITER.match(clean)
            and "-" in clean
        ):
            self.table_header = f"{self.lines[0]}\n{line}\n"
        self._add(line)
        if not fragment and (m := _FENCE_OPEN.match(clean)):
            marker = m.group(1)
            if not (marker[0] == "`" and "`" in m.group(2)):
                self.fence = (marker[0], len(marker))
                self.fence_opener = clean.strip()
                self.fence_start = len(self.lines) - 1

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.chars += len(line) + 1

    def _cut(self, out: list[_Block], *, joiner: str) -> None:
        """Finish the open block here and continue the same construct in a new piece."""
        fence, opener = self.fence, self.fence_opener
        header, is_list = self.table_header, self.is_list
        if fence is not None:
            self._emit(out, suffix="\n" + fence[0] * fence[1], trim_bottom=True)
            self._start_block(joiner=joiner, gap=False, prefix=opener + "\n", trim_top=True)
            self.fence, self.fence_opener = fence, opener
        elif header is not None:
            self._emit(out, suffix="", trim_bottom=False)
            self._start_block(joiner=joiner, gap=False, prefix=header, trim_top=False)
            self.table_header = header
        else:
            self._emit(out, suffix="", trim_bottom=False)
            self._start_block(joiner=joiner, gap=False, prefix="", trim_top=False)
            self.is_list = is_list

    def _emit(self, out: list[_Block], *, suffix: str, trim_bottom: bool) -> None:
        if self.lines:
            raw = "\n".join(self.lines)
            out.append(
                _Block(
                    raw=raw,
                    prefix=self.prefix,
                    suffix=suffix,
                    joiner=self.joiner,
                    gap=self.gap,
                    trim_top=self.trim_top,
                    trim_bottom=trim_bottom,
                    serial=self.serial,
                    nlines=len(self.lines),
                )
            )

    # -- the open block ------------------------------------------------------------
    def open_raw(self) -> str:
        """Sanitised text of the open block, including the partial line."""
        body = "\n".join(self.lines)
        partial = _sanitize(self.partial, self.in_string)[0] if self.partial else ""
        if partial:
            sep = "\n" * (self.blank_run + 1) if self.lines else ""
            body = f"{body}{sep}{partial}"
        return body

    @property
    def has_open(self) -> bool:
        return bool(self.lines or self.partial.strip())


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
        # New text moves the thumb by a fraction of a cell per flush: at most 4 Hz, and
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

    def _on_resize(self) -> None:
        self._thumb = None  # a resize repaints the bar anyway


class _RowStylesCache(StylesCache):
    """Textual's per-widget cache of styled lines, keeping each answer row's result.

    Textual caches styled lines by their row on screen, so every scroll restyles every
    visible row (profiled at 3 x 300 tok/s: ~60 us a row, the largest part of a frame
    while three answers follow their ends). An answer row is an immutable `Strip` that
    carries its own offsets, so its styled line (and, through the `Strip`'s own caches,
    its filtered and divided forms) can be reused wherever the row lands, as long as the
    styles around it are the same. (`textual._styles_cache` is private: textual is pinned.)
    """

    MAX_ROWS: ClassVar[int] = 1_024

    def __init__(self, view: AnswerView) -> None:
        super().__init__()
        self._view = view
        self._rows: dict[int, tuple[Strip, Strip]] = {}  # answer row -> (source, styled)
        self._blank: Strip | None = None  # the styled blank row
        self._context: tuple[object, ...] = ()
        self._gutter_top = 0
        self._scroll_y: int | None = None

    def forget_rows(self) -> None:
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
            id(ansi_theme), native_ansi, self._view.rich_style,
        )
        if context != self._context:
            self._context = context
            self.forget_rows()
        self._gutter_top = styles.gutter.top
        # Per render, not per row (each costs a walk up the DOM).
        view = self._view
        self._scroll_y = view.scroll_offset.y if view.text_selection is None else None
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
            source = self._view._row(virtual_y)
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


class AnswerView(ScrollView, can_focus=True):
    """Streams one Markdown answer; see the module docstring for how."""

    ALLOW_SELECT = True
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
    CODE_THEME: ClassVar[str] = "monokai"
    LIGHT_CODE_THEME: ClassVar[str] = "friendly"
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
        self._width = 0  # render width; 0 until the size is known
        self._follow = True
        self._style: Style | None = None  # cached self.rich_style (costly per line)
        self._styles_cache: _RowStylesCache = _RowStylesCache(self)
        self._reset_content()

    def _reset_content(self) -> None:
        self._text_parts: list[str] = []
        self._text_recent: list[str] = []
        self._text_cache: str | None = ""
        self._inbox: deque[tuple[str, float]] = deque()
        self._splitter = _BlockSplitter()
        self._blocks: list[_Block] = []
        self._starts: list[int] = []  # first row of each block (including its gap)
        self._valid = 0  # how many entries of _starts are up to date
        self._tail: list[Strip] = []
        self._tail_key: tuple[int, str] | None = None  # (serial, source) _tail was made from
        self._tail_gap = 0
        self._soft: list[Strip] = []  # stable chunks of the open fence
        self._soft_serial = 0
        self._soft_lines = 0
        self._soft_opener = ""  # fence opener line used by the soft chunks
        self._finishing = False
        self._dirty_from: int | None = None  # first row changed since the last refresh
        self._evict_from = 0  # blocks before this index have had their strips dropped
        self._styles_cache.forget_rows()

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            bar = _ThumbScrollBar(
                vertical=True, name="vertical", thickness=self.scrollbar_size_vertical
            )
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

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
        self._inbox.append((text, now))
        self._finishing = False
        self._schedule()

    def finish(self) -> None:
        """Flush everything now and render the whole answer in its final form."""
        self._finishing = True
        self._flush(final=True)

    def clear(self) -> None:
        """Remove all text."""
        self._reset_content()
        self._follow = True
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
            return  # size unknown yet: the first Resize (or Show) schedules the flush
        started = time.perf_counter()
        budget = self.FINISH_BUDGET if final else self.FLUSH_BUDGET
        latest = 0.0
        new_blocks: list[_Block] = []
        inbox = self._inbox
        while inbox and time.perf_counter() - started < budget:
            text, arrived = inbox.popleft()
            if len(text) > INGEST_CHUNK:
                inbox.appendleft((text[INGEST_CHUNK:], arrived))
                text = text[:INGEST_CHUNK]
            else:
                latest = arrived
            new_blocks.extend(self._splitter.feed(text))
        drained = not inbox
        if drained and final:
            new_blocks.extend(self._splitter.close())
        self._add_blocks(new_blocks)
        self._render_tail()
        if drained and final:
            self._finalise_approx()
            self._finishing = False
        self._relayout()
        if latest and self._report_flushes:
            self.call_after_refresh(self.post_message, self.Flushed(self, latest))
        if not drained:
            self._schedule()

    def _add_blocks(self, blocks: list[_Block]) -> None:
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

    def _finalise_approx(self) -> None:
        for index, block in enumerate(self._blocks):
            if block.approx:
                block.approx = False
                block.strips = None
                self._valid = min(self._valid, index + 1)

    # -- rendering ---------------------------------------------------------------------
    def _render_source(
        self, source: str, *, trim_top: bool = False, trim_bottom: bool = False
    ) -> list[Strip]:
        text = terminal_safe(source)
        if "\t" in text:
            text = text.expandtabs(4)  # a raw tab would move the terminal cursor
        console = self.app.console
        options = console.options.update_width(self._width)
        if self.app.current_theme.dark:
            markdown = _Markdown(text, code_theme=self.CODE_THEME)
            lines = console.render_lines(markdown, options, pad=False)
        else:
            # Rich's Markdown defaults (inline code on black) are made for dark terminals.
            markdown = _Markdown(text, code_theme=self.LIGHT_CODE_THEME)
            with console.use_theme(_LIGHT_MARKDOWN):
                lines = console.render_lines(markdown, options, pad=False)
        # Rich pads some elements (tables, lists) with empty rows; the gap between
        # blocks is ours, so drop them (but keep code padding, which has a background).
        start, end = 0, len(lines)
        while start < end and _is_blank(lines[start]):
            start += 1
        while end > start and _is_blank(lines[end - 1]):
            end -= 1
        if trim_top and end - start > 1:
            start += 1
        if trim_bottom and end - start > 1:
            end -= 1
        return [Strip(line) for line in lines[start:end]]

    def _render_block(self, block: _Block) -> list[Strip]:
        strips = self._render_source(
            block.source, trim_top=block.trim_top, trim_bottom=block.trim_bottom
        )
        block.strips = strips
        block.height = len(strips)
        return strips

    def _render_rest(self, block: _Block, soft_lines: int) -> list[Strip]:
        """Render a fence block's lines after its soft chunks."""
        rest_lines = block.raw.split("\n")[soft_lines:]
        opener = self._soft_opener
        source = opener + "\n" + "\n".join(rest_lines) + block.suffix
        return self._render_source(source, trim_top=True, trim_bottom=block.trim_bottom)

    def _render_tail(self) -> None:
        """Re-render the open block if it changed (bounded by the splitter's caps)."""
        splitter = self._splitter
        old = self._tail
        if not splitter.has_open:
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
        first_changed = min(len(old), len(new))
        for index in range(first_changed):
            if new[index]._segments == old[index]._segments:
                new[index] = old[index]
            elif first_changed > index:
                first_changed = index
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
        return self._render_source(splitter.prefix + raw, trim_top=splitter.trim_top)

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
        style = self.rich_style  # may change with an ancestor's style: check per flush
        if style != self._style:
            self._style = style
            self._styles_cache.forget_rows()
        full = self._render_viewport()
        total = self._total_rows()
        bar = self._vertical_scrollbar
        if isinstance(bar, _ThumbScrollBar):
            bar.lazy = True  # (Widget._scroll_update also repaints the bar every time)
        try:
            self._set_virtual_size(Size(self._width, total))
            scroll_before = self.scroll_offset.y
            if self._follow:
                self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        finally:
            if isinstance(bar, _ThumbScrollBar):
                bar.lazy = False
        dirty, self._dirty_from = self._dirty_from, None
        if full:
            self.refresh()
        elif dirty is not None and self.scroll_offset.y == scroll_before:
            # Appending only changes rows at the end: redraw from the first changed row.
            top = self.scroll_offset.y
            bottom = top + self._viewport_height()
            if dirty < bottom:
                start = max(dirty, top)
                self.refresh_lines(start, bottom - start)
        # A scroll redraws everything by itself (ScrollView.watch_scroll_y).

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
        self._scroll_update(size)

    def _viewport_height(self) -> int:
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
                if block.strips is None:
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
            if block.strips is None:
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
        if not self._update_width() and self._follow:
            # The height changed (e.g. `height: auto`): stay at the bottom.
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        if self._inbox or self._finishing:
            self._schedule()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
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
        width = self.scrollable_content_region.width
        rich_style = self._style
        if rich_style is None:
            rich_style = self._style = self.rich_style
        virtual_y = self.scroll_offset.y + y
        source = self._row(virtual_y)
        if source is None:
            return Strip.blank(width, rich_style)
        # (Drawn rows are kept, styled, by _RowStylesCache: no cache of our own here.)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(virtual_y)) is not None:
            strip = self._highlight(source.apply_style(rich_style), *span)
            return strip.crop_extend(0, width, rich_style).apply_offsets(0, virtual_y)
        return self._draw(source, virtual_y, width, rich_style)

    @staticmethod
    def _draw(source: Strip, y: int, width: int, style: Style) -> Strip:
        """`apply_style` + `crop_extend` + `apply_offsets` in one pass.

        The Strip methods cache each intermediate Strip on its parent; for rows that are
        redrawn every flush that garbage kept the cyclic GC busy (measured: gen-2 pauses
        of 20-70 ms).
        """
        if source.cell_length > width:
            return source.apply_style(style).crop_extend(0, width, style).apply_offsets(0, y)
        segments: list[Segment] = []
        append = segments.append
        x = 0
        for text, segment_style, control in source:
            base = style + segment_style if segment_style is not None else style
            append(Segment(text, base + Style.from_meta({"offset": (x, y)}), control))
            x += len(text)
        if source.cell_length < width:
            pad = width - source.cell_length
            append(Segment(" " * pad, style + Style.from_meta({"offset": (x, y)})))
        return Strip(segments, width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None
        self._styles_cache.forget_rows()

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
        units: list[tuple[int, int, _Block | None]] = []
        if start.y < finished_rows:
            first = max(0, bisect_right(self._starts, start.y) - 1)
            stop = len(self._blocks)
            if end.y < finished_rows:
                stop = bisect_right(self._starts, end.y)
            units.extend(
                (self._starts[i], self._blocks[i].top_gap, self._blocks[i])
                for i in range(first, stop)
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


# Languages whose Pygments lexers `warm_up()` builds ahead of the first answer.
WARM_LANGUAGES = (
    "python", "bash", "javascript", "typescript", "json", "sql", "yaml", "toml", "rust",
    "go", "c", "cpp", "java", "html", "css", "diff", "markdown",
)
_WARM_SAMPLE = """# Heading

Some **bold**, *italic*, `code` and a [link](https://example.com).

- an item
  - a nested item
1. a numbered item

> a quote

| a | b |
|---|:-:|
| 1 | 2 |

---
"""


def warm_up() -> None:
    """Do the one-time work of a first Markdown render, in any thread.

    The first fence in a language builds its Pygments lexer (compiling its regexes:
    measured 1-35 ms each, e.g. sql and css ~35 ms) and the first render of each
    Markdown element imports and sets up Rich's code for it; in the middle of the first
    streamed answers those stalls were the worst frames (100-190 ms of display lag
    at 3 x 300 tok/s). The app calls this in a thread after its first paint.
    """
    fences = "".join(f"```{name}\nx = 1\n```\n\n" for name in WARM_LANGUAGES)
    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    for code_theme in (AnswerView.CODE_THEME, AnswerView.LIGHT_CODE_THEME):
        markdown = _Markdown(_WARM_SAMPLE + fences, code_theme=code_theme)
        console.render_lines(markdown, console.options, pad=False)
