"""A small host app for the pane deck: one screen that composes a `PaneDeck` and binds
its keys, and nothing else (no gateway connection, history, settings or palette), so deck
tests boot in a fraction of the full app's time.

Use: `async with DeckHost(3).run_test(message_hook=...) as pilot`, then feed panes with
`host.deck.play(prompt, {index: LiveSource(ScriptedStream(...))})` (scripted streams,
`tests/ui/scripted.py`: for what is drawn), or with `GatewayFeed.play` (the real stream
core over real sockets from the in-process local gateway, requests built as the compare
screen builds them: for what depends on how a stream arrives).

`DeckHost(prompt=True)` adds a prompt box under the deck, as the deck's screens have
(where focus goes home, what a zoom hides); `theme=` styles it with one of the app's
themes; `model_info=` gives the panes what the compare screen gives them from a target's
model list (a model's prices and whether it is simulated). The panes' clock is frozen at
their last event (as for snapshots: a scripted stream's instants are its own); panes fed
by `GatewayFeed` want `frozen_clock=False`, the app's live clock (the footer's figures are
drawn while the answer streams).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.message import Message
from textual.screen import Screen

from anoman_tui.locations import stylesheet
from anoman_tui.targets import BUILT_IN, LOCAL, connect
from anoman_tui.ui.network import NetworkThread, ThreadedStream
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
from anoman_tui.ui.textual_internals import draw_dirty_lines_only
from anoman_tui.ui.themes import load_themes
from anoman_tui.ui.widgets.deck import LiveSource, PaneDeck
from anoman_tui.ui.widgets.prompt_box import PromptBox

if TYPE_CHECKING:
    from anoman_tui.gateway.embedded import EmbeddedGateway
    from anoman_tui.streaming import ModelInfo

MODELS = ("anoman-lite", "claude-sonnet-4-6", "qwen3-coder", "deepseek-r1", "gpt-4o",
          "llama-3")


def deck_panes(count: int, models: Iterable[str] | None = None) -> list[PaneState]:
    """`count` panes on the built-in target, each with its own model (or `models`)."""
    names = list(models) if models is not None else [
        MODELS[(n - 1) % len(MODELS)] for n in range(1, count + 1)]
    return [PaneState(index=n, model=names[n - 1], target=BUILT_IN[LOCAL])
            for n in range(1, count + 1)]


class DeckScreen(DeckKeys, Screen[None]):
    """The deck alone, with its keys, compositing partial updates from the dirty lines
    alone as every screen of the app that shows panes does (`draw_dirty_lines_only`)."""

    BINDINGS = [*ABORT_KEYS, ABORT_ALL_KEY, NEXT_PANE_KEY, DIFF_KEY, ZOOM_KEY, COPY_KEY,
                *SCROLL_KEYS]

    def __init__(self, panes: list[PaneState], *, prompt: bool = False,
                 frozen_clock: bool = True,
                 model_info: Callable[[PaneState], ModelInfo | None] | None = None) -> None:
        super().__init__()
        draw_dirty_lines_only(self)
        self.deck = PaneDeck(panes, frozen_clock=frozen_clock, model_info=model_info)
        self._prompt = prompt

    def compose(self) -> ComposeResult:
        yield self.deck
        if self._prompt:
            box = PromptBox(id="prompt")
            box.cursor_blink = False  # (a blink repaints it on its own clock)
            yield Vertical(box, id="prompt-area")

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
    """An app of one `DeckScreen` of `count` panes (or of `panes`), styled as the real
    app is."""

    CSS_PATH = stylesheet()

    def __init__(self, count: int = 3, *, models: Iterable[str] | None = None,
                 panes: list[PaneState] | None = None, prompt: bool = False,
                 theme: str | None = None, frozen_clock: bool = True,
                 model_info: Callable[[PaneState], ModelInfo | None] | None = None) -> None:
        super().__init__()
        self.stylesheet.__class__ = _SharedParses
        self.deck_screen = DeckScreen(panes or deck_panes(count, models), prompt=prompt,
                                      frozen_clock=frozen_clock, model_info=model_info)
        self._theme = theme

    def on_mount(self) -> None:
        if self._theme is not None:
            for theme in load_themes().values():
                self.register_theme(theme)
            self.theme = self._theme

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


class GatewayFeed:
    """Streams for a host's panes from the local gateway `gateway`, over real sockets,
    through the real stream core on the app's network thread; each request built from
    its pane's state as the compare screen builds it (`PaneState.build_request`: the
    pane's conversation, scenario and parameters). `bypass_cache`: as the compare screen's
    "Toggle cache bypass". `stop()` ends the thread."""

    def __init__(self, gateway: EmbeddedGateway, *, idle_timeout: float = 1.5) -> None:
        self.connection = connect(BUILT_IN[LOCAL], local=(gateway.base_url, gateway.api_key))
        self.network = NetworkThread()
        self.idle_timeout = idle_timeout
        self.bypass_cache = False

    def play(self, deck: PaneDeck, prompt: str, panes: Iterable[int] | None = None
             ) -> dict[int, ThreadedStream]:
        """Send `prompt` from the panes `panes` (default: all), as one turn; its streams,
        by pane."""
        compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
        states = [deck.panes[i - 1] for i in panes] if panes is not None else deck.panes
        streams = {state.index: self.network.stream(state.build_request(
            prompt, connection=self.connection, system=None, idle_timeout=self.idle_timeout,
            bypass_cache=self.bypass_cache, compare_id=compare_id)) for state in states}
        deck.play(prompt, {index: LiveSource(stream) for index, stream in streams.items()})
        return streams

    def stop(self) -> None:
        self.network.stop()
