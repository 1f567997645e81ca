"""Driving `AnomanApp` with Pilot against scripted servers (no local gateway start-up)."""

from __future__ import annotations

from rich.segment import Segment
from textual.pilot import Pilot

from anoman_tui.config import Settings
from anoman_tui.streaming import EndpointFormat, ModelInfo
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.messages import GatewayReady

# Re-exported: the suite's tests take every Pilot helper from here.
from tests.pilot import badge_text as badge_text
from tests.pilot import panes as panes
from tests.pilot import settled as settled
from tests.pilot import submit
from tests.pilot import until as until
from tests.reliability.helpers import KEY

send = submit  # the suite's name for it


def remote_app(base_url: str, models: list[str], endpoint: EndpointFormat = "openai",
               *, idle_timeout: float = 0.5, key: str = KEY) -> AnomanApp:
    """An app aimed at `base_url` as a remote gateway; `connect_to` finishes the start-up."""
    settings = Settings(base_url=base_url, api_key=key, endpoint=endpoint,  # type: ignore[arg-type]
                        idle_timeout=idle_timeout, theme="anoman-dark")
    return AnomanApp(settings, models=models, connect=False)


async def connect_to(pilot: Pilot, base_url: str) -> AnomanApp:
    app = pilot.app
    assert isinstance(app, AnomanApp)
    models = [ModelInfo(m) for m in dict.fromkeys(p.model for p in app.panes)]
    app.compare.post_message(GatewayReady(base_url, base_url, models))
    await until(pilot, lambda: app.compare.base_url is not None)
    return app


def screen_text(app: AnomanApp) -> str:
    """Everything the screen shows right now, as plain text."""
    update = app.screen._compositor.render_full_update()
    return "\n".join("".join(strip.text for strip in line) for line in update.strips)


def screen_segments(app: AnomanApp) -> list[Segment]:
    """Every segment of a full repaint of the screen."""
    update = app.screen._compositor.render_full_update()
    return [seg for line in update.strips for strip in line for seg in strip]


def terminal_bytes(app: AnomanApp) -> str:
    """What Textual would write to a real terminal for a full repaint of the screen."""
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)
