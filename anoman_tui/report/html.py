"""The comparison as one self-contained HTML page: inline CSS, no scripts, no network.

Every byte that came from a model or a user (answers, reasoning, prompts, model names,
failure messages, `_anoman` fields) is escaped: plain strings with `html_page.escape`, the
answers by markdown-it with raw HTML disabled (an answer's `<script>` is shown as
text). Links in answers stay links (`rel="noopener noreferrer nofollow"`) when
markdown-it's link check accepts their URL, which refuses `javascript:`, `vbscript:`,
`file:` and `data:`; images are not rendered (an image would be fetched from the
network when the page opens), their Markdown shows as a link instead. The page is
`html_page`'s shell (every HTML report's): its Content-Security-Policy meta tag forbids
scripts and every fetch as a second fence.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

# Pygments ships no type hints (and its stub package is not a dependency).
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.report import facts
from anoman_tui.report.html_page import COLOURS, escape, html_page

# Pygments colours about 0.5 MB of code a second: one block bigger than the first limit,
# or any code once a page has coloured the second, is shown plain (still escaped), so
# that a 3 x 100,000-token comparison exports within 2 s (benchmarks/export_report.py).
_HIGHLIGHT_LIMIT = 20_000
_HIGHLIGHT_BUDGET = 400_000
_budget: ContextVar[int] = ContextVar("highlight_budget", default=_HIGHLIGHT_BUDGET)


@lru_cache(maxsize=1)
def _formatter() -> Any:
    return HtmlFormatter(nowrap=True, classprefix="hl-", style="github-dark")


@lru_cache(maxsize=64)
def _lexer(name: str) -> Any:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _highlight(code: str, lang: str, _attrs: Any) -> str:
    name = lang.split()[0].lower() if lang.strip() else ""
    left = _budget.get()
    if not name or len(code) > min(_HIGHLIGHT_LIMIT, left):
        return ""  # markdown-it escapes the code itself
    lexer = _lexer(name)
    if lexer is None:
        return ""
    _budget.set(left - len(code))
    return str(highlight(code, lexer, _formatter()))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])  # GitHub-style Markdown that models write
    md.disable("image")

    def render_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
        return str(self.renderToken(tokens, idx, options, env))

    md.add_render_rule("link_open", render_link)
    return md


def render_markdown(text: str) -> str:
    """Model Markdown as HTML: raw HTML escaped, unsafe links left as text, code highlighted."""
    return str(_markdown().render(text))


def _badges(pane: PaneRecord) -> str:
    return "".join(
        f'<span class="badge {b.severity}">{escape(b.text)}</span>' for b in facts.badges(pane)
    )


def sparkline(pane: PaneRecord, width: int = 240, height: int = 36) -> str:
    """The token-rate series as an inline SVG: one bar per 250 ms cell, scaled to its peak."""
    series = facts.finite_series(pane)
    if not series:
        return '<div class="spark empty">no token-rate series</div>'
    peak = max(series) or 1.0
    bar = width / len(series)
    rects = []
    for i, value in enumerate(series):
        h = max(0.0, value / peak * (height - 2))
        if h > 0:
            rects.append(f'<rect x="{i * bar:.2f}" y="{height - h:.2f}" '
                         f'width="{max(bar - 0.5, 0.5):.2f}" height="{h:.2f}"/>')
    label = f"tokens/s over time, peak {peak:.0f}"
    return (f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{escape(label)}">'
            f'<title>{escape(label)}</title>'
            f'<g fill="{COLOURS["primary"]}">{"".join(rects)}</g></svg>'
            f'<span class="spark-peak">peak {peak:.0f} tok/s</span>')


def _metrics_table(record: ComparisonRecord) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in facts.METRICS_HEADERS)
    rows = []
    for pane in record.panes:
        cells = facts.row_cells(facts.metrics_row(pane))
        status_class = {"completed": "success", "failed": "error",
                        "cancelled": "muted"}.get(pane.status, "")
        # Figures stay on one line; words (model, routing, guardrails) may wrap.
        tds = [f'<td class="fig">{escape(c)}</td>' if i in (0, 3, 4, 5, 6, 7) else
               f"<td>{escape(c)}</td>" for i, c in enumerate(cells)]
        tds[2] = f'<td class="{status_class}">{escape(cells[2])}</td>'
        rows.append(f"<tr>{''.join(tds)}</tr>")
    return (f'<div class="table-wrap"><table class="metrics"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _earlier_turns(turns: tuple[tuple[str, str], ...]) -> str:
    """A pane's own earlier turns: each prompt as written, each answer as Markdown."""
    if not turns:
        return ""
    shown = []
    for role, content in turns:
        if role == "assistant":
            shown.append(f'<div class="earlier-answer">{render_markdown(content)}</div>')
        else:
            shown.append(_quote("You" if role == "user" else role, content))
    count = sum(role == "user" for role, _ in turns)
    label = f"Earlier turns ({count})"
    return (f'<details class="earlier" open><summary>{escape(label)}</summary>'
            f"{''.join(shown)}</details>")


def _pane(pane: PaneRecord, turns: tuple[tuple[str, str], ...] = ()) -> str:
    parts = [
        f'<section class="pane {escape(pane.status)}">',
        f'<header><h2><span class="num">{pane.pane}</span> {escape(pane.model)}'
        + (f' <span class="simulated">{facts.SIMULATED}</span>' if pane.simulated else "")
        + "</h2>",
        f'<div class="badges">{_badges(pane)}</div>',
        f'<div class="figures">TTFT {escape(facts.metrics_row(pane).ttft)} · '
        f"{escape(facts.rate_text(pane))} tok/s · {escape(facts.tokens_text(pane))} tokens · "
        f"{escape(pane.cost_text or facts.DASH)}</div>",
        f'<div class="sparkwrap">{sparkline(pane)}</div></header>',
    ]
    parts.append(_earlier_turns(turns))
    if pane.reasoning.strip():
        parts.append('<details class="reasoning"><summary>Reasoning</summary>'
                     f"{render_markdown(pane.reasoning)}</details>")
    body_class = "answer" if pane.committed else "answer partial"
    if not pane.committed:
        parts.append('<p class="partial-note">Partial text, <strong>not committed</strong>:</p>')
    body = render_markdown(pane.text) if pane.text.strip() else '<p class="none">(no text)</p>'
    parts.append(f'<div class="{body_class}">{body}</div>')
    if facts.cut_at_max_tokens(pane):
        parts.append('<p class="cut-note">✂ The answer stopped at the max tokens limit.</p>')
    parts.append("</section>")
    return "".join(parts)


def _quote(label: str, text: str) -> str:
    return (f'<div class="quote"><div class="label">{escape(label)}</div>'
            f"<pre>{escape(text)}</pre></div>")


def _css() -> str:
    c = COLOURS
    code = _formatter().get_style_defs(".code")
    return f"""
body {{ line-height: 1.55; }}
.meta {{ margin-bottom: 18px; }}
.quote {{ background: {c['surface']}; border-left: 3px solid {c['accent']};
  padding: 8px 14px; margin: 0 0 14px; border-radius: 4px; }}
.quote .label {{ color: {c['accent']}; font-weight: 600; font-size: 13px; }}
.quote pre {{ white-space: pre-wrap; word-break: break-word; margin: 4px 0 0;
  font: inherit; }}
.table-wrap {{ margin: 0 0 20px; }}
table.metrics {{ border-collapse: collapse; font-size: 13px; width: 100%; }}
.metrics th, .metrics td {{ border: 1px solid {c['panel']}; padding: 5px 8px;
  text-align: left; vertical-align: top; }}
.metrics th {{ background: {c['panel']}; color: {c['primary']}; white-space: nowrap; }}
.metrics td.fig {{ white-space: nowrap; }}
.metrics td.success {{ color: {c['success']}; }}
.metrics td.error {{ color: {c['error']}; }}
.metrics td.muted {{ color: {c['muted']}; }}
.panes {{ display: grid; gap: 16px;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 340px), 1fr)); }}
.pane {{ background: {c['surface']}; border: 1px solid {c['panel']}; border-radius: 6px;
  padding: 12px 16px; min-width: 0; }}
.pane.failed {{ border-color: {c['error']}; }}
.pane.cancelled {{ border-color: {c['muted']}; }}
.pane h2 {{ font-size: 16px; margin: 0 0 6px; word-break: break-all; }}
.pane h2 .num {{ color: {c['accent']}; margin-right: 4px; }}
.pane h2 .simulated {{ font-size: 12px; font-weight: 600; color: {c['warning']};
  border: 1px solid currentColor; border-radius: 10px; padding: 1px 8px; }}
.simulated-note {{ margin: 0 0 14px; }}
.badges {{ display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 6px; }}
.badge {{ font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 10px;
  border: 1px solid currentColor; }}
.badge.error {{ color: {c['error']}; }} .badge.warning {{ color: {c['warning']}; }}
.badge.muted {{ color: {c['muted']}; }} .badge.success {{ color: {c['success']}; }}
.badge.info {{ color: {c['info']}; }}
.figures {{ color: {c['muted']}; font-size: 13px; }}
.sparkwrap {{ display: flex; align-items: end; gap: 8px; margin: 6px 0 10px;
  padding-bottom: 8px; border-bottom: 1px solid {c['panel']}; }}
.spark {{ background: {c['background']}; border-radius: 3px; }}
.spark-peak, .spark.empty {{ color: {c['muted']}; font-size: 12px; }}
.reasoning {{ color: {c['muted']}; border-left: 2px solid {c['secondary']};
  padding-left: 10px; margin-bottom: 10px; }}
.reasoning summary {{ cursor: pointer; color: {c['secondary']}; }}
.earlier {{ margin-bottom: 10px; padding-bottom: 8px;
  border-bottom: 1px solid {c['panel']}; }}
.earlier summary {{ cursor: pointer; color: {c['accent']}; }}
.earlier .quote {{ margin: 8px 0 4px; }}
.earlier-answer {{ color: {c['muted']}; overflow-wrap: anywhere; }}
.partial-note {{ color: {c['warning']}; margin: 0 0 4px; }}
.answer.partial {{ opacity: 0.75; border-left: 2px dashed {c['warning']}; padding-left: 10px; }}
.cut-note {{ color: {c['warning']}; font-weight: 600; }}
.answer, .reasoning {{ overflow-wrap: anywhere; }}
.answer h1, .answer h2, .answer h3 {{ font-size: 1.1em; color: {c['primary']}; }}
a {{ color: {c['primary']}; }}
code {{ background: {c['panel']}; padding: 1px 4px; border-radius: 3px;
  font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }}
pre {{ background: {c['background']}; padding: 10px 12px; border-radius: 4px;
  overflow-x: auto; }}
pre code {{ background: none; padding: 0; display: block; }}
blockquote {{ border-left: 3px solid {c['panel']}; margin: 0; padding-left: 12px;
  color: {c['muted']}; }}
.answer table {{ border-collapse: collapse; }}
.answer th, .answer td {{ border: 1px solid {c['panel']}; padding: 3px 6px; }}
{code}
.code {{ background: transparent; }}
footer {{ margin-top: 20px; }}
"""


def _code_class(rendered: str) -> str:
    # Pygments' token classes are scoped by `.code`: every fenced block gets it.
    return rendered.replace("<pre><code", '<pre class="code"><code')


def to_html(record: ComparisonRecord) -> str:
    models = ", ".join(facts.model_name(p) for p in record.panes) or "no models"
    title = "Comparison" + (f" #{record.id}" if record.id is not None else "")
    head = [f"<h1>{escape(title)}</h1>",
            f'<div class="meta">{escape(facts.created_iso(record))} · {escape(models)}</div>']
    note = facts.simulated_note(record)
    if note is not None:
        head.append(f'<p class="simulated-note">{escape(note)}</p>')
    if record.system_prompt.strip():
        head.append(_quote("System prompt", record.system_prompt))
    head.append(_quote("Prompt", record.prompt))
    token = _budget.set(_HIGHLIGHT_BUDGET)
    try:
        # Each pane with its own earlier turns: each model answered them its own way.
        panes = "".join(_pane(p, facts.conversation(record, p)) for p in record.panes)
    finally:
        _budget.reset(token)
    body = (f"{''.join(head)}{_metrics_table(record)}"
            f'<main class="panes">{_code_class(panes)}</main>'
            "<footer>Exported by anoman-tui. Answers are shown as the models wrote them;"
            " links in answers go to the sites they name.</footer>")
    return html_page(title=f"{title} · {models}", css=_css(), body=body)
