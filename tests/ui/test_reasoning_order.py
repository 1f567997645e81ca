"""A turn reads prompt → reasoning → answer: `AnswerView` orders a turn's parts, so a
thinking model's reasoning sits under its own prompt, live, in a conversation, reopened
from the history and replayed."""

from __future__ import annotations

import re

from textual.app import App

from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.screens.replay import ReplayScreen
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.pane import ComparePane
from tests.pilot import ready, settled, submit, until
from tests.ui.deck_host import DeckHost, GatewayFeed
from tests.ui.helpers import Host, drained
from tests.ui.screen_text import screen_lines

THINKING = ["anoman-lite", "claude-sonnet-4-6", "deepseek-r1"]



def find(lines: list[str], text: str, start: int = 0) -> int:
    return next(i for i in range(start, len(lines)) if lines[i].startswith(text))


def first_word(text: str) -> str:
    found = re.search(r"[A-Za-z]{3,}", text)
    assert found is not None, text
    return found.group()


def turn_order(lines: list[str], prompt: str, answer: str, start: int = 0) -> tuple[int, ...]:
    """(prompt row, reasoning row, answer row) of the turn of (one-line) `prompt` from
    `start`, asserting they come in that order: the reasoning's row right under the
    prompt, the answer (its first row with `answer` in it) below the reasoning."""
    you = find(lines, f"▌ {prompt}", start)
    assert lines[you - 1] == "▌ You"
    head = you + 2
    assert lines[you + 1] == "" and (lines[head] == "▼ Reasoning"
                                     or lines[head].startswith("▶ Reasoning · ")), \
        lines[you - 1 : head + 1]
    said = next(i for i in range(head + 1, len(lines)) if answer in lines[i])
    return you, head, said


# -- AnswerView -----------------------------------------------------------------------


async def test_reasoning_is_drawn_between_its_prompt_and_its_answer() -> None:
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("first question")
        view.append_reasoning("Thinking about the first.")
        await drained(pilot, view)
        lines = view._rendered_lines()
        # While it streams: expanded, under the prompt.
        assert lines[find(lines, "▌ first question") + 2] == "▼ Reasoning"
        assert "Thinking about the first." in lines
        view.append("The first answer.")
        view.end_turn()
        await drained(pilot, view)
        lines = view._rendered_lines()
        turn_order(lines, "first question", "The first answer.")
        # Ended: collapsed to its heading row, its text gone from the rows.
        assert "▶ Reasoning · 4 words" in lines
        assert "Thinking about the first." not in lines
        assert view.text == "The first answer."  # the answer alone
        assert view.reasoning_text == "Thinking about the first."
        # A second turn: its reasoning under its own prompt, the first turn's in place.
        view.begin_turn("second question")
        view.append_reasoning("Now the second.")
        view.append("The second answer.")
        view.end_turn()
        await drained(pilot, view)
        lines = view._rendered_lines()
        _, _, first_answer = turn_order(lines, "first question", "The first answer.")
        turn_order(lines, "second question", "The second answer.", first_answer)
        # A click on the heading row expands it again, in place.
        head = lines.index("▶ Reasoning · 3 words")
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert view.reasoning_collapsed
        await pilot.click(AnswerView, offset=(3, head - round(view.scroll_y)))
        await pilot.pause()
        assert view.reasoning_collapsed is False
        lines = view._rendered_lines()
        assert lines[lines.index("▼ Reasoning", first_answer) + 1] == "Now the second."


async def test_reasoning_that_comes_after_the_answer_began_goes_above_it() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("a question")
        view.append("The answer begins.")
        await drained(pilot, view)
        view.append_reasoning("Late reasoning.")
        view.end_turn()
        await drained(pilot, view)
        view.set_reasoning_collapsed(False)
        await pilot.pause()
        lines = view._rendered_lines()
        _, head, said = turn_order(lines, "a question", "The answer begins.")
        assert head < lines.index("Late reasoning.") < said


# -- a deck, the history, a replay ----------------------------------------------------


def thinking_pane(app: App[None]) -> ComparePane:
    return app.screen.query_one("#pane-3", ComparePane)


def deck_settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


async def test_a_thinking_model_reasons_under_its_prompt_live_and_in_a_conversation(
    gateway_feed: GatewayFeed, monkeypatch
) -> None:
    # Slow enough that the reasoning is seen while it streams. (A deck alone, fed by the
    # local gateway: tests/ui/deck_host.py.)
    monkeypatch.setitem(SCENARIO_HEADERS, "none", "ttft=0.05,rate=40,tokens=30")
    app = DeckHost(3, models=THINKING, frozen_clock=False)
    async with app.run_test(size=(200, 50)) as pilot:
        pane = thinking_pane(app)
        assert pane.state.model == "deepseek-r1"
        gateway_feed.play(app.deck, "first question")
        # During the stream, once its reasoning shows.
        await until(pilot, lambda: "▼ Reasoning" in pane.answer._rendered_lines())
        assert pane.status == "streaming"
        lines = pane.answer._rendered_lines()
        assert find(lines, "▌ first question") < lines.index("▼ Reasoning")
        await until(pilot, lambda: deck_settled(app), timeout=60)
        await drained(pilot, pane.answer)  # type: ignore[arg-type]
        lines = pane.answer._rendered_lines()
        first_text = first_word(pane.answer.text)
        _, _, said = turn_order(lines, "first question", first_text)
        assert lines[find(lines, "▌ first question") + 2].startswith("▶ Reasoning")
        # A second turn: prompt, reasoning, answer again, below the first.
        gateway_feed.play(app.deck, "second question")
        await until(pilot, lambda: deck_settled(app)
                    and pane.state.last_prompt == "second question")
        await drained(pilot, pane.answer)  # type: ignore[arg-type]
        lines = pane.answer._rendered_lines()
        turn_order(lines, "first question", first_text)
        turn_order(lines, "second question", first_word(pane.answer.text), said + 1)


async def test_a_reopened_and_a_replayed_turn_keep_their_reasoning_under_the_prompt(
    make_app, monkeypatch
) -> None:
    # Slow enough that the replay's reasoning is seen while it streams.
    monkeypatch.setitem(SCENARIO_HEADERS, "none", "ttft=0.05,rate=40,tokens=30")
    app = make_app(THINKING)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await submit(pilot, "a question to reopen")
        await until(pilot, lambda: settled(app), timeout=60)
        assert app.history is not None
        await until(pilot, lambda: len(app.history.recent(limit=5)) == 1)  # type: ignore[union-attr]
        record = app.history.recent(limit=1)[0]
        assert record.id is not None and record.panes[2].reasoning

        # Reopened from the history screen.
        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        pane = thinking_pane(app)
        await until(pilot, lambda: pane.answer.caught_up and bool(pane.answer.text))
        await drained(pilot, pane.answer)  # type: ignore[arg-type]
        lines = pane.answer._rendered_lines()
        turn_order(lines, "a question to reopen", first_word(pane.answer.text))

        # Replayed from its recording (p, as recorded).
        await until(pilot, lambda: "p Replay" in screen_lines(app)[-1])
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        pane = thinking_pane(app)
        await until(pilot, lambda: "▼ Reasoning" in pane.answer._rendered_lines())
        assert pane.status == "streaming"
        lines = pane.answer._rendered_lines()
        assert find(lines, "▌ a question to reopen") < lines.index("▼ Reasoning")
        await until(pilot, lambda: not any(p.running for p in screen.panes), timeout=60)
        await drained(pilot, pane.answer)  # type: ignore[arg-type]
        lines = pane.answer._rendered_lines()
        turn_order(lines, "a question to reopen", first_word(pane.answer.text))
