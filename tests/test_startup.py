"""What the compare screen's first paint does not wait for.

`anoman-tui` imports the app (`anoman_tui.ui.app`) before its first frame; everything it
needs only later is imported where first used, after the first paint
(benchmarks/startup.py measures the paint against the import of Textual and httpx). One
fresh interpreter imports the app and reports which of the heaviest deferred modules it
brought in: one that creeps back into the path fails here, named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DEFERRED = {
    # The HTTP client (a third of what the baseline imports): what the screens name of
    # the gateway's answers lives apart from it (streaming/gateway_answers.py).
    "httpx": "the HTTP client",
    # The HTTP stack below httpx (and trio, which httpcore imports when installed): the
    # network thread and the JSON client import it as they start.
    "httpcore": "the stream client's HTTP stack",
    "h11": "the stream client's HTTP stack",
    "anyio": "the stream client's HTTP stack",
    "trio": "imported by httpcore when installed",
    "anoman_tui.streaming.client": "the stream client",
    "anoman_tui.streaming.pacing": "the stream client's pacing",
    "anoman_tui.wire": "the wire models (a pane names their types only)",
    # The local gateway starts in a thread beside the UI, after the first paint.
    "anoman_tui.gateway": "the local gateway",
    "uvicorn": "the local gateway's server",
    "starlette": "the local gateway's app",
    # The settings are read with the standard library; pydantic-settings (its sources for
    # dotenv, cloud vaults, a CLI...) is the local gateway's.
    "pydantic_settings": "the local gateway's settings",
    # Plain settings and the built-in targets are checked without pydantic (~0.14 s of
    # CPU with its models); its models check tables, a variable's text and bad values.
    "pydantic": "the settings' tables, a variable's text and bad values; requests",
    "anoman_tui.target_config": "a config's [targets.NAME] tables",
    "anoman_tui.streaming.request": "a request (pydantic), built with the first prompt",
    # The answer renderer: the first paint shows no answer; the warm-up thread after it
    # (or the first block) imports it.
    "anoman_tui.ui.render.markdown_render": "the answer renderer",
    "anoman_tui.ui.render.fence_render": "the answer renderer",
    "markdown_it": "the answer renderer's Markdown parser",
    "rich.markdown": "the answer renderer",
    "rich.syntax": "the answer renderer's code fences",
    "pygments": "the answer renderer's code fences",
    # The history opens in a thread after the first paint.
    "anoman_tui.history": "the history store",
    "sqlite3": "the history store",
    "psycopg": "the shared history's driver",
    # Screens other than compare, and what only they use.
    "anoman_tui.ui.screens.arena": "the arena screen",
    "anoman_tui.ui.screens.record": "a reopened comparison",
    "anoman_tui.ui.screens.replay": "the replay screen",
    "anoman_tui.ui.screens.usage": "the usage screen",
    "anoman_tui.ui.screens.history": "the history screen",
    "anoman_tui.ui.screens.suite": "the suite screen",
    # The compare screen's dialogs (a picker, a text box) and its diffs: on first use.
    "anoman_tui.ui.screens.pickers": "the pickers (model, target, diff, ...)",
    "anoman_tui.ui.screens.text_input": "the gateway URL and key dialogs",
    "anoman_tui.ui.render.diff": "the word diff (F7)",
    # A rerun's figures, under its panes; the deck's tab strip, shown in a narrow terminal.
    "anoman_tui.report.rerun": "a rerun's figures (its panes' lines against the original)",
    "textual.widgets._tabs": "the deck's tab strip (made when it is first narrow)",
    # The X-Anoman-Simulate vocabulary (suites/scenarios.py, light) comes with the panes;
    # the suite files, the engine and what they import do not.
    "anoman_tui.suites.model": "suites",
    "anoman_tui.suites.loader": "suites",
    "anoman_tui.suites.engine": "suites",
    "anoman_tui.report.export": "report exporters",
    "numpy": "the arena's ratings",
    "yaml": "promptfoo configs",
    "genai_prices": "the price library (warmed up in a thread)",
}

PROBE = f"""
import json, sys
import anoman_tui.ui.app
print(json.dumps(sorted(m for m in {sorted(DEFERRED)!r} if m in sys.modules)))
"""


def test_importing_the_app_leaves_the_deferred_modules_out() -> None:
    # This checkout's package first, whatever is installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120, check=True)
    imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert not imported, "; ".join(
        f"importing anoman_tui.ui.app imports {name} ({DEFERRED[name]}): import it where "
        "it is first used, after the first paint" for name in imported)


def test_the_collector_is_back_on_after_the_first_paint() -> None:
    # `anoman-tui` starts with the cyclic collector off (nothing built before the first
    # paint is garbage); the app's freeze just after that paint turns it back on.
    import gc

    from anoman_tui.ui.app import _freeze_startup_objects

    gc.disable()
    try:
        _freeze_startup_objects()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
