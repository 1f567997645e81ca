"""The pane deck: N panes side by side, each fed by a source of events, one turn at a time.

Every screen that shows panes (compare, arena, a reopened comparison, a replay, a suite's
case) composes one `PaneDeck` and decides for itself what a turn's end means: the compare
screen saves it, the arena asks for a vote, a replay does nothing. The deck owns what is
the same everywhere: the panes and their layout (tabs below `NARROW_BELOW` columns, one
pane zoomed over the screen), the current pane, the ★ marks once no pane runs, the word
diff of one pane against another (or against a rerun's original), and each pane's turn.

What each pane shows comes from a `PaneSource`, so that a live stream, a replayed
recording and a saved turn go through one path (`PaneDeck.play`): `LiveSource` streams
(live, replay, a suite cell followed from its middle with `catch_up`), `SavedSource`
shows a turn that ended elsewhere exactly as it ended.

The deck tells its screen what happened with one message class per event, handled with
`@on`: `TurnStarted` (some panes began streaming), `PaneEnded` (one pane's stream ended)
and `TurnEnded` (no pane runs any more: posted once per turn, after the marks are
drawn; panes that end in the same instant may tell their `PaneEnded` after it).
`PaneStatusChanged` from the panes bubbles up through the deck as is.

Its keys are bound by its screen (`ui/screens/deck_keys.py`), since a key reaches only
the focused widget's ancestors and the prompt box is not inside the deck.

May import: Textual, Rich, the stream core's results, the history's records (read lazily,
off the path to the first paint), ui.render and the other widgets.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget

from anoman_tui.streaming import ModelInfo, StreamResult
from anoman_tui.streaming.cost import Cost
from anoman_tui.ui.messages import PaneStatusChanged, PaneStreamFinished
from anoman_tui.ui.render.fit import shorten
from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.render.verdict import verdict
from anoman_tui.ui.widgets.frame_clock import when_laid_out
from anoman_tui.ui.widgets.pane import ComparePane, PaneStream
from anoman_tui.ui.widgets.prompt_box import PromptBox

if TYPE_CHECKING:
    from textual.widgets import Tab, Tabs

    from anoman_tui.history import ComparisonRecord, PaneRecord

NARROW_BELOW = 120
"""Below this many columns the panes become tabs, one shown at a time."""
ORIGINAL = 0
"""The base of a diff against a rerun's original (the pane in the same position)."""


# -- what a pane shows ---------------------------------------------------------------------


class PaneSource(ABC):
    """Where one pane's turn comes from. `streams`: whether the turn runs (and so ends
    later, with `PaneEnded`), or is shown ended at once."""

    streams: bool = True

    @abstractmethod
    def feed(self, pane: ComparePane, prompt: str) -> None:
        """Show this source's turn of `prompt` in `pane`."""


class LiveSource(PaneSource):
    """A stream of events read as it comes: a live request, a replayed recording, or a
    suite's cell followed from its middle (`catch_up`: its events so far drawn at once).

    `earlier`: the (prompt, answer) turns shown above it instead of the pane's own (a
    replay's saved conversation); `delay_s`: wait before sending (a Retry-After)."""

    def __init__(self, stream: PaneStream, *, delay_s: float = 0.0,
                 earlier: tuple[tuple[str, str], ...] | None = None,
                 catch_up: bool = False) -> None:
        self.stream = stream
        self.delay_s = delay_s
        self.earlier = earlier
        self.catch_up = catch_up

    def feed(self, pane: ComparePane, prompt: str) -> None:
        if self.earlier is not None:
            pane.show_earlier(self.earlier)
        if self.catch_up:
            with pane.drawn_once():  # (its chrome drawn as the block ends)
                pane.start(self.stream, prompt)
                pane.catch_up()  # the text so far, drawn with the screen's first frame
            return
        pane.start(self.stream, prompt, delay_s=self.delay_s)


class SavedSource(PaneSource):
    """A turn that ended elsewhere (a saved comparison), shown as it ended: answer,
    reasoning, badge, footer, sparkline and the cost it was shown with."""

    streams = False

    def __init__(self, result: StreamResult, *, rate_series: tuple[float, ...] = (),
                 earlier: tuple[tuple[str, str], ...] = (), cost: Cost | None = None) -> None:
        self.result = result
        self.rate_series = rate_series
        self.earlier = earlier
        self.cost = cost

    @classmethod
    def of(cls, saved: PaneRecord, earlier: tuple[tuple[str, str], ...]) -> SavedSource:
        """A saved pane of the history, with the turns shown above it."""
        from anoman_tui.history import result_from_record

        return cls(result_from_record(saved), rate_series=saved.rate_series,
                   earlier=earlier, cost=saved.cost)

    def feed(self, pane: ComparePane, prompt: str) -> None:
        pane.show_ended(prompt, self.result, rate_series=self.rate_series,
                        earlier=self.earlier, cost=self.cost)


# -- the deck --------------------------------------------------------------------------------


class PaneDeck(Vertical):
    """The panes of `panes` (one `PaneState` each, numbered from 1), their tabs, zoom,
    diff and marks; see the module's docstring."""

    class TurnStarted(Message):
        """Panes `panes` began streaming `prompt`."""

        def __init__(self, prompt: str, panes: tuple[int, ...]) -> None:
            super().__init__()
            self.prompt = prompt
            self.panes = panes

    class PaneEnded(Message):
        """Pane `pane`'s stream of `prompt` ended (completed, failed or cancelled)."""

        def __init__(self, pane: int, prompt: str, result: StreamResult) -> None:
            super().__init__()
            self.pane = pane
            self.prompt = prompt
            self.result = result

    class TurnEnded(Message):
        """No pane runs any more: the turn of `prompt` is over (once per turn)."""

        def __init__(self, prompt: str) -> None:
            super().__init__()
            self.prompt = prompt

    def __init__(self, panes: list[PaneState], *, frozen_clock: bool = False,
                 model_info: Callable[[PaneState], ModelInfo | None] | None = None,
                 simulated_from_list: bool = True, id: str = "deck") -> None:
        super().__init__(id=id)
        self.panes = panes
        self._frozen = frozen_clock
        self._model_info = model_info
        # False: each pane's `simulated` is a saved turn's, not its target's model list's.
        self._simulated_from_list = simulated_from_list
        self.current = 1
        """The pane the scroll, copy and zoom keys act on (marked in its header)."""
        self.narrow: bool | None = None
        """Tabs, one pane shown (None: not laid out yet)."""
        self.zoomed = False
        self._focus_before_zoom: Widget | None = None
        self.diff: tuple[int, int] | None = None
        """(base pane, the pane showing the diff); base `ORIGINAL`: the rerun's original."""
        self._diff_stale = False  # shown while one of the two streamed: redo when it ends
        self.original: ComparisonRecord | None = None
        """A rerun's original comparison: what `ORIGINAL` diffs and rerun deltas read."""
        self.hint_parts: list[Text] = []
        """The hint last shown (`show_hints`)."""
        self.turn_open = False
        """Some pane streams a turn whose end has not been told (`TurnEnded`)."""
        self._tab_labels: dict[int, Tab] | None = None  # made with the tab strip
        self._tab_strip: Tabs | None = None

    def compose(self) -> ComposeResult:
        # The tab strip (narrow terminals) is mounted when first needed (`_tabs`).
        with Horizontal(id="panes"):
            for state in self.panes:
                pane = ComparePane(state, frozen_clock=self._frozen, model_info=self._model_info,
                                   simulated_from_list=self._simulated_from_list)
                # Marked current before it is first styled: marked once mounted
                # (`_mark_current`), the pane and its parts were styled a second time.
                pane.set_class(state.index == self.current, "-current", update=False)
                yield pane

    def build_hidden(self) -> None:
        """Mount what the panes keep hidden until asked for (their diff views, badges,
        marks and rerun lines): after the first frame, to keep it quick (each is mounted
        when first used otherwise)."""
        for pane in self.widgets:
            pane.build_hidden()

    def _tabs(self, *, make: bool = False) -> Tabs | None:
        """The tab strip, None until the deck is first narrow (`make`: mount it then, as
        the deck's first child). A wide deck, the usual start, never shows it: its ~6
        widgets were mounted and styled before the first paint all the same."""
        if self._tab_strip is None and make:
            from textual.widgets import Tabs  # (imported with the strip: ~2 ms)

            self._tab_strip = Tabs(*self._tab_widgets.values(), id="pane-tabs",
                                   active=f"tab-{self.current}")
            self.mount(self._tab_strip, before=0)
        return self._tab_strip

    # -- the panes ------------------------------------------------------------------------

    def pane(self, index: int) -> ComparePane:
        """Pane `index` (from 1)."""
        return self.query_one(f"#pane-{index}", ComparePane)

    @property
    def widgets(self) -> list[ComparePane]:
        """The pane widgets, in order."""
        return list(self.query(ComparePane))

    @property
    def running(self) -> list[int]:
        """The panes streaming (or waiting to)."""
        return [p.index for p in self.panes if p.running]

    def play(self, prompt: str, sources: Mapping[int, PaneSource]) -> None:
        """Show `prompt`'s turn in the panes `sources` name, each from its source. A turn
        some of them stream starts with `TurnStarted` and ends with `TurnEnded`; the last
        turn's marks go. A turn shown ended is marked by `mark_verdict`, if wanted."""
        streaming: list[int] = []
        for index, source in sources.items():
            source.feed(self.pane(index), prompt)
            if source.streams:
                streaming.append(index)
        if streaming or not sources:
            for pane in self.widgets:
                pane.show_marks([])  # a new turn: the last one's verdict no longer holds
            self.refresh_diff()  # the new turn's text so far; again when it ends
        if streaming:
            self.turn_open = True
            self.post_message(self.TurnStarted(prompt, tuple(streaming)))

    def refresh_chrome(self) -> None:
        for pane in self.widgets:
            pane.refresh_chrome()

    def abort(self, index: int) -> bool:
        """Abort pane `index`'s stream; whether one was running."""
        return self.pane(index).abort()

    def abort_all(self) -> list[int]:
        """Abort every stream; the panes that were running."""
        return [p.state.index for p in self.widgets if p.abort()]

    def clear(self) -> None:
        """Every pane empty, its stream closed and its conversation forgotten."""
        self.turn_open = False
        for pane in self.widgets:
            pane.abort()
            pane.state.reset()
            pane.clear()

    @property
    def shows_one(self) -> bool:
        """One pane shown at a time (tabs, or a deck of one)."""
        return bool(self.narrow) or len(self.panes) == 1

    def show_hints(self, parts: list[Text]) -> None:
        """The first meeting's hint (what to type, the keys, where answers come from):
        split over the panes side by side, whole in the one shown (`shows_one`)."""
        self.hint_parts = parts
        panes = self.widgets
        for index, pane in enumerate(panes):
            if self.shows_one:
                ask, keys_line, where = parts
                pane.show_hint(Text.assemble(ask, "\n", keys_line, "\n\n", where))
            else:
                pane.show_hint(parts[index] if index < len(parts) else None)

    def hide_hints(self) -> None:
        """The hint gone (`hint_parts` keeps it, to show it again)."""
        for pane in self.widgets:
            pane.show_hint(None)

    @property
    def hint_shown(self) -> bool:
        return any(pane.hint_shown for pane in self.widgets)

    @on(PaneStreamFinished)
    def _pane_finished(self, event: PaneStreamFinished) -> None:
        event.stop()
        self.post_message(self.PaneEnded(event.pane, event.prompt, event.result))
        if self.running:
            return
        self.mark_verdict()
        if self.turn_open:
            # Once per turn: panes that end in the same instant (cache hits) each post
            # their finish after all of them have ended.
            self.turn_open = False
            self.post_message(self.TurnEnded(event.prompt))

    @on(PaneStatusChanged)
    def _pane_status(self) -> None:
        # A diff drawn while one of its panes streamed is drawn again from the final texts
        # as soon as both have ended (here, before PaneEnded, with the text final).
        self.refresh_diff(only_if_stale=True)

    def mark_verdict(self) -> None:
        """Once no pane runs: mark the fastest first token, highest rate and cheapest."""
        if self.running:
            return
        panes = self.widgets
        marks = verdict([pane.figures() for pane in panes])
        for pane in panes:
            pane.show_marks(marks.get(pane.state.index, []))

    # -- layout -----------------------------------------------------------------------------

    def apply_layout(self, width: int) -> bool:
        """Tabs below `NARROW_BELOW` columns; True when that changed. The screen is marked
        `-narrow` too (its own parts may follow)."""
        narrow = width < NARROW_BELOW
        if narrow == self.narrow:
            return False
        self.narrow = narrow
        self.screen.set_class(narrow, "-narrow")
        tabs = self._tabs(make=narrow)
        if tabs is not None:
            tabs.display = narrow and not self.zoomed
        self.show_current()
        return True

    def show_current(self) -> None:
        """In tabs or zoomed: only the current pane shown."""
        one = self.narrow or self.zoomed
        for pane in self.widgets:
            shown = (not one) or pane.state.index == self.current
            if shown and not pane.display:
                # Its header and footer are laid out to its width: drawn again once it has
                # one (a pane shown may get no Resize: see `when_laid_out`).
                when_laid_out(pane, pane.refresh_chrome)
            pane.display = shown
        self._mark_current()

    def _mark_current(self) -> None:
        # The scroll keys' pane, marked in its header.
        for pane in self.widgets:
            pane.set_class(pane.state.index == self.current, "-current")

    def make_current(self, index: int) -> None:
        """Pane `index` becomes the current one (the one shown in tabs)."""
        self.current = index
        tabs = self._tabs()
        if tabs is not None:
            tabs.active = f"tab-{index}"
        self.show_current()

    def next_pane(self) -> None:
        self.make_current(self.current % len(self.panes) + 1)

    @property
    def _tab_widgets(self) -> dict[int, Tab]:
        """The tabs, by pane: made with the tab strip, when the deck is first narrow."""
        if self._tab_labels is None:
            from textual.widgets import Tab

            self._tab_labels = {p.index: Tab(f"{p.index}", id=f"tab-{p.index}")
                                for p in self.panes}
        return self._tab_labels

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        # (A handler by its name: `@on(Tabs.TabActivated)` would import the tab strip's
        # module with the deck's, before the first paint.)
        if event.tab.id:
            self.current = int(event.tab.id.split("-")[1])
            self.show_current()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # Focusing a pane's text (Tab, a click) makes it the current pane.
        pane = next((a for a in event.widget.ancestors if isinstance(a, ComparePane)), None)
        if pane is not None and pane.state.index != self.current:
            self.current = pane.state.index
            tabs = self._tabs()
            if self.narrow and tabs is not None:
                tabs.active = f"tab-{self.current}"
            self._mark_current()

    def zoom(self) -> None:
        """Show the current pane alone over the screen, or every pane again.

        The other panes are hidden, never removed: they keep streaming, and each answer
        keeps its scroll position (re-anchored to the same block when its width changes).
        The screen is marked `-zoomed`, so that its other parts step aside.
        """
        self.zoomed = not self.zoomed
        self.screen.set_class(self.zoomed, "-zoomed")
        tabs = self._tabs()
        if tabs is not None:
            tabs.display = bool(self.narrow) and not self.zoomed
        self.show_current()
        if self.zoomed:
            # The boxes are hidden: arrows and PgUp/PgDn now scroll the zoomed answer.
            self._focus_before_zoom = self.screen.focused
            self.pane(self.current).reading.focus()
        else:
            before, self._focus_before_zoom = self._focus_before_zoom, None
            if before is not None and before.is_mounted:
                before.focus()
            else:
                self.focus_home()

    def focus_home(self) -> None:
        """Focus where typing goes: the screen's prompt box, else the current pane."""
        prompts = self.screen.query(PromptBox)
        if prompts:
            prompts.first().focus()
        else:
            self.pane(self.current).answer.focus()

    def scroll(self, how: str) -> None:
        """Scroll the current pane's answer (or its diff): page_up, page_down,
        scroll_home, scroll_end."""
        answer = self.pane(self.current).reading
        if how == "page_up":
            answer.scroll_page_up(animate=False)
        elif how == "page_down":
            answer.scroll_page_down(animate=False)
        elif how == "scroll_home":
            answer.scroll_home(animate=False)
        elif how == "scroll_end":
            answer.scroll_end(animate=False)

    def update_tabs(self, width: int) -> None:
        """Every tab with its pane's model and state, shortened to fit `width`."""
        # The longest model names are shortened (in their middle) until the tabs fit
        # (each is padded by a cell a side).
        names = [pane.shown_name or "—" for pane in self.panes]
        room = width - sum(len(f"{p.index}  · {p.status}") + 2 for p in self.panes)
        cap = max((len(name) for name in names), default=0)
        while cap > 4 and sum(min(len(name), cap) for name in names) > room:
            cap -= 1
        for pane, name in zip(self.panes, names, strict=True):
            tab = self._tab_widgets[pane.index]
            tab.label = Text(f"{pane.index} {shorten(name, cap)} · {pane.status}")

    # -- diff --------------------------------------------------------------------------------

    def diff_choices(self) -> tuple[list[tuple[str, Text | str]], str] | None:
        """The diffs one can ask for ("other:base" keys, "off"), and the one to offer
        first; None when fewer than two panes have an answer and none is shown."""
        answered = [p.state.index for p in self.widgets if p.answer.text]
        options: list[tuple[str, Text | str]] = [
            (f"{other}:{base}", f"Pane {other} against pane {base}")
            for other in answered for base in answered if base != other
        ]
        if self.diff is not None:
            options.append(("off", "Diff off: show the answer again"))
        if not options:
            return None
        if self.diff is not None and self.diff[0] != ORIGINAL:
            current = f"{self.diff[1]}:{self.diff[0]}"
        else:  # the current pane against the first other one
            current = next((key for key, _ in options
                            if key.startswith(f"{self.current}:")), options[0][0])
        return options, current

    def choose_diff(self, choice: str) -> None:
        """Act on a key of `diff_choices`."""
        if choice == "off":
            self.diff_off()
        else:
            other, base = (int(n) for n in choice.split(":"))
            self.diff_panes(base, other)

    def diff_panes(self, base: int, other: int) -> None:
        """Show pane `other`'s latest answer as a word diff against pane `base`'s."""
        if base == other:
            raise ValueError("a pane is not diffed against itself")
        if self.diff is not None and self.diff[1] != other:
            self.pane(self.diff[1]).hide_diff()
        self.diff = (base, other)
        self.refresh_diff()
        # The diff is what the user asked to read: its pane becomes the current one (the
        # one shown in a narrow terminal, and the one the scroll keys move).
        self.make_current(other)

    def diff_off(self) -> None:
        """Show the diffed pane's answer again."""
        if self.diff is not None:
            self.pane(self.diff[1]).hide_diff()
            self.diff = None
            self._diff_stale = False

    def refresh_diff(self, *, only_if_stale: bool = False) -> None:
        """Compute the diff shown again from the two panes' latest answers."""
        if self.diff is None or (only_if_stale and not self._diff_stale):
            return
        base, other = self.diff
        running = [i for i in (base, other) if i != ORIGINAL and self.pane(i).state.running]
        if only_if_stale and running:
            return
        self._diff_stale = bool(running)
        if base == ORIGINAL:
            saved = self.original_pane(other)
            if saved is None or self.original is None:
                self.diff_off()
                return
            self.pane(other).show_diff(f"#{self.original.id} ({saved.model})", saved.text,
                                       running=running)
            return
        self.pane(other).show_diff(base, self.pane(base).answer.text, running=running)

    # -- a rerun against its original ---------------------------------------------------------

    def original_pane(self, index: int) -> PaneRecord | None:
        """The rerun's original pane in position `index`, if there is one."""
        original = self.original
        return next((p for p in original.panes if p.pane == index), None) \
            if original is not None else None

    def show_rerun_deltas(self, record: ComparisonRecord | None) -> None:
        """Under each pane of `record` (a rerun): how it differs from the original's pane
        in the same position."""
        original = self.original
        deltas = {}
        if record is not None and original is not None and original.id is not None:
            from anoman_tui.ui.render.rerun import rerun_deltas  # (a rerun's: on first use)

            deltas = rerun_deltas(record.panes, original.panes, original.id)
        for pane in self.widgets:
            pane.rerun_delta.show(deltas.get(pane.state.index))

    def forget_original(self) -> None:
        """No longer a rerun: its diff and deltas go."""
        if self.diff is not None and self.diff[0] == ORIGINAL:
            self.diff_off()
        self.original = None
        for pane in self.widgets:
            pane.rerun_delta.show(None)
