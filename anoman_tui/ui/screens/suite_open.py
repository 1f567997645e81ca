"""Opening a suite on the suite screen from inside the app: Ctrl+P → *Run a suite…* (a
path, completed as you type) and a suite run picked in the history (F6), which reopens
on the screen (continued if it had stopped, shown if it ended).

The run is prepared as `anoman-tui eval` prepares it without flags
(`suites.prepare.eval_request`), on the app's loop through the pool its cells then use
(`suite.suite_client`, closed with the suite screen); models on the local gateway
stream from one started for the run (its per-key rate limit lifted, as the headless
run's is), stopped when the suite screen closes.

May import: Textual, the suites, the history, the gateway (to start the local one).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.suggester import Suggester

if TYPE_CHECKING:
    from textual.app import App

    from anoman_tui.config import Settings
    from anoman_tui.history import HistoryStore
    from anoman_tui.targets import LocalGateway


class PathSuggester(Suggester):
    """Completes the last part of a path from what its folder holds: folders (with a
    `/`) and suite files (`.toml`, `.yaml`, `.yml`)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        path = Path(value).expanduser()
        folder, stem = (path, "") if value.endswith("/") else (path.parent, path.name)
        try:
            names = sorted(entry.name + ("/" if entry.is_dir() else "")
                           for entry in folder.iterdir()
                           if entry.name.startswith(stem) and not entry.name.startswith(".")
                           and (entry.is_dir() or entry.suffix in (".toml", ".yaml", ".yml")))
        except OSError:
            return None
        if not names or names[0] == stem:
            return None
        return value + names[0][len(stem):]


def _start_local() -> LocalGateway:
    from anoman_tui.gateway.config import GatewayConfig
    from anoman_tui.gateway.embedded import EmbeddedGateway

    return EmbeddedGateway(GatewayConfig(rate_limit_rpm=1_000_000)).start()


def check_suite_path(text: str) -> str | None:
    """A sentence when `text` cannot be a suite file (the dialog shows it)."""
    path = Path(text).expanduser()
    if not text:
        return "Type the path of a suite file (.toml) or a promptfoo config (.yaml)."
    if not path.is_file():
        return f"No file at {path}."
    return None


async def open_suite(app: App[Any], settings: Settings, store: HistoryStore | None, *,
                     path: Path | None = None, run_id: str | None = None) -> None:
    """Prepare the suite at `path` (a new run) or the run `run_id` (continued, or shown
    when it ended), then push the suite screen; a problem is one notice, never a
    traceback."""
    from anoman_tui.history import HistoryUnavailable
    from anoman_tui.suites.loader import SuiteError, load_suite
    from anoman_tui.suites.model import Suite
    from anoman_tui.suites.prepare import EvalRefused, eval_request, prepare_run
    from anoman_tui.ui.screens.suite import SuiteScreen, suite_client

    async with contextlib.AsyncExitStack() as unless_shown:
        try:
            if run_id is not None:
                if store is None:
                    app.notify("The history is not available: no run to reopen.",
                               severity="error")
                    return
                stored = await asyncio.to_thread(store.run, run_id)
                if stored is None:
                    app.notify(f"No run {run_id} in the history.", severity="error")
                    return
                suite = Suite.from_json(stored.suite)
                request = eval_request(settings, suite, run_id=stored.run_id,
                                       stored=dict(stored.settings))
            else:
                assert path is not None
                suite = await asyncio.to_thread(load_suite, path)
                request = eval_request(settings, suite)
            app.notify(f"Preparing {suite.name}…", timeout=2)
            client = await unless_shown.enter_async_context(suite_client(request))
            prepared = await prepare_run(request, store, _start_local, client)
        except SuiteError as exc:
            app.notify(exc.message, title="Suite", severity="error", timeout=10)
            return
        except EvalRefused as exc:
            app.notify(exc.reason, title="Suite", severity="error", timeout=10)
            return
        except HistoryUnavailable as exc:
            app.notify(f"The history: {exc.reason}", severity="error", timeout=8)
            return
        except (KeyError, TypeError, ValueError) as exc:
            app.notify(f"Run {run_id} cannot be read back: {exc}", severity="error",
                       timeout=8)
            return
        unless_shown.pop_all()  # the client is the screen's now: closed with it
    for line in prepared.warnings:
        app.notify(line, severity="warning", timeout=8)
    await app.push_screen(SuiteScreen(prepared, stop_gateway=True, client=client,
                                      close_client=True))
