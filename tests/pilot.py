"""Shared Pilot helpers for tests that drive `AnomanApp`: waiting, and reading panes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import SystemCommand
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import TextArea

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.palette import OffersCommands
from anoman_tui.ui.widgets.pane import ComparePane, PaneBadge

POLL_S = 0.02


async def until(pilot: Pilot, check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Return once `check()` holds, and what the app had queued by then is handled.

    Polled with a plain sleep: `pilot.pause` between polls has every widget of the
    screen run a callback (measured ~10 ms of CPU a poll on the compare screen, half
    the app's time while a test waits), slowing the very work it waits for. One
    `pilot.pause` once it holds, as the last poll's was before.
    """
    if check():
        return
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(POLL_S)
        if check():
            break
    await pilot.pause(0)


def palette(app: AnomanApp, screen: Screen[Any] | None = None) -> list[SystemCommand]:
    """Every entry the command palette offers on `screen` (default: the one shown): the
    app's own and the screen's (`anoman_tui.ui.palette`)."""
    screen = app.screen if screen is None else screen
    own = list(screen.palette_commands()) if isinstance(screen, OffersCommands) else []
    return [*app.get_system_commands(screen), *own]


def panes(app: AnomanApp) -> list[ComparePane]:
    return list(app.compare.query(ComparePane))


def settled(app: AnomanApp) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in panes(app))


def badge_text(pane: ComparePane) -> str:
    badge = pane.query_one(PaneBadge)
    return str(badge.render()) if badge.display else ""


async def ready(pilot: Pilot) -> AnomanApp:
    """The app under test, once it is connected to its gateway."""
    app = pilot.app
    assert isinstance(app, AnomanApp)
    await until(pilot, lambda: app.compare.base_url is not None)
    return app


async def send(pilot: Pilot, prompt: str) -> None:
    """Type `prompt` into the prompt box, key by key as a person would, and press Enter."""
    await pilot.click("#prompt")
    # Each character is its own key event, as from a fast typist: posted at once rather
    # than through `press`, which waits for the process to go idle after every key
    # (40-90 ms a character, most of the suite's typing time).
    for ch in prompt:
        pilot.app.post_message(events.Key(_character_to_key(ch), ch))
    await pilot.pause()
    await pilot.press("enter")


async def submit(pilot: Pilot, prompt: str) -> None:
    """Put `prompt` in the prompt box and press Enter (typing it key by key is slow)."""
    box = pilot.app.screen.query_one("#prompt", TextArea)
    box.focus()
    box.load_text(prompt)
    box.move_cursor(box.document.end)
    await pilot.press("enter")
