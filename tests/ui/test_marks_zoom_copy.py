"""Reading answers against each other: the verdict marks, zoom, and copying an answer.

Marks, zoom and copying run on a deck alone (tests/ui/deck_host.py): with scripted streams
(fixed figures, so the winners are known), and with real streams from the local gateway
for a real turn's marks and panes that stream while zoomed. The app keeps what only its
screen does: the palette's code-block copy, and typing while zoomed (its prompt box and
status line step aside).
"""

from __future__ import annotations

import base64
from bisect import bisect_right
from decimal import Decimal

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.config import Settings
from anoman_tui.streaming import ModelInfo, StreamFailure
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.messages import GatewayReady
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.render.code_blocks import CodeBlock, code_blocks
from anoman_tui.ui.render.verdict import (
    CHEAPEST,
    FASTEST_FIRST_TOKEN,
    HIGHEST_RATE,
    PaneFigures,
    marks_line,
    verdict,
)
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.widgets.deck import LiveSource
from anoman_tui.ui.widgets.pane import ComparePane, PaneMarks
from anoman_tui.ui.widgets.prompt_box import PromptBox
from tests.pilot import until
from tests.ui.deck_host import DeckHost, GatewayFeed
from tests.ui.scripted import ScriptedStream, completed, failed, text_events

SIZES = [(80, 24), (200, 50)]
MODELS = ["claude-sonnet-4-6", "anoman-lite", "deepseek-r1"]
CODE_ANSWER = (
    "Use a pool:\n\n"
    "```python\npool = create_pool(min_size=2, max_size=20)\nawait pool.close()\n```\n\n"
    "and check it from the shell:\n\n"
    "~~~bash\npsql -c 'show max_connections'\n~~~\n"
)

# -- the verdict, without Textual ------------------------------------------------------


def test_verdict_marks_each_winner_and_every_tie() -> None:
    marks = verdict([
        PaneFigures(1, True, ttft_s=0.2, tokens_per_s=50.0, cost_usd=Decimal("0.0003")),
        PaneFigures(2, True, ttft_s=0.5, tokens_per_s=80.0, cost_usd=Decimal("0.0001")),
        PaneFigures(3, True, ttft_s=0.2, tokens_per_s=30.0, cost_usd=Decimal("0.0002")),
    ])
    assert marks == {1: [FASTEST_FIRST_TOKEN], 2: [HIGHEST_RATE, CHEAPEST],
                     3: [FASTEST_FIRST_TOKEN]}
    assert marks_line(marks[2]) == "★ highest tokens/s · ★ cheapest"


def test_verdict_only_among_completed_answers() -> None:
    # A failed pane's quicker first token and lower cost win nothing.
    figures = [
        PaneFigures(1, False, ttft_s=0.01, tokens_per_s=500.0, cost_usd=Decimal("0")),
        PaneFigures(2, True, ttft_s=0.5, tokens_per_s=80.0, cost_usd=Decimal("0.0001")),
        PaneFigures(3, True, ttft_s=0.3, tokens_per_s=30.0, cost_usd=Decimal("0.0002")),
    ]
    assert verdict(figures) == {2: [HIGHEST_RATE, CHEAPEST], 3: [FASTEST_FIRST_TOKEN]}
    # One completed answer has nothing to be compared with.
    assert verdict([figures[0], figures[1], PaneFigures(3, False)]) == {}
    assert verdict([]) == {}


def test_verdict_skips_a_figure_fewer_than_two_answers_know() -> None:
    marks = verdict([
        PaneFigures(1, True, ttft_s=0.2, tokens_per_s=None, cost_usd=Decimal("0.0003")),
        PaneFigures(2, True, ttft_s=0.4, tokens_per_s=12.0, cost_usd=None),
    ])
    assert marks == {1: [FASTEST_FIRST_TOKEN]}


def test_code_blocks_fences_languages_and_an_unclosed_block() -> None:
    text = CODE_ANSWER + "\n```\nno language\n\n  indented\n"  # cut mid-block
    assert code_blocks(text) == [
        CodeBlock("python", "pool = create_pool(min_size=2, max_size=20)\nawait pool.close()"),
        CodeBlock("bash", "psql -c 'show max_connections'"),
        CodeBlock("", "no language\n\n  indented"),
    ]
    assert code_blocks(text)[0].first_line == "pool = create_pool(min_size=2, max_size=20)"
    # Inline code with three backticks is no fence; a longer fence needs a longer close.
    assert code_blocks("run ```x``` now") == []
    assert code_blocks("````md\n```\ninner\n```\n````") == [CodeBlock("md", "```\ninner\n```")]


# -- the app -----------------------------------------------------------------------------


def scripted_app() -> AnomanApp:
    return AnomanApp(Settings(theme="anoman-dark"), models=MODELS, connect=False)


async def scripted_ready(pilot: Pilot) -> AnomanApp:
    app = pilot.app
    assert isinstance(app, AnomanApp)
    app.compare.post_message(GatewayReady("http://127.0.0.1:8787", "local gateway",
                                          [ModelInfo(m) for m in MODELS]))
    await pilot.pause()
    return app


def start(app: AnomanApp, index: int, stream: ScriptedStream, prompt: str = "pools?") -> None:
    app.compare.pane(index).start(stream, prompt)  # type: ignore[arg-type]


def marks_of(pane: ComparePane) -> str:
    marks = pane.query_one(PaneMarks)
    return str(marks.render()) if marks.display else ""


def answer(text: str, *, ttft: float, rate: float, cost: str) -> ScriptedStream:
    return ScriptedStream(completed(text_events(text, ttft=ttft, rate=rate), prompt_tokens=12,
                                    cost=cost, weight=1))


def deck_settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


@pytest.mark.parametrize("size", SIZES)
async def test_marks_name_the_winners_once_every_pane_ended(size: tuple[int, int]) -> None:
    host = DeckHost(3)  # marks are the deck's: no app needed
    async with host.run_test(size=size) as pilot:
        deck = host.deck
        words = "one two three four five six seven eight nine ten"
        held = ScriptedStream(text_events(words, ttft=0.2, rate=30), hold=True)
        deck.play("pools?", {1: LiveSource(answer(words, ttft=0.2, rate=50, cost="0.000300")),
                             2: LiveSource(answer(words, ttft=0.5, rate=80, cost="0.000100")),
                             3: LiveSource(held)})
        await until(pilot, lambda: deck.pane(2).status == "done"
                    and deck.pane(1).status == "done"
                    and deck.pane(3).status == "streaming")
        await pilot.pause(0.1)
        # Pane 3 still streams: no verdict yet.
        assert [marks_of(p) for p in deck.widgets] == ["", "", ""]
        held.cancel()
        await until(pilot, lambda: deck_settled(host))
        await pilot.pause(0.05)
        # Pane 3 was cancelled: it competes for nothing.
        assert marks_of(deck.pane(1)) == "★ fastest first token"
        assert marks_of(deck.pane(2)) == "★ highest tokens/s · ★ cheapest"
        assert marks_of(deck.pane(3)) == ""
        # The marks line is drawn on screen (pane 1 is shown at every size).
        assert deck.pane(1).query_one(PaneMarks).region.height == 1
        # A new turn clears the verdict of the last one, on every pane.
        deck.play("again", {1: LiveSource(ScriptedStream(text_events(
            words, ttft=0.2, rate=30), hold=True))})
        await pilot.pause()
        assert [marks_of(p) for p in deck.widgets] == ["", "", ""]


async def test_a_single_completed_answer_is_marked_nothing() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(200, 50)) as pilot:
        host.deck.play("pools?", {
            1: LiveSource(answer("just one", ttft=0.2, rate=50, cost="0.0003")),
            2: LiveSource(ScriptedStream(failed(text_events("cut off", ttft=0.1, rate=90),
                                                StreamFailure(kind="connection_dropped")))),
            3: LiveSource(ScriptedStream(failed([], StreamFailure(kind="connection_dropped"))))})
        await until(pilot, lambda: deck_settled(host))
        await pilot.pause(0.05)
        assert [marks_of(p) for p in host.deck.widgets] == ["", "", ""]


async def test_marks_of_a_real_turn(gateway_feed: GatewayFeed) -> None:
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(200, 50)) as pilot:
        # (a prompt of its own: the gateway's answer cache is shared by the tests)
        gateway_feed.play(host.deck, "which pool wins the verdict marks")
        await until(pilot, lambda: deck_settled(host))
        await pilot.pause(0.05)
        shown = {p.state.index: marks_of(p) for p in host.deck.widgets}
        expected = verdict([p.figures() for p in host.deck.widgets])
        assert expected, "the gateway's three answers always have a winner"
        for index, text in shown.items():
            assert text == marks_line(expected.get(index, []))
        everything = " ".join(shown.values())
        for label in (FASTEST_FIRST_TOKEN, HIGHEST_RATE, CHEAPEST):
            assert f"★ {label}" in everything


def top_block(pane: ComparePane) -> int:
    view = pane.answer
    return bisect_right(view._starts, round(view.scroll_y)) - 1


LONG = "\n\n".join(f"Paragraph {i}: pools keep warm connections ready for the next "
                   "request, so it skips the handshake." for i in range(150))


@pytest.mark.parametrize("size", SIZES)
async def test_zoom_keeps_the_panes_scroll_position(size: tuple[int, int]) -> None:
    # (What the app's own screen hides while zoomed: test_typing_while_zoomed_...)
    app = DeckHost(3, prompt=True)
    async with app.run_test(size=size) as pilot:
        screen = app.deck_screen
        app.deck.play("pools?", {2: LiveSource(answer(LONG, ttft=0.1, rate=500,
                                                      cost="0.0001"))})
        two = screen.pane(2)
        await until(pilot, lambda: two.status == "done")
        await pilot.press("f4")  # pane 2 is the current pane
        await pilot.pause()
        view = two.answer
        view.scroll_to(y=view.max_scroll_y // 2, animate=False, immediate=True)
        await pilot.pause()
        block, y = top_block(two), view.scroll_y
        assert block > 10
        await pilot.press("f8")
        await pilot.pause()
        assert screen.has_class("-zoomed")
        assert [p.display for p in app.deck.widgets] == [False, True, False]
        assert screen.query_one("#prompt-area").region.height == 0
        assert two.region.width == size[0] and two.region.height == size[1]  # (no key bar)
        assert two.answer is view and app.focused is view  # the same widget, not a new one
        assert top_block(two) == block
        if size[0] < 120:  # the pane was full width already: the very same row
            assert view.scroll_y == y
        zoomed_y = view.scroll_y
        await pilot.press("pagedown")  # the zoomed answer has the keys
        assert view.scroll_y > zoomed_y
        await pilot.press("pageup")
        await pilot.press("f8")
        await pilot.pause()
        assert not screen.has_class("-zoomed")
        assert top_block(two) == block
        assert screen.query_one("#prompt-area").region.height > 0
        assert isinstance(app.focused, PromptBox)
        expected = [False, True, False] if size[0] < 120 else [True, True, True]
        assert [p.display for p in app.deck.widgets] == expected


async def test_a_zoomed_or_hidden_pane_keeps_streaming(
    gateway_feed: GatewayFeed, monkeypatch
) -> None:
    # 240 tokens at 60 tok/s: four seconds, so a slow machine still zooms while both
    # stream (80 tokens at 40 tok/s once ended before the zoom on a loaded CI runner).
    # 200 columns: the zoom is what hides pane 2. (The key bar's Zoom and Copy keys are
    # checked on the app, in test_fit.py.)
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking",
                        "ttft=0.05,rate=60,tokens=240")
    app = DeckHost(3, prompt=True, frozen_clock=False)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = app.deck_screen
        app.deck.panes[0].scenario = app.deck.panes[1].scenario = "slow_thinking"
        gateway_feed.play(app.deck, "explain connection pooling in depth")
        one, two = screen.pane(1), screen.pane(2)
        await until(pilot, lambda: one._chunks >= 1 and two._chunks >= 1)
        await pilot.press("f8")  # pane 1 full screen, pane 2 hidden
        await pilot.pause()
        assert screen.has_class("-zoomed") and not two.display
        chunks = one._chunks, two._chunks
        await until(pilot, lambda: one._chunks > chunks[0] and two._chunks > chunks[1])
        await until(pilot, lambda: deck_settled(app))
        assert one.status == two.status == "done"
        assert one.answer.text.strip() and two.answer.text.strip()
        assert screen.has_class("-zoomed")
        # The turn's verdict reaches the zoomed pane too.
        await pilot.pause(0.05)
        expected = verdict([p.figures() for p in app.deck.widgets]).get(1, [])
        assert marks_of(one) == marks_line(expected)
        await pilot.press("f8")
        await pilot.pause()
        assert not screen.has_class("-zoomed")


async def test_typing_while_zoomed_brings_the_prompt_back(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.compare.base_url is not None)
        await pilot.press("f8")
        assert app.compare.has_class("-zoomed")
        # The screen's own parts step aside: the zoomed pane has all but the key bar.
        await pilot.pause()
        screen = app.compare
        assert screen.query_one("#prompt-area").region.height == 0
        assert screen.query_one("#status-line").region.height == 0
        assert screen.pane(1).region.width == 80 and screen.pane(1).region.height == 23
        await pilot.press("h", "i")
        assert not app.compare.has_class("-zoomed")
        assert app.compare.query_one("#prompt").text == "hi"


class Clipboard:
    """Spies on `App.copy_to_clipboard` and on what it writes to the terminal."""

    def __init__(self, app: App[None], monkeypatch: pytest.MonkeyPatch) -> None:
        self.copied: list[str] = []
        self.written: list[str] = []
        real = app.copy_to_clipboard

        def copy(text: str) -> None:
            self.copied.append(text)
            real(text)

        monkeypatch.setattr(app, "copy_to_clipboard", copy)
        assert app._driver is not None
        monkeypatch.setattr(app._driver, "write", self.written.append)

    def osc52(self) -> list[str]:
        prefix = "\x1b]52;c;"
        return [base64.b64decode(w[len(prefix):-1]).decode() for w in self.written
                if w.startswith(prefix) and w.endswith("\a")]


def notices(app: App[None]) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


async def test_copy_the_current_panes_answer(monkeypatch) -> None:
    # One size: nothing here depends on it.
    app = DeckHost(3, prompt=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        clipboard = Clipboard(app, monkeypatch)
        await pilot.press("f9")
        assert clipboard.copied == [] and "Pane 1 has no answer to copy" in notices(app)
        app.deck.play("q1", {2: LiveSource(answer("first turn", ttft=0.1, rate=50,
                                                  cost="0.0001"))})
        await until(pilot, lambda: app.deck.pane(2).status == "done")
        app.deck.play("q2", {2: LiveSource(answer(CODE_ANSWER, ttft=0.1, rate=50,
                                                  cost="0.0001"))})
        await until(pilot, lambda: app.deck.pane(2).status == "done")
        await pilot.press("f4")  # pane 2 is the current pane
        await pilot.press("f9")
        # The latest turn's answer only: no prompt, no earlier turn, no markup.
        assert clipboard.copied == [CODE_ANSWER]
        assert clipboard.osc52() == [CODE_ANSWER]
        assert f"Copied pane 2's answer ({len(CODE_ANSWER):,} characters)" in notices(app)


async def test_copy_a_code_block_from_the_palette(monkeypatch) -> None:
    app = scripted_app()
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await scripted_ready(pilot)
        clipboard = Clipboard(app, monkeypatch)
        start(app, 3, answer(CODE_ANSWER, ttft=0.1, rate=50, cost="0.0001"))
        await until(pilot, lambda: app.compare.pane(3).status == "done")
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Copy code block from pane 3":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        labels = [str(o.prompt) for o in app.screen.query_one(OptionList).options]
        assert labels == ["python · pool = create_pool(min_size=2, max_size=20)",
                          "bash · psql -c 'show max_connections'"]
        await pilot.press("down", "enter")
        await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
        assert clipboard.copied == ["psql -c 'show max_connections'"]
        assert clipboard.osc52() == ["psql -c 'show max_connections'"]
        assert "Copied a bash block from pane 3 (30 characters)" in notices(app)
