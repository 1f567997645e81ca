"""Reports of a comparison: Markdown, HTML and JSON, as pure functions of a `ComparisonRecord`.

Everything a report holds came from a model or a user: escaping for the format lives
here, and no key is ever written (a record holds none).

    export(record, "md" | "html" | "json") -> str

May import: the standard library, `anoman_tui.history`, Rich's and Pygments'
renderers and markdown-it. Never Textual.
"""

from __future__ import annotations

import json
from typing import Literal

from anoman_tui.history import ComparisonRecord
from anoman_tui.report.html import to_html
from anoman_tui.report.json_report import to_json
from anoman_tui.report.markdown import to_markdown

Format = Literal["md", "html", "json"]
FORMATS: tuple[Format, ...] = ("md", "html", "json")


def export(record: ComparisonRecord, fmt: Format) -> str:
    """The record as a document of `fmt`; an unknown format is a ValueError naming them."""
    if fmt == "md":
        return to_markdown(record)
    if fmt == "html":
        return to_html(record)
    if fmt == "json":
        return json.dumps(to_json(record), ensure_ascii=False, indent=2) + "\n"
    raise ValueError(f"unknown report format {fmt!r}; one of: {', '.join(FORMATS)}")


__all__ = ["FORMATS", "Format", "export", "to_html", "to_json", "to_markdown"]
