"""What the screens use of the app, as a type: where requests go and how they travel.

The app (`ui/app.py`) imports the screens, so a screen that imported the app for its
type would close an import cycle (the layer contracts in `.importlinter` forbid
cycles). Screens reach these through `app_services(self.app)` instead; `AnomanApp`
provides every member (a test checks it does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.app import App

from anoman_tui.config import Settings
from anoman_tui.streaming import ModelInfo
from anoman_tui.targets import Connection, Target
from anoman_tui.ui.network import NetworkThread

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, HistoryStore


class AppServices(Protocol):
    settings: Settings
    network: NetworkThread
    api_key: str
    """The key requests carry (the local gateway's own when it runs)."""
    is_local_gateway: bool
    history: HistoryStore | None
    """The history, once open; None while it opens, when off, or when unavailable."""
    history_problem: str
    """Why the history could not be opened ("" if it could, or has not been tried)."""

    async def history_settled(self) -> None:
        """Return once the history has opened or failed to (at once when it is off)."""

    targets: dict[str, Target]
    """Every target by name."""
    target_models: dict[str, list[ModelInfo]]
    """Each target's model list, once read."""

    @property
    def default_target(self) -> Target: ...

    def connection(self, target: Target) -> Connection | None: ...

    async def models_of(self, target: Target) -> list[ModelInfo]: ...

    start_in_arena: bool
    """Open the arena once connected (`anoman-tui --arena`); cleared when it opens."""

    def action_arena(self) -> None: ...

    def open_replay(self, record: ComparisonRecord) -> None:
        """Pick a speed, then replay saved comparison `record` over the current screen."""

    async def fetch_usage(self, limit: int = 200) -> list[dict[str, Any]]: ...


def app_services(app: App[Any]) -> AppServices:
    """The running app, typed by what screens may use of it."""
    return cast(AppServices, app)
