"""The local Anoman-compatible gateway (Starlette on uvicorn).

It speaks the wire contract of docs/wire-contract.md for three endpoints (OpenAI chat
completions, Anthropic Messages, the Anoman playground), streams answers of
simulated models, runs guardrails, rate limits and a cache before the first
token, injects faults on request (`X-Anoman-Simulate`), and meters every
request into a SQLite ledger. `anoman-tui serve` runs it in the foreground;
``EmbeddedGateway`` runs it in-process on a free loopback port.

Modules: ``config`` (GatewayConfig), ``app`` (create_app, the pipeline),
``generation`` (pacing, faults, cancellation, metering of one run),
``frames`` (bytes on the wire), ``catalogue`` / ``composer`` / ``tokenizer``
(the simulated models), ``judge`` (the simulated judge, `anoman-judge`),
``guardrails``, ``faults``, ``ratelimit``, ``cache``, ``ledger`` (UsageLedger,
format_usage_table), ``embedded`` (EmbeddedGateway), ``serve`` (the CLI command).

This package imports no Textual and nothing from the client side
(`anoman_tui.ui`, `anoman_tui.streaming`). The names below are re-exported
lazily so that importing the package stays cheap.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anoman_tui.gateway.app import create_app as create_app
    from anoman_tui.gateway.catalogue import CATALOGUE as CATALOGUE
    from anoman_tui.gateway.catalogue import SimulatedModel as SimulatedModel
    from anoman_tui.gateway.config import GatewayConfig as GatewayConfig
    from anoman_tui.gateway.embedded import EmbeddedGateway as EmbeddedGateway
    from anoman_tui.gateway.ledger import UsageLedger as UsageLedger
    from anoman_tui.gateway.ledger import format_usage_table as format_usage_table
    from anoman_tui.gateway.serve import add_serve_arguments as add_serve_arguments
    from anoman_tui.gateway.serve import serve_main as serve_main

# A library logger: the host application decides where records go. Without this,
# Python's last-resort handler would print warnings onto the terminal UI.
logging.getLogger(__name__).addHandler(logging.NullHandler())

_EXPORTS = {
    "create_app": "anoman_tui.gateway.app",
    "CATALOGUE": "anoman_tui.gateway.catalogue",
    "SimulatedModel": "anoman_tui.gateway.catalogue",
    "GatewayConfig": "anoman_tui.gateway.config",
    "EmbeddedGateway": "anoman_tui.gateway.embedded",
    "UsageLedger": "anoman_tui.gateway.ledger",
    "format_usage_table": "anoman_tui.gateway.ledger",
    "add_serve_arguments": "anoman_tui.gateway.serve",
    "serve_main": "anoman_tui.gateway.serve",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
