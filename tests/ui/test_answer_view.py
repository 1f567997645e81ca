"""AnswerView: streamed Markdown equals whole-text Markdown, hostile text stays text,
following the bottom, re-wrapping, dimming, selection, huge inputs, and a snapshot."""

from __future__ import annotations

import random
import time
from itertools import pairwise

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.geometry import Offset, Region
from textual.pilot import Pilot
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip

from anoman_tui.ui.render.markdown_blocks import BlockSplitter
from anoman_tui.ui.widgets.answer_view import AnswerView, _Gutter, _ThumbScrollBar
from anoman_tui.ui.widgets.frame_clock import FrameClock
from tests.ui.helpers import Host, drained

LONG_CODE = "".join(f"    value_{i} = compute({i})  # step {i}\n" for i in range(70))

DOC = f"""# Comparing answers

Streaming **Markdown** should look the same as the *finished* text, with `inline code`,
[links](https://example.com) and a paragraph long enough to wrap across several rows of a
narrow pane without any trouble at all.

## A list

- first item
- second item
  - nested item
- third item

1. Step one.

   Indented continuation of step one.

2. Step two.

| Model | Tokens | Cost |
|---|---:|---:|
| lite | 120 | 0.01 |
| pro | 340 | 0.20 |

```python
def answer(question: str) -> str:

    # the blank line above is inside the fence

    return question.upper()
```

> A block quote
> over two lines.

~~~~text
outer ~~~ is not a closer

still code
~~~~

```python
{LONG_CODE}```

Final paragraph after the long fence.
"""


def random_deltas(text: str, rng: random.Random) -> list[str]:
    deltas, index = [], 0
    while index < len(text):
        size = rng.choice([1, 2, 3, 5, 8, 13, 40])
        deltas.append(text[index : index + size])
        index += size
    return deltas


def visible_segments(view: AnswerView) -> list[list[Segment]]:
    return [list(view.render_line(y)) for y in range(view.scrollable_content_region.height)]


async def test_random_splits_render_like_whole_text() -> None:
    app = Host()
    async with app.run_test(size=(70, 30)) as pilot:
        view = app.query_one(AnswerView)
        view.append(DOC)
        view.finish()
        await drained(pilot, view)
        expected = view._rendered_lines()
        assert view.text == DOC
        assert "Comparing answers" in expected[0]
        for seed in range(3):
            view.clear()
            rng = random.Random(seed)
            for delta in random_deltas(DOC, rng):
                view.append(delta)
                if rng.random() < 0.08:
                    await pilot.pause(0.06)  # let flushes happen mid-stream
            view.finish()
            await drained(pilot, view)
            assert view._rendered_lines() == expected, f"seed {seed}"
            assert view.text == DOC


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DOC)), max_size=40))
def test_splitter_blocks_do_not_depend_on_delta_boundaries(cuts: list[int]) -> None:
    def blocks(deltas: list[str]) -> list[tuple[object, ...]]:
        splitter = BlockSplitter()
        found = [b for delta in deltas for b in splitter.feed(delta)] + splitter.close()
        return [(b.raw, b.prefix, b.suffix, b.joiner, b.gap, b.trim_top) for b in found]

    text = DOC + "\x1b]0;title\nstill title\x07after\n\n" + "word " * 3000
    points = sorted({0, len(text), *(c * len(text) // len(DOC) for c in cuts)})
    deltas = [text[a:b] for a, b in pairwise(points)]
    assert blocks(deltas) == blocks([text])


def test_fence_with_blank_lines_is_one_block() -> None:
    splitter = BlockSplitter()
    source = "Intro.\n\n```python\nx = 1\n\n\ny = 2\n```\n\nAfter.\n"
    found = splitter.feed(source) + splitter.close()
    assert [b.raw for b in found] == ["Intro.", "```python\nx = 1\n\n\ny = 2\n```", "After."]


def test_a_bullet_list_is_cut_at_each_item_and_draws_as_one_list() -> None:
    # Each top-level item is a block of its own (the open block, rendered again every
    # frame while it streams, is one item); the rows are those of the whole list.
    import io

    from rich.console import Console

    from anoman_tui.ui.render.markdown_render import render_block

    source = ("Intro.\n\n- first item, long enough to wrap in a narrow view\n"
              "- second `code` and **bold**\n  continued\n  - nested a\n  - nested b\n"
              "- third\n\n1. one\n2. two\n3. three\n\nAfter.\n")
    splitter = BlockSplitter()
    found = splitter.feed(source) + splitter.close()
    assert [b.raw for b in found] == [
        "Intro.", "- first item, long enough to wrap in a narrow view",
        "- second `code` and **bold**\n  continued\n  - nested a\n  - nested b",
        "- third", "1. one\n2. two\n3. three", "After.",
    ]
    assert [b.gap for b in found] == [False, True, False, False, True, True]
    console = Console(file=io.StringIO(), width=30, color_system="truecolor")

    def rows(text: str) -> list[str]:
        lines = render_block(console, text, 30, dark=True, code_theme="monokai")
        return ["".join(s.text for s in line).rstrip() for line in lines]

    pieces = [row for b in found[1:4] for row in rows(b.source)]
    whole = rows("\n".join(b.raw for b in found[1:4]))
    assert pieces == whole and len(whole) >= 6


async def test_code_fence_is_highlighted_as_code() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.append("Intro.\n\n```python\ndef f(x):\n\n    return 'text' + 1\n```\n\nAfter.")
        view.finish()
        await drained(pilot, view)
        rows = [strip.text.rstrip() for strip in map(view.render_line, range(10))]
        assert rows[:9] == [
            "Intro.",
            "",
            "",
            " def f(x):",
            "",
            "     return 'text' + 1",
            "",
            "",
            "After.",
        ]
        code_row = list(view.render_line(5))
        colors = {seg.style.color for seg in code_row if seg.style and seg.text.strip()}
        backgrounds = {seg.style.bgcolor for seg in code_row if seg.style}
        assert len(colors) >= 3, "code is syntax highlighted"
        intro_bg = {seg.style.bgcolor for seg in view.render_line(0) if seg.style}
        assert backgrounds != intro_bg, "code block has its own background"


async def test_markup_shows_literally_and_escapes_are_stripped() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(AnswerView)
        hostile = (
            "Try [bold red]this[/] and [@click=app.quit]quit[/] now\x1b[31m red\x1b[0m\n\n"
            "title\x1b]0;pwned\x07 done \x1b]52;c;Y2xpcA==\x1b\\ clip\u202e rev\x07\x08\n"
        )
        for index in range(0, len(hostile), 3):  # split escape sequences across deltas
            view.append(hostile[index : index + 3])
        await drained(pilot, view)
        lines = view._rendered_lines()
        assert lines[0] == "Try [bold red]this[/] and [@click=app.quit]quit[/] now red"
        assert lines[2] == "title done  clip rev"
        for strip in map(view.render_line, range(3)):
            for text, style, _ in strip:
                assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in text)
                assert "@click" not in (style.meta if style else {})
        assert "\x1b" not in view.text and "\u202e" not in view.text
        view.finish()
        await drained(pilot, view)
        assert view._rendered_lines()[0].startswith("Try [bold red]this[/]")


async def test_follows_bottom_until_scrolled_up() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(AnswerView)
        for index in range(40):
            view.append(f"line {index}\n\n")
        await drained(pilot, view)
        assert view.max_scroll_y > 0
        assert view.scroll_offset.y == view.max_scroll_y
        view.scroll_to(y=0, animate=False)
        await pilot.pause()
        view.append("more text\n\nand more\n\n")
        await drained(pilot, view)
        assert view.scroll_offset.y == 0, "scrolled up: no following"
        view.scroll_end(animate=False)
        await pilot.pause()
        for index in range(10):
            view.append(f"again {index}\n\n")
        await drained(pilot, view)
        assert view.scroll_offset.y == view.max_scroll_y, "back at the bottom: following"
        assert view.render_line(view.scrollable_content_region.height - 1).text.startswith(
            "again 9"
        )


async def test_resize_rewraps() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.append(" ".join(f"word{i}" for i in range(300)) + "\n\n" + DOC)
        view.finish()
        await drained(pilot, view)
        width = view.scrollable_content_region.width
        before = view._rendered_lines()
        assert max(map(len, before)) <= width
        await pilot.resize_terminal(35, 20)
        await pilot.pause()
        await drained(pilot, view)
        narrow = view.scrollable_content_region.width
        assert narrow < width
        after = view._rendered_lines()
        assert max(map(len, after)) <= narrow
        assert len(after) > len(before)
        assert view.virtual_size.height == len(after)
        assert view.scroll_offset.y == view.max_scroll_y  # still following
        assert " ".join(after).split()[:3] == ["word0", "word1", "word2"]

        # Not following: the block at the top of the view stays at the top.
        view.scroll_to(y=len(after) // 2, animate=False)
        await pilot.pause()
        top_text = view.render_line(0).text.strip()
        assert top_text
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        wide = view._rendered_lines()
        assert max(map(len, wide)) <= width
        top_row = view.render_line(0).text.strip()
        assert top_row and top_row.split()[0] in " ".join(after[len(after) // 2 - 3 :])
        assert view.scroll_offset.y < view.max_scroll_y


async def test_dimmed_draws_dim() -> None:
    app = Host()
    async with app.run_test(size=(50, 8)) as pilot:
        view = app.query_one(AnswerView)
        view.append("Partial **answer** from a failed stream")
        await drained(pilot, view)
        normal = app.export_screenshot()
        view.dimmed = True
        await pilot.pause()
        assert view.has_class("-dimmed")
        assert view.styles.text_opacity < 1
        assert app.export_screenshot() != normal
        view.dimmed = False
        await pilot.pause()
        assert app.export_screenshot() == normal


async def test_a_block_that_closes_keeps_its_unchanged_rows() -> None:
    """Rows of the open block that closing it does not change stay the same objects, so
    the screen draws them from its row cache instead of painting them again."""
    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(AnswerView)
        words = " ".join(f"word{i}" for i in range(24))
        view.append(words)  # one open paragraph over several rows
        await drained(pilot, view)
        open_rows = [view._row(y) for y in range(view._total_rows())]
        assert len(open_rows) >= 3 and all(row is not None for row in open_rows)
        view.append(" and the end.\n\nNext paragraph.")  # closes it, longer
        await drained(pilot, view)
        closed = [view._row(y) for y in range(len(open_rows))]
        assert closed[-1] != open_rows[-1]  # the last row changed
        for before, after in zip(open_rows[:-1], closed[:-1], strict=True):
            assert after is before


async def test_an_ancestors_new_style_reaches_the_rows() -> None:
    """The view keeps its style between flushes; a style change of a container around
    it (a pane's status class) still draws its rows in the new colours, at once."""
    from textual.containers import Vertical

    class Boxed(App[None]):
        CSS = "Vertical { background: #102030; } Vertical.-hot { background: #a02010; }"

        def compose(self) -> ComposeResult:
            with Vertical():
                yield AnswerView()

    app = Boxed()
    async with app.run_test(size=(40, 6)) as pilot:
        view = app.query_one(AnswerView)
        view.append("Some text")
        await drained(pilot, view)

        def row_background() -> object:
            return view._paint_line(0)._segments[0].style.bgcolor

        before, shot = row_background(), app.export_screenshot()
        app.query_one(Vertical).add_class("-hot")
        await pilot.pause()
        assert row_background() != before
        assert row_background() == view.rich_style.bgcolor
        assert app.export_screenshot() != shot  # drawn, not only computed
        view.append(" and more")  # a flush after the change draws in it too
        await drained(pilot, view)
        assert view._paint_line(0).text.startswith("Some text and more")
        assert row_background() == view.rich_style.bgcolor


async def test_huge_inputs_complete_in_bounded_time() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(AnswerView)
        started = time.monotonic()
        view.append("word " * 400_000 + "END")  # one 2 MB delta, no newline
        view.finish()
        await drained(pilot, view, timeout=20)
        assert time.monotonic() - started < 10
        assert (
            view.render_line(view.scrollable_content_region.height - 1)
            .text.rstrip()
            .endswith("END")
        )

        view.clear()
        started = time.monotonic()
        view.append("".join(f"line {i}\n\n" for i in range(100_000)))
        await pilot.pause(0.06)
        view.finish()
        await drained(pilot, view, timeout=30)
        assert time.monotonic() - started < 15
        last = view.scrollable_content_region.height - 1
        assert view.render_line(last).text.strip() == "line 99999"

        started = time.monotonic()
        await pilot.resize_terminal(50, 24)  # re-wrap 100k blocks lazily
        await pilot.pause()
        assert time.monotonic() - started < 3
        assert view.render_line(last).text.strip() == "line 99999"
        view.scroll_to(y=view.max_scroll_y // 2, animate=False)
        await pilot.pause()
        assert view.render_line(0).text.strip().startswith(("line", ""))


async def test_clear() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(AnswerView)
        view.append("# Title\n\nbody")
        await drained(pilot, view)
        assert view.virtual_size.height > 0
        view.clear()
        await pilot.pause()
        assert view.text == ""
        assert view.virtual_size.height == 0
        assert view.render_line(0).text.strip() == ""
        view.append("again")
        view.finish()
        await drained(pilot, view)
        assert view._rendered_lines() == ["again"]


async def test_selection_copies_source_of_whole_blocks() -> None:
    app = Host()
    async with app.run_test(size=(40, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.append("Para **one**.\n\n```python\nx = 1\n\ny = 2\n```\n\nLast para here")
        view.finish()
        await drained(pilot, view)
        rows = view._rendered_lines()
        assert rows[0] == "Para one." and rows[8] == "Last para here"
        selection = Selection(Offset(0, 0), Offset(4, 8))
        app.screen.selections = {view: selection}
        await pilot.pause()
        assert app.screen.get_selected_text() == (
            "Para **one**.\n\n```python\nx = 1\n\ny = 2\n```\n\nLast"
        )
        selected = [seg for seg in view.render_line(0) if seg.text.strip()]
        unselected = [seg for seg in view.render_line(8) if seg.text.strip()][-1]
        assert selected[0].style != unselected.style  # highlighted
        # A partial block copies its rendered text.
        app.screen.selections = {view: Selection(Offset(5, 0), Offset(8, 0))}
        assert app.screen.get_selected_text() == "one"
        app.screen.clear_selection()


async def test_mouse_drag_selects() -> None:
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(AnswerView)
        view.append("alpha beta gamma\n\ndelta epsilon")
        view.finish()
        await drained(pilot, view)
        await pilot.mouse_down(view, offset=(6, 0))
        await pilot.hover(view, offset=(5, 2))
        await pilot.mouse_up(view, offset=(5, 2))
        await pilot.pause()
        assert app.screen.get_selected_text() in ("beta gamma\n\ndelta", "beta gamma\n\ndelta ")


async def test_flushed_is_opt_in_and_idle_costs_nothing() -> None:
    class Recorder(Host):
        def __init__(self, **options: bool) -> None:
            super().__init__(**options)
            self.flushed: list[float] = []

        def on_answer_view_flushed(self, message: AnswerView.Flushed) -> None:
            self.flushed.append(message.appended_at_latest)

    for report in (False, True):
        app = Recorder(report_flushes=report)
        async with app.run_test(size=(40, 10)) as pilot:
            view = app.query_one(AnswerView)
            before = time.monotonic()
            view.append("hello ")
            view.append("world")
            await drained(pilot, view)
            await pilot.pause(0.05)
            if report:
                assert app.flushed and before <= app.flushed[-1] <= time.monotonic()
            else:
                assert app.flushed == []
            assert not view._scheduled
            assert FrameClock.of(app)._timer is None  # no timer left running when idle


def test_snapshot_finished_answer(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        view = pilot.app.query_one(AnswerView)
        view.append(DOC.split("~~~~text")[0] + "Done.")
        view.finish()
        await drained(pilot, view)
        view.scroll_home(animate=False)
        await pilot.pause()

    assert snap_compare(Host(), terminal_size=(70, 44), run_before=run_before)


async def test_unknown_code_language_is_plain_text_without_plugin_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pygments.lexers

    def no_plugins() -> list[object]:
        raise AssertionError("looked up plugin lexers (imports arbitrary packages)")

    # pygments.lexers replaces itself in sys.modules; patch the functions' real globals.
    lookup_globals = pygments.lexers.get_lexer_by_name.__globals__
    monkeypatch.setitem(lookup_globals, "find_plugin_lexers", no_plugins)
    app = Host()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(AnswerView)
        for delta in ["```py", "th", "on-but-not\nx = 1\n```\n\n```Python\ny = 2\n```"]:
            view.append(delta)
            await pilot.pause(0.06)  # the fragments "```py", "```pyth" render while streaming
        view.finish()
        await drained(pilot, view)
        assert [row for row in view._rendered_lines() if row.strip()] == [" x = 1", " y = 2"]


async def test_the_scrollbar_draws_its_kept_rows_as_textual_draws_them() -> None:
    app = Host()
    async with app.run_test(size=(40, 17)) as pilot:
        view = app.query_one(AnswerView)
        view.styles.overflow_y = "scroll"  # as the panes' answers: the bar is always there
        view.append("a short answer\n\n")
        await drained(pilot, view)
        bar = view.vertical_scrollbar
        assert isinstance(bar, _ThumbScrollBar)
        region = Region(0, 0, *bar.size)
        assert isinstance(bar.render(), _Gutter)  # nothing to scroll yet: an empty gutter
        gutter = bar.render_lines(region)
        bar._rows = None
        bar.refresh()
        assert gutter == ScrollBar.render_lines(bar, region)
        view.append("".join(f"line {index}\n\n" for index in range(60)))
        await drained(pilot, view)
        assert bar.window_virtual_size > bar.window_size
        seen: set[tuple[Segment, ...]] = set()
        for hovered in (False, True):
            bar.mouse_over = hovered
            for y in (0, 3, 17, 40, 41, 42, 80, view.max_scroll_y):
                view.scroll_to(y=y, animate=False, immediate=True)
                await pilot.pause()
                kept = bar.render_lines(region)
                bar._rows = None
                bar.refresh()
                drawn = ScrollBar.render_lines(bar, region)  # Textual's own, every row
                assert kept == drawn, (hovered, y)
                seen.update(tuple(strip) for strip in kept)
        assert 4 < len(seen) < 40  # rows were kept and reused, thumb ends included


_ITEM_TEXTS = st.sampled_from([
    "**Install** the package with `pip` and check that it starts",
    "short", "a longer step that wraps across the narrow width of a pane, twice over",
    "*emphasis* and a [link](https://example.com)", "x",
])
_ITEM_EXTRAS = st.sampled_from([
    "", "", "", "", "", "   continued on an indented line",
    "   - a nested bullet\n   - and another", "   1. nested number",
])
_AFTER_LIST = st.sampled_from([
    "", "", "continued lazily", "# A heading", "| a | b |\n|---|---|\n| 1 | 2 |", "> a quote",
    "10. not the next number",
])


@st.composite
def numbered_lists(draw: st.DrawFn) -> str:
    start = draw(st.sampled_from([1, 1, 1, 0, 2, 5, 7, 8, 9, 10, 98]))
    delimiter = draw(st.sampled_from([".", ".", ")"]))
    lines = []
    for index in range(draw(st.integers(min_value=1, max_value=8))):
        number = start + index + (1 if draw(st.integers(0, 30)) == 0 else 0)  # rarely skips
        lines.append(f"{number}{delimiter} {draw(_ITEM_TEXTS)}")
        extra = draw(_ITEM_EXTRAS)
        if extra:
            lines.append(extra)
        if draw(st.integers(0, 20)) == 0:
            lines.append(draw(st.sampled_from(["", "lazy", "# Heading"])))  # loose, or not
    after = draw(_AFTER_LIST)
    if after:
        lines.append(after)
    return "\n".join(lines)


@settings(max_examples=300, deadline=None)
@given(numbered_lists(), st.integers(min_value=12, max_value=60))
@example("1. one\n# Heading\n2. two", 30)  # a block between items: not item by item
@example("8. eight\n9. nine", 30)  # Rich pads to the width of 10
@example("5. five\n6. six\n8. eight\n9. nine\n10. ten", 12)  # 8. is the list's 7th item
def test_a_numbered_list_drawn_item_by_item_draws_as_the_whole_list(
    source: str, width: int
) -> None:
    import io

    from rich.console import Console

    from anoman_tui.ui.render.markdown_blocks import ordered_items
    from anoman_tui.ui.render.markdown_render import render_block

    console = Console(file=io.StringIO(), width=width, color_system="truecolor")

    def rows(text: str) -> list[list[Segment]]:
        return render_block(console, text, width, dark=True, code_theme="monokai")

    lines = source.split("\n")
    starts = ordered_items(lines)
    if starts is None:
        return
    edges = [*starts, len(lines)]
    pieces = [row for a, b in pairwise(edges) for row in rows("\n".join(lines[a:b]))]
    assert pieces == rows(source)


async def test_an_open_numbered_list_draws_each_finished_item_once() -> None:
    from anoman_tui.ui.render.markdown_render import render_block

    app = Host()
    async with app.run_test(size=(40, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.append("1. **First** step, long enough to wrap in this view\n2. Second")
        await drained(pilot, view)
        first_rows = list(view._tail[:2])
        view.append(" step\n3. Third")
        await drained(pilot, view)
        source = view._splitter.open_raw()
        whole = [Strip(line) for line in render_block(
            app.console, source, view._width, dark=app.current_theme.dark,
            code_theme=AnswerView.CODE_THEME)]
        assert view._tail == whole
        assert view._tail[0] is first_rows[0] and view._tail[1] is first_rows[1]


async def test_a_revealed_turn_stays_at_its_prompt_as_the_view_shrinks() -> None:
    # A turn that ends exactly filling the view is shown at the bottom, still followed;
    # the view then shrinks a row (as a pane's footer grows with the turn's figures):
    # the turn is re-read from its prompt, at the same offset, so no scroll event says it
    # is no longer at the bottom. The view still thought it followed the end, and the
    # next layout (a redraw, a flush) scrolled it there, past the prompt (seen at 80x30).
    app = Host()
    async with app.run_test(size=(60, 40)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("first question")
        view.append("".join(f"first answer line {i}\n\n" for i in range(30)))
        view.end_turn()
        await drained(pilot, view)
        view.begin_turn("second question")
        view.append("".join(f"second answer line {i}\n\n" for i in range(6)))
        view.end_turn()
        await drained(pilot, view)
        lines = view._rendered_lines()
        top = lines.index("▌ second question") - 1
        assert lines[top] == "▌ You"
        rows = len(lines) - top  # the turn, from its prompt to its end
        assert rows < view.scrollable_content_region.height
        await pilot.resize_terminal(60, rows)  # the turn fills the view exactly
        await drained(pilot, view)
        assert view.scrollable_content_region.height == rows
        assert round(view.scroll_y) == top == view.max_scroll_y
        await pilot.resize_terminal(60, rows - 1)  # a row less: it no longer fits
        await drained(pilot, view)
        assert view.max_scroll_y == top + 1
        assert round(view.scroll_y) == top, "reads from its prompt"
        # Drawn again (another theme): the prompt stays at the top.
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await drained(pilot, view)
        assert round(view.scroll_y) == top, "still at its prompt"
        assert view.render_line(0).text.rstrip() == "▌ You"
