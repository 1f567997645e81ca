"""A one-line text dialog: the gateway URL, or the API key (masked, never shown)."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label


class TextInputScreen(ModalScreen[str | None]):
    """Enter accepts (after `check`, which returns a sentence when the text is refused);
    Escape cancels. Dismisses with the text, stripped, or None.

    With `password`, the field shows bullets and starts empty: the current value is
    never put on screen, only described in `help`.
    """

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="dialog.cancel")]

    def __init__(
        self,
        title: str,
        *,
        value: str = "",
        placeholder: str = "",
        help: str = "Enter accept · Esc cancel",
        password: bool = False,
        check: Callable[[str], str | None] | None = None,
        suggester: Suggester | None = None,
    ) -> None:
        super().__init__(classes="dialog-screen")
        self._title = title
        self._value = "" if password else value
        self._placeholder = placeholder
        self._help = help
        self._password = password
        self._check = check
        self._suggester = suggester  # completion as you type (→ accepts it)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._title, classes="dialog-title")
            yield Input(self._value, placeholder=self._placeholder, password=self._password,
                        id="text-input", suggester=self._suggester)
            yield Label("", id="text-input-error", classes="dialog-error")
            yield Label(self._help, classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _accept(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        problem = self._check(text) if self._check else None
        if problem:
            self.query_one("#text-input-error", Label).update(problem)
            return
        self.dismiss(text)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
