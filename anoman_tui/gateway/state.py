"""Shared state of one running gateway: keys, ledger, cache, limits, open runs.

``GatewayState`` is created by ``create_app`` and lives on the event loop that
serves the app; only ``cancel_all`` is meant to be reached from elsewhere,
through the loop (``EmbeddedGateway.stop`` and the serve command do that on
shutdown, so in-flight streams end recorded as cancelled).

Imports the gateway's own modules and the standard library only.
"""

from __future__ import annotations

import hmac
import logging
from typing import Protocol

from anoman_tui.gateway.cache import AnswerCache
from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.gateway.config import GatewayConfig, KeyPolicy
from anoman_tui.gateway.faults import FaultPlan, FaultSyntaxError
from anoman_tui.gateway.ledger import UsageLedger
from anoman_tui.gateway.ratelimit import KeyRateLimiter

log = logging.getLogger("anoman_tui.gateway")


class CancellableRun(Protocol):
    """What the state needs of an in-flight run: a way to stop it.

    ``generation.GenerationRun`` is one. Typed by this protocol rather than by that
    class, because ``generation`` imports this module: the gateway's modules import
    each other without cycles (the `.importlinter` contracts keep it so).
    """

    def cancel(self, reason: str) -> None: ...


class GatewayState:
    """Everything a request handler needs beyond its own request."""

    def __init__(self, config: GatewayConfig, ledger: UsageLedger | None = None) -> None:
        self.config = config
        self.ledger = ledger if ledger is not None else UsageLedger(config.resolved_db_path())
        self.cache = AnswerCache(config.cache_max_entries)
        self.limiter = KeyRateLimiter()
        self.active: set[CancellableRun] = set()
        self._keys = [k.encode() for k in dict.fromkeys(config.api_keys) if k]
        self.model_faults: dict[str, FaultPlan] = {}
        for name, defaults in config.models.items():
            if name not in CATALOGUE:
                log.warning("config names unknown model %r; its settings are ignored", name)
            try:
                self.model_faults[name] = FaultPlan.parse(defaults.simulate)
            except FaultSyntaxError as exc:
                raise ValueError(f"models.{name}.simulate: {exc}") from None

    def authenticate(self, presented: str | None) -> str | None:
        """The matching configured key, compared in constant time, or None."""
        if not presented:
            return None
        candidate = presented.encode("utf-8", "replace")
        match: bytes | None = None
        # Compare against every key so the time taken does not reveal which one matched.
        for key in self._keys:
            if hmac.compare_digest(candidate, key):
                match = key
        return match.decode() if match is not None else None

    def policy_for(self, api_key: str) -> KeyPolicy | None:
        return self.config.key_policies.get(api_key)

    def cancel_all(self, reason: str) -> int:
        """Cancel every in-flight run (on shutdown); returns how many there were."""
        runs = list(self.active)
        for run in runs:
            run.cancel(reason)
        return len(runs)
