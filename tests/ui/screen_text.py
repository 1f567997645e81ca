"""The screen as lines of text, read from Textual's public screenshot (an SVG).

Rich writes one `<text>` element per run of same-styled, non-blank characters, at
x = column × cell width, clipped to its line: placing each run at its column rebuilds
what the terminal shows, row by row.
"""

from __future__ import annotations

import html
import re

from textual.app import App

_RUN = re.compile(
    r'<text class="[^"]*" x="(?P<x>[\d.]+)" y="[\d.]+" textLength="(?P<length>[\d.]+)" '
    r'clip-path="url\(#[\w-]*-line-(?P<line>\d+)\)">(?P<body>[^<]*)</text>'
)


def screen_lines(app: App[object]) -> list[str]:
    """Each row of the screen as the terminal shows it, trailing blanks stripped."""
    return svg_lines(app.export_screenshot(), app.size)


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
