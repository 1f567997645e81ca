"""Pieces the tests share that are not fixtures: the local gateway's test configuration
and the starter behind the gateway fixtures of ``tests/conftest.py``.

Test modules import shared code from modules like this one (never from a ``test_*``
module or a ``conftest.py``: ``tests/test_test_layout.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from anoman_tui.gateway.config import GatewayConfig, ModelDefaults
from anoman_tui.gateway.embedded import EmbeddedGateway

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
