"""Code fences render exactly as Rich renders them: line cache, fence path or not."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.syntax import Syntax

from anoman_tui.gateway import composer
from anoman_tui.ui.render import fence_render, markdown_render
from anoman_tui.ui.render.code_themes import CODE_THEME, LIGHT_CODE_THEME
from anoman_tui.ui.render.fence_render import single_fence
from anoman_tui.ui.render.markdown_render import (
    WARM_LANGUAGES,
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


# -- a block that is one fence: rendered without Rich's Markdown (fence_render) ----------

FENCES = [
    *(fence.replace("{{", "{").replace("}}", "}")
      for fences in composer._CODE.values() for fence in fences),
    "~~~~ Rust extra\nfn main() {\n    let s = \"日本語のテキスト\"; // wide\n}\n~~~~~\n\n\n",
    "```\n```",
    "```js\n",
    "````\n```\nnot closed by a shorter marker\n````",
    "```bash\nfor f in *.txt; do\n    echo \"$f\"\ndone\n\n\n  ```  \n",
    '```json\n{"a": [1, 2, {"b": null}], "long": "' + "word " * 30 + '"}\n```',
    "```html\n<div class=\"a\">\n<script>var x = 1;\n</script>\n</div>\n```",
    "```yaml\na: 1\nb:\n  - c\n  - 'd'\n```",
    "```c\n#include <stdio.h>\nint main() { /* multi\nline */ return 0; }\n```",
    "```python\n#!/usr/bin/env python\nx = '''a\n#!b\n'''\n```",
    "```Unknown-Lang\nhello\n```",
    "``` python\nx=1\n```",
    "```python\n    indented\n\n\n\n    more\n\tand a tab\n```",
    # Not one fence: rendered through Markdown either way.
    "```py`x\nx\n```",
    "```python\nx = 1\n```\nafter",
    "   ```python\nx = 1\n```",
]


def markdown_rows(console: Console, source: str, width: int, **kwargs: object
                  ) -> list[list[Segment]]:
    """render_block through Rich's Markdown (the fence path turned off)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown_render, "single_fence", lambda text: None)
        return render_block(console, source, width, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("dark", [True, False])
def test_a_fence_block_renders_as_richs_markdown_renders_it(dark: bool) -> None:
    console = Console(file=io.StringIO(), width=200, color_system="truecolor")
    theme = CODE_THEME if dark else LIGHT_CODE_THEME
    for source in FENCES:
        for width in (12, 30, 58, 120):
            # Prefixes, as the block streams in (every character of the short ones at
            # one width).
            step = (1 if len(source) < 160 else 7) if width == 30 else 29
            for end in [*range(3, len(source), step), len(source)]:
                prefix = source[:end]
                # Every prefix untrimmed, the whole block trimmed too: `trim_top` and
                # `trim_bottom` cut the same rows after either path, so rows equal
                # untrimmed are equal trimmed (twice the Markdown renders, no more found).
                for trim in (False, True) if end == len(source) else (False,):
                    args = {"dark": dark, "code_theme": theme, "trim_top": trim,
                            "trim_bottom": trim}
                    assert render_block(console, prefix, width, **args) == markdown_rows(
                        console, prefix, width, **args), (prefix, width, trim)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("```python\nx = 1\n```", ("python", "x = 1")),
        ("```python\nx = 1", ("python", "x = 1")),
        ("```", ("", "")),
        ("~~~ a b\n```\n~~~~\n\n", (" a b", "```")),
        ("````\n```\n````", ("", "```")),
        ("```\nx\n   ```  ", ("", "x")),
        ("```\nx\n    ```", ("", "x\n    ```")),  # indented four: code, not a closer
        ("```\nx\n~~~", ("", "x\n~~~")),
        ("```\nx\n```\ny", None),
        ("```a`b\nx", None),
        (" ```\nx", None),
        ("text\n```\nx\n```", None),
        ("```\nx\r\n```", None),
    ],
)
def test_single_fence_reads_fences_as_markdown_it_does(
    text: str, want: tuple[str, str] | None
) -> None:
    assert single_fence(text) == want


PLAIN_REGEX_LANGUAGES = [name for name in WARM_LANGUAGES
                         if fence_render._is_plain_regex_lexer(_lexer(name))]


def test_most_languages_are_lexed_incrementally() -> None:
    assert {"python", "bash", "javascript", "typescript", "sql", "rust", "go", "java",
            "html", "css"} <= set(PLAIN_REGEX_LANGUAGES)


@pytest.mark.parametrize("language", WARM_LANGUAGES)
def test_a_growing_fence_is_lexed_as_a_whole_lex_would(language: str) -> None:
    sources = [fence for fence in FENCES if fence.startswith(f"```{language}\n")]
    code = "\n".join(fence.split("\n", 1)[1].rstrip("`\n").expandtabs(4)
                     for fence in sources) or (
        'x = {"a": [1, 2.5, \'s\']}  # c\n/* block\ncomment */\n<b>tag</b>\n'
        "key: value\n  - item\n"
    )
    lexer = _lexer(language)
    fences = fence_render.FenceLexer()
    for end in range(0, len(code) + 2, 2):
        prefix = code[:end].rstrip()
        whole = fence_render._split_lines(lexer.get_tokens(prefix + "\n"),
                                          prefix.count("\n") + 1)
        assert fences.lines(lexer, prefix) == whole, (language, end)


def test_a_growing_fence_is_lexed_from_near_its_end() -> None:
    lexer = _lexer("python")
    fences = fence_render.FenceLexer()
    code = "".join(f"value_{n} = compute({n}, 'text')  # step {n}\n" for n in range(40))
    lexed_from: list[int] = []
    original = fence_render._regex_tokens

    def recording(lexer: object, text: str, pos: int, *args: object) -> object:
        lexed_from.append(pos)
        return original(lexer, text, pos, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fence_render, "_regex_tokens", recording)
        for end in range(0, len(code), 10):
            fences.lines(lexer, code[:end].rstrip())
    # Each time from the start of the line before the last one lexed before.
    line = len(code) // 40
    assert lexed_from[-1] >= len(code) - 4 * line
    assert sum(lexed_from) > 0.9 * sum(range(0, len(code), 10)) - 3 * line * len(lexed_from)
