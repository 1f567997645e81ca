"""The parameter dialog (Ctrl+P → Parameters for pane N) refuses what the command line
refuses, with the same ranges (`anoman_tui.parameters`): it stays open and says why,
and the pane keeps its parameters until a valid value is saved."""

from __future__ import annotations

from textual.widgets import Input, Label

from anoman_tui.config import Settings
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render.pane_state import PaneParams
from anoman_tui.ui.screens.pickers import ParamsScreen
from tests.pilot import palette, until


async def test_the_parameter_dialog_refuses_and_explains_out_of_range_values() -> None:
    app = AnomanApp(Settings(), models=["m1", "m2", "m3"], connect=False, frozen_clock=True)
    async with app.run_test(size=(120, 40)) as pilot:
        (entry,) = [c for c in palette(app) if c.title == "Parameters for pane 1"]
        app.call_later(entry.callback)
        await until(pilot, lambda: isinstance(app.screen, ParamsScreen))
        dialog = app.screen
        temperature = dialog.query_one("#temperature", Input)
        max_tokens = dialog.query_one("#max-tokens", Input)
        error = dialog.query_one("#params-error", Label)

        async def save(temp: str, tokens: str) -> None:
            temperature.value, max_tokens.value = temp, tokens
            temperature.focus()
            await pilot.press("enter")
            await pilot.pause()

        for typed in ("9", "inf", "nan", "-0.5", "hot"):
            await save(typed, "")
            assert app.screen is dialog, typed
            assert str(error.render()) == (
                f"Temperature must be a number from 0 to 2, not {typed}."), typed
        await save("0.5", "0")
        assert app.screen is dialog
        assert str(error.render()) == (
            "Max tokens must be a whole number from 1 to 1000000, not 0.")
        assert app.panes[0].params == PaneParams()  # nothing taken while refused
        await save("0.5", "64")
        await until(pilot, lambda: app.screen is not dialog)
        assert app.panes[0].params == PaneParams(0.5, 64)
