"""Fixtures of the CLI tests: one local gateway per module (the conftest factory's)
and a data directory in a clean environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.cli.helpers import KEY
from tests.helpers import LocalGateways


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """The local gateway at its own pace, its rate limit out of the way, its key `KEY`."""
    return make_module_gateway(GatewayConfig(rate_limit_rpm=100_000), api_key=KEY)


@pytest.fixture
def data_home(clean_env: Path) -> Path:
    """Where `cli` keeps the history; nothing of the developer's `ANOMAN_*` or files."""
    return clean_env.parent / "data"
