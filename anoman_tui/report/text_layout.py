"""Laying out a report's text for a width, without a terminal renderer.

A suite run's summary, the list of runs and `runs diff` are written as lines (`Span`:
text with the style a terminal may colour it in) and tables (`Grid`) onto a `Sink`.
`PlainSink` writes them as plain text to any file (a pipe, a CI log, a test's buffer);
`report.suite_terminal.RichSink` draws the same on a terminal with Rich, in colour. The
plain text is what Rich prints off a terminal, to the character (a test renders both):
lines wrapped between words at the width (a word longer than a line folded, never
cut), trailing spaces dropped; a table at its natural width with Rich's heavy-headed
box, its title over it, padded to the table's width.

May import: the standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import IO, Literal, Protocol


@dataclass(frozen=True, slots=True)
class Span:
    """A line's text (one line, folded already) and its terminal style (`"red"`, `""`)."""

    text: str
    style: str = ""


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    justify: Literal["left", "right"] = "left"
    overflow: Literal["wrap", "no_wrap", "fold"] = "wrap"
    """How a terminal too narrow for the table treats the cells (never met when it fits)."""


@dataclass(frozen=True, slots=True)
class Grid:
    """A table: its title, columns and rows of cells."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Span, ...], ...]


class Sink(Protocol):
    """Where a report's lines and tables go, at `width` columns."""

    @property
    def width(self) -> int: ...

    def line(self, span: Span | str, indent: int = 0) -> None:
        """`span` wrapped at the width, its lines indented by `indent`."""

    def grid(self, grid: Grid) -> None:
        """The table at its natural width (call only when it `fits`)."""

    def fits(self, grid: Grid) -> bool:
        """The table at its natural width fits the width: nothing would be squeezed."""


def char_width(char: str) -> int:
    """Columns a terminal gives `char`: 0 for a combining mark or a control, 2 for a
    wide (East Asian wide or full-width) character, else 1."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Cc", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cell_len(text: str) -> int:
    """Columns `text` takes on a terminal."""
    return len(text) if text.isascii() and text.isprintable() else \
        sum(char_width(c) for c in text)


_WORD = re.compile(r"\s*\S+\s*")


def _chop(word: str, width: int) -> list[str]:
    """`word` in pieces of at most `width` columns."""
    pieces: list[str] = []
    piece, size = "", 0
    for char in word:
        w = char_width(char)
        if size + w > width:  # (a character wider than a whole line: after an empty piece)
            pieces.append(piece)
            piece, size = "", 0
        piece += char
        size += w
    if size:
        pieces.append(piece)
    return pieces


def _breaks(text: str, width: int) -> list[int]:
    """Where a line of `text` breaks to fit `width` columns: before a word that does
    not fit what is left of the line, and inside a word longer than a whole line."""
    breaks: list[int] = []
    offset = 0
    for match in _WORD.finditer(text):
        start, word = match.start(), match.group(0)
        size = cell_len(word.rstrip())
        if width - offset >= size:
            offset += cell_len(word)
        elif size > width:
            pieces = _chop(word, width)
            for i, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if i == len(pieces) - 1:
                    offset = cell_len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = cell_len(word)
    return breaks


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken between words, each without
    its trailing spaces."""
    width = max(1, width)
    lines: list[str] = []
    for line in text.split("\n"):
        cuts = [0, *_breaks(line, width), len(line)]
        for a, b in pairwise(cuts):
            lines.append(_crop(line[a:b].rstrip(), width))
    return lines


def _crop(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    out, size = "", 0
    for char in text:
        size += char_width(char)
        if size > width:
            break
        out += char
    return out


def column_widths(grid: Grid) -> list[int]:
    """Each column's natural width, its padding (a space each side) included."""
    return [2 + max([cell_len(c.header), *(cell_len(row[i].text) for row in grid.rows)])
            for i, c in enumerate(grid.columns)]


def natural_width(grid: Grid) -> int:
    widths = column_widths(grid)
    return sum(widths) + len(widths) + 1


def _cell(text: str, width: int, justify: str) -> str:
    text = text.rstrip()  # (as Rich justifies a cell: its measure kept trailing spaces)
    room = width - 2 - cell_len(text)
    return " " + (text + " " * room if justify == "left" else " " * room + text) + " "


def grid_lines(grid: Grid) -> list[str]:
    """The table as Rich draws it off a terminal at its natural width: the title (wrapped
    and padded to the table's width), a heavy-headed box, the header, the rows."""
    widths = column_widths(grid)
    total = sum(widths) + len(widths) + 1
    lines = [title + " " * (total - cell_len(title)) for title in wrap(grid.title, total)] \
        if grid.title else []
    lines.append("┏" + "┳".join("━" * w for w in widths) + "┓")
    lines.append("┃" + "┃".join(_cell(c.header, w, c.justify)
                                for c, w in zip(grid.columns, widths, strict=True)) + "┃")
    lines.append("┡" + "╇".join("━" * w for w in widths) + "┩")
    for row in grid.rows:
        lines.append("│" + "│".join(_cell(s.text, w, c.justify) for s, c, w in
                                    zip(row, grid.columns, widths, strict=True)) + "│")
    lines.append("└" + "┴".join("─" * w for w in widths) + "┘")
    return lines


class PlainSink:
    """Lines and tables as plain text into `file`, laid out for `width` columns."""

    def __init__(self, file: IO[str], width: int) -> None:
        self.file = file
        self._width = max(1, width)

    @property
    def width(self) -> int:
        return self._width

    def line(self, span: Span | str, indent: int = 0) -> None:
        text = span.text if isinstance(span, Span) else span
        for line in wrap(text, max(1, self._width - indent)):
            self.file.write(" " * indent + line + "\n")

    def grid(self, grid: Grid) -> None:
        self.file.write("".join(line + "\n" for line in grid_lines(grid)))

    def fits(self, grid: Grid) -> bool:
        return natural_width(grid) <= self._width


def rows(*cells: Sequence[Span | str]) -> tuple[tuple[Span, ...], ...]:
    """Rows of a `Grid`, plain strings taken as unstyled spans."""
    return tuple(tuple(c if isinstance(c, Span) else Span(c) for c in row) for row in cells)
