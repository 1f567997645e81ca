"""UI fixtures: one fast local gateway for the session, and an app factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from anoman_tui.config import Settings
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.ui.app import AnomanApp
from tests.helpers import LocalGateways
from tests.ui.deck_host import GatewayFeed


@pytest.fixture(autouse=True)
def isolated_config(clean_env: Path) -> Path:
    """Never read or write the developer's own config, data or log files: the config
    file's path (not created), from `clean_env` (tests/conftest.py)."""
    return clean_env


@pytest.fixture(scope="session")
def ui_gateway(make_session_gateway: LocalGateways) -> EmbeddedGateway:
    return make_session_gateway(time_scale=0.05)


@pytest.fixture
def make_app(ui_gateway: EmbeddedGateway) -> Callable[..., AnomanApp]:
    def make(models: list[str] | None = None, **settings: object) -> AnomanApp:
        values: dict[str, object] = {"idle_timeout": 1.5, "theme": "anoman-dark"}
        values.update(settings)
        return AnomanApp(
            Settings(**values),  # type: ignore[arg-type]
            models=models or ["anoman-lite", "claude-sonnet-4-6", "qwen3-coder"],
            gateway_factory=lambda: ui_gateway,
        )

    return make


@pytest.fixture
def gateway_feed(ui_gateway: EmbeddedGateway) -> Iterator[GatewayFeed]:
    """Real streams for a `DeckHost`'s panes from the session's local gateway."""
    feed = GatewayFeed(ui_gateway)
    yield feed
    feed.stop()


@pytest.fixture
def fast_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request without a demo scenario streams its whole answer in a blink: for tests
    about what is on screen once answers are there, not about how they arrive."""
    from anoman_tui.ui.render import pane_state

    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none", "ttft=0,rate=4000")
