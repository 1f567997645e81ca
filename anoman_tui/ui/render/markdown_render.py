"""Rendering one Markdown block with Rich, for the answer view.

`render_block()` turns a block's source (see `anoman_tui.ui.render.markdown_blocks`) into Rich
lines of `Segment`s at a given width; `AnswerView` wraps them in Textual `Strip`s and
caches them. What it adds to Rich's `Markdown`:

* model output is never markup: it only goes through Markdown parsing, links are shown
  as text (no hyperlinks), control sequences are removed again (`terminal_safe`) and
  tabs are expanded;
* code fences use only Pygments' built-in lexers (unknown languages render as plain
  text: Pygments would import plugin packages to look them up), with lexers, themes and
  the Markdown parser built once and shared;
* a light-theme palette for Markdown elements (Rich's defaults are made for dark
  terminals);
* `warm_up()`: the one-time set-up of a first render, done off the UI thread.

May import: the standard library, `rich` (and its `markdown_it` and `pygments`
dependencies), `anoman_tui.streaming.safe_text` and the other `anoman_tui.ui.render`
modules. Never Textual
(tests/ui/test_answer_modules.py checks).
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Iterable
from functools import cache
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text
from rich.theme import Theme

from anoman_tui.streaming.safe_text import terminal_safe
from anoman_tui.ui.render.code_themes import CODE_THEME, LIGHT_CODE_THEME
from anoman_tui.ui.render.fence_render import PerConsole, fence_rows, single_fence

__all__ = ["WARM_LANGUAGES", "render_block", "render_note", "render_prompt", "warm_up"]


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
        return cls(_lexer_name(token.info), markdown.code_theme)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # As CodeBlock, with the lexer and theme looked up once: Rich looks both up per
        # render (measured ~0.5 ms of a 1.2 ms five-line fence, re-rendered every flush
        # while the fence is open).
        code = str(self.text).rstrip()
        yield _LineCachedSyntax(
            code,
            _lexer(self.lexer_name),
            theme=_syntax_theme(self.theme),
            word_wrap=True,
            padding=1,
        )


class _LineCachedSyntax(Syntax):
    """Rich's `Syntax` as a code fence uses it, rendering each highlighted line only once.

    While a fence streams in, its block is rendered again every frame: every line
    highlighted (Pygments) and then wrapped and styled line by line (Rich), although
    only the last line changed. The second part, about half of a fence's cost (profiled:
    2.3 ms for a ten-line Python fence), is kept here per line: a line's rows depend
    only on its text and styles, the width and the background, and a console's settings.
    Highlighting still runs over the whole fence, so a line is styled in its context.
    """

    _rows: ClassVar[PerConsole[tuple[object, ...], Any]] = PerConsole(4_096)  # lines

    def _get_syntax(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        # Syntax._get_syntax (Rich 15.0.0) on the one path a fence takes: word_wrap, no
        # line numbers, no line range, no indent guides
        # (tests/ui/test_markdown_render.py checks the output is Rich's own).
        if self.line_numbers or self.line_range or self.indent_guides or not self.word_wrap:
            yield from super()._get_syntax(console, options)
            return
        base_style = self._get_base_style()
        transparent = base_style.transparent_background
        _, pad_right, _, pad_left = self.padding
        code_width = max(0, options.max_width - pad_left - pad_right)
        ends_on_nl, processed_code = self._process_code(self.code)
        text = self.highlight(processed_code, self.line_range)
        background_style = Style.null() if transparent else base_style
        line_options = options.update(width=code_width).update(height=None, justify="left")
        kept = self._rows.of(console)
        context = (code_width, background_style, transparent, options.ascii_only,
                   options.encoding, options.legacy_windows)
        new_line = Segment("\n")
        for line in text.split("\n", allow_blank=ends_on_nl):
            key = (line.plain, tuple(line.spans), line.style, context)
            rows = kept.get(key)
            if rows is None:
                rows = kept[key] = console.render_lines(
                    line, line_options, style=background_style, pad=not transparent
                )
            for row in rows:
                yield from row
                yield new_line


def _lexer_name(info: str | None) -> str:
    """The built-in lexer a fence's info string names, or "text"."""
    name = (info or "").partition(" ")[0].lower()
    return name if name in _builtin_lexers() else "text"


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


_OPTIONS: PerConsole[int, ConsoleOptions] = PerConsole(64)


def _options(console: Console, width: int) -> ConsoleOptions:
    """`console.options.update_width(width)`, made once per console and width.

    `Console.options` asks for the terminal's size each time (profiled: 7% of a block's
    render); a block only depends on the width it is given and on the console's
    encoding and settings, which stay as they are. (Renderables copy options to change
    them, never change them in place.)
    """
    kept = _OPTIONS.of(console)
    options = kept.get(width)
    if options is None:
        options = kept[width] = console.options.update_width(width)
    return options


def _is_blank(line: list[Segment]) -> bool:
    return all(
        not text.strip() and (style is None or style.bgcolor is None) for text, style, _ in line
    )




def render_block(
    console: Console,
    source: str,
    width: int,
    *,
    dark: bool,
    code_theme: str,
    trim_top: bool = False,
    trim_bottom: bool = False,
    dim: bool = False,
) -> list[list[Segment]]:
    """The rows of one block of Markdown `source` rendered `width` cells wide.

    `dark`: the app theme is dark (else the light Markdown palette is used);
    `trim_top` / `trim_bottom`: drop the first / last row (code padding shared with the
    piece of a cut block above / below); `dim`: draw it dimmed (a turn not committed).
    """
    text = terminal_safe(source)
    if "\t" in text:
        text = text.expandtabs(4)  # a raw tab would move the terminal cursor
    options = _options(console, width)
    fence = single_fence(text)
    if fence is not None:
        # Most fence blocks: rendered as Rich's Markdown would, without it (fence_render).
        info, code = fence
        lines = fence_rows(console, options.update(height=None), code.rstrip(),
                           _lexer(_lexer_name(info)), _syntax_theme(code_theme))
    elif dark:
        markdown = _Markdown(text, code_theme=code_theme)
        lines = console.render_lines(markdown, options, pad=False)
    else:
        markdown = _Markdown(text, code_theme=code_theme)
        # Rich's Markdown defaults (inline code on black) are made for dark terminals.
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
    if dim:
        return [list(Segment.apply_style(line, post_style=_DIM)) for line in lines[start:end]]
    return lines[start:end]


_DIM = Style(dim=True)
PROMPT_BAR = "▌ "
# (bar, background) of a prompt: a tinted band with a bar, distinct from answers.
_PROMPT_STYLES = {
    True: (Style(color="#6cb6ff", bold=True), Style(bgcolor="#1e2a38")),
    False: (Style(color="#0b5cad", bold=True), Style(bgcolor="#e4edf7")),
}
_NOTE_STYLES = {
    (True, True): Style(color="#ff7b72", italic=True),
    (True, False): Style(color="#e3b341", italic=True),
    (False, True): Style(color="#b3261e", italic=True),
    (False, False): Style(color="#8a5a00", italic=True),
}


def render_prompt(
    console: Console, text: str, width: int, *, dark: bool, header: bool
) -> list[list[Segment]]:
    """The rows of (a piece of) a turn's prompt: plain text on a tinted band with a bar.

    `header`: start with a "You" row (the first piece). The text is a Rich `Text`, so it
    is never read as markup; control sequences are removed again (`terminal_safe`).
    """
    bar_style, band = _PROMPT_STYLES[dark]
    clean = terminal_safe(text).expandtabs(4)
    inner = max(1, width - len(PROMPT_BAR))
    body = Text(clean, no_wrap=False, overflow="fold", end="")
    rows = list(body.wrap(console, inner, overflow="fold"))
    if header:
        rows.insert(0, Text("You", style="bold", end=""))
    lines: list[list[Segment]] = []
    for row in rows:
        segments = [Segment(PROMPT_BAR, band + bar_style)]
        used = len(PROMPT_BAR)
        for segment in row.render(console, end=""):
            segments.append(Segment(segment.text, band + segment.style
                                    if segment.style else band))
            used += segment.cell_length
        if used < width:
            segments.append(Segment(" " * (width - used), band))
        lines.append(segments)
    return lines


def render_note(
    console: Console, text: str, width: int, *, dark: bool, error: bool
) -> list[list[Segment]]:
    """The rows of a marker under a turn (how it ended): plain text, never markup."""
    body = Text(terminal_safe(text), end="")
    style = _NOTE_STYLES[dark, error]
    return [list(Segment.apply_style(row.render(console, end=""), style))
            for row in body.wrap(console, max(1, width), overflow="fold")]


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
    for code_theme in (CODE_THEME, LIGHT_CODE_THEME):
        markdown = _Markdown(_WARM_SAMPLE + fences, code_theme=code_theme)
        console.render_lines(markdown, console.options, pad=False)
