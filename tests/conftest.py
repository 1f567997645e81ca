from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.replay_server import ReplayServer


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    server = ReplayServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
