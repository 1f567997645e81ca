"""`RerunDelta`: one line under a pane's footer, the pane against its rerun's original.

Hidden unless the pane's turn is a rerun of a comparison in the history; drawn at the
widget's own width (`anoman_tui.ui.render.rerun.delta_line`), so it stays one line in a narrow
pane and says more in a wide one.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from anoman_tui.ui.render.rerun import DELTA_HELP, DeltaStyles, PaneDelta, delta_line


class RerunDelta(Widget):
    """The `vs #ID` line of one pane; `show(None)` hides it."""

    COMPONENT_CLASSES = {"rerun-delta--better", "rerun-delta--worse", "rerun-delta--label",
                         "rerun-delta--outcome"}
    DEFAULT_CSS = """
    RerunDelta {
        height: 1;
        padding: 0 1;
        background: $surface;
        display: none;
    }
    RerunDelta > .rerun-delta--better { color: $success; text-style: bold; }
    RerunDelta > .rerun-delta--worse { color: $error; text-style: bold; }
    RerunDelta > .rerun-delta--label { color: $text-muted; }
    RerunDelta > .rerun-delta--outcome { text-style: bold; }
    """

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.delta: PaneDelta | None = None
        self.tooltip = DELTA_HELP

    def show(self, delta: PaneDelta | None) -> None:
        self.delta = delta
        if self.display != (delta is not None):
            # (Set even to its CSS value, `display` asks for a layout of the screen: at the
            # start of every turn, just as the first answer text comes in.)
            self.display = delta is not None
        self.refresh()

    def render(self) -> Text:
        if self.delta is None:
            return Text()
        styles = DeltaStyles(
            label=self.get_component_rich_style("rerun-delta--label"),
            better=self.get_component_rich_style("rerun-delta--better"),
            worse=self.get_component_rich_style("rerun-delta--worse"),
            outcome=self.get_component_rich_style("rerun-delta--outcome"),
        )
        return delta_line(self.delta, max(10, self.content_size.width or 40), styles)

    def line(self) -> str:
        """The line as shown, plain (tests)."""
        return str(self.render()) if self.display else ""
