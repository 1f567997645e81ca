"""Fixtures and switches for the fault-and-abuse suite.

Long soak and load runs are marked ``slow``; ``tests/conftest.py`` skips them
unless ``pytest --run-slow`` is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never read or write the developer's config, data or log files."""
    monkeypatch.setenv("ANOMAN_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("ANOMAN_BASE_URL", "ANOMAN_API_KEY", "ANOMAN_MODELS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def fast_config(**overrides: Any) -> GatewayConfig:
    """Simulated models far faster than life, limits out of the way."""
    values: dict[str, Any] = {
        "time_scale": 0.02,
        "rate_limit_rpm": 1_000_000,
        "max_concurrent_streams": 100_000,
        "non_stream_timeout_s": 5.0,
        # A stalled body gets its 408 in 4 s rather than the default 10 (the trickling
        # client's whole body takes 2 s, well within it).
        "body_timeout_s": 4.0,
    }
    values.update(overrides)
    return GatewayConfig(**values)


@pytest.fixture(scope="module")
def rel_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedGateway]:
    """One fast local gateway per test module, with its own ledger."""
    gw = EmbeddedGateway(fast_config(), db_path=tmp_path_factory.mktemp("rel-gw") / "u.sqlite3")
    gw.start()
    yield gw
    gw.stop()
