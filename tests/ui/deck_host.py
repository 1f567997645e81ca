"""A small host app for the pane deck: one screen that composes a `PaneDeck` and binds
its keys, and nothing else (no gateway, history, settings or palette), so deck tests boot
in a fraction of the full app's time. Streams are scripted (`tests/ui/scripted.py`).

Use: `async with DeckHost(3).run_test(message_hook=...) as pilot`, then feed panes with
`host.deck.play(prompt, {index: LiveSource(ScriptedStream(...))})`.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
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


_PARSED: dict[tuple[Any, ...], list[RuleSet]] = {}


class _SharedParses(Stylesheet):
    """A stylesheet that takes the rules parsed from the same CSS with the same variables
    by an earlier host of this process: Textual parses every source again for each app,
    about a fifth of a host's boot."""

    def _parse_rules(self, css: str, read_from: Any, is_default_rules: bool = False,
                     tie_breaker: int = 0, scope: str = "") -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope,
               tuple(sorted(self._variables.items())))
        rules = _PARSED.get(key)
        if rules is None:
            rules = _PARSED[key] = super()._parse_rules(css, read_from, is_default_rules,
                                                        tie_breaker, scope)
        return rules


class DeckHost(App[None]):
    """An app of one `DeckScreen` of `count` panes, styled as the real app is."""

    CSS_PATH = stylesheet()

    def __init__(self, count: int = 3) -> None:
        super().__init__()
        self.stylesheet.__class__ = _SharedParses
        self.deck_screen = DeckScreen(deck_panes(count))

    @property
    def deck(self) -> PaneDeck:
        return self.deck_screen.deck

    def get_default_screen(self) -> Screen[None]:
        # The deck's screen is the app's first: no blank default screen composed and
        # drawn before it.
        return self.deck_screen


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
