"""UI fixtures: one fast local gateway for the session, and an app factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from anoman_tui.config import Settings
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.ui.app import AnomanApp


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never read or write the developer's own config, data or log files."""
    path = tmp_path / "config.toml"
    monkeypatch.setenv("ANOMAN_CONFIG", str(path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("ANOMAN_BASE_URL", "ANOMAN_API_KEY", "ANOMAN_MODELS"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture(scope="session")
def ui_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedGateway]:
    config = GatewayConfig(time_scale=0.05, rate_limit_rpm=100_000, max_concurrent_streams=1_000)
    gw = EmbeddedGateway(config, db_path=tmp_path_factory.mktemp("ui-gw") / "usage.sqlite3")
    gw.start()
    yield gw
    gw.stop()


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
def fast_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request without a demo scenario streams its whole answer in a blink: for tests
    about what is on screen once answers are there, not about how they arrive."""
    from anoman_tui.ui.render import pane_state

    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none", "ttft=0,rate=4000")
