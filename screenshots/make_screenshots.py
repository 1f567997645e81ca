"""Make the README's screenshots from the real app against the real local gateway.

    python screenshots/make_screenshots.py

Writes idle.svg, streaming.svg, mixed-outcomes.svg and light-theme.svg next to
this file. The app runs headless (`App.run_test`) with an embedded gateway
whose models run at their normal speed, a temporary config (so your own is
not touched) and scenarios set from the command palette's choices.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZE = (150, 42)


async def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="anoman-shots-"))
    os.environ["ANOMAN_CONFIG"] = str(tmp / "config.toml")
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")
    from anoman_tui.config import Settings
    from anoman_tui.gateway.config import GatewayConfig
    from anoman_tui.gateway.embedded import EmbeddedGateway
    from anoman_tui.ui.app import AnomanApp

    gateway = EmbeddedGateway(GatewayConfig(), db_path=tmp / "usage.sqlite3").start()
    models = ["claude-sonnet-4-6", "anoman-lite", "deepseek-r1"]

    async def until(pilot, check, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise RuntimeError("the app did not reach the expected state")
            await pilot.pause(0.05)

    async def type_prompt(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
        pilot.app.compare.query_one("#prompt").text = text
        await pilot.press("enter")

    def settled(app: AnomanApp) -> bool:
        return all(p.status in ("done", "failed", "cancelled") for p in app.panes)

    try:
        app = AnomanApp(Settings(theme="anoman-dark"), models=models,
                        gateway_factory=lambda: gateway)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.compare.base_url is not None)
            await pilot.pause(0.3)
            app.save_screenshot(str(HERE / "idle.svg"))

            await type_prompt(pilot, "How should I size a Postgres connection pool?")
            await until(pilot, lambda: app.compare.pane(1).answer.text.count("\n") > 12
                        and app.compare.pane(3).status == "streaming")
            await pilot.pause(0.3)
            app.save_screenshot(str(HERE / "streaming.svg"))
            await until(pilot, lambda: settled(app))

            await pilot.press("ctrl+n")
            app.panes[1].scenario = "interrupt"
            app.panes[2].scenario = "guardrail"
            app.compare.pane(2).refresh_chrome()
            app.compare.pane(3).refresh_chrome()
            await type_prompt(pilot, "Summarise the incident report for the on-call team")
            await until(pilot, lambda: settled(app))
            await pilot.pause(0.5)
            app.save_screenshot(str(HERE / "mixed-outcomes.svg"))

            app.theme = "anoman-light"
            for pane in app.panes:
                pane.scenario = "none"
            await pilot.press("ctrl+n")
            await type_prompt(pilot, "Write a Python function that retries with backoff")
            await until(pilot, lambda: settled(app))
            await pilot.pause(0.5)
            app.save_screenshot(str(HERE / "light-theme.svg"))
    finally:
        gateway.stop()
    print("wrote", ", ".join(sorted(p.name for p in HERE.glob("*.svg"))))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
