"""Code fences render exactly as Rich renders them, line cache or not."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.syntax import Syntax

from anoman_tui.ui.markdown_render import (
    CODE_THEME,
    LIGHT_CODE_THEME,
    _lexer,
    _LineCachedSyntax,
    _syntax_theme,
    render_block,
)

SAMPLES = {
    "python": ('def f(x, y=3):\n    """Doc\n    string."""\n'
               "    return [x * y for _ in range(9)]  # note\n"),
    "json": '{"a": [1, 2, {"b": null}], "long": "' + "word " * 30 + '"}',
    "bash": "for f in *.txt; do\n\techo \"$f\" | tr a-z A-Z   \ndone\n\n\n",
    "rust": "fn main() {\n    let s = \"日本語のテキスト\"; // wide characters wrap by cell\n}",
    "text": "",
    "sql": "SELECT *\nFROM t\nWHERE x = 'unterminated",
}


def rows(syntax: Syntax, width: int) -> list[list[object]]:
    console = Console(file=io.StringIO(), width=200, color_system="truecolor")
    return [list(line) for line in console.render_lines(
        syntax, console.options.update_width(width), pad=False)]


@pytest.mark.parametrize("language", sorted(SAMPLES))
@pytest.mark.parametrize("theme", [CODE_THEME, LIGHT_CODE_THEME])
def test_a_fence_renders_as_rich_renders_it(language: str, theme: str) -> None:
    code = SAMPLES[language]
    for width in (12, 30, 58, 120):
        def make(cls: type[Syntax], source: str = code) -> Syntax:
            return cls(source, _lexer(language), theme=_syntax_theme(theme),
                       word_wrap=True, padding=1)

        want = rows(make(Syntax), width)
        assert rows(make(_LineCachedSyntax), width) == want  # lines rendered now
        assert rows(make(_LineCachedSyntax), width) == want  # lines kept from before
        # A growing fence: every prefix, as it streams in.
        for end in range(0, len(code), 7):
            prefix = code[:end]
            assert rows(make(_LineCachedSyntax, prefix), width) == rows(
                make(Syntax, prefix), width), (language, width, end)


def test_a_streaming_fence_renders_each_line_once() -> None:
    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    code = "".join(f"value_{n} = compute({n}, 'text')  # step {n}\n" for n in range(20))
    rendered: list[object] = []
    original = console.render_lines

    def counting(renderable: object, *args: object, **kwargs: object) -> object:
        rendered.append(renderable)
        return original(renderable, *args, **kwargs)  # type: ignore[arg-type]

    console.render_lines = counting  # type: ignore[method-assign]
    for end in range(10, len(code), 10):
        render_block(console, "```python\n" + code[:end], 60, dark=True, code_theme=CODE_THEME)
    lines = [r for r in rendered if type(r).__name__ == "Text"]
    # Each of the 20 lines is rendered while it grows (a new partial line every ~10
    # characters) and once complete; never again for every later frame.
    assert len(lines) < 2 * len(code) / 10, len(lines)
