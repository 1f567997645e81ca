"""The usage ledger view: the gateway's `GET /anoman/v1/usage`, newest first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label

from anoman_tui.streaming import GatewayRequestError
from anoman_tui.ui.services import AppServices, app_services

# What a request cost comes first, so that it fits in 80 columns; the rest of the
# columns are a scroll away (← →), as the status line says.
COLUMNS = (
    ("time", "started_at"),
    ("model", "model"),
    ("status", "status"),
    ("cost USD", "cost_usd"),
    ("tok in", "prompt_tokens"),
    ("tok out", "completion_tokens"),
    ("weighted", "weighted_tokens"),
    ("endpoint", "endpoint"),
    ("routing", "routing_mode"),
    ("failure", "failure_class"),
    ("key", "key_hint"),
)
STATUS_STYLE = {"completed": "green", "cache_hit": "cyan", "failed": "red",
                "cancelled": "yellow", "blocked": "magenta"}


def _cell(key: str, value: Any) -> Text:
    if value is None or value == "":
        return Text("—", style="dim")
    if key == "started_at" and isinstance(value, int | float):
        return Text(datetime.fromtimestamp(value).strftime("%H:%M:%S"))
    if key == "key_hint":
        return Text(f"…{value}")
    return Text(str(value), style=STATUS_STYLE.get(str(value), "") if key == "status" else "")


class UsageScreen(Screen[None]):
    """A table of the ledger; `r` reloads, Escape returns."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="usage.back"),
        Binding("r", "reload", "Reload", id="usage.reload"),
    ]

    @property
    def services(self) -> AppServices:
        """The app, typed by what this screen uses of it."""
        return app_services(self.app)

    def compose(self) -> ComposeResult:
        yield Label("Usage ledger", classes="screen-title")
        yield Label("", id="usage-status", classes="usage-status")
        yield DataTable(zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label, _ in COLUMNS:
            table.add_column(label, key=label)
        self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        status = self.query_one("#usage-status", Label)
        status.update("loading…")
        try:
            rows = await self.services.connector.fetch_usage()
        except GatewayRequestError as exc:
            status.update(Text(f"Could not read the ledger: {exc}", style="bold red"))
            return
        table = self.query_one(DataTable)
        table.clear()
        for row in rows:
            table.add_row(*(_cell(key, row.get(key)) for _, key in COLUMNS))
        total = sum(float(r.get("cost_usd") or 0) for r in rows)
        status.update(f"{len(rows)} requests, newest first · total cost ${total:.6f}"
                      " · ← → more columns · r reload")
