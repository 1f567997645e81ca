"""The suite screen's matrix: a row per case, a column per model, drawn a line at a time.

Textual's `DataTable` measures every cell of every row to size its columns and, on any
`update_cell`, renders its visible rows again; with a suite's cells finishing dozens of
times a second, and a finished run of thousands of rows opened at once, that was most
of the screen's time (benchmarks/suite_screen.py). Here the columns have fixed widths,
a row is rendered only when it is on screen and has changed since it was last drawn,
and a changed row repaints only its own line.

The rows' contents come from the screen (`row_cells(key)`), so the matrix keeps no copy
of a cell's state: `set_rows` gives the keys shown in order, `refresh_rows` says which
have changed.

May import: Textual, Rich and `anoman_tui.ui.render`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from anoman_tui.ui.render.fit import shorten

SEPARATOR = 1
"""Blank cells between two columns."""
FIRST_MIN = 16
"""The first column (the case) is narrowed down to this many cells to fit the others."""


class CaseMatrix(ScrollView, can_focus=True):
    """Rows of fixed-width cells under a header that stays on top; a row cursor moved
    with the arrows, Page Up/Down, Home/End and the mouse. Enter is the screen's
    (`suite.open`); a click on the cursor's row posts `Selected` as Enter would."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    COMPONENT_CLASSES = {
        "case-matrix--header",
        "case-matrix--cursor",
        "case-matrix--even-row",
    }

    DEFAULT_CSS = """
    CaseMatrix {
        background: $surface;
        color: $foreground;
        &:focus {
            background-tint: $foreground 5%;
            & > .case-matrix--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        & > .case-matrix--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .case-matrix--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .case-matrix--even-row {
            background: $surface-lighten-1 50%;
        }
        &:dark > .case-matrix--even-row {
            background: $surface-darken-1 40%;
        }
        & > .case-matrix--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class Selected(Message):
        """A row chosen with the mouse (a click on the cursor's row)."""

        def __init__(self, matrix: CaseMatrix, key: str) -> None:
            super().__init__()
            self.matrix = matrix
            self.key = key

        @property
        def control(self) -> CaseMatrix:
            return self.matrix

    def __init__(self, columns: Sequence[tuple[str, int]],
                 row_cells: Callable[[str], Sequence[Text]], *,
                 id: str | None = None) -> None:
        """`columns`: (heading, width) each; `row_cells(key)`: a row's cells, one `Text`
        a column, asked for only when the row is drawn after a change."""
        super().__init__(id=id)
        self._asked = list(columns)
        self.columns = list(columns)
        """As drawn: the first column narrowed so that every column fits the width, down
        to `FIRST_MIN`; beyond that the matrix scrolls sideways, its header saying so."""
        self._row_cells = row_cells
        self.rows: list[str] = []
        self._index: dict[str, int] = {}
        self._drawn: dict[str, Strip] = {}
        """Each row's cells as last rendered (without the row's background), by key;
        dropped when the row changes."""
        self.cursor_row = 0
        self._width = sum(w for _, w in self.columns) + SEPARATOR * max(
            0, len(self.columns) - 1)

    # -- the rows -----------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def cursor_key(self) -> str | None:
        return self.rows[self.cursor_row] if self.rows else None

    def set_rows(self, keys: Iterable[str]) -> None:
        """The rows shown, in order. The cursor stays on its row's place, within the
        new rows; rows kept are not rendered again unless they changed."""
        self.rows = list(keys)
        self._index = {key: i for i, key in enumerate(self.rows)}
        self._drawn = {k: v for k, v in self._drawn.items() if k in self._index}
        self.virtual_size = Size(self._width, len(self.rows) + 1)
        self.cursor_row = min(max(self.cursor_row, 0), max(len(self.rows) - 1, 0))
        self._keep_cursor_visible()
        self.refresh()

    def refresh_rows(self, keys: Iterable[str]) -> None:
        """These rows' cells have changed: drawn again if (and when) they are seen."""
        top, height = self._top, self._body_height
        for key in keys:
            self._drawn.pop(key, None)
            index = self._index.get(key)
            if index is not None and top <= index < top + height:
                self.refresh(Region(0, index - top + 1, self.size.width, 1))

    def row_text(self, index: int) -> str:
        """A row's cells in plain words, as shown (for tests and screen readers)."""
        return " ".join(cell.plain for cell in self._row_cells(self.rows[index]))

    # -- the cursor ---------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        if not self.rows:
            return
        row = min(max(row, 0), len(self.rows) - 1)
        if row == self.cursor_row:
            return
        old, self.cursor_row = self.cursor_row, row
        top = self._top
        for index in (old, row):
            if top <= index < top + self._body_height:
                self.refresh(Region(0, index - top + 1, self.size.width, 1))
        self._keep_cursor_visible()

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self._body_height - 1))

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self.rows) - 1)

    def _keep_cursor_visible(self) -> None:
        top, height = self._top, max(1, self._body_height)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False, immediate=True)

    async def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        index = self._top + offset.y - 1
        if not 0 <= index < len(self.rows):
            return
        if index == self.cursor_row:
            self.post_message(self.Selected(self, self.rows[index]))
        else:
            self.move_cursor(index)

    # -- drawing ------------------------------------------------------------------

    @property
    def _top(self) -> int:
        """The row drawn just under the header."""
        return round(self.scroll_offset.y)

    @property
    def _body_height(self) -> int:
        return max(0, self.scrollable_content_region.height - 1)

    def on_resize(self) -> None:
        self._fit_columns()
        self._keep_cursor_visible()

    def _fit_columns(self) -> None:
        """Narrow the first column (a case's id and prompt, cut with `…` anyway) so that
        the models' columns fit beside it; restore it where there is room."""
        if not self._asked:
            return
        room = self.scrollable_content_region.width
        (name, asked), *others = self._asked
        rest = sum(w for _, w in others) + SEPARATOR * len(others)
        first = max(min(asked, FIRST_MIN), min(asked, room - rest))
        if self.columns and self.columns[0][1] == first:
            return
        self.columns = [(name, first), *others]
        self._width = first + rest
        self._drawn.clear()
        self.virtual_size = Size(self._width, len(self.rows) + 1)
        self.refresh()

    def _line(self, cells: Sequence[Text]) -> Strip:
        segments: list[Segment] = []
        console = self.app.console
        for n, ((_, width), cell) in enumerate(zip(self.columns, cells, strict=False)):
            if n:
                segments.append(Segment(" " * SEPARATOR))
            text = cell.copy()
            text.no_wrap = True
            text.truncate(width, overflow="ellipsis", pad=True)
            segments.extend(text.render(console, end=""))
        return Strip(segments, self._width)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        scroll_x = round(self.scroll_offset.x)
        if y == 0:
            return self._header(scroll_x, width)
        index = self._top + y - 1
        base = self.rich_style
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, base)
        key = self.rows[index]
        strip = self._drawn.get(key)
        if strip is None:
            strip = self._drawn[key] = self._line(self._row_cells(key))
        style: Style = base
        if index == self.cursor_row:
            style = base + self.get_component_rich_style("case-matrix--cursor")
        elif index % 2:
            style = base + self.get_component_rich_style("case-matrix--even-row")
        return strip.crop_extend(scroll_x, scroll_x + width, style).apply_style(style)

    def _header(self, scroll_x: int, width: int) -> Strip:
        """The headings (a long model name shortened in its middle); when columns are
        out of sight, an arrow at that edge says which way the matrix scrolls to them."""
        heading = self.get_component_rich_style("case-matrix--header")
        header = self._line([Text(shorten(name, w), no_wrap=True) for name, w in self.columns])
        strip = header.crop_extend(scroll_x, scroll_x + width, heading)
        left, right = scroll_x > 0, scroll_x + width < self._width
        if not (left or right) or width < 4:
            return strip.apply_style(heading)
        start, end = (2 if left else 0), width - (2 if right else 0)
        parts = [Strip([Segment("← ", heading)], 2)] if left else []
        parts.append(strip.crop(start, end))
        if right:
            parts.append(Strip([Segment(" →", heading)], 2))
        return Strip.join(parts).apply_style(heading)
