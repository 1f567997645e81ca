"""The multi-line prompt box: Enter sends, Ctrl+J (or Shift+Enter where the terminal
reports it) inserts a newline. Up/Down at the edges recall earlier prompts.

Send and newline are priority bindings with ids, so they show in the footer and
a `keymap` can move them; TextArea would otherwise take Enter for itself.

A locked box (`locked`: the arena's while a round waits for its vote, when letters are
votes) takes no text at all: not typed, pasted, inserted nor sent."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Location

from anoman_tui.ui.messages import PromptSubmitted


class PromptBox(TextArea):
    DEFAULT_CSS = """
    PromptBox { height: auto; min-height: 3; max-height: 10; }
    """
    BINDINGS = [
        # Not in the footer: the box's placeholder says them, and the footer is for the rest.
        Binding("enter", "submit", "Send", id="send", priority=True, show=False),
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="newline", priority=True,
                show=False),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
            compact=False, **kwargs,  # type: ignore[arg-type]
        )
        self._past: list[str] = []
        self._recall: int | None = None

    @property
    def locked(self) -> bool:
        """Taking no text: read-only and disabled (it cannot be focused either)."""
        return self.read_only and self.disabled

    @locked.setter
    def locked(self, value: bool) -> None:
        self.read_only = value
        self.disabled = value

    def insert(self, text: str, location: Location | None = None, *,
               maintain_selection_offset: bool = True) -> EditResult:
        # Text typed where no box had focus is put here by the screen (`insert`), which
        # TextArea's own read-only check does not cover.
        if self.locked:
            return EditResult(end_location=self.cursor_location, replaced_text="")
        return super().insert(text, location,
                              maintain_selection_offset=maintain_selection_offset)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # TextArea's F7 (select all) would take the compare screen's F7 (Diff) whenever
        # the box has focus, which is nearly always; Shift+arrows and the mouse still select.
        if action == "select_all":
            return False
        return super().check_action(action, parameters)

    # Priority bindings run in the app before this widget has handled key events already
    # queued for it: typed-ahead text followed by Enter in one read (a fast typist, a
    # paste, tmux send-keys) would be submitted without its last characters, or empty.
    # Queue the action behind them instead.
    def action_submit(self) -> None:
        self.call_later(self.submit)

    def action_newline(self) -> None:
        if not self.locked:
            self.call_later(self.insert, "\n")

    def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handling; prevent_default() skips it.
        if event.key in ("up", "down") and self._past and self._at_edge(event.key):
            event.stop()
            event.prevent_default()
            self._step_history(-1 if event.key == "up" else 1)

    def _at_edge(self, key: str) -> bool:
        row, _ = self.cursor_location
        return row == 0 if key == "up" else row == self.document.line_count - 1

    def _step_history(self, step: int) -> None:
        index = len(self._past) if self._recall is None else self._recall
        index = max(0, min(len(self._past), index + step))
        self._recall = index
        self.text = self._past[index] if index < len(self._past) else ""
        self.move_cursor(self.document.end)

    def submit(self) -> None:
        prompt = self.text.strip()
        if not prompt or self.locked:
            return
        if not self._past or self._past[-1] != prompt:
            self._past.append(prompt)
        self._recall = None
        self.post_message(PromptSubmitted(prompt))
