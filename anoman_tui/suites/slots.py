"""One model of a suite, resolved: where its requests go and how (the engine's and the
judge's).

Plain data. May import: the standard library, the stream core and `anoman_tui.targets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from anoman_tui.streaming import EndpointFormat, ModelInfo
from anoman_tui.targets import Connection


@dataclass(frozen=True)
class ModelSlot:
    """One of the suite's models, resolved: where its requests go and how."""

    spec: str
    """As the suite writes it (`litellm:gpt-4o-mini`): the results' `model`."""
    model: str
    """The id sent."""
    pane: int
    """1-based: its pane in each case's comparison (the suite's order)."""
    connection: Connection = field(repr=False)
    endpoint: EndpointFormat = "openai"
    info: ModelInfo | None = None
    """What its target lists about it (prices, whether it is simulated)."""
    scenario: str | None = None
    """The local gateway's `X-Anoman-Simulate` value for it (`[simulate]`)."""

    @property
    def target_name(self) -> str:
        return self.connection.name

    @property
    def simulated(self) -> bool:
        return self.info is not None and self.info.simulated
