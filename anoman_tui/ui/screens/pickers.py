"""Small modal dialogs: pick one option (model, endpoint format, scenario), edit parameters."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, OptionList
from textual.widgets.option_list import Option

from anoman_tui.parameters import (
    MAX_TOKENS_MAX,
    MAX_TOKENS_MIN,
    TEMPERATURE_MAX,
    TEMPERATURE_MIN,
    parse_max_tokens,
    parse_temperature,
)
from anoman_tui.ui.render.pane_state import PaneParams

HELP = "Enter select · Esc cancel"
DIALOG_HEIGHT = 0.9
"""Of the screen's rows, the most a dialog takes (`.dialog`'s max-height in the .tcss)."""
LIST_ROWS = 20
"""The most rows a dialog's list takes (`.dialog OptionList`'s max-height in the .tcss)."""


class ChoiceScreen(ModalScreen[str | None]):
    """A titled list; Enter picks, Escape cancels. Dismisses with the option id or None."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, options: list[tuple[str, Text | str]], current: str) -> None:
        super().__init__(classes="dialog-screen")
        self._title = title
        self._options = options
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield OptionList(*(Option(label, id=key) for key, label in self._options))
            yield Label(HELP, classes="dialog-help")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        for index, (key, _) in enumerate(self._options):
            if key == self._current:
                options.highlighted = index
        options.focus()
        self.watch(options, "scroll_y", self._show_help, init=False)
        self.watch(options, "max_scroll_y", self._show_help, init=False)
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Leave the list the rows the dialog has once its title and help line have
        theirs: in a short terminal it scrolls, and the help line stays in view."""
        dialog = self.query_one(".dialog", Vertical)
        options = self.query_one(OptionList)
        others = sum(w.outer_size.height + w.styles.margin.height for w in dialog.children
                     if w is not options)
        most = int(self.size.height * DIALOG_HEIGHT) - dialog.styles.gutter.height - others
        options.styles.max_height = max(3, min(LIST_ROWS, most))
        self.call_after_refresh(self._show_help)

    def _show_help(self) -> None:
        """The keys, and which way more options are when the list is longer than its rows."""
        options = self.query_one(OptionList)
        more = []
        if options.scroll_y > 0:
            more.append("▲ more above")
        if options.scroll_y < options.max_scroll_y:
            more.append("▼ more below")
        hint = f"{len(self._options)} to choose from · " + " · ".join(more) if more else ""
        self.query_one(".dialog-help", Label).update(f"{hint} · {HELP}" if hint else HELP)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ParamsScreen(ModalScreen[tuple[PaneParams, bool] | None]):
    """Edit one pane's temperature and max tokens; optionally apply them to every pane."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog.cancel")]

    def __init__(self, pane: int, params: PaneParams, sync: bool) -> None:
        super().__init__(classes="dialog-screen")
        self._pane = pane
        self._params = params
        self._sync = sync

    def compose(self) -> ComposeResult:
        p = self._params
        with Vertical(classes="dialog"):
            yield Label(f"Parameters for pane {self._pane}", classes="dialog-title")
            yield Label(f"Temperature ({TEMPERATURE_MIN:g}–{TEMPERATURE_MAX:g}, "
                        "empty = model default)")
            yield Input("" if p.temperature is None else f"{p.temperature:g}",
                        placeholder="default", id="temperature")
            yield Label(f"Max tokens ({MAX_TOKENS_MIN}–{MAX_TOKENS_MAX:,}, "
                        "empty = model default)")
            yield Input("" if p.max_tokens is None else str(p.max_tokens),
                        placeholder="default", id="max-tokens", type="integer")
            yield Checkbox("Apply to all three panes (sync)", self._sync, id="sync")
            yield Label("", id="params-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#temperature", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        error = self.query_one("#params-error", Label)
        temp_text = self.query_one("#temperature", Input).value.strip()
        tokens_text = self.query_one("#max-tokens", Input).value.strip()
        # The ranges every source of these settings shares (flags, config, suites).
        try:
            temperature = parse_temperature(temp_text) if temp_text else None
        except ValueError as exc:
            error.update(f"Temperature {exc}.")
            self.query_one("#temperature", Input).focus()
            return
        try:
            max_tokens = parse_max_tokens(tokens_text) if tokens_text else None
        except ValueError as exc:
            error.update(f"Max tokens {exc}.")
            self.query_one("#max-tokens", Input).focus()
            return
        sync = self.query_one("#sync", Checkbox).value
        self.dismiss((PaneParams(temperature, max_tokens), sync))

    @on(Button.Pressed, "#cancel")
    def action_dismiss_none(self) -> None:
        self.dismiss(None)
