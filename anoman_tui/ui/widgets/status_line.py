"""The status line over a screen's panes: the app's badge, then fields packed to the width.

May import: Textual, Rich and the pane widget's field packing.
"""

from __future__ import annotations

from textual.widgets import Static

from anoman_tui.ui.widgets.pane import pack_fields

APP_BADGE = " anoman-tui "


class StatusLine(Static):
    """One or two lines of (label, value, strong) fields, the app's badge first."""

    lines = 1
    """How many lines it shows now."""

    def show(self, fields: list[tuple[str, str, bool]], width: int) -> None:
        """Show `fields` (`pack_fields`) at `width` columns. Fields wrap whole onto a
        second line in narrow terminals (pinned by tests/ui/test_fit.py); the screen is
        laid out again only when the height changes."""
        line = pack_fields(fields, max(20, width))
        line.stylize("reverse", 0, len(APP_BADGE))
        lines = line.plain.count("\n") + 1
        self.update(line, layout=lines != self.lines)
        self.lines = lines
