"""A prompt box under a deck of panes: what the compare screen and the arena share.

`prompt_area` builds the system and prompt boxes; `TypedPrompts` is the mixin that
keeps typing in them (a printable key typed elsewhere goes to the prompt) and holds a
prompt sent while panes stream until a second Enter aborts them (`confirm_busy`, then
`send_if_settled` once they have stopped); `live_sources` turns a prompt into one
request a pane, each a `LiveSource`.

May import: Textual, Rich, the stream core's requests, ui.render, the widgets.
"""

from __future__ import annotations

import time
import uuid

from textual import events
from textual.containers import Vertical
from textual.widgets import Input, TextArea

from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.services import app_services
from anoman_tui.ui.widgets.deck import LiveSource, PaneDeck
from anoman_tui.ui.widgets.prompt_box import PromptBox

# A second Enter within this many seconds of the "still streaming" notice aborts the
# running panes and sends.
CONFIRM_SEND_S = 5.0


def prompt_area(system_prompt: str, *, frozen: bool) -> Vertical:
    """The system box (prefilled with `system_prompt`) over the prompt box."""
    system = Input(
        system_prompt,
        placeholder="System prompt (optional, sent to all panes) · Tab: prompt box",
        id="system",
    )
    prompt = PromptBox(
        id="prompt",
        placeholder="Type a prompt · Enter send · Ctrl+J newline · ↑ previous",
    )
    if frozen:
        # Frozen time (snapshots): a blinking cursor would make the picture depend on
        # the instant it is taken.
        system.cursor_blink = prompt.cursor_blink = False
    return Vertical(system, prompt, id="prompt-area")


def pane_list(indexes: list[int]) -> str:
    """"pane 2" or "panes 2, 3"."""
    names = ", ".join(str(i) for i in indexes)
    return f"pane {names}" if len(indexes) == 1 else f"panes {names}"


def live_sources(deck: PaneDeck, panes: list[PaneState], prompt: str, *,
                 system: str, bypass_cache: bool,
                 delays: dict[int, float] | None = None) -> dict[int, LiveSource]:
    """One request a pane of `panes` with a model, each streamed by the app's network
    thread (the turn's requests share one compare id); a pane whose target is not
    connected yet is left out, with a notice."""
    services = app_services(deck.app)
    compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
    sources: dict[int, LiveSource] = {}
    for state in panes:
        if not state.model:
            continue
        connection = services.connector.connection(state.target)
        if connection is None:
            deck.notify(f"Pane {state.index}: {state.target.name} is not connected yet; "
                        "try again in a moment.", severity="warning", timeout=4)
            continue
        request = state.build_request(
            prompt,
            connection=connection,
            system=system,
            idle_timeout=services.settings.idle_timeout,
            bypass_cache=bypass_cache,
            compare_id=compare_id,
            record=services.settings.recording_limit() is not None,
        )
        sources[state.index] = LiveSource(services.connector.network.stream(request),
                                          delay_s=(delays or {}).get(state.index, 0.0))
    return sources


class TypedPrompts:
    """For a `Screen` with a deck (`deck`) and `prompt_area`'s boxes: focus, typing, and
    a prompt sent while panes stream. `send` is the screen's own."""

    deck: PaneDeck
    _confirm_send: tuple[str, float] | None = None
    """(prompt, when) of the notice that a second Enter aborts and sends."""
    _send_after_abort: str | None = None
    """The prompt to send once the aborted panes have stopped."""

    def send(self, prompt: str, panes: list[PaneState],
             delays: dict[int, float] | None = None) -> None:
        raise NotImplementedError

    def on_key(self, event: events.Key) -> None:
        # A key nothing handled, typed while focus is outside both boxes (a clicked
        # pane): it belongs in the prompt, not nowhere. A key bound there still runs
        # its binding (the app checks those after this handler).
        # Typing while zoomed is for the prompt box, hidden by the zoom: bring it back.
        screen = self.deck.screen
        if (
            event.is_printable
            and event.character
            and (self.deck.zoomed or not isinstance(screen.focused, (Input, TextArea)))
            and event.key not in screen.active_bindings
        ):
            prompts = screen.query(PromptBox)
            if not prompts:
                return
            if self.deck.zoomed:
                self.deck.zoom()
            event.stop()
            prompt = prompts.first()
            prompt.focus()
            prompt.insert(event.character)

    def confirm_busy(self, prompt: str, running: list[int]) -> bool:
        """A prompt sent while panes stream: a second Enter aborts them and sends it once
        they have stopped (True: that second Enter, the panes are being aborted)."""
        deck = self.deck
        confirm = self._confirm_send
        if confirm is not None and confirm[0] == prompt and (
            time.monotonic() - confirm[1] <= CONFIRM_SEND_S
        ):
            self._confirm_send = None
            self._send_after_abort = prompt
            deck.screen.query_one(PromptBox).clear()
            for index in running:
                deck.abort(index)
            deck.notify(f"Aborting {pane_list(running)}; the prompt goes to every pane "
                        "as soon as they stop.", timeout=3)
            return True
        self._confirm_send = (prompt, time.monotonic())
        streaming = "still streams" if len(running) == 1 else "still stream"
        deck.notify(f"{pane_list(running).capitalize()} {streaming}: press Enter again "
                    f"within {CONFIRM_SEND_S:g} s to abort and send to all, or wait.",
                    title="Busy", severity="warning", timeout=CONFIRM_SEND_S)
        return False

    def send_if_settled(self) -> None:
        """Send the prompt held by `confirm_busy`, once no pane runs."""
        prompt = self._send_after_abort
        if prompt is not None and not self.deck.running:
            self._send_after_abort = None
            self.send(prompt, self.deck.panes)
