"""The screen as lines of text, as Textual's public screenshot (an SVG) shows it.

Rich writes one `<text>` element per run of same-styled, non-blank characters, at
x = column × cell width, clipped to its line: placing each run at its column rebuilds
what the terminal shows, row by row (`svg_lines`). `screen_lines` places the same runs
straight from the segments the screenshot is drawn from, without writing and parsing
the SVG (a sixth of the time: tests poll it while they wait for a line).
"""

from __future__ import annotations

import html
import io
import re

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from textual.app import App

_RUN = re.compile(
    r'<text class="[^"]*" x="(?P<x>[\d.]+)" y="[\d.]+" textLength="(?P<length>[\d.]+)" '
    r'clip-path="url\(#[\w-]*-line-(?P<line>\d+)\)">(?P<body>[^<]*)</text>'
)


def screen_lines(app: App[object]) -> list[str]:
    """Each row of the screen as the terminal shows it, trailing blanks stripped: what
    `svg_lines(app.export_screenshot(), app.size)` reads, from the same segments."""
    width, height = app.size
    # As `App.export_screenshot` renders the screen (its console and its update).
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", legacy_windows=False, safe_box=False)
    update = app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens)
    segments = Segment.filter_control(console.render(update))
    rows = [[" "] * width for _ in range(height)]
    for y, line in enumerate(Segment.split_and_crop_lines(segments, length=width)):
        if y >= height:
            break
        column = 0
        for text, _style, _control in line:
            # As Rich's SVG export: a run drawn at its first cell, a character a cell.
            if text != " " * len(text):
                for offset, char in enumerate(text.replace("\xa0", " ")):
                    if 0 <= column + offset < width:
                        rows[y][column + offset] = char
            column += cell_len(text)
    return ["".join(row).rstrip() for row in rows]


def svg_lines(svg: str, size: tuple[int, int]) -> list[str]:
    """Each row of a Rich/Textual SVG of a `size` (columns, rows) terminal."""
    width, height = size
    rows = [[" "] * width for _ in range(height)]
    for run in _RUN.finditer(svg):
        body = html.unescape(run["body"]).replace("\xa0", " ")
        cell = float(run["length"]) / len(body)
        column = round(float(run["x"]) / cell)
        row = rows[int(run["line"])]
        for offset, char in enumerate(body):
            if 0 <= column + offset < width:
                row[column + offset] = char
    return ["".join(row).rstrip() for row in rows]
