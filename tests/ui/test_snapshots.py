"""What the compare screen looks like in its main states, with frozen clocks.

Streams are scripted (fixed events at fixed instants), so every figure in a
footer is the same on every run; spinners stand still in frozen mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from anoman_tui.config import Settings
from anoman_tui.streaming import ModelInfo, StreamFailure
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.messages import GatewayReady
from anoman_tui.wire import GuardrailVerdict
from tests.ui.scripted import ScriptedStream, completed, failed, text_events

MODELS = ["claude-sonnet-4-6", "anoman-lite", "deepseek-r1"]
SIZE = (150, 42)

ANSWER = (
    "## Connection pooling\n\n"
    "A pool keeps **warm connections** ready so each request skips the handshake.\n\n"
    "- Size it to the database's `max_connections`\n"
    "- Recycle connections older than an hour\n\n"
    "| setting | value |\n|---|---|\n| min | 2 |\n| max | 20 |\n\n"
    "```python\npool = create_pool(min_size=2, max_size=20)\n```\n"
)
SHORT = "Keep a **small pool**: 10 connections per instance is plenty. Measure before tuning."
REASONING = "The user asks about pools. Pools trade memory for latency. I should mention sizing."


def make_app() -> AnomanApp:
    return AnomanApp(
        Settings(theme="anoman-dark"), models=MODELS, frozen_clock=True, connect=False
    )


async def _ready(pilot: Pilot) -> AnomanApp:
    app = pilot.app
    assert isinstance(app, AnomanApp)
    app.compare.post_message(
        GatewayReady("http://127.0.0.1:8787", "local gateway (127.0.0.1:8787)",
                     [ModelInfo(m) for m in MODELS])
    )
    await pilot.pause()
    return app


def _start(app: AnomanApp, pane: int, stream: ScriptedStream, prompt: str = "pools?") -> None:
    app.compare.pane(pane).start(stream, prompt)  # type: ignore[arg-type]


async def _settle(pilot: Pilot) -> None:
    for _ in range(5):
        await pilot.pause(0.1)


def test_idle(snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _ready(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_three_panes_streaming(snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        app = await _ready(pilot)
        _start(app, 1, ScriptedStream(text_events(ANSWER[:220], ttft=0.42, rate=60), hold=True))
        _start(app, 2, ScriptedStream(text_events(SHORT[:60], ttft=0.08, rate=220), hold=True))
        _start(app, 3, ScriptedStream(
            text_events("", ttft=2.1, rate=30, reasoning=REASONING)[:-1], hold=True))
        await _settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_mixed_outcomes(snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        app = await _ready(pilot)
        _start(app, 1, ScriptedStream(completed(text_events(ANSWER, ttft=0.42, rate=60),
                                                prompt_tokens=12, cost="0.000921", weight=4)))
        interrupted = StreamFailure(
            kind="stream_error", detail="upstream stream interrupted",
            type="provider_error", code="stream_interrupted",
            failure_class="upstream_error", completion_tokens=9)
        _start(app, 2, ScriptedStream(failed(text_events(SHORT, ttft=0.08, rate=220)[:11],
                                             interrupted)))
        blocked = StreamFailure(
            kind="http_error", detail="request blocked by guardrails", status=403,
            type="guardrail_blocked",
            guardrails={"injection": GuardrailVerdict(status="pass", score=0.02),
                        "pii": GuardrailVerdict(status="block", score=0.97)})
        _start(app, 3, ScriptedStream(failed([], blocked)))
        await _settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_light_theme_narrow(snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        app = await _ready(pilot)
        app.theme = "anoman-light"
        _start(app, 1, ScriptedStream(completed(text_events(ANSWER, ttft=0.42, rate=60),
                                                prompt_tokens=12, cost="0.000921", weight=4,
                                                hit=True)))
        await _settle(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 36), run_before=run_before)


@pytest.fixture(autouse=True)
def _no_theme_writes(isolated_config: Path) -> None:
    """Theme changes in snapshots write to the test's own config file only."""
