"""Pieces the tests share that are not fixtures: the local gateway's test configuration
and the starter behind the gateway fixtures of ``tests/conftest.py``; a loopback server
that records what each request carried; `anoman-tui` as a subprocess; a stream request
to a loopback server.

Test modules import shared code from modules like this one (never from a ``test_*``
module or a ``conftest.py``: ``tests/test_test_layout.py`` checks it).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anoman_tui.gateway.config import GatewayConfig, ModelDefaults
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.streaming import ChatTurn, EndpointFormat, StreamRequest
from tests.frames import ANTHROPIC_EXAMPLE_STREAM, OPENAI_EXAMPLE_STREAM
from tests.replay_server import RecordedRequest, ReplayServer, Script

# The simulated models run this much faster than life unless a test says otherwise.
FAST_TIME_SCALE = 0.02


def gateway_config(*, time_scale: float = FAST_TIME_SCALE,
                   faults: Mapping[str, str] | None = None,
                   **overrides: object) -> GatewayConfig:
    """A local gateway's configuration for tests: fast simulated models and limits out of
    the way (rate and concurrency), then ``overrides`` (any `GatewayConfig` field).

    ``faults`` maps a model to its `X-Anoman-Simulate` plan, as `[models.NAME] simulate`
    in the gateway's config file would.
    """
    values: dict[str, object] = {
        "time_scale": time_scale,
        "rate_limit_rpm": 100_000,
        "max_concurrent_streams": 1_000,
    }
    if faults:
        values["models"] = {model: ModelDefaults(simulate=plan) for model, plan in faults.items()}
    values.update(overrides)
    return GatewayConfig.model_validate(values)


class LocalGateways:
    """Starts local gateways (real uvicorn on a free loopback port, each with its own
    ledger under a scratch directory) and stops every one of them in ``stop_all``.

    Calling it returns the started `EmbeddedGateway`: ``base_url``, ``api_key``,
    ``state`` (the running gateway's state: ledger, faults, in-flight runs), ``config``
    and ``db_path``. ``start()`` returns once uvicorn has bound its port and finished
    its start-up, so the gateway answers straight away.
    """

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch
        self._started: list[EmbeddedGateway] = []

    def __call__(self, config: GatewayConfig | None = None, *,
                 time_scale: float = FAST_TIME_SCALE,
                 faults: Mapping[str, str] | None = None,
                 api_key: str | None = None,
                 db_path: Path | None = None,
                 **overrides: object) -> EmbeddedGateway:
        """Start one gateway: ``config`` as given, or else `gateway_config` of
        ``time_scale``, ``faults`` and ``overrides``. ``api_key`` is accepted besides
        the config's keys (default: a fresh random one); ``db_path`` is its ledger."""
        if config is not None and (faults or overrides or time_scale != FAST_TIME_SCALE):
            raise TypeError("give either a whole config or the values to build one, not both")
        if config is None:
            config = gateway_config(time_scale=time_scale, faults=faults, **overrides)
        if db_path is None:
            db_path = self._scratch / f"gateway-{len(self._started)}.sqlite3"
        gateway = EmbeddedGateway(config, db_path=db_path, api_key=api_key)
        self._started.append(gateway)
        return gateway.start()

    def stop_all(self) -> None:
        """Stop every gateway started here (one a test stopped already is left as is)."""
        while self._started:
            self._started.pop().stop()


# -- a loopback server that records requests (tests/test_settings.py and others) -----

LISTED = ["listed-1", "listed-2", "listed-3"]  # the models RecordingGateway lists


class RecordingGateway(ReplayServer):
    """Loopback HTTP: lists three models, records every request and answers any model.

    It answers with the example stream of the request's format, or, with
    `stall`, sends the headers and stays silent until the client gives up.
    """

    def __init__(self) -> None:
        super().__init__()
        self.stall = False
        listing = json.dumps({"data": [{"id": m} for m in LISTED]}).encode()
        self._listing = Script(content_type="application/json", body=[listing], chunked=False)

    @property
    def streams(self) -> list[RecordedRequest]:
        """The generation requests (not the model listing), oldest first."""
        return [r for r in self.requests if r.method == "POST"]

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method != "POST":  # the model list, under whatever base URL path
            return self._listing if request.path.endswith("/v1/models") else super().script_for(
                request)
        if self.stall:
            return Script(body=[], ending="hang")
        frames = (ANTHROPIC_EXAMPLE_STREAM if "/anthropic/" in request.path
                  else OPENAI_EXAMPLE_STREAM)
        return Script(body=list(frames))


async def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`anoman-tui ARGS` in a subprocess with this environment plus ``env``:
    (exit status, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# -- a stream request to a loopback server ------------------------------------------

STREAM_KEY = "anm-sk-test-0123456789abcdef"


def make_request(server: ReplayServer, model: str, endpoint: EndpointFormat = "openai",
                 **kw: Any) -> StreamRequest:
    """A short story asked of ``model`` on ``server``, with ``STREAM_KEY``."""
    return StreamRequest(
        base_url=server.base_url,
        api_key=STREAM_KEY,
        endpoint=endpoint,
        model=model,
        messages=(ChatTurn(role="user", content="Tell me a short story"),),
        **kw,
    )
