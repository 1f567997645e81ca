"""A key pressed as soon as the screen appears is not lost: F6 (the history) and F5 (the
usage ledger) pressed the moment the status line first shows, while the history is
still opening and the gateway still starting, open what they name once it is there."""

from __future__ import annotations

import asyncio
import time

import pytest
from textual import events
from textual.pilot import Pilot

from anoman_tui.history import HistoryStore
from anoman_tui.streaming.client import StreamClient
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.usage import UsageScreen
from anoman_tui.ui.widgets.status_line import StatusLine
from tests.pilot import until
from tests.ui.screen_text import screen_lines

OPENING_S = 0.6  # how long the history and the gateway's model list take to come


@pytest.fixture
def slow_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The history opens and the gateway answers a moment after the first paint, as a
    shared history's server or a busy machine make them: a key pressed at the first
    paint always comes before them."""
    real_open = HistoryStore.open.__func__  # type: ignore[attr-defined]

    def open_slowly(cls: type[HistoryStore], *args: object, **kwargs: object) -> HistoryStore:
        time.sleep(OPENING_S)  # (in the app's opening thread)
        return real_open(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(HistoryStore, "open", classmethod(open_slowly))
    real_list = StreamClient.list_models

    async def list_slowly(self: StreamClient, *args: object, **kwargs: object) -> object:
        await asyncio.sleep(OPENING_S)
        return await real_list(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(StreamClient, "list_models", list_slowly)


async def first_status_line(pilot: Pilot[None]) -> None:
    """Return the moment the compare screen's status line first shows text."""
    app = pilot.app
    deadline = time.monotonic() + 30
    while True:
        lines = app.screen.query(StatusLine)
        if lines and "anoman-tui" in str(lines.first().render()):
            return
        assert time.monotonic() < deadline, "the status line never showed"
        await asyncio.sleep(0.001)


def press_now(app: AnomanApp, key: str) -> None:
    """The key as a terminal delivers it, at once: `Pilot.press` would first wait for
    the app to go idle (by then the gateway has answered)."""
    app.post_message(events.Key(key, None))


@pytest.mark.parametrize("attempt", range(3))
async def test_f6_at_the_first_paint_opens_the_history(make_app, slow_start, attempt) -> None:
    app: AnomanApp = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await first_status_line(pilot)
        assert app.history is None  # still opening: the case under test
        press_now(app, "f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen), timeout=20)
        await until(pilot, lambda: "No comparisons" in "\n".join(screen_lines(app))
                    or app.screen.shown_at is not None, timeout=20)  # type: ignore[attr-defined]
        assert sum(isinstance(s, HistoryScreen) for s in app.screen_stack) == 1


@pytest.mark.parametrize("attempt", range(2))
async def test_f5_at_the_first_paint_shows_the_ledger(make_app, slow_start, attempt) -> None:
    app: AnomanApp = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await first_status_line(pilot)
        assert app.connector.ready_url is None  # still starting: the case under test
        press_now(app, "f5")
        await until(pilot, lambda: isinstance(app.screen, UsageScreen), timeout=20)
        await until(pilot, lambda: "requests, newest first" in "\n".join(screen_lines(app)),
                    timeout=20)
        assert "not ready" not in "\n".join(screen_lines(app))
        assert sum(isinstance(s, UsageScreen) for s in app.screen_stack) == 1
