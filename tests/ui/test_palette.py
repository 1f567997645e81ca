"""The command palette as opened with Ctrl+P: each screen's own entries (its
`palette_commands()`, through `anoman_tui.ui.palette.ScreenCommands`), then the app's
theme, keys and quit; the app adds nothing that acts on a screen."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.compare import CompareScreen
from anoman_tui.ui.screens.usage import UsageScreen
from tests.pilot import palette, ready, until

APP_WIDE = ["Keys", "Quit", "Theme"]


async def listed(pilot: Pilot[None], query: str = "") -> list[str]:
    """The titles the opened palette lists for `query`, top to bottom; closes it."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    for ch in query:
        await pilot.press(ch if ch != " " else "space")
    palette_screen = app.screen
    # "-ready": every provider has answered and the list holds all they offered.
    await until(pilot, lambda: palette_screen.has_class("-ready"))
    options = palette_screen.query_one(CommandList)
    titles = [options.get_option_at_index(i).prompt.plain.split("\n")[0]
              for i in range(options.option_count)]
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
    return titles


async def test_compare_screen_lists_its_entries_then_the_apps(make_app) -> None:
    app: AnomanApp = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        own = sorted(c.title for c in app.compare.palette_commands())
        assert {"Model for pane 1", "Reconnect now", "History", "Arena mode"} <= set(own)
        for _ in range(2):  # the same order each time it opens
            assert await listed(pilot) == [*own, *APP_WIDE]
        # A typed query searches both: the screen's entry and the app's.
        found = await listed(pilot, "quit")
        assert found[0] == "Quit"
        assert "Toggle cache bypass" in await listed(pilot, "cache bypass")


async def test_the_app_offers_only_app_wide_entries(make_app) -> None:
    app: AnomanApp = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert sorted(c.title for c in app.get_system_commands(app.compare)) == APP_WIDE
        titles = [c.title for c in palette(app)]
        assert len(titles) == len(set(titles))  # nothing offered twice
        # A screen without entries of its own: the app's only.
        app.action_usage()
        await until(pilot, lambda: isinstance(app.screen, UsageScreen))
        assert await listed(pilot) == APP_WIDE
        assert not isinstance(app.screen, CompareScreen)
