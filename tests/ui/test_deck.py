"""The pane deck in a small host app (tests/ui/deck_host.py): N panes fed by sources, the
messages it posts (asserted with `message_hook`), and what a person reads on screen.

Also the structure the deck stands for: no screen inherits another screen, no UI module
imports a private name, and no screen reads a private attribute of a widget.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.screen import Screen

from anoman_tui.streaming import StreamFailure
from anoman_tui.ui.widgets.deck import LiveSource, PaneDeck, SavedSource
from anoman_tui.ui.widgets.frame_clock import FrameClock
from anoman_tui.ui.widgets.pane import PaneFooter
from tests.pilot import until
from tests.ui.deck_host import DeckHost, Posted
from tests.ui.screen_text import screen_lines
from tests.ui.scripted import ScriptedStream, completed, failed, text_events

UI = Path(__file__).resolve().parents[2] / "anoman_tui" / "ui"
ANSWERS = ["Pools keep warm connections", "Size the pool to the database",
           "Recycle old connections hourly", "Measure before tuning anything",
           "Ten per instance is plenty", "Queues smooth the bursts"]


def answer(n: int, *, ttft: float = 0.1, cost: str = "0.0001") -> ScriptedStream:
    return ScriptedStream(completed(text_events(ANSWERS[n - 1], ttft=ttft, rate=100),
                                    prompt_tokens=5, cost=cost, weight=1))


def held(n: int) -> ScriptedStream:
    """Pane `n`'s answer so far, then nothing until it is aborted."""
    return ScriptedStream(text_events(ANSWERS[n - 1], ttft=0.1, rate=100), hold=True)


def ended(host: DeckHost) -> bool:
    return not host.deck.running and all(p.status != "idle" for p in host.deck.panes)


def text(pilot: Pilot) -> str:
    return "\n".join(screen_lines(pilot.app))


@pytest.mark.parametrize("count", [2, 3, 4])
async def test_a_turn_streams_into_every_pane_and_ends_once(count: int) -> None:
    host, posted = DeckHost(count), Posted()
    async with host.run_test(size=(60 * count, 30), message_hook=posted) as pilot:
        host.deck.play("pools?", {n: LiveSource(answer(n)) for n in range(1, count + 1)})
        await until(pilot, lambda: ended(host) and bool(posted.of(PaneDeck.TurnEnded)))
        await pilot.pause()
        shown = text(pilot)
        for n in range(1, count + 1):
            assert ANSWERS[n - 1] in shown
        started = posted.of(PaneDeck.TurnStarted)
        assert [m.panes for m in started] == [tuple(range(1, count + 1))]  # type: ignore[attr-defined]
        assert sorted(m.pane for m in posted.of(PaneDeck.PaneEnded)) == list(  # type: ignore[attr-defined]
            range(1, count + 1))
        assert len(posted.of(PaneDeck.TurnEnded)) == 1


async def test_panes_ending_in_the_same_instant_end_the_turn_once() -> None:
    host, posted = DeckHost(3), Posted()
    async with host.run_test(size=(180, 30), message_hook=posted) as pilot:
        # Every pane's whole answer at once: all three done before the first finish is
        # handled.
        host.deck.play("hit", {n: LiveSource(ScriptedStream(completed(
            text_events(ANSWERS[n - 1], ttft=0.0, rate=1e6), prompt_tokens=3, cost="0",
            weight=1, hit=True))) for n in (1, 2, 3)})
        await until(pilot, lambda: len(posted.of(PaneDeck.PaneEnded)) == 3)
        await pilot.pause(0.2)
        assert len(posted.of(PaneDeck.TurnEnded)) == 1


async def test_abort_keys_end_one_pane_then_all() -> None:
    host, posted = DeckHost(3), Posted()
    async with host.run_test(size=(180, 30), message_hook=posted) as pilot:
        host.deck.play("hold", {n: LiveSource(held(n)) for n in (1, 2, 3)})
        await until(pilot, lambda: all(p.status == "streaming" for p in host.deck.panes))
        await pilot.press("f2")
        await until(pilot, lambda: host.deck.panes[1].status == "cancelled")
        assert host.deck.running == [1, 3]
        assert not posted.of(PaneDeck.TurnEnded)
        await pilot.press("escape")
        await until(pilot, lambda: bool(posted.of(PaneDeck.TurnEnded)))
        assert [p.status for p in host.deck.panes] == ["cancelled"] * 3
        await pilot.pause()
        assert text(pilot).count("cancelled") >= 3  # each header says so


async def test_marks_go_to_the_fastest_and_cheapest_once_the_turn_ends() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(180, 30)) as pilot:
        host.deck.play("race", {1: LiveSource(answer(1, ttft=0.05, cost="0.0009")),
                                2: LiveSource(answer(2, ttft=0.5, cost="0.0001")),
                                3: LiveSource(answer(3, ttft=0.9, cost="0.0005"))})
        await until(pilot, lambda: ended(host))
        await pilot.pause()
        shown = text(pilot)
        assert "★ fastest first token" in shown and "★ cheapest" in shown
        marks = {n: host.deck.pane(n).figures() for n in (1, 2, 3)}
        assert marks[1].ttft_s is not None and marks[1].ttft_s < marks[2].ttft_s  # type: ignore[operator]


async def test_a_failed_pane_shows_its_badge_and_gets_no_mark() -> None:
    host, posted = DeckHost(2), Posted()
    async with host.run_test(size=(160, 30), message_hook=posted) as pilot:
        blocked = StreamFailure(kind="http_error", detail="request blocked by guardrails",
                                status=403, type="guardrail_blocked")
        host.deck.play("fail", {1: LiveSource(answer(1)),
                                2: LiveSource(ScriptedStream(failed([], blocked)))})
        await until(pilot, lambda: bool(posted.of(PaneDeck.TurnEnded)))
        await pilot.pause()
        assert host.deck.panes[1].status == "failed"
        shown = text(pilot)
        assert "403" in shown and "guardrail" in shown.lower()
        assert host.deck.pane(2).figures().completed is False


async def test_zoom_shows_the_current_pane_alone_and_back() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(180, 30)) as pilot:
        host.deck.play("z", {n: LiveSource(answer(n)) for n in (1, 2, 3)})
        await until(pilot, lambda: ended(host))
        await pilot.press("f4")  # pane 2 becomes the current one
        await pilot.press("f8")
        await pilot.pause()
        assert host.deck.zoomed and host.deck_screen.has_class("-zoomed")
        assert [p.display for p in host.deck.widgets] == [False, True, False]
        assert ANSWERS[1] in text(pilot) and ANSWERS[0] not in text(pilot)
        await pilot.press("f8")
        await pilot.pause()
        assert all(p.display for p in host.deck.widgets)


async def test_a_narrow_deck_shows_one_pane_under_tabs() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(90, 30)) as pilot:
        await pilot.pause()
        assert host.deck.narrow and host.deck_screen.has_class("-narrow")
        assert [p.display for p in host.deck.widgets] == [True, False, False]
        host.deck.make_current(3)
        await pilot.pause()
        assert [p.display for p in host.deck.widgets] == [False, False, True]


LONG = "\n\n".join(f"Paragraph {i} of a long answer, long enough to wrap." for i in range(80))


async def test_a_tab_shown_by_focusing_its_text_draws_what_it_read_while_hidden(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A pane shown by focusing its text (Tab, a click) at times got no Show nor Resize
    # (see `when_laid_out`): its text, read while its tab was hidden, was never drawn, nor
    # its footer redrawn to its width. It took a frame drawn between the focus and the
    # layout that shows the pane: the frame clock draws at any moment; here, always just
    # before the screen takes in a layout, and four panes are shown so (about half of
    # them went undrawn before the fix, so nearly every run failed).
    laid_out = Screen._on_layout

    async def drawn_first(screen: Screen[None], message: Message) -> None:
        FrameClock.of(screen.app).draw_now()
        await laid_out(screen, message)

    monkeypatch.setattr(Screen, "_on_layout", drawn_first)
    host = DeckHost(5)
    async with host.run_test(size=(80, 24)) as pilot:
        events = completed(text_events(LONG, ttft=0.01, rate=5000.0), prompt_tokens=5,
                           cost="0.0001", weight=1)
        host.deck.play("q", {n: LiveSource(ScriptedStream(list(events))) for n in range(1, 6)})
        await until(pilot, lambda: ended(host))
        one, *others = host.deck.widgets
        footer = str(one.query_one(PaneFooter).render())
        for pane in others:
            assert not pane.display and not pane.answer.caught_up  # read, not drawn yet
            pane.answer.focus()
            await until(pilot, lambda p=pane: p.display and p.answer.caught_up, timeout=5)
            assert any("Paragraph 79" in line for line in pane.answer._rendered_lines())
            # Its footer drawn to its width, as pane 1's (the same answer, same figures).
            assert str(pane.query_one(PaneFooter).render()) == footer


async def test_a_diff_shows_one_pane_against_another_and_goes() -> None:
    host = DeckHost(2)
    async with host.run_test(size=(160, 30)) as pilot:
        host.deck.play("d", {1: LiveSource(answer(1)), 2: LiveSource(answer(2))})
        await until(pilot, lambda: ended(host))
        host.deck.diff_panes(1, 2)
        await pilot.pause()
        assert host.deck.pane(2).diff_base == 1 and host.deck.current == 2
        assert "diff vs 1" in text(pilot)
        host.deck.diff_off()
        await pilot.pause()
        assert host.deck.pane(2).diff_base is None
        assert "diff vs 1" not in text(pilot)


async def test_a_saved_turn_is_shown_ended_without_a_turn_of_messages() -> None:
    host, posted = DeckHost(2), Posted()
    async with host.run_test(size=(160, 30), message_hook=posted) as pilot:
        host.deck.play("live", {1: LiveSource(answer(1))})
        await until(pilot, lambda: bool(posted.of(PaneDeck.TurnEnded)))
        result = host.deck.panes[0].last_result
        assert result is not None
        posted.messages.clear()
        host.deck.play("again", {2: SavedSource(result, earlier=(("before", "an answer"),))})
        await pilot.pause(0.2)
        assert posted.messages == []
        assert host.deck.panes[1].status == "done"
        shown = text(pilot)
        assert "an answer" in shown and ANSWERS[0] in shown


async def test_the_host_boots_quickly() -> None:
    # The point of the host: a deck test pays for a deck, not for the app.
    begun = time.perf_counter()
    async with DeckHost(3).run_test(size=(180, 30)) as pilot:
        await pilot.pause()
    assert time.perf_counter() - begun < 5.0


# -- structure ------------------------------------------------------------------------------


def _screen_classes() -> dict[str, list[str]]:
    """Every class of ui/screens, by name, with the names of its bases."""
    found = {}
    for path in (UI / "screens").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found[node.name] = [ast.unparse(base).split("[")[0] for base in node.bases]
    return found


def test_no_screen_inherits_another_screen() -> None:
    classes = _screen_classes()
    screens = {name for name, bases in classes.items()
               if any(b in ("Screen", "ModalScreen") for b in bases)}
    inheriting = {name: bases for name, bases in classes.items()
                  if name in screens or any(b in screens for b in bases)}
    offenders = {name: [b for b in bases if b in screens]
                 for name, bases in inheriting.items() if any(b in screens for b in bases)}
    assert offenders == {}
    # ...and the screens that show panes each compose a deck.
    for module in ("compare", "arena", "record", "replay", "suite_case"):
        assert "PaneDeck(" in (UI / "screens" / f"{module}.py").read_text(), module


def test_no_ui_module_imports_a_private_name() -> None:
    offences = []
    for path in UI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                offences += [f"{path.name}:{node.lineno} {node.module}.{a.name}"
                             for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert offences == []


def test_no_widget_imports_a_screen_or_the_app() -> None:
    # The deck and its panes sit below the screens that compose them.
    offences = []
    for path in (UI / "widgets").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    ("anoman_tui.ui.screens", "anoman_tui.ui.app")):
                offences.append(f"{path.name}:{node.lineno} {node.module}")
    assert offences == []


def test_no_screen_reads_a_private_attribute_of_another_object() -> None:
    offences = []
    for path in (UI / "screens").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
                continue
            offences.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert offences == []
