"""Fixtures for the gateway's functional tests: real uvicorn on loopback.

``gateway`` is one EmbeddedGateway per test session (fast simulated models,
generous limits, tmp ledger); ``make_gateway`` starts extra ones with their
own configuration and stops them after the test. Helpers parse SSE by hand so
the tests check the bytes the gateway writes, not a client's view of them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from anoman_tui.gateway.config import GatewayConfig, KeyPolicy
from anoman_tui.gateway.embedded import EmbeddedGateway

POLICY_KEY = "anm-sk-local-policy-test-key-0001"


def fast_config(**overrides: Any) -> GatewayConfig:
    """Simulated models 50x faster than life; limits out of the way."""
    values: dict[str, Any] = {
        "time_scale": 0.02,
        "rate_limit_rpm": 100_000,
        "max_concurrent_streams": 1_000,
        "non_stream_timeout_s": 5.0,
        "api_keys": [POLICY_KEY],
        "key_policies": {POLICY_KEY: KeyPolicy(allowed_models=["anoman-lite"], max_tokens=500)},
    }
    values.update(overrides)
    return GatewayConfig(**values)


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedGateway]:
    db = tmp_path_factory.mktemp("gateway") / "usage.sqlite3"
    gw = EmbeddedGateway(fast_config(), db_path=db)
    gw.start()
    yield gw
    gw.stop()


@pytest.fixture
def make_gateway(tmp_path: Path) -> Iterator[Callable[..., EmbeddedGateway]]:
    started: list[EmbeddedGateway] = []

    def make(config: GatewayConfig | None = None, **kwargs: Any) -> EmbeddedGateway:
        gw = EmbeddedGateway(config or fast_config(), db_path=tmp_path / f"u{len(started)}.db",
                             **kwargs)
        gw.start()
        started.append(gw)
        return gw

    yield make
    for gw in started:
        gw.stop()


def auth(gw: EmbeddedGateway, style: str = "bearer") -> dict[str, str]:
    if style == "bearer":
        return {"Authorization": f"Bearer {gw.api_key}"}
    return {"x-api-key": gw.api_key}


def prompt(text: str = "Explain connection pooling in Postgres") -> str:
    """A prompt no other test sends, so the cache never interferes."""
    return f"{text} (case {uuid.uuid4().hex[:8]})"


def chat_body(model: str = "anoman-lite", text: str | None = None, stream: bool = True,
              **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text or prompt()}],
            "stream": stream, **extra}


@dataclass
class SSEFrame:
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(raw: bytes) -> list[SSEFrame]:
    """Frames of an SSE body; the gateway writes one `data:` line per frame."""
    frames = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        frames.append(SSEFrame(event, "\n".join(data)))
    return frames


def post_stream(gw: EmbeddedGateway, path: str, body: dict[str, Any],
                headers: dict[str, str] | None = None) -> tuple[httpx.Response, list[SSEFrame]]:
    with httpx.Client(base_url=gw.base_url, timeout=30) as client:
        response = client.post(path, json=body, headers={**auth(gw), **(headers or {})})
    return response, parse_sse(response.content)


def wait_row(gw: EmbeddedGateway, request_id: str, timeout: float = 3.0) -> dict[str, Any]:
    """The ledger row of ``request_id`` (rows land right after the response ends)."""
    deadline = time.monotonic() + timeout
    while True:
        row = gw.state.ledger.get(request_id)
        if row is not None:
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"no ledger row for {request_id}")
        time.sleep(0.005)
