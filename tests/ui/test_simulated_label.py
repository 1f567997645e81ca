"""Simulated models say so on screen: the local gateway's `GET /v1/models` marks its
models `anoman.simulated`; each pane carries that fact (`PaneState.simulated`) into its
header, the status line, the saved record, the history list and a reopened turn, the
scoreboard and an SVG screenshot; a blind round names no model by it."""

from __future__ import annotations

import dataclasses

from textual.widgets import OptionList

from anoman_tui.history import ListedComparison, ListedPane
from anoman_tui.streaming import ModelInfo
from anoman_tui.streaming.cost import UNKNOWN
from anoman_tui.ui.render.pane_state import PaneState, simulated_field
from anoman_tui.ui.screens import export
from anoman_tui.ui.screens.history import HistoryScreen, record_option
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.screens.scoreboard import ScoreboardScreen
from anoman_tui.ui.widgets.pane import ComparePane, PaneHeader
from tests.pilot import ready, settled, submit, until
from tests.ui.deck_host import DeckHost
from tests.ui.screen_text import screen_lines, svg_lines


def header(pane: ComparePane) -> str:
    return str(pane.query_one(PaneHeader).render())


async def one_turn(pilot, app, prompt: str) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.history is not None)
    await submit(pilot, prompt)
    await until(pilot, lambda: settled(app) and app.compare.turns_ended)
    await until(pilot, lambda: any(r.prompt == prompt for r in app.history.recent(limit=5)))


async def test_the_header_says_simulated_and_fits_at_80x24() -> None:
    # The header is the pane's: a deck alone (tests/ui/deck_host.py), given what a target
    # lists of its models as the compare screen gives it. (That the local gateway's list
    # makes every pane simulated: the status line's test, next, on the app.)
    host = DeckHost(3, prompt=True,
                    model_info=lambda state: ModelInfo(state.model, simulated=True))
    async with host.run_test(size=(80, 24)) as pilot:
        pane = host.deck.pane(1)
        await until(pilot, lambda: "simulated" in header(pane)
                    and all(p.simulated for p in host.deck.panes))
        assert f"{pane.state.model} @local · simulated" in header(pane)
        # Whole on screen, in the one pane an 80-column terminal shows.
        await until(pilot, lambda: any(f"{pane.state.model} @local · simulated" in line
                                       for line in screen_lines(host)))
        # A model the server does not say is simulated: no label.
        pane.model_info = lambda state: None
        pane.refresh_chrome()
        assert not pane.state.simulated and "simulated" not in header(pane)


async def test_the_status_line_says_simulated(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: "simulated models: not real answers" in screen_lines(app)[0])


def test_the_status_field_names_simulated_panes_but_no_blind_one() -> None:
    def panes(*simulated: bool, label: bool = False) -> list[PaneState]:
        return [PaneState(index=i, model=f"m{i}", simulated=s, label="ABC"[i - 1] if label else "")
                for i, s in enumerate(simulated, start=1)]

    assert simulated_field(panes(False, False, False)) is None
    assert simulated_field(panes(True, False, True)) == ("", "simulated: panes 1, 3", True)
    assert "not real answers" in simulated_field(panes(True, True, True))[1]  # type: ignore[index]
    blind = simulated_field(panes(True, False, False, label=True))
    assert blind is not None and "1" not in blind[1] and "after the vote" in blind[1]


async def test_a_saved_turn_the_history_list_and_a_reopened_turn_say_simulated(
    make_app, fast_answers
) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await one_turn(pilot, app, "simulated or not")
        record = app.compare.turn_record("simulated or not")
        assert record is not None and all(p.simulated for p in record.panes)
        saved = app.history.get(app.history.recent(limit=1)[0].id)
        assert saved is not None and len(saved.panes) == 3
        assert all(p.simulated for p in saved.panes)  # the store kept it

        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        await until(pilot, lambda: history.shown_at is not None)  # type: ignore[attr-defined]
        first = str(history.query_one(OptionList).get_option_at_index(0).prompt)
        assert f"{saved.panes[0].model} · simulated" in first
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        reopened = app.screen

        def reopened_headers() -> list[str]:
            # (A pane mounted before its header is not counted yet.)
            return [header(p) for p in reopened.query(ComparePane) if p.query(PaneHeader)]

        # (Its panes queried until there are three: a query made as soon as it is the
        # app's screen may find none, and the check then holds for no pane. Its status
        # line waited for too.)
        await until(pilot, lambda: len(reopened_headers()) == 3
                    and all("simulated" in h for h in reopened_headers()))
        await until(pilot, lambda: "simulated models: not real answers"
                    in " ".join(screen_lines(app)[:2]))

        # A reopened turn says what its record says, not what the model list says now.
        real = dataclasses.replace(saved, panes=tuple(
            dataclasses.replace(p, simulated=False) for p in saved.panes))
        app.push_screen(RecordScreen(real, app.compare, id="record-not-simulated"))
        await until(pilot, lambda: isinstance(app.screen, RecordScreen)
                    and app.screen.record is real)  # type: ignore[attr-defined]
        screen = app.screen

        def headers() -> list[str]:
            # (A pane mounted before its header is not counted yet: seen on a loaded
            # machine, the query found the pane and no header in it.)
            return [header(p) for p in screen.query(ComparePane) if p.query(PaneHeader)]

        await until(pilot, lambda: len(headers()) == 3 and all(
            p.model in h for p, h in zip(real.panes, headers(), strict=True)))
        assert not any("simulated" in h for h in headers())


def test_the_history_list_hides_which_pane_of_an_unvoted_blind_round_is_simulated() -> None:
    def listed(*simulated: bool, hidden: bool) -> ListedComparison:
        return ListedComparison(id=7, created_at=0.0, prompt="p", follow_up=False, panes=tuple(
            ListedPane(i, "ABC"[i - 1], "completed", UNKNOWN, s)
            for i, s in enumerate(simulated, start=1)), blind=True, hidden=hidden)

    def text(record: ListedComparison) -> str:
        return str(record_option(record).prompt)

    assert "simulated" not in text(listed(True, False, False, hidden=True))
    assert text(listed(True, True, True, hidden=True)).count("simulated") == 3
    assert text(listed(True, False, False, hidden=False)).count("simulated") == 1


async def test_the_scoreboard_marks_simulated_models(make_app, fast_answers) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await one_turn(pilot, app, "a voted turn")
        assert app.history is not None
        assert app.panes[1].model in app.history.simulated_models()
        app.compare.sighted_vote(2)
        await until(pilot, lambda: app.history.recent(limit=1)[0].vote is not None)
        app.action_scoreboard()
        await until(pilot, lambda: isinstance(app.screen, ScoreboardScreen))
        board = app.screen
        await pilot.press("s")  # blind and sighted votes
        await until(pilot, lambda: len(board.rows) == 3)  # type: ignore[attr-defined]
        await until(pilot, lambda: f"{app.panes[1].model} (simulated)"
                    in "\n".join(screen_lines(app)))


async def test_an_svg_screenshot_says_simulated(make_app, fast_answers, monkeypatch) -> None:
    pictures: list[str] = []
    monkeypatch.setattr(export, "export_comparison",
                        lambda app, record, *, svg=None, **_: pictures.append(svg or ""))
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await one_turn(pilot, app, "a turn to picture")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(pictures))
        drawn = svg_lines(pictures[0], app.size)
        assert "simulated" in pictures[0]
        assert any(f"{app.panes[0].model} @local · simulated" in line for line in drawn)
