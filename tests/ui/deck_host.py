"""A small host app for the pane deck: one screen that composes a `PaneDeck` and binds
its keys, and nothing else (no gateway, history, settings or palette), so deck tests boot
in a fraction of the full app's time. Streams are scripted (`tests/ui/scripted.py`).

Use: `async with DeckHost(3).run_test(message_hook=...) as pilot`, then feed panes with
`host.deck.play(prompt, {index: LiveSource(ScriptedStream(...))})`.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.message import Message
from textual.screen import Screen

from anoman_tui.locations import stylesheet
from anoman_tui.targets import BUILT_IN, LOCAL
from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.screens.deck_keys import (
    ABORT_ALL_KEY,
    ABORT_KEYS,
    COPY_KEY,
    DIFF_KEY,
    NEXT_PANE_KEY,
    SCROLL_KEYS,
    ZOOM_KEY,
    DeckKeys,
)
from anoman_tui.ui.widgets.deck import PaneDeck

MODELS = ("anoman-lite", "claude-sonnet-4-6", "qwen3-coder", "deepseek-r1", "gpt-4o",
          "llama-3")


def deck_panes(count: int) -> list[PaneState]:
    """`count` panes on the built-in target, each with its own model."""
    return [PaneState(index=n, model=MODELS[(n - 1) % len(MODELS)], target=BUILT_IN[LOCAL])
            for n in range(1, count + 1)]


class DeckScreen(DeckKeys, Screen[None]):
    """The deck alone, with its keys."""

    BINDINGS = [*ABORT_KEYS, ABORT_ALL_KEY, NEXT_PANE_KEY, DIFF_KEY, ZOOM_KEY, COPY_KEY,
                *SCROLL_KEYS]

    def __init__(self, panes: list[PaneState]) -> None:
        super().__init__()
        self.deck = PaneDeck(panes, frozen_clock=True)

    def compose(self) -> ComposeResult:
        yield self.deck

    def on_mount(self) -> None:
        self.deck.apply_layout(self.size.width)
        self.deck.focus_home()

    def on_resize(self) -> None:
        self.deck.apply_layout(self.size.width)


class DeckHost(App[None]):
    """An app of one `DeckScreen` of `count` panes, styled as the real app is."""

    CSS_PATH = stylesheet()

    def __init__(self, count: int = 3) -> None:
        super().__init__()
        self.deck_screen = DeckScreen(deck_panes(count))

    @property
    def deck(self) -> PaneDeck:
        return self.deck_screen.deck

    def on_mount(self) -> None:
        self.push_screen(self.deck_screen)


class Posted:
    """A `message_hook` that keeps the deck's messages, in order, each once (the hook
    sees a message again at every widget it bubbles through)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, (PaneDeck.TurnStarted, PaneDeck.PaneEnded,
                                PaneDeck.TurnEnded)) and not any(
                                    m is message for m in self.messages):
            self.messages.append(message)

    def of(self, kind: type[Message]) -> list[Message]:
        return [m for m in self.messages if isinstance(m, kind)]
