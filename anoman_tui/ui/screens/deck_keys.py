"""The pane-level keys of a screen that shows a `PaneDeck`, and what they do.

A key reaches the focused widget and its ancestors only, and typing happens in the
prompt box beside the deck, not inside it: so each screen binds the deck's keys itself,
from the `Binding`s here (in the order its key bar shows them), and `DeckKeys` gives it
their actions, which act on its deck. The same mixin holds what every such screen does
with its deck beyond the keys: copying an answer or one of its code blocks, picking a
diff, exporting, drawing the status line over the deck, and a focus chain of the boxes
one types in only.

May import: Textual, Rich, ui.render, the widgets and the pickers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input

from anoman_tui.ui.render.code_blocks import code_blocks
from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.widgets.deck import ORIGINAL, PaneDeck
from anoman_tui.ui.widgets.pane import ComparePane
from anoman_tui.ui.widgets.prompt_box import PromptBox
from anoman_tui.ui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord

_ABORT = Binding.Group("Abort pane")
_SCROLL = Binding.Group("Scroll")

# One footer entry for the three ("f1 f2 f3 Abort pane"), so that F5 Usage and the rest
# still fit in a 100-column terminal. F4 is the next pane's key: a deck of more panes
# aborts the others from the palette.
ABORT_KEYS = [
    Binding(f"f{n}", f"abort({n})", f"Abort {n}", id=f"abort_pane_{n}", priority=True,
            group=_ABORT)
    for n in (1, 2, 3)
]
ABORT_ALL_KEY = Binding("escape", "abort_all", "Abort all", id="abort_all", priority=True)
NEXT_PANE_KEY = Binding("f4", "next_pane", "Next pane", id="next_pane")
# One pane's answer as a word diff against another's (the prompt box gives up its own F7
# for it).
DIFF_KEY = Binding("f7", "diff", "Diff", id="diff")
# A rerun's answer against the original's (the key shows only for a rerun). Not a letter:
# typing goes to the prompt box; Ctrl+O means nothing to it.
DIFF_ORIGINAL_KEY = Binding("ctrl+o", "diff_original", "Diff vs original", id="diff_original")
# The current pane alone over the whole screen, and back; it keeps streaming.
ZOOM_KEY = Binding("f8", "zoom", "Zoom", id="zoom")
# To the clipboard through the terminal (OSC 52): over SSH and in tmux too.
COPY_KEY = Binding("f9", "copy_answer", "Copy", id="copy_answer")
# Priority: Ctrl+S means nothing to the prompt box, and must work from it.
EXPORT_KEY = Binding("ctrl+s", "export", "Export", id="export", priority=True)
# Scroll the current pane (marked in its header) from anywhere, the prompt box included.
# Alt+Up/Down for terminals that keep Shift+PgUp for their scrollback.
SCROLL_KEYS = [
    Binding("shift+pageup,alt+up", "scroll_pane('page_up')", "Scroll up",
            id="scroll_pane_up", group=_SCROLL, key_display="⇧PgUp"),
    Binding("shift+pagedown,alt+down", "scroll_pane('page_down')", "Scroll down",
            id="scroll_pane_down", group=_SCROLL, key_display="⇧PgDn"),
    Binding("ctrl+home", "scroll_pane('scroll_home')", "Pane top", id="scroll_pane_top",
            show=False),
    Binding("ctrl+end", "scroll_pane('scroll_end')", "Pane end", id="scroll_pane_end",
            show=False),
]


class DeckKeys:
    """The actions of the deck's keys, for a `Screen` that composes `deck`."""

    deck: PaneDeck

    def update_status(self) -> None:
        """Draw the screen's status line (each screen says what it shows there)."""
        raise NotImplementedError

    def set_up_deck(self) -> bool:
        """What a deck screen does as it is mounted: the first pane current, the status
        line drawn, the panes laid out for the width. False when the screen was taken
        apart before it was set up (the app quit just as it was pushed): then nothing
        more is to be done."""
        if not self.query(ComparePane):  # type: ignore[attr-defined]
            return False
        self.deck.focus_home()
        self.update_status()
        self.lay_out()
        self.build_hidden_later()
        return True

    def build_hidden_later(self) -> None:
        """Mount what the panes keep hidden until asked for (`PaneDeck.build_hidden`)
        once this screen has drawn a frame."""
        self.call_after_refresh(self.deck.build_hidden)  # type: ignore[attr-defined]

    def lay_out(self) -> None:
        """The panes laid out for the screen's width."""
        self.deck.apply_layout(self.size.width)  # type: ignore[attr-defined]

    def deck_resized(self) -> None:
        """The screen's new width taken in: panes laid out, the status line packed to it.
        (Each screen's `on_resize` calls it: Textual runs the handler of every class in
        the MRO, so a mixin's own would run beside a screen's.)"""
        self.lay_out()
        self.update_status()

    @property
    def panes(self) -> list[PaneState]:
        """The deck's pane states, in order."""
        return self.deck.panes

    def pane(self, index: int) -> ComparePane:
        """The deck's pane `index` (from 1)."""
        return self.deck.pane(index)

    @property
    def focus_chain(self) -> list[Widget]:
        # Tab and Shift+Tab move between the boxes one types in, if any. A pane's answer
        # (a scroll view) or the tab strip showed no sign of focus, so Tab seemed to lose
        # it; they stay reachable by mouse.
        chain: list[Widget] = super().focus_chain  # type: ignore[misc]
        return [w for w in chain if isinstance(w, (Input, PromptBox))]

    def show_status(self, fields: list[tuple[str, str, bool]]) -> None:
        """The status line from `fields` (`StatusLine.show`); in tabs, the tabs too."""
        deck = self.deck
        width = deck.screen.size.width
        deck.screen.query_one(StatusLine).show(fields, width)
        if deck.narrow:
            deck.update_tabs(width)

    def action_abort(self, index: int) -> None:
        if not self.deck.abort(index):
            self.deck.notify(f"Pane {index} is not streaming.", timeout=2)

    def action_abort_all(self) -> None:
        if not self.deck.abort_all():
            self.deck.notify("Nothing is streaming.", timeout=2)

    def action_next_pane(self) -> None:
        self.deck.next_pane()

    def action_zoom(self) -> None:
        self.deck.zoom()

    def action_scroll_pane(self, how: str) -> None:
        """Scroll the current pane's answer (or its diff): page_up, page_down,
        scroll_home, scroll_end."""
        self.deck.scroll(how)

    def action_diff(self) -> None:
        """Pick two panes: the second shows a word diff of its answer against the first."""
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        deck = self.deck
        choices = deck.diff_choices()
        if choices is None:
            deck.notify("A diff needs two panes with an answer.", timeout=3)
            return
        options, current = choices

        def chosen(choice: str | None) -> None:
            if choice is not None:
                deck.choose_diff(choice)

        deck.app.push_screen(ChoiceScreen("Diff: show one pane's answer against another's",
                                          options, current), chosen)

    def action_diff_original(self) -> None:
        """The current pane's answer as a word diff against the rerun's original's, and
        back."""
        deck = self.deck
        index = deck.current
        if deck.diff == (ORIGINAL, index):
            deck.diff_off()
        elif deck.original_pane(index) is None:
            number = deck.original.id if deck.original is not None else "?"
            deck.notify(f"Comparison #{number} had no pane {index}.", timeout=3)
        else:
            deck.diff_panes(ORIGINAL, index)

    def action_copy_answer(self) -> None:
        """Copy the current pane's latest answer to the clipboard."""
        self.copy_answer(self.deck.current)

    def copy_answer(self, index: int) -> None:
        """Copy pane `index`'s latest answer, its text only, to the clipboard."""
        pane = self.deck.pane(index)
        text = pane.answer.text
        if not text:
            pane.notify(f"Pane {index} has no answer to copy.", timeout=3)
            return
        pane.app.copy_to_clipboard(text)
        partial = " so far: it is still streaming" if pane.state.running else ""
        pane.notify(f"Copied pane {index}'s answer ({len(text):,} characters){partial}.",
                    timeout=3)

    def copy_code_block(self, index: int) -> None:
        """Pick one fenced code block of pane `index`'s latest answer and copy its code."""
        from anoman_tui.ui.screens.pickers import ChoiceScreen

        pane = self.deck.pane(index)
        blocks = code_blocks(pane.answer.text)
        if not blocks:
            pane.notify(f"Pane {index}'s answer has no code block.", timeout=3)
            return
        options: list[tuple[str, Text | str]] = [
            (str(n), Text(f"{block.language or 'code'} · {block.first_line or '(empty)'}",
                          no_wrap=True, overflow="ellipsis"))
            for n, block in enumerate(blocks)
        ]

        def chosen(choice: str | None) -> None:
            if choice is None:
                return
            block = blocks[int(choice)]
            pane.app.copy_to_clipboard(block.code)
            pane.notify(f"Copied a {block.language or 'code'} block from pane {index} "
                        f"({len(block.code):,} characters).", timeout=3)

        pane.app.push_screen(ChoiceScreen(f"Copy code block from pane {index}", options, "0"),
                             chosen)

    # -- export ---------------------------------------------------------------------------

    def export_record(self) -> ComparisonRecord | None:
        """What Export writes (each screen says)."""
        raise NotImplementedError

    def export_title(self) -> str:
        """The export's title (each screen says)."""
        raise NotImplementedError

    def action_export(self) -> None:
        """Export the comparison on screen: Markdown, HTML, JSON, or an SVG of the screen."""
        deck = self.deck
        if deck.hint_shown:
            # The first meeting's hint is not part of a comparison: the picture is taken
            # without it, once the panes are drawn so, and the hint comes back.
            deck.hide_hints()
            deck.call_after_refresh(self._export_now, True)
            return
        self._export_now()

    def _export_now(self, hinted: bool = False) -> None:
        from anoman_tui.ui.screens.export import export_comparison
        from anoman_tui.ui.services import app_services

        app = self.deck.app
        # The screen as it is now, before a dialog covers it.
        svg = app.export_screenshot(title=f"{app.title} · {self.export_title()}")
        if hinted:
            self.deck.show_hints(self.deck.hint_parts)
        export_comparison(app, self.export_record(), svg=svg,
                          store=app_services(app).history)
