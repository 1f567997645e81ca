"""The one shell of every HTML report: the comparison's (`report.html`) and a suite
run's (`report.suite_html`) are each `html_page(title=..., css=..., body=...)`.

Every page is self-contained and inert: UTF-8, a Content-Security-Policy meta tag that
forbids scripts and every fetch (a second fence behind the escaping), no referrer, a
viewport for phones, inline CSS on one palette (the app's dark theme, anoman-dark) with
the rules both reports share, and each page's own rules after them. Every string from a
model, a user, a suite or a server goes through `escape` (HTML text and attribute
values alike, inside SVG too: the page is parsed as HTML).

May import: the standard library only.
"""

from __future__ import annotations

import html

# The app's dark theme (anoman-dark).
COLOURS = {
    "primary": "#5EA1FF", "secondary": "#9D8CFF", "accent": "#FFB86B",
    "foreground": "#E6EAF2", "background": "#0F1420", "surface": "#161C2B",
    "panel": "#1E2638", "success": "#5FD38D", "warning": "#F5C451", "error": "#FF6B6B",
    "muted": "#9AA4B8", "info": "#5EA1FF",
}
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
       "form-action 'none'; base-uri 'none'")


def escape(text: object) -> str:
    """`text` as HTML text or an attribute's value: nothing in it is markup."""
    return html.escape(str(text), quote=True)


def _base_css() -> str:
    c = COLOURS
    return f"""
:root {{ color-scheme: dark; }}
* {{ box-sizing: border-box; }}
body {{ margin: 0; padding: 24px; background: {c['background']}; color: {c['foreground']};
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }}
h1 {{ font-size: 22px; margin: 0 0 4px; color: {c['primary']}; overflow-wrap: anywhere; }}
.meta {{ color: {c['muted']}; overflow-wrap: anywhere; }}
.simulated-note {{ color: {c['warning']}; border: 1px solid {c['warning']};
  border-radius: 4px; padding: 6px 12px; }}
.table-wrap {{ overflow-x: auto; }}
.none {{ color: {c['muted']}; font-style: italic; }}
footer {{ color: {c['muted']}; font-size: 12px; }}
"""


def html_page(*, title: str, css: str, body: str) -> str:
    """The whole page: the shell around `body` (HTML, already escaped), titled `title`
    (plain text: escaped here), styled by the shared rules and then the page's `css`."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_base_css()}{css}</style></head>"
        f"<body>{body}</body></html>\n"
    )
