"""Fixtures for the gateway's functional tests: real uvicorn on loopback.

``gateway`` is one local gateway per test session (fast simulated models, generous
limits, tmp ledger); a test that needs its own configuration starts one with
``make_local_gateway(fast_config(...))`` (``tests/conftest.py``), stopped after the
test. The helpers are in ``tests/gateway/helpers.py``.
"""

from __future__ import annotations

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.gateway.helpers import fast_config
from tests.helpers import LocalGateways


@pytest.fixture(scope="session")
def gateway(make_session_gateway: LocalGateways) -> EmbeddedGateway:
    return make_session_gateway(fast_config())
