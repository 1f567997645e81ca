"""Reports of a comparison: Markdown, HTML and JSON, as pure functions of a `ComparisonRecord`.

Everything a report holds came from a model or a user: escaping for the format lives
here, and no key is ever written (a record holds none).

    export(record, "md" | "html" | "json") -> str

May import: the standard library, `anoman_tui.history`, Rich's and Pygments'
renderers and markdown-it. Never Textual.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord

Format = Literal["md", "html", "json"]
FORMATS: tuple[Format, ...] = ("md", "html", "json")


def export(record: ComparisonRecord, fmt: Format) -> str:
    """The record as a document of `fmt`; an unknown format is a ValueError naming them."""
    if fmt == "md":
        from anoman_tui.report.markdown import to_markdown

        return to_markdown(record)
    if fmt == "html":
        from anoman_tui.report.html import to_html

        return to_html(record)
    if fmt == "json":
        from anoman_tui.report.json_report import to_json

        return json.dumps(to_json(record), ensure_ascii=False, indent=2) + "\n"
    raise ValueError(f"unknown report format {fmt!r}; one of: {', '.join(FORMATS)}")


def __getattr__(name: str) -> Any:
    # The exporters load when first used: the compare screen imports a module of this
    # package (rerun.py) on its way to the first paint, and markdown-it, Pygments' HTML
    # formatter and the rest are not needed then (-25 ms of start-up, benchmarks/startup.py).
    if name == "to_html":
        from anoman_tui.report.html import to_html

        return to_html
    if name == "to_json":
        from anoman_tui.report.json_report import to_json

        return to_json
    if name == "to_markdown":
        from anoman_tui.report.markdown import to_markdown

        return to_markdown
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FORMATS", "Format", "export", "to_html", "to_json", "to_markdown"]
