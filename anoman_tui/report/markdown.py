"""The comparison as one Markdown document: prompt, metrics table, each answer under its model.

Model text is Markdown already and goes in as the model wrote it, with two repairs so
that one answer can never reshape the document around it:

- a block left open at the end of an answer (a ``` or ~~~ fence, or a raw HTML block
  such as `<pre>` or `<!--` that only its closing tag ends) is closed, so it cannot
  swallow the next pane's section;
- headings in an answer (ATX `#`) are demoted by two levels, so an answer's `# Title`
  sits below its pane's `## 1 · model` heading and the document outline stays one
  section per pane (a `#` inside a fence is code and is left alone).

The prompt, system prompt and reasoning go in as quoted blocks: a blockquote closes
everything opened inside it when it ends, so they need no repair.
"""

from __future__ import annotations

import re

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.report import facts

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
# HTML blocks that a blank line does not end (CommonMark's kinds 1-5), with their end.
_HTML_BLOCKS = (
    (re.compile(r"^ {0,3}<(?:script|pre|style|textarea)(?:[\s>]|$)", re.I),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I), "</pre>"),
    (re.compile(r"^ {0,3}<!--"), re.compile(r"-->"), "-->"),
    (re.compile(r"^ {0,3}<\?"), re.compile(r"\?>"), "?>"),
    (re.compile(r"^ {0,3}<![A-Za-z]"), re.compile(r">"), ">"),
    (re.compile(r"^ {0,3}<!\[CDATA\["), re.compile(r"\]\]>"), "]]>"),
)
_HEADING_SHIFT = 2
# What could start markup on one line of prose (links, emphasis, code, HTML, a cell's end).
_PUNCTUATION = re.compile(r"([\\`*_\[\]<>#|])")


def _closing_tag(line: str) -> str:
    match = re.match(r"^ {0,3}<(script|pre|style|textarea)", line, re.I)
    return f"</{match.group(1).lower()}>" if match else "</pre>"


def contained_markdown(text: str) -> str:
    """Model Markdown that ends with every block closed and headings below level 2."""
    out: list[str] = []
    fence: str | None = None  # the opening run of ` or ~ while inside a fenced block
    html_end: re.Pattern[str] | None = None
    html_closer = ""
    for line in text.split("\n"):
        if fence is not None:
            stripped = line.lstrip(" ")
            if (len(line) - len(stripped) <= 3 and stripped.startswith(fence[0] * len(fence))
                    and stripped.rstrip(" \t").strip(fence[0]) == ""):
                fence = None
            out.append(line)
            continue
        if html_end is not None:
            if html_end.search(line):
                html_end = None
            out.append(line)
            continue
        opened = _FENCE_OPEN.match(line)
        # A backtick fence's info string may not contain a backtick (CommonMark §4.5).
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = opened.group(1)
            out.append(line)
            continue
        for start, end, closer in _HTML_BLOCKS:
            began = start.match(line)
            if began:
                if not end.search(line, began.end()):
                    html_end = end
                    html_closer = _closing_tag(line) if closer == "</pre>" else closer
                break
        heading = _ATX.match(line)
        if heading and html_end is None:
            level = min(6, len(heading.group(2)) + _HEADING_SHIFT)
            line = heading.group(1) + "#" * level + line[heading.end():]
        out.append(line)
    if fence is not None:
        out.append(fence)
    if html_end is not None:
        out.append(html_closer)
    return "\n".join(out)


def quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def cell(text: str) -> str:
    """A table cell: a `|` would end the cell and a newline the row; HTML shows as text."""
    return _inline(text) or facts.DASH


def metrics_table(record: ComparisonRecord) -> str:
    rows = [
        "| " + " | ".join(facts.METRICS_HEADERS) + " |",
        "|" + "|".join("---:" if h in ("#", "TTFT", "tokens/s") else "---"
                       for h in facts.METRICS_HEADERS) + "|",
    ]
    for pane in record.panes:
        cells = facts.row_cells(facts.metrics_row(pane))
        rows.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(rows)


def _inline(text: str) -> str:
    """Text on one line of prose: no line breaks, Markdown punctuation escaped."""
    text = " ".join(text.split())
    return _PUNCTUATION.sub(r"\\\1", text)


def _earlier_turns(turns: tuple[tuple[str, str], ...]) -> str:
    return "**Conversation so far**\n\n" + "\n>\n".join(
        # Turns share one quote: a fence left open in one would hold the next.
        quoted(f"**{_inline(role)}**:\n\n{contained_markdown(content.strip())}")
        for role, content in turns
    )


def _pane_section(pane: PaneRecord, turns: tuple[tuple[str, str], ...] = ()) -> str:
    parts = [f"## {pane.pane} · {_inline(facts.model_name(pane))}"]
    if turns:
        parts.append(_earlier_turns(turns))
    notes = []
    if pane.status in ("failed", "cancelled"):
        notes.append(f"**{_inline(facts.outcome_text(pane))}**")
    if facts.cut_at_max_tokens(pane):
        notes.append("**CUT at max tokens**: the answer stopped at the token limit"
                     f" ({_inline(str(pane.finish_reason))})")
    if not pane.committed:
        notes.append("The text below is partial and **not committed**.")
    if notes:
        parts.append("\n\n".join(notes))
    if pane.reasoning.strip():
        parts.append("> **Reasoning**\n>\n" + quoted(contained_markdown(pane.reasoning.strip())))
    text = pane.text.strip("\n")
    if text.strip():
        if pane.reasoning.strip():
            parts.append("**Answer**")
        parts.append(contained_markdown(text))
    else:
        parts.append("*(no text)*")
    if not pane.committed and text.strip():
        parts.append("*(end of the partial, not committed text)*")
    return "\n\n".join(parts)


def to_markdown(record: ComparisonRecord) -> str:
    models = ", ".join(facts.model_name(p) for p in record.panes) or "no models"
    title = "# Comparison" + (f" #{record.id}" if record.id is not None else "")
    parts = [title, f"*{facts.created_iso(record)} · {_inline(models)}*"]
    note = facts.simulated_note(record)
    if note is not None:
        parts.append(f"> **{_inline(note)}**")
    if record.system_prompt.strip():
        parts.append("**System prompt**\n\n" + quoted(record.system_prompt.strip("\n")))
    parts.append("**Prompt**\n\n" + quoted(record.prompt.strip("\n") or facts.DASH))
    parts.append("## Metrics\n\n" + metrics_table(record))
    # Each pane with its own earlier turns: each model answered them its own way.
    parts.extend(_pane_section(p, facts.conversation(record, p)) for p in record.panes)
    return "\n\n".join(parts) + "\n"
