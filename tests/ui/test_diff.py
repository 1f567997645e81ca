"""Diff (F7): one pane's answer as a word diff against another's.

The diff itself is tested without Textual; choosing, showing and refreshing it on a deck
alone (tests/ui/deck_host.py) with scripted answers; the app only where the diff is
offered by what only it has (the palette).
"""

from __future__ import annotations

import random
import time

from rich.color import Color, ColorTriplet
from rich.style import Style
from textual.app import App
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.ui.render.diff import MARKER, render_diff, summary, tokenize, word_diff
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.widgets.deck import LiveSource
from anoman_tui.ui.widgets.diff_view import DiffBody
from anoman_tui.ui.widgets.pane import ComparePane, PaneHeader
from anoman_tui.ui.widgets.prompt_box import PromptBox
from tests.pilot import ready, settled, submit, until
from tests.ui.deck_host import DeckHost
from tests.ui.screen_text import screen_lines
from tests.ui.scripted import ScriptedStream, completed, text_events

# -- the diff, without Textual --------------------------------------------------------


def plain(base: str, other: str) -> str:
    return render_diff(word_diff(base, other)).plain


def test_tokens_are_words_punctuation_and_whitespace() -> None:
    text = "Don't panic:  use a pool (size 10).\nÇa marche — naïve café 東京."
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens[:5] == ["Don't", " ", "panic", ":", "  "]
    assert "naïve" in tokens and "東京" in tokens and "—" in tokens


def test_insert_delete_replace() -> None:
    diff = word_diff("a pool keeps connections", "a pool keeps warm connections")
    assert (diff.inserted_words, diff.deleted_words) == (1, 0)
    assert plain("a pool keeps connections", "a pool keeps warm connections") == (
        f"a pool keeps {MARKER}{{+warm+}} connections")

    diff = word_diff("a pool keeps warm connections", "a pool keeps connections")
    assert (diff.inserted_words, diff.deleted_words) == (0, 1)
    assert plain("a pool keeps warm connections", "a pool keeps connections") == (
        f"a pool keeps {MARKER}[-warm-] connections")

    diff = word_diff("the quick brown fox", "the quick red fox")
    assert (diff.inserted_words, diff.deleted_words) == (1, 1)
    assert plain("the quick brown fox", "the quick red fox") == (
        f"the quick {MARKER}[-brown-]{{+red+}} fox")
    assert summary(diff, 1) == (
        "Diff against pane 1: +1 word, −1 word; first difference at line 1, word 3")


def test_identical_and_spacing_only() -> None:
    same = word_diff("one two\nthree", "one two\nthree")
    assert same.identical and same.same_text and same.first_divergence is None
    assert [op.tag for op in same.ops] == ["equal"]
    assert render_diff(same).plain == "one two\nthree"
    assert summary(same, 2) == "identical to pane 2"
    spaced = word_diff("one two three", "one  two\nthree")
    assert spaced.identical and not spaced.same_text
    assert summary(spaced, 1) == "same words as pane 1; only spacing and line breaks differ"
    assert MARKER not in render_diff(spaced).plain


def test_empty_answers() -> None:
    assert word_diff("", "").identical
    diff = word_diff("", "hello there")
    assert (diff.inserted_words, diff.deleted_words) == (2, 0)
    assert plain("", "hello there") == f"{MARKER}{{+hello there+}}"
    diff = word_diff("hello there", "")
    assert (diff.inserted_words, diff.deleted_words) == (0, 2)
    assert plain("hello there", "") == f"{MARKER}[-hello there-]"


def test_unicode_words() -> None:
    diff = word_diff("Le café est fermé.", "Le café est ouvert.")
    assert plain("Le café est fermé.", "Le café est ouvert.") == (
        f"Le café est {MARKER}[-fermé-]{{+ouvert+}}.")
    assert diff.first_divergence is not None and diff.first_divergence.word == 4
    assert plain("東京 は 大きい", "東京 は 小さい").endswith("[-大きい-]{+小さい+}")


def test_first_divergence_names_line_and_word() -> None:
    base = "Intro line.\n\nSecond line has five words.\nEnd."
    other = "Intro line.\n\nSecond line has six words.\nEnd."
    diff = word_diff(base, other)
    first = diff.first_divergence
    assert first is not None
    assert (first.line, first.word) == (3, 4)  # "Second line has six": the 4th word
    assert diff.other_tokens[first.token].text == "six"
    assert "first difference at line 3, word 4" in summary(diff, 1)
    # The other answer stops early: the divergence is just after its last word.
    short = word_diff("one two three", "one two")
    assert short.first_divergence is not None
    assert (short.first_divergence.line, short.first_divergence.word) == (1, 3)
    assert render_diff(short).plain == f"one two {MARKER}[-three-]"
    # Punctuation alone.
    comma = word_diff("yes, really", "yes really")
    assert summary(comma, 1).startswith("Diff against pane 1: only punctuation differs")


def test_render_styles_only_the_changes() -> None:
    insert, delete, marker = Style(color="green"), Style(color="red"), Style(bold=True)
    text = render_diff(word_diff("keep old keep", "keep new keep"), insert, delete, marker)
    styled = {text.plain[span.start:span.end]: span.style for span in text.spans}
    assert styled == {MARKER: marker, "[-old-]": delete, "{+new+}": insert}


def _answer(words: int, seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = (["the", "a", "of", "to", "and", "pool", "connection", "request"]
                  + [f"term{i}" for i in range(1500)])
    weights = [40] * 8 + [1] * 1500
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choices(vocabulary, weights)[0])
        if len(line) >= rng.randint(6, 18):
            lines.append(" ".join(line) + ".")
            line = []
    lines.append(" ".join(line))
    return "\n".join(lines)


def test_two_long_answers_diff_quickly() -> None:
    base, other = _answer(20_000, 1), _answer(20_000, 2)
    edited = base.split(" ")
    edited[::40] = ["changed"] * len(edited[::40])
    for pair in ((base, other), (base, " ".join(edited)), (base, base)):
        started = time.perf_counter()
        diff = word_diff(*pair)
        render_diff(diff)
        # Measured ~0.1 s; the bound leaves room for a loaded machine.
        assert time.perf_counter() - started < 1.5
    diff = word_diff(base, " ".join(edited))
    # Each edit replaced one space-separated piece: one word, or two across a line break.
    assert diff.inserted_words == len(edited[::40])
    assert len(edited[::40]) <= diff.deleted_words <= 2 * len(edited[::40])


# -- the deck (tests/ui/deck_host.py): the diff is pane-level, no app needed ------------

THREE = ("Pools keep warm connections ready,\nso the next request skips the handshake.",
         "Pools keep a few connections open,\nso a request never waits for a handshake.",
         "A pool hands each request a connection\nit opened before, and takes it back.")


def diff_text(pane: ComparePane) -> str:
    body = pane.diff_view.query_one(DiffBody)
    return body.render().plain if pane.diff_view.display else ""


def header(pane: ComparePane) -> str:
    return str(pane.query_one(PaneHeader).render())


def scripted(text: str) -> LiveSource:
    return LiveSource(ScriptedStream(completed(text_events(text, ttft=0.1, rate=200),
                                               prompt_tokens=9, cost="0.0001", weight=1)))


def held(text: str) -> LiveSource:
    """`text` so far, then nothing until the pane is aborted."""
    return LiveSource(ScriptedStream(text_events(text, ttft=0.05, rate=30), hold=True))


def ended(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


async def choose(pilot: Pilot, app: App[None], option: str) -> list[str]:
    """Press F7 and pick `option` (its id) with the keyboard; returns the offered ids."""
    await pilot.press("f7")
    await until(pilot, lambda: isinstance(app.screen, ChoiceScreen)
                and bool(app.screen.query(OptionList)))
    await pilot.pause()
    options = app.screen.query_one(OptionList)
    ids = [str(options.get_option_at_index(i).id) for i in range(options.option_count)]
    await pilot.press("home")
    for _ in range(ids.index(option)):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
    await pilot.pause()
    return ids


async def test_diff_two_finished_answers_and_off_again() -> None:
    # 80 columns, panes under tabs: the diffed pane must become the one shown. (The key
    # bar's "f7 Diff" at each width is checked on the app, in test_fit.py.)
    host = DeckHost(3, prompt=True)
    async with host.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("f7")  # no answer yet: nothing to offer
        await pilot.pause()
        assert not isinstance(host.screen, ChoiceScreen)
        assert "A diff needs two panes with an answer" in str(
            [n.message for n in host._notifications])
        host.deck.play("compare how the diff of two pools reads",
                       {n: scripted(THREE[n - 1]) for n in (1, 2, 3)})
        await until(pilot, lambda: ended(host))
        assert isinstance(host.focused, PromptBox)  # F7 reaches the screen from the box
        ids = await choose(pilot, host, "2:1")
        assert ids == ["1:2", "1:3", "2:1", "2:3", "3:1", "3:2"]
        screen = host.deck_screen
        two = screen.pane(2)
        assert two.diff_base == 1 and "⇄ diff vs 1" in header(two)
        assert not two.answer.display and two.diff_view.display
        shown = two.diff_view.summary_text()
        assert shown.startswith("Diff against pane 1: +") and "first difference at line" in shown
        body = diff_text(two)
        assert MARKER in body and ("[-" in body or "{+" in body)
        expected = word_diff(screen.pane(1).answer.text, two.answer.text)
        assert body == render_diff(expected).plain
        # On screen: pane 2 became the current pane, shown even in a narrow terminal.
        assert two.has_class("-current") and two.display
        lines = "\n".join(screen_lines(host))
        assert "Diff against pane 1" in lines and "▶ first difference" in lines
        # The other panes still show their answers.
        assert screen.pane(1).answer.display and screen.pane(3).answer.display
        # Diff off is offered while a diff is shown, and brings the answer back.
        ids = await choose(pilot, host, "off")
        assert ids[-1] == "off"
        assert two.diff_base is None and two.answer.display and not two.diff_view.display
        assert "diff vs" not in header(two)


async def test_identical_answers_say_so() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(200, 50)) as pilot:
        # One answer in panes 1 and 3 (one model twice at temperature 0), another in 2.
        host.deck.play("one model three times gives one answer",
                       {1: scripted(THREE[0]), 2: scripted(THREE[1]), 3: scripted(THREE[0])})
        await until(pilot, lambda: ended(host))
        screen = host.deck_screen
        assert screen.pane(1).answer.text == screen.pane(3).answer.text
        screen.deck.diff_panes(1, 3)
        await pilot.pause()
        assert screen.pane(3).diff_view.summary_text() == "identical to pane 1"
        assert MARKER not in diff_text(screen.pane(3))
        # Choosing another pair moves the diff: pane 3 shows its answer again.
        screen.deck.diff_panes(3, 2)
        await pilot.pause()
        assert screen.pane(3).diff_base is None and screen.pane(3).answer.display
        assert screen.pane(2).diff_base == 3


async def test_a_diff_chosen_while_streaming_updates_when_it_ends() -> None:
    # The base pane holds its stream open until its abort key ends it, which is the
    # moment the diff must be redone. (One size: nothing here depends on it.)
    host = DeckHost(3)
    async with host.run_test(size=(80, 24)) as pilot:
        screen = host.deck_screen
        host.deck.play("a slow base answer to diff against",
                       {1: held(THREE[0]), 2: scripted(THREE[1]), 3: scripted(THREE[2])})
        one, two = screen.pane(1), screen.pane(2)
        await until(pilot, lambda: two.status == "done" and one.status == "streaming"
                    and one._chunks >= 3)
        await choose(pilot, host, "2:1")
        assert one.status == "streaming", "the base must still stream for this test"
        shown = two.diff_view.summary_text()
        assert "(so far)" in shown
        assert "Pane 1 is still streaming: the diff updates when it finishes." in shown
        await pilot.press("f1")
        await until(pilot, lambda: one.status == "cancelled")
        await pilot.pause()
        shown = two.diff_view.summary_text()
        assert "so far" not in shown and "still streaming" not in shown
        final = word_diff(one.answer.text, two.answer.text)
        assert two.diff_view.diff == final
        assert diff_text(two) == render_diff(final).plain
        # A new turn keeps the diff, of the text so far, and refreshes it when it ends.
        await until(pilot, lambda: ended(host))
        host.deck.play("a second turn keeps the diff",
                       {1: held(THREE[2]), 2: scripted(THREE[0]), 3: scripted(THREE[1])})
        await pilot.pause()
        assert one.state.running
        assert two.diff_base == 1 and "(so far)" in two.diff_view.summary_text()
        await until(pilot, lambda: two.status == "done" and one._chunks >= 3)
        await pilot.press("f1")
        await until(pilot, lambda: ended(host))
        await pilot.pause()
        assert two.diff_view.diff == word_diff(one.answer.text, two.answer.text)
        assert "so far" not in two.diff_view.summary_text()


async def test_high_contrast_theme_colours_insertions_and_deletions() -> None:
    host = DeckHost(3, theme="anoman-high-contrast")
    async with host.run_test(size=(200, 50)) as pilot:
        host.deck.play("colours of a diff in high contrast",
                       {n: scripted(THREE[n - 1]) for n in (1, 2, 3)})
        await until(pilot, lambda: ended(host))
        screen = host.deck_screen
        assert host.theme == "anoman-high-contrast"
        screen.deck.diff_panes(1, 2)
        await pilot.pause()
        body = screen.pane(2).diff_view.query_one(DiffBody)
        colours: dict[str, set[Color | None]] = {"insert": set(), "delete": set(), "rest": set()}
        for y in range(body.size.height):
            for segment in body.render_lines(Region(0, y, body.size.width, 1))[0]:
                if not segment.text.strip() or segment.style is None:
                    continue
                kind = ("insert" if "{+" in segment.text else
                        "delete" if "[-" in segment.text else "rest")
                colours[kind].add(segment.style.color)
                if kind != "rest":
                    # Legible: the words stand out from their own background.
                    fg, bg = segment.style.color, segment.style.bgcolor
                    assert fg is not None and bg is not None and fg.triplet and bg.triplet
                    assert sum(abs(a - b) for a, b in zip(fg.triplet, bg.triplet,
                                                          strict=True)) > 200, segment
        theme = host.current_theme
        success, error, foreground = (Color.parse(c or "").triplet for c in (
            theme.success, theme.error, theme.foreground))
        assert success and error and foreground

        def near(colour: Color | None, triplet: ColorTriplet) -> bool:
            # Textual's colour arithmetic may round a channel by one.
            return (colour is not None and colour.triplet is not None
                    and all(abs(a - b) <= 2 for a, b in zip(colour.triplet, triplet,
                                                            strict=True)))

        # Every insertion in the theme's success colour, every deletion in its error
        # colour; the answer's own words in the foreground colour, unlike either.
        assert colours["insert"] and all(near(c, success) for c in colours["insert"])
        assert colours["delete"] and all(near(c, error) for c in colours["delete"])
        assert any(near(c, foreground) for c in colours["rest"])
        assert len({success, error, foreground}) == 3
        # Another theme: the diff is drawn again in its colours.
        host.theme = "anoman-light"
        await pilot.pause()
        light = Color.parse(host.current_theme.success or "").triplet
        assert light is not None and light != success
        inserts = [segment.style.color for y in range(body.size.height)
                   for segment in body.render_lines(Region(0, y, body.size.width, 1))[0]
                   if "{+" in segment.text and segment.style is not None]
        assert inserts and all(near(c, light) for c in inserts)


# -- the app: what only it offers -------------------------------------------------------


async def test_palette_offers_the_diff(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await submit(pilot, "a diff chosen from the palette")
        await until(pilot, lambda: settled(app))
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Diff two panes":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")  # the current pane (1) against the first other (2)
        await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        assert app.compare.pane(1).diff_base == 2


LONG = "\n\n".join(f"Paragraph {i}: pools keep warm connections ready for the next "
                   "request, so it skips the handshake." for i in range(120))


async def test_diff_off_restores_the_answers_scroll_position() -> None:
    host = DeckHost(3)  # a deck alone: pane-level behaviour needs no app
    async with host.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        screen = host.deck_screen
        for index, text in ((1, LONG), (2, LONG.replace("Paragraph 60:", "Section 60:"))):
            screen.pane(index).start(ScriptedStream(completed(  # type: ignore[arg-type]
                text_events(text, ttft=0.1, rate=500), prompt_tokens=9, cost="0.0001",
                weight=1)), "pools?")
        await until(pilot, lambda: screen.pane(1).status == screen.pane(2).status == "done")
        view = screen.pane(2).answer
        view.scroll_to(y=view.max_scroll_y // 2, animate=False, immediate=True)
        await pilot.pause()
        y = view.scroll_y
        assert y > 10
        screen.deck.diff_panes(1, 2)
        await pilot.pause()
        diff = screen.pane(2).diff_view.diff
        assert diff is not None and (diff.inserted_words, diff.deleted_words) == (1, 1)
        assert diff.first_divergence is not None and diff.first_divergence.line == 121
        # The diffed pane is the current one: the scroll keys move its diff.
        await pilot.press("shift+pagedown")
        assert screen.pane(2).diff_view.scroller.scroll_y > 0
        screen.deck.diff_off()
        await pilot.pause()
        await pilot.pause()
        assert view.display and view.scroll_y == y
