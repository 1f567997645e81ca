"""A code fence block rendered line by line, its highlighting carried on as it grows.

While a fence streams in, its block is rendered again every frame (profiled: the dearest
block per frame, 1.4-1.9 ms a render at 3 x 100 tok/s). Through Rich's `Markdown` most of
that is neither the highlighting nor the wrapping: it is parsing the block, and every
segment passing up through Markdown's, Syntax's and Padding's generators. A block that is
exactly one fence (the common case: the splitter cuts blocks at blank lines outside
fences) is rendered here instead, as Rich renders it (`Syntax(word_wrap=True,
padding=1)`, tests/ui/test_markdown_render.py compares the two cell for cell):

* each line's rows are rendered once and kept (they depend only on the line's tokens, the
  width, the theme and the console's settings);
* Pygments lexes only from a recent line start: a `RegexLexer`'s state when a match
  starts at the beginning of a line is recorded, and a grown fence (the old code a prefix
  of the new) is lexed again from the start of its second-to-last old line (the last old
  line may have been partial, and a match may look one line ahead). Other lexers (JSON,
  YAML, C...) lex the whole fence each time.

May import: the standard library, `rich` and `pygments` (Rich's dependency). Never
Textual (tests/ui/test_answer_modules.py checks).
"""

from __future__ import annotations

import importlib
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar

from rich.console import Console, ConsoleOptions
from rich.control import strip_control_codes
from rich.padding import Padding
from rich.segment import Segment, Segments
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Span, Text

__all__ = ["FenceLexer", "PerConsole", "fence_rows", "single_fence"]

K = TypeVar("K")
V = TypeVar("V")

_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


def single_fence(text: str) -> tuple[str, str] | None:
    """(info string, code) when `text` is one fenced code block and nothing else.

    As markdown-it reads it (its `fence` rule): the opener at the first column, the code
    up to a closing line of the same character at least as long (indented at most three
    spaces) or to the end; only blank lines may follow. Anything else (an indented fence,
    text around it, characters markdown-it would normalise) is None: the caller renders
    it through Rich's Markdown.
    """
    opener = _OPEN.match(text)
    if opener is None or "\r" in text or "\0" in text:
        return None
    marker, info = opener.group(1), opener.group(2)
    if marker[0] == "`" and "`" in info:
        return None  # not a fence (CommonMark: no backtick in a backtick fence's info)
    body = text[opener.end() + 1 :]
    if not body:
        return info, ""
    lines = body.split("\n")
    for index, line in enumerate(lines):
        closer = _CLOSE.fullmatch(line)
        if closer is not None and closer.group(1)[0] == marker[0] and (
            len(closer.group(1)) >= len(marker)
        ):
            if any(rest.strip() for rest in lines[index + 1 :]):
                return None
            return info, "\n".join(lines[:index])
    return info, body


_Line = tuple[tuple[str, Any], ...]  # one line's (text, Pygments token type) pieces


@dataclass(slots=True)
class _Lexed:
    lexer: Any
    code: str
    lines: list[_Line]
    starts: list[int]  # offset of each line in `code + "\n"`
    states: list[tuple[str, ...] | None]  # the state a match began in at each line start


# Via importlib: Pygments ships no type stubs.
_pygments_lexer = importlib.import_module("pygments.lexer")
_pygments_token = importlib.import_module("pygments.token")


def _is_plain_regex_lexer(lexer: Any) -> bool:
    regex_lexer = _pygments_lexer.RegexLexer
    return (
        isinstance(lexer, regex_lexer)
        and type(lexer).get_tokens_unprocessed is regex_lexer.get_tokens_unprocessed
        and not lexer.filters
    )


class FenceLexer:
    """Pygments tokens per line of a fence, lexing a grown fence only from near its end."""

    KEEP: ClassVar[int] = 16  # recent fences kept (three panes, each maybe two)

    def __init__(self) -> None:
        self._recent: list[_Lexed] = []
        self._plain: dict[int, bool] = {}

    def lines(self, lexer: Any, code: str) -> list[_Line]:
        """The (text, token type) pieces of each line of `code` (tabs expanded), as
        `lexer.get_tokens()` yields them for what Rich's `Syntax` lexes: `code` and a
        newline."""
        key = id(lexer)
        plain = self._plain.get(key)
        if plain is None:
            plain = self._plain[key] = _is_plain_regex_lexer(lexer)
        if not plain or code.startswith("\ufeff"):
            return _split_lines(lexer.get_tokens(code + "\n"), code.count("\n") + 1)
        base: _Lexed | None = None
        for entry in self._recent:
            if entry.lexer is lexer and code.startswith(entry.code) and (
                base is None or len(entry.code) > len(base.code)
            ):
                base = entry
        lexed = self._lex(lexer, code, base)
        if base is not None:
            self._recent.remove(base)
        self._recent.append(lexed)
        if len(self._recent) > self.KEEP:
            del self._recent[0]
        return lexed.lines

    @staticmethod
    def _lex(lexer: Any, code: str, base: _Lexed | None) -> _Lexed:
        text = code + "\n"
        resume = 0
        if base is not None:
            # The start of the old second-to-last line, or an earlier line where a match
            # began; lines before it are the same text, lexed the same.
            resume = max(0, len(base.starts) - 2)
            while resume > 0 and base.states[resume] is None:
                resume -= 1
        if resume > 0 and base is not None:
            starts = base.starts[:resume]
            position = base.starts[resume]
            stack: tuple[str, ...] = base.states[resume] or ("root",)
            lines = base.lines[:resume]
            states = base.states[:resume]
        else:
            starts, position, stack, lines, states = [], 0, ("root",), [], []
        find = text.find
        line_start = position
        while line_start < len(text):
            starts.append(line_start)
            line_start = find("\n", line_start) + 1
            if line_start == 0:
                break
        first = len(states)
        states.extend([None] * (len(starts) - first))
        tokens = _regex_tokens(lexer, text, position, stack, starts, first, states)
        lines.extend(_split_lines(tokens, len(starts) - first))
        return _Lexed(lexer, code, lines, starts, states)


def _regex_tokens(
    lexer: Any,
    text: str,
    pos: int,
    stack: tuple[str, ...],
    starts: list[int],
    line: int,
    states: list[tuple[str, ...] | None],
) -> Iterator[tuple[Any, str]]:
    """`RegexLexer.get_tokens_unprocessed` (Pygments 2.20.0, pinned; BSD licence) from
    `pos` in state `stack`, recording in `states` the state in which a match begins at
    each line start from `starts[line]` on. Matching from `pos` in the whole `text` (not
    a slice) keeps lookbehinds and `\\A` as they are in a full lex."""
    token_type = _pygments_lexer._TokenType
    whitespace, error = _pygments_token.Whitespace, _pygments_token.Error
    tokendefs = lexer._tokens
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    count = len(starts)
    next_start = starts[line] if line < count else -1
    while 1:
        while next_start != -1 and next_start < pos:
            line += 1
            next_start = starts[line] if line < count else -1
        if next_start == pos:
            states[line] = tuple(statestack)
            line += 1
            next_start = starts[line] if line < count else -1
        for rexmatch, action, new_state in statetokens:
            m = rexmatch(text, pos)
            if m:
                if action is not None:
                    if type(action) is token_type:
                        yield action, m.group()
                    else:
                        for _, kind, value in action(lexer, m):
                            yield kind, value
                pos = m.end()
                if new_state is not None:
                    if isinstance(new_state, tuple):
                        for state in new_state:
                            if state == "#pop":
                                if len(statestack) > 1:
                                    statestack.pop()
                            elif state == "#push":
                                statestack.append(statestack[-1])
                            else:
                                statestack.append(state)
                    elif isinstance(new_state, int):
                        if abs(new_state) >= len(statestack):
                            del statestack[1:]
                        else:
                            del statestack[new_state:]
                    elif new_state == "#push":
                        statestack.append(statestack[-1])
                    else:
                        raise AssertionError(f"wrong state def: {new_state!r}")
                    statetokens = tokendefs[statestack[-1]]
                break
        else:
            try:
                if text[pos] == "\n":
                    statestack = ["root"]
                    statetokens = tokendefs["root"]
                    yield whitespace, "\n"
                    pos += 1
                    continue
                yield error, text[pos]
                pos += 1
            except IndexError:
                break


def _split_lines(tokens: Any, count: int) -> list[_Line]:
    """`count` lines of (text, token type) pieces from a token stream ending in a newline."""
    lines: list[_Line] = []
    current: list[tuple[str, Any]] = []
    for kind, value in tokens:
        if "\n" not in value:
            if value:
                current.append((value, kind))
            continue
        first, *rest = value.split("\n")
        if first:
            current.append((first, kind))
        for piece in rest:
            lines.append(tuple(current))
            current = [(piece, kind)] if piece else []
    if current:
        lines.append(tuple(current))
    return lines[:count]


class PerConsole(Generic[K, V]):
    """A dict of kept values for each console (held weakly: a console may go away),
    emptied when it holds more than `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: weakref.WeakKeyDictionary[Console, dict[K, V]] = weakref.WeakKeyDictionary()

    def of(self, console: Console) -> dict[K, V]:
        kept = self._kept.get(console)
        if kept is None or len(kept) > self.limit:
            kept = self._kept[console] = {}
        return kept


_ROWS: PerConsole[tuple[object, ...], list[list[Segment]]] = PerConsole(4_096)  # fence lines
_LEXER = FenceLexer()


@cache
def _base_style(theme: SyntaxTheme) -> Style:
    return Syntax("", "text", theme=theme, padding=1)._get_base_style()


def fence_rows(
    console: Console, options: ConsoleOptions, code: str, lexer: Any, theme: SyntaxTheme
) -> list[list[Segment]]:
    """The rows of `Syntax(code, lexer, theme=theme, word_wrap=True, padding=1)` rendered
    by `console.render_lines(syntax, options, pad=False)`, `code` having no trailing
    whitespace (as Rich's CodeBlock gives it)."""
    width = options.max_width
    base_style = _base_style(theme)
    transparent = base_style.transparent_background
    justify = "default" if transparent else "left"
    background_style = Style.null() if transparent else base_style
    code_width = max(0, width - 2)
    line_options = options.update(width=code_width).update(height=None, justify="left")
    kept = _ROWS.of(console)
    context = (width, id(theme), base_style, options.ascii_only, options.encoding,
               options.legacy_windows)
    style_for = theme.get_style_for_token
    blank = [Segment(" " * width, base_style)]
    rows: list[list[Segment]] = [blank]
    if "\t" in code:
        code = code.expandtabs(4)  # as Syntax(tab_size=4)
    for line in _LEXER.lines(lexer, code):
        key = (line, context)
        line_rows = kept.get(key)
        if line_rows is None:
            plain = strip_control_codes("".join(piece for piece, _ in line))
            text = Text(plain, style=base_style, justify=justify)  # type: ignore[arg-type]
            offset = 0
            for piece, kind in line:
                size = len(strip_control_codes(piece))
                style = style_for(kind)
                if style and size:
                    text.spans.append(Span(offset, offset + size, style))
                offset += size
            inner = console.render_lines(
                text, line_options, style=background_style, pad=not transparent
            )
            segments = [segment for row in inner for segment in (*row, Segment.line())]
            line_rows = kept[key] = console.render_lines(
                Padding(Segments(segments), style=base_style, pad=(0, 1, 0, 1)),
                options, pad=False,
            )
        rows.extend(line_rows)
    rows.append(blank)
    return rows
