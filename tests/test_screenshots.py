"""The screenshot script runs headless and writes self-contained SVGs (no web font, borders
drawn as shapes), each showing what it is meant to show."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

from tests.ui.screen_text import svg_lines

SCRIPT = Path(__file__).resolve().parents[1] / "screenshots" / "make_screenshots.py"


@functools.cache  # loaded once: each svg's text is read with its SIZE
def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shown_text(svg: str) -> str:
    return "\n".join(svg_lines(svg, _script().SIZE))


@pytest.mark.long(30)
async def test_the_script_writes_self_contained_screenshots(tmp_path: Path) -> None:
    script = _script()
    written = await script.make(tmp_path, time_scale=0.05)
    assert [p.name for p in written] == list(script.NAMES)
    svgs = {p.name: p.read_text(encoding="utf-8") for p in written}
    for name, svg in svgs.items():
        assert "@font-face" not in svg and "url(\"http" not in svg, name
        assert "Fira Code" not in svg and '"DejaVu Sans Mono"' in svg, name
        text = _shown_text(svg)
        # box drawing and block characters are shapes, not glyphs of whatever font is found
        assert not set(text) & set("─│╭╮╰╯━┃╸╺▔▁▊▎▏█"), name
        assert svg.count("<rect") > 200, name
    assert "How should I size a Postgres connection pool?" in _shown_text(svgs["idle.svg"])
    blocked = _shown_text(svgs["guardrail-block.svg"])
    # each of the three panes: the badge, and the note on the turn in the conversation
    assert blocked.count("BLOCKED by the injection guardrail") == 6
    assert blocked.count("Ignore all previous instructions") == 3  # the prompt, in each pane
    mixed = _shown_text(svgs["mixed-outcomes.svg"])
    assert "STREAM INTERRUPTED" in mixed
    diff = _shown_text(svgs["diff.svg"])
    assert "Diff against pane 1" in diff and "{+" in diff and "[-" in diff
    arena = _shown_text(svgs["arena.svg"])
    assert "vote:" in arena and "blind" in arena
    assert not any(m in arena for m in ("claude-sonnet-4-6", "anoman-lite", "deepseek-r1"))
    assert "rating" in _shown_text(svgs["scoreboard.svg"])
    history = _shown_text(svgs["history.svg"])
    assert "3 comparisons" in history and "How should I size a Postgres" in history


def test_a_text_run_keeps_its_letters_and_loses_its_box_glyphs() -> None:
    script = _script()
    run = ('<text class="t-r1" x="0" y="20" textLength="61" '
           'clip-path="url(#t-line-0)">│&#160;a&lt;b│</text>')
    svg = "<style>.t-r1 { fill: #112233 }\n@font-face { src: url(\"https://x/f.woff2\") }</style>"
    out = script.self_contained(svg + run)
    assert "@font-face" not in out and "https" not in out
    assert '<text class="t-r1" x="12.20" y="20" textLength="48.80" clip-path="url(#t-line-0)">'\
           "&#160;a&lt;b</text>" in out
    assert out.count('fill="#112233"') == 4  # two arms (up, down) for each of the two bars
