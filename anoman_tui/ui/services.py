"""What the screens use of the app, as a type: its settings, history, connector and
the screens it opens.

The app (`ui/app.py`) imports the screens, so a screen that imported the app for its
type would close an import cycle (the layer contracts in `.importlinter` forbid
cycles). Screens reach these through `app_services(self.app)` instead; `AnomanApp`
provides every member (a test checks it does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.app import App

from anoman_tui.config import Settings
from anoman_tui.ui.connection import Connector

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, HistoryStore
    from anoman_tui.history.pending import PendingSaves


class AppServices(Protocol):
    settings: Settings
    connector: Connector
    """Where requests go and how they travel: targets, connections, model lists, the
    local gateway, the network thread (`ui/connection.py`)."""
    history: HistoryStore | None
    """The history, once open; None while it opens, when off, or when unavailable."""
    history_problem: str
    """Why the history could not be opened ("" if it could, or has not been tried)."""
    pending_saves: PendingSaves | None
    """Saves through `history` that wait for its server when it cannot be reached (a
    shared history); None when the history is not open."""

    def history_status(self, *, narrow: bool = False) -> str:
        """The status line's history field ("" for none): `host:port/db` of a shared
        history (not when `narrow`), `unavailable (why)`, or `N saves waiting`."""

    def refresh_history_status(self) -> None:
        """Redraw the status lines if the history's field changed."""

    async def history_settled(self) -> None:
        """Return once the history has opened or failed to (at once when it is off)."""

    start_in_arena: bool
    """Open the arena once connected (`anoman-tui --arena`); cleared when it opens."""

    def action_arena(self) -> None:
        """Blind rounds over the compare screen."""

    def action_scoreboard(self) -> None:
        """The scoreboard of the blind votes (from the history)."""

    def action_history(self) -> None:
        """The history: every saved comparison."""

    def action_usage(self) -> None:
        """The gateway's usage ledger."""

    def open_replay(self, record: ComparisonRecord) -> None:
        """Pick a speed, then replay saved comparison `record` over the current screen."""


def app_services(app: App[Any]) -> AppServices:
    """The running app, typed by what screens may use of it."""
    return cast(AppServices, app)
