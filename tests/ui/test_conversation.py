"""Reading a comparison: each pane keeps its conversation (the prompt of every turn above
its answer), scroll keys, a finished turn shown from its prompt, answers cut by max tokens
marked as such, a sparkline on a fixed time scale, and a prompt sent while panes stream.

What a pane shows runs on a deck alone (tests/ui/deck_host.py), with real streams from the
local gateway where the conversation or the wire's stop reason matters; the app keeps
what only its screen does (typing a prompt while panes stream, rebinding keys, changing
a pane's model, the history and its exports)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rich.segment import Segment
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.gateway.tokenizer import count_prompt_tokens
from anoman_tui.history import HistoryStore, default_path
from anoman_tui.report import export
from anoman_tui.report.html import render_markdown
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.screens import prompting
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.pane import (
    SPARK_CELLS,
    PaneHeader,
    PaneSpark,
    sparkline,
)
from tests.pilot import badge_text, panes, ready, send, settled, until
from tests.ui.deck_host import DeckHost, GatewayFeed
from tests.ui.helpers import Host, drained, saved, turn
from tests.ui.screen_text import screen_lines
from tests.ui.scripted import ScriptedStream, completed, text_events

SIZES = [(80, 24), (200, 50)]
PARAGRAPHS = "\n\n".join(f"Paragraph {i} of the first answer, long enough." for i in range(60))



def index_of(lines: list[str], text: str, start: int = 0) -> int:
    return next(i for i in range(start, len(lines)) if lines[i].startswith(text))


def top_row(view: AnswerView) -> str:
    return view.render_line(0).text.strip()


# -- AnswerView: turns ---------------------------------------------------------------


async def test_turns_stack_with_their_prompts_and_a_failed_turn_is_dimmed() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("First [bold]question[/bold]\x1b]0;PWNED\x07 here")
        view.append("The **first** answer.")
        view.end_turn()
        await drained(pilot, view)
        view.begin_turn("Second question?")
        view.append("A partial second answer")
        view.end_turn(dim=True, note="✗ CANCELLED · not part of the conversation")
        await drained(pilot, view)
        lines = view._rendered_lines()
        first = index_of(lines, "▌ You")
        # The prompt is plain text: markup shows literally, control sequences are gone.
        assert lines[first + 1] == "▌ First [bold]question[/bold] here"
        answer1 = index_of(lines, "The first answer.", first)
        second = index_of(lines, "▌ You", answer1)
        assert lines[second + 1] == "▌ Second question?"
        answer2 = index_of(lines, "A partial second answer", second)
        note = index_of(lines, "✗ CANCELLED · not part of the conversation", answer2)
        assert first < answer1 < second < answer2 < note
        assert not any("PWNED" in line for line in lines)
        assert view.text == "A partial second answer"  # the latest turn's answer only
        assert view.turn_dimmed

        def dim_of(raw: str) -> set[bool]:
            block = next(b for b in view._blocks if b.raw == raw)
            strips = view._render_block(block)
            return {bool(s.style and s.style.dim) for strip in strips
                    for s in strip if isinstance(s, Segment) and s.text.strip()}

        assert dim_of("A partial second answer") == {True}
        assert dim_of("The **first** answer.") == {False}
        # The prompt band is drawn distinct from answers (a background of its own).
        prompt_block = next(b for b in view._blocks if b.raw == "Second question?")
        backgrounds = {s.style.bgcolor for strip in view._render_block(prompt_block)
                       for s in strip if s.style}
        assert None not in backgrounds
        view.clear()
        await pilot.pause()
        assert view._rendered_lines() == [] and not view.turn_dimmed


async def test_streaming_a_new_turn_renders_no_block_of_older_turns() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("first")
        for index in range(0, len(PARAGRAPHS), 37):
            view.append(PARAGRAPHS[index : index + 37])
        view.end_turn()
        await drained(pilot, view)
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        older = set(map(id, view._blocks))
        assert len(older) > 60
        rendered: list[int] = []
        render = view._render_block

        def counting(block):  # type: ignore[no-untyped-def]
            rendered.append(id(block))
            return render(block)

        view._render_block = counting  # type: ignore[method-assign]
        view.begin_turn("second")
        text = PARAGRAPHS.replace("first", "second")
        for index in range(0, len(text), 23):
            view.append(text[index : index + 23])
            if index % 230 == 0:
                await pilot.pause(0.02)
        view.end_turn(reveal=False)
        await drained(pilot, view)
        assert rendered, "the new turn's blocks were rendered"
        assert not older & set(rendered), "an older turn was rendered again while streaming"


async def test_a_finished_turn_reads_from_its_prompt_unless_scrolled() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(AnswerView)
        view.begin_turn("short one")
        view.append("Fits in the view.")
        view.end_turn()
        await drained(pilot, view)
        assert view.max_scroll_y == 0
        view.begin_turn("tell me more")
        view.append(PARAGRAPHS)
        view.end_turn()
        await drained(pilot, view)
        # Taller than the view and the reader did not scroll: shown from its prompt.
        assert top_row(view) == "▌ You"
        assert view.render_line(1).text.strip() == "▌ tell me more"
        assert view.scroll_y < view.max_scroll_y
        view.begin_turn("and again")
        view.append(PARAGRAPHS)
        await drained(pilot, view)
        assert view.scroll_y == view.max_scroll_y  # a new turn is followed
        view.scroll_to(y=3, animate=False, immediate=True)
        await pilot.pause()
        view.end_turn()
        await drained(pilot, view)
        assert view.scroll_y == 3, "a reader who scrolled stays where they are"


# -- the sparkline ---------------------------------------------------------------------


def test_sparkline_cells_are_a_fixed_time_whatever_the_width() -> None:
    buckets = [40.0] * 30 + [0.0] + [220.0] * 69
    narrow, wide = sparkline(buckets, 70), sparkline(buckets, 200)
    assert narrow.plain == wide.plain
    assert narrow.plain.startswith(f"tok/s 0–220 · last {SPARK_CELLS * 0.25:g} s ")
    bars = narrow.plain.split(" s ", 1)[1]
    assert len(bars) == SPARK_CELLS and set(bars) == {"█"}  # only the newest 10 s
    early = sparkline(buckets[:32], 200).plain.split(" s ", 1)[1]
    assert early == "▂" * 30 + " " + "█", "a cell without tokens is a gap"
    # Too narrow for 10 s: fewer cells, and the label says so.
    assert sparkline(buckets, 40).plain == "tok/s 0–220 · last 3.5 s " + "█" * 14


@pytest.mark.parametrize("peak", [9.0, 32.0, 220.0, 1500.0])
def test_the_sparkline_never_overflows_its_pane(peak: float) -> None:
    # One cell too wide and Textual wraps the line: its bars go to a row not shown.
    for count in range(2, 60):
        for width in range(30, 90):
            line = sparkline([peak] * count, width)
            assert line.cell_len <= width, (count, width, line.plain)


@pytest.mark.parametrize("size", SIZES)
async def test_the_same_answer_draws_the_same_sparkline_at_any_size(
    size: tuple[int, int]
) -> None:
    host = DeckHost(3)
    async with host.run_test(size=size) as pilot:
        pane = host.deck.pane(1)
        events = completed(text_events("word " * 300, ttft=0.2, rate=120.0),
                           prompt_tokens=5, cost="0.0001", weight=1)
        pane.start(ScriptedStream(events), "scripted")
        await until(pilot, lambda: pane.status == "done")
        await pilot.pause()
        spark = str(pane.query_one(PaneSpark).render())
        assert spark == sparkline(list(pane.rate_series), 60).plain
        assert spark == "tok/s 0–120 · last 2.5 s " + "█" * 10


# -- a deck alone (tests/ui/deck_host.py) ----------------------------------------------


def deck_settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


async def ask_deck(pilot: Pilot, host: DeckHost, feed: GatewayFeed, prompt: str) -> None:
    """Send `prompt` from every pane over the local gateway; wait until all answered."""
    feed.play(host.deck, prompt)
    await until(pilot, lambda: deck_settled(host)
                and all(p.last_prompt == prompt for p in host.deck.panes)
                # (its text drawn in every pane shown; a hidden tab's waits to be shown)
                and all(w.answer.caught_up for w in host.deck.widgets if w.display))


async def test_scroll_keys_move_the_current_pane(gateway_feed: GatewayFeed,
                                                fast_answers) -> None:
    # 200 columns: every pane shown (80, under tabs: ..._under_tabs; the key bar's Scroll
    # keys are checked on the app, in test_fit.py).
    host = DeckHost(3, models=["claude-sonnet-4-6"] * 3, prompt=True, frozen_clock=False)
    async with host.run_test(size=(200, 50)) as pilot:
        for prompt in ("explain connection pooling", "compare it with caching", "and queues"):
            await ask_deck(pilot, host, gateway_feed, prompt)  # a conversation taller than a pane
        await _walk_the_scroll_keys(pilot, host.deck_screen, lambda: host.focused)


async def _walk_the_scroll_keys(pilot: Any, screen: Any, focused: Callable[[], Any]) -> None:
    """The scroll keys on a conversation taller than its panes: Ctrl+End/Home and
    Shift+PageUp/Down move the current pane, F4 and focusing a pane's text pick it, and a
    focused text scrolls with its own keys (as the app's and a deck host's screens do)."""
    await pilot.pause()
    answer = screen.pane(1).answer
    assert screen.pane(1).has_class("-current")
    assert answer.max_scroll_y > 0
    assert focused() is not None and focused().id == "prompt"  # typing stays
    await pilot.press("ctrl+end")
    assert answer.scroll_y == answer.max_scroll_y
    await pilot.press("shift+pageup")
    after_page = answer.scroll_y
    assert after_page < answer.max_scroll_y
    await pilot.press("alt+down")
    assert answer.scroll_y > after_page
    await pilot.press("ctrl+home")
    assert answer.scroll_y == 0
    await pilot.press("shift+pagedown")
    assert answer.scroll_y > 0
    # F4 picks the pane the keys scroll; so does focusing its text.
    await pilot.press("f4")
    two = screen.pane(2)
    assert two.has_class("-current") and not screen.pane(1).has_class("-current")
    await pilot.press("ctrl+end")
    assert two.answer.scroll_y == two.answer.max_scroll_y > 0
    three = screen.pane(3)
    three.answer.focus()
    # The focus arrives as a message: waited for (one pause was not always enough
    # with a core busy).
    await until(pilot, lambda: three.has_class("-current"), timeout=10)
    # With the pane focused, its own keys scroll it. (Textual's own End, PageUp and
    # Home animate the scroll: waited for, a busy machine ends it after the press.)
    view = three.answer
    await pilot.press("end")
    await until(pilot, lambda: view.scroll_y == view.max_scroll_y > 0, timeout=10)
    await pilot.press("pageup")
    await until(pilot, lambda: view.scroll_y < view.max_scroll_y, timeout=10)
    await pilot.press("home")
    await until(pilot, lambda: view.scroll_y == 0, timeout=10)


async def test_an_answer_cut_by_max_tokens_is_marked_cut(gateway_feed: GatewayFeed) -> None:
    # One size: 80 columns, where pane 2's text is drawn once its tab is shown.
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(80, 24)) as pilot:
        states = host.deck.panes
        states[0].params.max_tokens = 5
        states[1].params.max_tokens = 5
        states[1].endpoint = "anthropic"  # stop_reason "max_tokens"
        await ask_deck(pilot, host, gateway_feed, "explain connection pooling")
        one, two, three = host.deck.widgets
        for pane in (one, two):
            assert pane.status == "done" and pane.state.last_result is not None
            if pane is two:
                await pilot.press("f4")  # a hidden tab draws its text once shown
                await pilot.pause(0.2)
            assert pane.state.last_result.finish_reason in ("length", "max_tokens")
            assert "✂ CUT at max tokens (5 tokens)" in badge_text(pane)
            assert "cut at max tokens" in str(pane.query_one(PaneHeader).render())
            assert any(line.startswith("✂ CUT at max tokens")
                       for line in pane.answer._rendered_lines())
            assert len(pane.state.history) == 2  # still a committed answer
        assert "CUT" not in badge_text(three)
        assert "cut" not in str(three.query_one(PaneHeader).render())


# (In the app at 80x30 and 120x40 the view shrinks just after the turn ends, as the
# pane's footer grows: the turn was left a row off or scrolled to its end. That shrink,
# row by row: test_answer_view.py::test_a_revealed_turn_stays_at_its_prompt_as_the_view_shrinks.)
@pytest.mark.parametrize("size", SIZES)
async def test_a_pane_keeps_its_whole_conversation(
    gateway_feed: GatewayFeed, monkeypatch, size: tuple[int, int]
) -> None:
    # (the compare screen's Ctrl+N, which clears the deck: test_the_scroll_keys_can_be_rebound)
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    host = DeckHost(3, prompt=True, frozen_clock=False)
    async with host.run_test(size=size) as pilot:
        await ask_deck(pilot, host, gateway_feed, "first question")
        await ask_deck(pilot, host, gateway_feed, "second question")
        # The shown pane (the only one at 80 columns) after the follow-up: both turns.
        one = host.deck.pane(1)
        lines = one.answer._rendered_lines()
        first = lines.index("▌ first question")
        second = lines.index("▌ second question")
        assert lines[first - 1] == lines[second - 1] == "▌ You"
        assert first + 2 < second and any(line.strip() for line in lines[first + 1 : second])
        assert len(one.state.history) == 4
        # Finished while followed: the latest turn reads from its prompt (at the top of
        # the view if the turn is taller than it). The view settles after the footer
        # grows with the turn's figures (a layout later on a busy machine): waited for.

        def reads_from_its_prompt() -> bool:
            rows = visible_rows(one.answer)
            return "▌ second question" in rows and (
                rows[:2] == ["▌ You", "▌ second question"]
                or (rows[rows.index("▌ second question") - 1] == "▌ You"
                    and one.answer.scroll_y == one.answer.max_scroll_y))

        await until(pilot, reads_from_its_prompt)
        shown = visible_rows(one.answer)
        assert "▌ second question" in shown
        if shown[:2] != ["▌ You", "▌ second question"]:
            # Not at the top: the turn fits the view, shown whole at its end.
            assert one.answer.scroll_y == one.answer.max_scroll_y
            assert shown[shown.index("▌ second question") - 1] == "▌ You"
        # A cancelled turn stays in view, dimmed and marked, but out of the conversation.
        host.deck.panes[0].scenario = "slow_thinking"
        gateway_feed.play(host.deck, "third question")
        await until(pilot, lambda: one._chunks >= 3)
        await pilot.press("f1")
        await until(pilot, lambda: deck_settled(host))
        assert one.status == "cancelled"
        lines = one.answer._rendered_lines()
        third = lines.index("▌ third question")
        assert second < third
        # (Its note wraps in a narrow pane: read as one text.)
        after = " ".join(" ".join(lines[third:]).split())
        assert "CANCELLED" in after and "not part of the conversation" in after
        assert one.answer.turn_dimmed
        assert [t.content for t in one.state.history if t.role == "user"] == [
            "first question", "second question"]
        # A cleared deck (the compare screen's Ctrl+N) empties every pane.
        host.deck.clear()
        await pilot.pause()
        for pane in host.deck.widgets:
            assert pane.answer._rendered_lines() == [] and pane.state.history == []


async def test_scroll_keys_move_the_current_pane_under_tabs(gateway_feed: GatewayFeed,
                                                           fast_answers) -> None:
    # 80 columns: one pane shown at a time, under tabs.
    # (A tab shown by focusing its text draws what it read while hidden: test_deck.py.)
    host = DeckHost(3, models=["claude-sonnet-4-6"] * 3, prompt=True, frozen_clock=False)
    async with host.run_test(size=(80, 24)) as pilot:
        for prompt in ("explain connection pooling", "compare it with caching", "and queues"):
            await ask_deck(pilot, host, gateway_feed, prompt)  # taller than a 200x50 pane
        await _walk_the_scroll_keys(pilot, host.deck_screen, lambda: host.focused)


# -- the compare screen: what only it does ---------------------------------------------


async def ask(pilot: Pilot, app: AnomanApp, prompt: str) -> None:
    """Send `prompt` and wait until every pane has answered it."""
    await send(pilot, prompt)
    await until(pilot, lambda: settled(app) and all(p.last_prompt == prompt for p in app.panes))


def visible_rows(view: AnswerView) -> list[str]:
    return [view.render_line(y).text.strip()
            for y in range(view.scrollable_content_region.height)]


def record_notices(app: AnomanApp, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []
    notify = app.notify

    def recording(message: str, *args: object, **kwargs: object) -> None:
        said.append(message)
        notify(message, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(app, "notify", recording)
    return said


async def test_the_scroll_keys_can_be_rebound(make_app, fast_answers) -> None:
    app = make_app(models=["claude-sonnet-4-6"] * 3,
                   keymap={"scroll_pane_up": "f9", "answer_top": "f10"})
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        for prompt in ("explain connection pooling", "compare it with caching", "and queues"):
            await ask(pilot, app, prompt)
        answer = app.compare.pane(1).answer
        await pilot.press("ctrl+end")
        assert answer.scroll_y == answer.max_scroll_y > 0
        await pilot.press("shift+pageup")
        assert answer.scroll_y == answer.max_scroll_y, "the old key is free again"
        await pilot.press("f9")
        assert answer.scroll_y < answer.max_scroll_y
        answer.focus()
        await pilot.pause()
        await pilot.press("f10")
        assert answer.scroll_y == 0
        # Ctrl+N clears every pane (the deck's clear: test_a_pane_keeps_its_whole_conversation).
        await pilot.press("ctrl+n")
        await pilot.pause()
        for pane in panes(app):
            assert pane.answer._rendered_lines() == [] and pane.state.history == []


async def test_a_prompt_sent_while_panes_stream_aborts_them_on_a_second_enter(
    make_app, monkeypatch
) -> None:
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    app = make_app()
    said = record_notices(app, monkeypatch)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        app.panes[1].scenario = "slow_thinking"
        await send(pilot, "first question")
        two = app.compare.pane(2)
        await until(pilot, lambda: two._chunks >= 3 and app.compare.pane(1).status == "done")
        app.panes[1].scenario = "none"
        await send(pilot, "next question")
        await pilot.pause()
        assert any("Pane 2 still streams: press Enter again" in n for n in said)
        assert two.status == "streaming"
        assert app.panes[0].last_prompt == "first question"  # nothing sent yet
        await pilot.press("enter")  # the prompt is still in the box
        await until(pilot, lambda: all(p.last_prompt == "next question" for p in app.panes))
        await until(pilot, lambda: settled(app))
        assert [p.status for p in panes(app)] == ["done", "done", "done"]
        # Pane 2's first turn was cancelled: shown, but not part of its conversation.
        assert [t.content for t in app.panes[1].history if t.role == "user"] == [
            "next question"]
        lines = two.answer._rendered_lines()
        cancelled = next(i for i, line in enumerate(lines) if "CANCELLED" in line)
        assert lines.index("▌ first question") < cancelled < lines.index("▌ next question")


async def test_a_late_second_enter_only_repeats_the_notice(make_app, monkeypatch) -> None:
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    monkeypatch.setattr(prompting, "CONFIRM_SEND_S", 0.0)
    app = make_app()
    said = record_notices(app, monkeypatch)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        app.panes[1].scenario = "slow_thinking"
        await send(pilot, "first question")
        two = app.compare.pane(2)
        await until(pilot, lambda: two._chunks >= 3)
        await send(pilot, "next")
        await pilot.pause(0.05)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert two.status == "streaming"
        assert sum("press Enter again" in n for n in said) == 2
        await pilot.press("escape")
        await until(pilot, lambda: settled(app))
        assert all(p.last_prompt == "first question" for p in app.panes)



async def test_a_new_model_continues_the_panes_conversation(
        make_app, ui_gateway, fast_answers) -> None:
    """Changing a pane's model keeps its conversation: the gateway gets the earlier turns
    with the new model's first request (its metered prompt counts every one of them), and
    the pane says so. Ctrl+N still starts afresh."""
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await ask(pilot, app, "Name one sorting algorithm for a carry-over test")
        await ask(pilot, app, "And its worst case, for a carry-over test?")
        state = app.panes[0]
        earlier = [(t.role, t.content) for t in state.history]
        assert len(earlier) == 4
        app.compare.pick_model(1)
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        options = app.screen.query_one(OptionList)
        new_model = next(options.get_option_at_index(i).id for i in range(options.option_count)
                         if options.get_option_at_index(i).id != state.model)
        options.highlighted = next(i for i in range(options.option_count)
                                   if options.get_option_at_index(i).id == new_model)
        await pilot.press("enter")
        await until(pilot, lambda: state.model == new_model)
        assert [(t.role, t.content) for t in state.history] == earlier
        await until(pilot, lambda: "conversation carried over (2 turns)"
                    in "\n".join(screen_lines(app)))
        assert "conversation carried over (2 turns)" in badge_text(app.compare.pane(1))

        prompt = "Say that once more, for a carry-over test"
        await ask(pilot, app, prompt)
        result = state.last_result
        assert result is not None and result.committed
        await until(pilot, lambda: ui_gateway.state.ledger.get(result.request_id) is not None)
        row = ui_gateway.state.ledger.get(result.request_id)
        assert row is not None and row["model"] == new_model
        # What the gateway metered is the whole conversation, not the prompt alone.
        assert row["prompt_tokens"] == count_prompt_tokens([*earlier, ("user", prompt)])
        assert row["prompt_tokens"] > count_prompt_tokens([("user", prompt)])
        # The next turn no longer says it; Ctrl+N starts afresh.
        assert "carried over" not in badge_text(app.compare.pane(1))
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert state.history == []


async def test_a_follow_ups_reports_show_each_panes_own_earlier_answers(
        make_app, fast_answers) -> None:
    """The saved follow-up turn, exported in each format: every pane with the answers its
    own model gave to the earlier prompts (they differ), not pane 1's for all."""
    app = make_app(models=["anoman-lite", "qwen3-coder", "llama-3.3-70b"])
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await turn(pilot, "What is a bloom filter, for a report test?", 1)
        first = {p.state.index: p.state.last_result.text for p in panes(app)}
        assert len(set(first.values())) == 3  # three models, three answers
        await turn(pilot, "And when should I not use one, for a report test?", 2)
    record = saved()[0]
    with HistoryStore.open(default_path()) as store:
        record = store.get(record.id)
    assert record is not None and len(record.panes) == 3

    document = json.loads(export(record, "json"))
    for panel in document["panels"]:
        assert [t["content"] for t in panel["conversation"]] == [
            "What is a bloom filter, for a report test?", first[panel["panel"]]]

    def unique_lines(n: int) -> list[str]:
        return [line for line in first[n].splitlines() if len(line) > 20
                and all(line not in a for m, a in first.items() if m != n)]

    def earlier_md(section: str) -> str:
        quote = section.split("**Conversation so far**\n\n", 1)[1].split("\n")
        return "\n".join(line for line in quote[:next(
            (i for i, line in enumerate(quote) if not line.startswith(">")), len(quote))])

    # Each pane's earlier turns, as its section shows them.
    markdown = [earlier_md(section) for section in export(record, "md").split("\n## ")[2:]]
    page = [section.split('<details class="earlier" open>', 1)[1].split("</details>", 1)[0]
            for section in export(record, "html").split('<section class="pane ')[1:]]
    assert len(markdown) == len(page) == 3
    for n in first:
        ours = unique_lines(n)
        assert ours, first[n]
        assert all(line in markdown[n - 1] for line in ours)
        assert not any(line in markdown[n - 1] for m in first if m != n
                       for line in unique_lines(m))
        # In the HTML, rendered as Markdown (escaped), in its own pane only.
        # (each fenced block marked for its colours, as the page does)
        rendered = render_markdown(first[n]).replace("<pre><code", '<pre class="code"><code')
        assert "<p>" in rendered and rendered in page[n - 1]
        assert all(rendered not in page[m - 1] for m in first if m != n)
