"""The history screen (F6, the palette): newest first, filtered as one types; a comparison
reopened read-only exactly as it ended; re-run and continue; export from every screen.

Everything runs against the real local gateway and a real history file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.screens.text_input import TextInputScreen
from anoman_tui.ui.widgets.pane import ComparePane, PaneFooter
from tests.pilot import badge_text, ready, settled, until
from tests.ui.helpers import open_history, saved, screen_text, turn

SIZES = [(80, 24), (200, 50)]


def notes(app: AnomanApp) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


def listed(screen: HistoryScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def pane_view(pane: ComparePane) -> tuple[str, str, str, str]:
    """What a pane shows of its turn: status, answer, footer and badge."""
    footer = str(pane.query_one(PaneFooter).render())
    return pane.status, pane.answer.text, footer, badge_text(pane)


@pytest.mark.parametrize("size", SIZES)
async def test_history_lists_newest_first_and_filters_as_one_types(make_app, size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain pooling", 1)
        assert "f6 History" in screen_text(app).splitlines()[-1]
        app.panes[1].set_scenario("interrupt")  # pane 2 fails: its outcome is listed
        await turn(pilot, "explain sockets", 2)

        screen = await open_history(pilot)
        rows = listed(screen)
        assert "explain sockets" in rows[0] and "explain pooling" in rows[1]
        assert "✗ failed" in rows[0] and "✓ done" in rows[0] and "$" in rows[0]
        for model in (s.model for s in app.panes):
            assert model in rows[0]
        assert "History" in screen_text(app) and "2 comparisons" in screen_text(app)

        await pilot.press(*"sock")  # each word a prefix: "sock" finds "sockets"
        await until(pilot, lambda: len(listed(screen)) == 1)
        assert "explain sockets" in listed(screen)[0]
        screen.query_one(Input).value = app.panes[2].model  # by model: both
        await until(pilot, lambda: len(listed(screen)) == 2)
        screen.query_one(Input).value = "nothing-like-this"
        await until(pilot, lambda: not listed(screen))
        assert "Nothing matches" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.compare)


@pytest.mark.parametrize("size", SIZES)
async def test_a_reopened_comparison_is_shown_exactly_as_it_ended(make_app, size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        app.panes[1].set_scenario("interrupt")
        app.panes[2].set_scenario("guardrail")
        await turn(pilot, "explain pooling", 1)
        live = [pane_view(p) for p in app.compare.query(ComparePane)]
        assert live[1][0] == "failed" and live[2][0] == "failed" and live[1][3]

        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        record = app.screen
        assert isinstance(record, RecordScreen)
        await pilot.pause()
        shown = [pane_view(p) for p in record.query(ComparePane)]
        for now, then in zip(shown, live, strict=True):
            assert now == then, f"{now}\n{then}"  # answers, footers, badges
        text = screen_text(app)
        assert "read-only" in text and f"#{record.record.id}" in text
        assert not record.query("#prompt")  # nothing to type
        await pilot.press("f1", "ctrl+n")  # live-only keys do nothing here
        assert [pane_view(p) for p in record.query(ComparePane)] == live
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))


async def test_rerun_sends_the_same_prompt_to_the_same_models(make_app) -> None:
    app = make_app(system_prompt="Be brief.")
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain pooling", 1)
        models = [s.model for s in app.panes]
        for state in app.panes:  # the compare screen moved on to other models
            state.model = "qwen3-coder"
        app.compare.query_one("#system", Input).value = "Something else."

        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")  # the first choice: the same models
        await until(pilot, lambda: app.screen is app.compare)
        await until(pilot, lambda: settled(app) and len(saved()) == 2)
        again = saved()[0]
        assert again.prompt == "explain pooling" and again.system_prompt == "Be brief."
        assert [p.model for p in again.panes] == models
        assert again.conversation == ()  # a re-run, not a follow-up


async def test_rerun_with_other_models_picked_per_pane(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain pooling", 1)
        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        choice = app.screen
        options = choice.query_one(OptionList)
        options.highlighted = next(i for i in range(options.option_count)
                                   if options.get_option_at_index(i).id == "pick")
        await pilot.press("enter")
        for _ in range(3):  # one picker per pane: choose gpt-5-mini in each
            await until(pilot, lambda before=choice: isinstance(app.screen, ChoiceScreen)
                        and app.screen is not before)
            choice = app.screen
            options = choice.query_one(OptionList)
            options.highlighted = next(i for i in range(options.option_count)
                                       if options.get_option_at_index(i).id == "gpt-5-mini")
            await pilot.press("enter")
        await until(pilot, lambda: app.screen is app.compare)
        await until(pilot, lambda: settled(app) and len(saved()) == 2)
        assert [p.model for p in saved()[0].panes] == ["gpt-5-mini"] * 3


async def test_continue_brings_each_panes_own_conversation_back(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain pooling", 1)
        first = saved()[0]
        await pilot.press("ctrl+n")  # a new comparison: the screen forgets it
        assert all(not s.history for s in app.panes)

        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await pilot.press("c")
        await until(pilot, lambda: app.screen is app.compare)
        assert "Continuing comparison" in notes(app)
        for state, pane, saved_pane in zip(app.panes, app.compare.query(ComparePane),
                                           first.panes, strict=True):
            assert pane.answer.text == saved_pane.text and state.model == saved_pane.model
            assert [(t.role, t.content) for t in state.history] == [
                ("user", "explain pooling"), ("assistant", saved_pane.text)]
        await turn(pilot, "and sockets?", 2)
        follow_up = saved()[0]
        for pane, saved_pane in zip(follow_up.panes, first.panes, strict=True):
            # Each pane continued with its own answer, not the first pane's.
            assert pane.conversation == (("user", "explain pooling"),
                                         ("assistant", saved_pane.text))

        # Reopened, the follow-up shows the turn before it, above its own.
        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        record = app.screen
        assert "turn 2 of a conversation" in screen_text(app)
        for pane, saved_pane in zip(record.query(ComparePane), follow_up.panes, strict=True):
            assert pane.answer.text == saved_pane.text
            blocks = " ".join(block.raw for block in pane.answer._blocks)
            assert "explain pooling" in blocks and "and sockets?" in blocks
            earlier = first.panes[saved_pane.pane - 1].text.split("\n\n")[0]
            assert earlier in blocks


async def test_export_from_the_compare_screen_in_every_format(
        make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert [o.id for o in app.screen.query_one(OptionList)._options] == ["svg"]
        await pilot.press("escape")
        await turn(pilot, "explain <script>alert(1)</script> pooling", 1)
        record_id = saved()[0].id
        for fmt in ("md", "html", "json", "svg"):
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
            options = app.screen.query_one(OptionList)
            options.highlighted = next(i for i in range(options.option_count)
                                       if options.get_option_at_index(i).id == fmt)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, TextInputScreen))
            path = app.screen.query_one(Input).value
            assert path == str(tmp_path / f"comparison-{record_id}.{fmt}")
            await pilot.press("enter")
            await until(pilot, lambda path=path: Path(path).exists()
                        and f"Wrote {path}" in notes(app))
        files = {p.suffix: p.read_text() for p in tmp_path.glob("comparison-*")}
        assert "explain <script>alert(1)</script> pooling" in files[".md"]
        assert "<script>alert" not in files[".html"] and "&lt;script&gt;" in files[".html"]
        document = json.loads(files[".json"])
        assert document["id"] == record_id and len(document["panels"]) == 3
        assert files[".svg"].startswith("<svg") and "pooling" in files[".svg"]
        for text in files.values():  # the local gateway's key reaches no file
            assert app.connector.api_key and app.connector.api_key not in text

        # A second export does not overwrite the first; a taken name is refused.
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TextInputScreen))
        box = app.screen.query_one(Input)
        assert box.value.endswith(f"comparison-{record_id}-2.md")
        box.value = str(tmp_path / f"comparison-{record_id}.md")
        await pilot.press("enter")
        error = app.screen.query_one("#text-input-error")
        assert "already exists: type another name" in str(error.render())
        await pilot.press("escape")


async def test_export_from_the_history_list_and_a_reopened_comparison(
        make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain pooling", 1)
        record_id = saved()[0].id
        await open_history(pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        # (a comparison made on the screen is recorded: its recording can be exported too)
        assert [o.id for o in app.screen.query_one(OptionList)._options] == [
            "md", "html", "json", "recording"]
        await pilot.press("enter", "enter")
        await until(pilot, lambda: (tmp_path / f"comparison-{record_id}.md").exists())
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        options = app.screen.query_one(OptionList)
        options.highlighted = options.option_count - 1  # SVG: the reopened screen
        await pilot.press("enter", "enter")
        svg = tmp_path / f"comparison-{record_id}.svg"
        await until(pilot, lambda: svg.exists())
        assert "read-only" in svg.read_text().replace("&#160;", " ")


async def test_no_history_says_why_on_f6(make_app) -> None:
    app = make_app(history=False)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("f6")
        await pilot.pause()
        assert app.screen is app.compare
        assert re.search(r"No history to show: history is off", notes(app))
