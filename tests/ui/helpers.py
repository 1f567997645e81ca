"""Helpers several UI test modules share (the fixtures are in ``conftest.py``): a bare
host app for one `AnswerView`, and driving the app through turns and its history."""

from __future__ import annotations

import asyncio
import time

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from anoman_tui.history import ComparisonRecord, HistoryStore, default_path
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.widgets.answer_view import AnswerView
from tests.pilot import settled, submit, until
from tests.ui.screen_text import screen_lines

# -- one AnswerView on its own ------------------------------------------------------


class Host(App[None]):
    CSS = "AnswerView { height: 1fr; }"

    def __init__(self, **options: bool) -> None:
        super().__init__()
        self.options = options

    def compose(self) -> ComposeResult:
        yield AnswerView(**self.options)


async def drained(pilot: Pilot[None], view: AnswerView, timeout: float = 10.0) -> None:
    """Wait until every appended delta has been flushed (and finish() completed)."""
    deadline = time.monotonic() + timeout
    while not view.caught_up:
        assert time.monotonic() < deadline, "AnswerView did not drain in time"
        await asyncio.sleep(0.01)  # (not `pilot.pause`: see `tests.pilot.until`)
    await pilot.pause()


# -- the app, its turns and its history ---------------------------------------------


def saved() -> list[ComparisonRecord]:
    if not default_path().exists():
        return []
    with HistoryStore.open(default_path()) as store:
        return store.recent(limit=100)


def screen_text(app: AnomanApp) -> str:
    return "\n".join(screen_lines(app))


async def turn(pilot: Pilot[None], prompt: str, count: int) -> None:
    """Send `prompt` from the compare screen; wait until it ended and was saved."""
    app = pilot.app
    assert isinstance(app, AnomanApp)
    await submit(pilot, prompt)
    await until(pilot, lambda: settled(app) and len(saved()) == count)


async def open_history(pilot: Pilot[None]) -> HistoryScreen:
    await pilot.press("f6")
    await until(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen))
    screen = pilot.app.screen
    assert isinstance(screen, HistoryScreen)
    await until(pilot, lambda: screen.shown_at is not None)
    return screen
