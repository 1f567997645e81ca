"""Fixtures and switches for the fault-and-abuse suite.

Long soak and load runs are marked ``slow``; ``tests/conftest.py`` skips them
unless ``pytest --run-slow`` is given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.helpers import LocalGateways
from tests.reliability.helpers import fast_config


@pytest.fixture(autouse=True)
def isolated_env(clean_env: Path) -> Path:
    """Never read or write the developer's config, data or log files."""
    return clean_env


@pytest.fixture(scope="module")
def rel_gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """One fast local gateway per test module, with its own ledger."""
    return make_module_gateway(fast_config())
