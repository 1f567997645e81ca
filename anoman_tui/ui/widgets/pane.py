"""One compare pane: header, answer body (each turn's prompt, reasoning and answer, in
that order: `AnswerView` orders them), badge and metadata footer.

The pane consumes one stream at a time (a `ModelStream`, or the app's
`ThreadedStream` that reads it off the UI's thread) in an exclusive worker. Deltas
go straight into the `AnswerView` (which buffers and draws at a frame rate);
the header and footer are redrawn on state changes and by a 4 Hz tick while
a stream runs, so drawing cost does not grow with the token rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from itertools import cycle
from typing import TYPE_CHECKING, Protocol

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker

from anoman_tui.streaming import (
    AnomanMetadata,
    ModelInfo,
    ReasoningDelta,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamFailure,
    StreamFinished,
    StreamOpened,
    StreamResult,
    TextDelta,
    describe_failure,
)
from anoman_tui.streaming.cost import HIDDEN, Cost, cost_of
from anoman_tui.ui.messages import PaneStatusChanged, PaneStreamFinished
from anoman_tui.ui.network import ThreadedStream
from anoman_tui.ui.render.fit import fit_model_and_target
from anoman_tui.ui.render.pane_state import OUTCOME_STATUS, PaneState, PaneStatus
from anoman_tui.ui.render.verdict import PaneFigures, marks_line
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.diff_view import DiffView
from anoman_tui.ui.widgets.frame_clock import FrameClock

if TYPE_CHECKING:
    # Types only: a rerun's line (and the rerun figures it draws) loads with the first
    # one made, the wire models with the first stream, both after the first paint.
    from anoman_tui.ui.widgets.rerun_delta import RerunDelta
    from anoman_tui.wire import AnomanBlock, Usage

log = logging.getLogger(__name__)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPARK_BUCKET_S = 0.25  # one sparkline cell, at every pane width
SPARK_CELLS = 40  # the sparkline shows at most the last 10 s (fewer cells if narrow)
SPARK_BARS = "▁▂▃▄▅▆▇█"
TICK_S = 0.2  # header spinner (figures: every other tick; a multiple of FrameClock.INTERVAL)
SIMULATED_STYLE = "bold italic dark_orange"  # plain text, unlike any other header word
CACHE_WITHHELD = "CACHE HIT withheld: a blind round shows no cached answer"
STATE_LABELS = {
    "idle": "idle",
    "waiting": "waiting",
    "streaming": "streaming",
    "done": "done",
    "failed": "failed",
    "cancelled": "cancelled",
}


def failure_badge(failure: StreamFailure, retry_hint: bool = True) -> tuple[str, str]:
    """(badge text, severity class): the shared description, plus the key that helps."""
    description = describe_failure(failure)
    text = description.line
    if failure.kind == "http_error" and failure.status == 404 and failure.not_found != "path":
        text += " · Ctrl+P picks another model"
    elif failure.kind == "http_error" and failure.status == 429 and retry_hint:
        text += " · Ctrl+R waits, then retries"
    return text, f"-{description.severity}"


def cut_badge(result: StreamResult) -> str | None:
    """The badge of an answer cut by its token limit, or None if it was not cut."""
    if not result.cut_at_max_tokens:
        return None
    tokens = result.usage.completion_tokens if result.usage is not None else None
    count = f" ({tokens} tokens)" if tokens is not None else ""
    return f"✂ CUT at max tokens{count}: the answer is incomplete"


def sparkline(buckets: list[float], width: int) -> Text:
    """Output rate per `SPARK_BUCKET_S` cell, newest right, with its scale as words.

    One cell is always the same time, whatever the width, so an answer draws the same
    line in every pane size; the label gives the rate the top bar means and the time
    shown. A cell with no tokens is blank, so a stall shows as a gap.
    """
    peak = max(buckets, default=0.0)
    label = f"tok/s 0–{peak:.0f} · last "
    # Room for the longest span the label can name ("9.75 s "): a line one cell too wide
    # wraps, and its bars vanish onto a second row the widget does not show.
    span_room = len(f"{(SPARK_CELLS - 1) * SPARK_BUCKET_S:g} s ")
    cells = max(0, min(SPARK_CELLS, len(buckets), width - len(label) - span_room))
    shown = buckets[len(buckets) - cells :] if cells else []
    seconds = cells * SPARK_BUCKET_S
    text = Text(no_wrap=True, overflow="crop")
    text.append(f"{label}{seconds:g} s ", style="dim")
    top = len(SPARK_BARS) - 1
    text.append("".join(
        " " if value <= 0 else SPARK_BARS[min(top, round(value / peak * top))]
        for value in shown
    ), style="bold")
    return text


def _field_atoms(label: str, value: str, strong: bool, width: int) -> list[Text]:
    """A field as the pieces a line may break between: whole if it fits in `width`, else
    its comma-separated parts ("injection pass 0.02,"), else its words, else `width` cuts."""
    style = "bold" if strong else ""
    whole = Text(f"{label} " if label else "", style="dim")
    whole.append(value, style=style)
    if whole.cell_len <= width:
        return [whole]
    parts = value.split(", ")
    units = [part + "," for part in parts[:-1]] + parts[-1:]
    units = [word for unit in units
             for word in ([unit] if cell_len(unit) <= width else unit.split(" "))]
    atoms = [Text(label, style="dim")] if label else []
    for unit in units:
        while unit:  # a single word wider than a line is the one thing left to cut
            atoms.append(Text(unit[:width], style=style))
            unit = unit[width:]
    if len(atoms) > 1 and label and atoms[0].cell_len + 1 + atoms[1].cell_len <= width:
        atoms[0:2] = [Text.assemble(atoms[0], " ", atoms[1])]  # keep the label with its value
    return atoms


def pack_fields(fields: list[tuple[str, str, bool]], width: int, gap: int = 2) -> Text:
    """Lay `label value` fields out in lines of `width`, a field moved whole to the next
    line; one wider than a line breaks between its parts or words, never inside one."""
    text = Text(no_wrap=True)
    used = 0
    for label, value, strong in fields:
        atoms = _field_atoms(label, value, strong, width)
        for index, atom in enumerate(atoms):
            sep = gap if index == 0 else 1
            # A field broken over lines starts on a line of its own, to read as one.
            if used and (used + sep + atom.cell_len > width or (index == 0 and len(atoms) > 1)):
                text.append("\n")
                used = 0
            elif used:
                text.append(" " * sep)
                used += sep
            text.append_text(atom)
            used += atom.cell_len
    return text


class PaneStream(Protocol):
    """What a pane needs of a stream (`ModelStream`, `ThreadedStream`, test doubles)."""

    @property
    def sent_at(self) -> float | None: ...

    def cancel(self) -> None: ...

    def __aiter__(self) -> AsyncIterator[StreamEvent]: ...


Phrase = tuple[str, Text]
"""(separator before it, the phrase) in a pane's header."""


def _cells(phrases: list[Phrase]) -> int:
    return sum(len(sep) + phrase.cell_len for sep, phrase in phrases)


def header_text(width: int, tag: Text, name: tuple[str, str] | None,
                forms: list[list[Phrase]], endpoint: Phrase | None = None,
                notes: list[Text] | None = None) -> Text:
    """A pane's header in `width` cells: always one line with the pane's state.

    `tag` (the pane's number or label) starts it, then `name` (model, target) as
    `model @target`, then the phrases that are always shown (`forms`: their usual
    wording first, then shorter ones: the state, "simulated", a diff). The model and
    target are shortened (`anoman_tui.ui.render.fit`) before anything kept is, and the
    endpoint format is left out when there is no room for it beside the whole model. A
    scenario note (`notes`: its wordings, longest first) that does not fit goes on a
    row of its own below, in the first wording that fits there; never the state.
    """
    width = width or 10_000  # not laid out yet: drawn again once it is
    note: Phrase | None = (" · ", notes[0]) if notes else None
    extras: list[tuple[Phrase | None, Phrase | None]] = []
    for option in ((endpoint, note), (endpoint, None), (None, note), (None, None)):
        if option not in extras:
            extras.append(option)
    for keep in forms:
        for ep, nt in extras:
            shown = [x for x in (ep, nt) if x is not None]
            room = width - tag.cell_len - _cells(keep) - _cells(shown)
            if name is None:
                if room >= 0:
                    return _header_line(tag, None, keep, shown, notes if nt is None else None,
                                        width)
                continue
            model, target = name
            room -= 1  # the space after the tag
            if shown and room < cell_len(model) + 2 + min(4, cell_len(target)):
                continue  # extras only beside the whole model's name (and its target's)
            if room < 1:
                continue
            fitted = fit_model_and_target(model, target, room)
            return _header_line(tag, fitted, keep, shown, notes if nt is None else None,
                                width)
    narrowest = fit_model_and_target(*name, 1) if name is not None else None
    return _header_line(tag, narrowest, forms[-1], [], notes, width)


def _header_line(tag: Text, name: tuple[str, str | None] | None, keep: list[Phrase],
                 extras: list[Phrase], below: list[Text] | None, width: int) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append_text(tag)
    if name is not None:
        model, target = name
        text.append(" ")
        text.append(model, style="bold")
        if target is not None:
            text.append(f" @{target}", style="dim")  # where it streams from
    for sep, phrase in (*keep, *extras):
        text.append(sep)
        text.append_text(phrase)
    text.truncate(max(width, 1), overflow="ellipsis")  # (only ever a pane narrower than its state)
    if below:
        # Its first wording that fits; cut at the pane's edge only in a pane narrower
        # than the shortest.
        note = next((n for n in below if n.cell_len + 1 <= width), below[-1])
        row = Text(" ", no_wrap=True, overflow="ellipsis")
        row.append_text(note)
        row.truncate(max(width, 1), overflow="ellipsis")
        text.append("\n")
        text.append_text(row)
    return text


class PaneHeader(Static):
    # Its lines are fitted to its width (`header_text`): never wrapped again.
    DEFAULT_CSS = "PaneHeader { text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._lines = -1

    def show(self, text: Text) -> None:
        """Draw `header_text`'s header (one line; two with a scenario note that does not
        fit beside the state)."""
        lines = text.plain.count("\n") + 1
        # Redrawn 4x/s by the spinner: the screen is laid out again only on a new height.
        self.update(text, layout=lines != self._lines)
        self._lines = lines


class PaneBadge(Static):
    pass


class PaneMarks(Static):
    """What this pane's answer won among the turn's answers (`anoman_tui.ui.render.verdict`)."""


FOOTER_HELP = (
    "TTFT: request sent → first answer text (measured here).\n"
    "tok/s: output tokens per second between first and last token (~ while streaming).\n"
    "tokens: prompt in · completion out, from the gateway's usage.\n"
    "cost: USD from the gateway's Anoman block (est. = from listed prices).\n"
    "weighted: the gateway's weighted tokens (tokens × model weight).\n"
    "route: routing mode / region · cache: semantic-cache hit or miss.\n"
    "guardrails: each check's verdict (pass, flag, block) and score."
)


class PaneSpark(Static):
    pass


class PaneFooter(Static):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.tooltip = FOOTER_HELP
        self._lines = -1

    def show(self, text: Text) -> None:
        # Redrawn 4x/s per pane while streaming; a layout of the screen costs ~10 ms
        # (profiled), so ask for one only when the footer's height changes.
        lines = text.plain.count("\n") + 1
        self.update(text, layout=lines != self._lines)
        self._lines = lines


class ComparePane(Vertical):
    """Pane N of a `PaneDeck`: draws its `PaneState`, which owns the pane's status."""

    def __init__(
        self,
        state: PaneState,
        *,
        frozen_clock: bool = False,
        model_info: Callable[[PaneState], ModelInfo | None] | None = None,
        simulated_from_list: bool = True,
    ) -> None:
        super().__init__(id=f"pane-{state.index}", classes=f"pane -{state.status}")
        self.state = state
        # What the border (the `-<status>` class) shows: a picture of `state.status`,
        # brought up to date by `_show_status()`, never a second status.
        self._shown_status: PaneStatus = state.status
        self._held = 0  # inside `drawn_once()`: status and chrome drawn at its end
        self._chrome_due = False
        self.model_info = model_info
        # False: `state.simulated` is a saved turn's, not the model list's (a reopened pane).
        self._simulated_from_list = simulated_from_list
        self._frozen = frozen_clock
        self._stream: PaneStream | None = None
        self._worker: Worker[None] | None = None  # the one drawing `_stream`
        self._adopted = False  # the stream's sent_at taken (with its first event)
        self._frame_failure: Exception | None = None  # raised drawing a frame's deltas
        self._prompt = ""
        self._spinner = cycle(SPINNER)
        self._spinner_frame = SPINNER[0]
        self._tick: Timer | None = None
        self._ticks = 0  # since the pane was made (only odd and even matter)
        self._skip_delay = asyncio.Event()
        # The pane (or "#12 (model)": a rerun's original) this one is shown a diff against.
        self._diff_base: int | str | None = None
        self._answer_scroll_y: float | None = None  # the answer's, when the diff opened
        self._answer_view: AnswerView | None = None
        # Hidden until needed (F7, a badge, a turn's marks, a rerun's line): mounted after
        # the first frame (`build_hidden`), or when first used before it. Mounted with the
        # pane, they were 12 of the compare screen's ~57 widgets to mount and style
        # before its first paint (benchmarks/startup.py).
        self._diff_view = DiffView(classes="diff")
        self._badge = PaneBadge(classes="badge")
        self._marks = PaneMarks(classes="marks")
        self._rerun_delta: RerunDelta | None = None  # (its module, with the first one)
        self._diff_view.display = self._badge.display = self._marks.display = False
        self._hidden_built = False
        self._reset_live()

    def _reset_live(self) -> None:
        self._sent_at: float | None = None
        self._first_at: float | None = None
        self._first_text_at: float | None = None
        self._last_at: float | None = None
        self._chunks = 0
        self._reasoning_chunks = 0
        self._buckets: list[float] = []
        self._usage: Usage | None = None
        self._anoman: AnomanBlock | None = None
        self._result: StreamResult | None = None
        self._retry_at: float | None = None
        self._cost_saved: Cost | None = None  # a saved turn's cost, as it was saved

    def compose(self) -> ComposeResult:
        # From the top: the header, the answer (or in its place the diff view), the badge,
        # the marks, the footer, the rerun's line (against the original's) and the
        # sparkline; the hidden ones are mounted later (`build_hidden`).
        yield PaneHeader(id=f"pane-{self.state.index}-header", classes="pane-header")
        yield AnswerView(classes="answer")
        yield PaneFooter(classes="pane-footer")
        yield PaneSpark(classes="spark")

    def build_hidden(self) -> None:
        """Mount the parts the pane keeps hidden until asked for (the diff view with its
        parts, the badge, the marks, the rerun's line), each in its place. Until then
        they exist unmounted: what is shown in them then is there once mounted."""
        if self._hidden_built or not self.is_attached:
            return
        footers = self.query_children(PaneFooter)
        if not footers:  # (not composed yet)
            return
        self._hidden_built = True
        footer = footers.first()
        self.mount(self._diff_view, self._badge, self._marks, before=footer)
        self.mount(self._made_rerun_delta(), after=footer)
        self._diff_view.build()

    def _made_rerun_delta(self) -> RerunDelta:
        if self._rerun_delta is None:
            from anoman_tui.ui.widgets.rerun_delta import RerunDelta

            self._rerun_delta = RerunDelta(classes="rerun-delta")
        return self._rerun_delta

    def on_resize(self) -> None:
        self.refresh_chrome()  # the header and footer are laid out to the pane's width

    def on_mount(self) -> None:
        self.refresh_chrome()

    # Looked up once: the pane never replaces its children, and every streamed delta
    # goes through these (a DOM query per delta was ~10% of the UI thread's time at
    # 3 x 1,000 tok/s, profiled).
    @property
    def answer(self) -> AnswerView:
        view = self._answer_view
        if view is None:
            view = self._answer_view = self.query_one(".answer", AnswerView)
        return view

    @property
    def hint_shown(self) -> bool:
        return self.answer.placeholder is not None

    def show_hint(self, hint: Text | None) -> None:
        """Show `hint` in the empty answer (its placeholder: never part of the answer, so
        never copied, exported or saved); None removes it."""
        self.answer.set_placeholder(hint)

    # -- diff -----------------------------------------------------------------

    @property
    def diff_base(self) -> int | str | None:
        """The pane this one shows a diff against (a name: a rerun's original), or None
        when it shows its answer."""
        return self._diff_base

    @property
    def diff_view(self) -> DiffView:
        self.build_hidden()
        return self._diff_view

    @property
    def reading(self) -> Widget:
        """What the scroll keys move: the diff while one is shown, else the answer."""
        return self.diff_view.scroller if self._diff_base is not None else self.answer

    def show_diff(self, base_index: int | str, base_text: str, *,
                  running: list[int] | None = None) -> None:
        """Show this pane's latest answer as a word diff against `base_text` (pane
        `base_index`'s, or the answer so named), in place of the answer; `running`: which
        of the two panes still stream (the diff is then of the text so far)."""
        from anoman_tui.ui.render.diff import word_diff  # with the first diff shown

        view = self.diff_view
        if self._diff_base is None:
            answer = self.answer
            # At the end (following a stream): back at the end, wherever that is by then.
            self._answer_scroll_y = (None if answer.scroll_y >= answer.max_scroll_y
                                     else answer.scroll_y)
        self._diff_base = base_index
        view.show(word_diff(base_text, self.answer.text), base_index, running or [])
        self.answer.display = False
        view.display = True
        self._draw_header()

    def hide_diff(self) -> None:
        """Show the answer again, where it was scrolled to."""
        if self._diff_base is None:
            return
        self._diff_base = None
        self.diff_view.display = False
        answer = self.answer
        answer.display = True
        y = self._answer_scroll_y
        if y is None:
            self.call_after_refresh(answer.scroll_end, animate=False, immediate=True)
        else:
            self.call_after_refresh(answer.scroll_to, y=y, animate=False, immediate=True)
        self._draw_header()

    # -- status -------------------------------------------------------------

    @property
    def status(self) -> PaneStatus:
        """The pane's status, as its state holds it; changed only by `set_status()`."""
        return self.state.status

    def set_status(self, status: PaneStatus) -> None:
        """Change the pane's status: the state records it, the pane shows it."""
        self.state.status = status
        self._show_status()

    @contextlib.contextmanager
    def drawn_once(self) -> Iterator[None]:
        """The status changes and chrome asked for inside are drawn once, at the end: a
        pane loaded with a running stream's backlog goes from idle through waiting to
        streaming in one go (a restyle and a header and footer each time: ~4 ms a pane
        when a suite's running case opens, benchmarks/suite_screen.py)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held:
                due, self._chrome_due = self._chrome_due, False
                if not self._show_status() and due:
                    self.refresh_chrome()

    def _show_status(self) -> bool:
        """Bring the border and header up to date with the state's status, if it moved
        (True: they were drawn)."""
        old, new = self._shown_status, self.state.status
        if new == old:
            return False
        if self._held:
            self._chrome_due = True
            return False
        self._shown_status = new
        # Only the pane's own border depends on its status (anoman.tcss): restyle this
        # node alone. Textual would restyle all ~20 descendants, twice (one per class
        # change): 5-12 ms per change measured, in the middle of three streams.
        self.remove_class(f"-{old}", update=False)
        self.add_class(f"-{new}", update=False)
        self.app.stylesheet.update_nodes([self], animate=True)
        self.refresh_chrome()
        self.post_message(PaneStatusChanged(self.state.index, new))
        return True

    # -- drawing ------------------------------------------------------------

    def refresh_chrome(self) -> None:
        if self._held:
            self._chrome_due = True
            return
        self._draw_header()
        self._draw_footer()

    def sync_simulated(self) -> bool:
        """`state.simulated`, first brought up to date with what its target lists of its
        model (called with every header drawn: a model or target change redraws it)."""
        state = self.state
        if self._simulated_from_list and self.model_info is not None:
            info = self.model_info(state) if state.model else None
            state.simulated = info is not None and info.simulated
        return state.simulated

    def shows_simulated(self) -> bool:
        """Whether the header says "simulated". In a blind round only if every drawn
        pane is simulated: on one pane alone it would tell that model apart."""
        if not self.sync_simulated():
            return False
        if not self.state.label or not self.is_attached:
            return True
        return all(pane.sync_simulated() for pane in self.screen.query(ComparePane)
                   if pane.state.model)

    def _draw_header(self) -> None:
        # One line: the model and target are shortened before the state ever is.
        state = self.state
        name: tuple[str, str] | None = None
        if state.label:  # a blind round: the label alone, until the vote
            tag = Text(f" {state.label} ", style="bold reverse")
            tag.append(" blind", style="dim italic")
        else:
            tag = Text(f" {state.tag or state.index} ", style="bold reverse")
            name = (state.model or "(no model)", state.target.name)
        label = STATE_LABELS.get(self.status, self.status)
        short = label
        if self.status == "done" and self._result is not None and self._result.cut_at_max_tokens:
            label, short = "done ✂ cut at max tokens", "done ✂ cut"
        if self.status == "streaming" and self._first_text_at is None and self._reasoning_chunks:
            now = Text(f"{self._spinner_frame} {label} (reasoning)", style="bold")
            now_short = Text(f"{self._spinner_frame} reasoning", style="bold")
        elif self.status in ("waiting", "streaming"):
            now = now_short = Text(f"{self._spinner_frame} {label}", style="bold")
        else:
            now, now_short = Text(label, style="bold"), Text(short, style="bold")
        simulated: list[Phrase] = []
        if self.shows_simulated():
            simulated.append((" · ", Text("simulated", style=SIMULATED_STYLE)))
        diff: list[Phrase] = []
        diff_short: list[Phrase] = []
        if self._diff_base is not None:
            diff.append(("  ", Text(f"⇄ diff vs {self._diff_base}", style="bold")))
            diff_short.append((" ", Text(f"⇄ {self._diff_base}", style="bold")))
        forms = [[*simulated, ("  ", now), *diff], [*simulated, (" ", now_short), *diff_short]]
        running = self.status in ("waiting", "streaming")
        notes = [Text(note, style="dim italic") for note in dict.fromkeys(
            (state.scenario_note(running), state.scenario_note(running, short=True))) if note]
        header = self.query_one(PaneHeader)
        header.show(header_text(header.content_size.width, tag, name, forms,
                                ("  ", Text(state.endpoint, style="dim")), notes))

    def _draw_footer(self) -> None:
        now = self._now()
        result = self._result
        metrics = result.metrics if result else None
        # TTFT counts answer text only (docs/wire-contract.md §7): a thinking model still waits.
        if metrics is not None and metrics.ttft_s is not None:
            ttft = f"{metrics.ttft_s:.2f} s"
        elif self._first_text_at is not None and self._sent_at is not None:
            ttft = f"{self._first_text_at - self._sent_at:.2f} s"
        elif self._sent_at is not None and result is None:
            ttft = f"{max(0.0, now - self._sent_at):.1f} s…"
        else:
            ttft = "—"
        if metrics is not None and metrics.output_tokens_per_s is not None:
            rate = f"{metrics.output_tokens_per_s:.1f}"
        elif self._first_at is not None and self._chunks > 1 and self._last_at:
            span = max(now if result is None else self._last_at, self._last_at) - self._first_at
            rate = f"~{(self._chunks - 1) / span:.1f}" if span > 0 else "—"
        else:
            rate = "—"
        usage = self._usage
        if usage is not None:
            tokens = f"{usage.prompt_tokens} in · {usage.completion_tokens} out"
        else:
            tokens = f"~{self._chunks} out" if self._chunks else "—"
        block = self._anoman
        weighted = "—"
        if block is not None and block.weighted_tokens is not None:
            weighted = "hidden" if self.state.label else str(block.weighted_tokens)
        routing = "—"
        if block is not None and block.routing is not None:
            routing = f"{block.routing.mode or '?'}/{block.routing.region or '?'}"
        cache = "—"
        if block is not None and block.cache is not None:
            cache = "HIT" if block.cache_hit else "miss"
        checks = "—"
        verdicts = block.guardrails if block is not None else None
        if not verdicts and result is not None and result.failure is not None:
            verdicts = result.failure.guardrails  # a 403 block reports them in its body
        if verdicts:
            checks = ", ".join(
                f"{name} {v.status}" + (f" {v.score:.2f}" if v.score is not None else "")
                + (f" ({v.category})" if v.category and v.status != "pass" else "")
                for name, v in verdicts.items()
            )
        fields = [
            ("TTFT", ttft, True), ("tok/s", rate, True), ("tokens", tokens, True),
            ("cost", self.cost_shown(), True),
            ("weighted", weighted, True),
            ("route", routing, False), ("cache", cache, False), ("guardrails", checks, False),
        ]
        footer = self.query_one(PaneFooter)
        footer.show(pack_fields(fields, max(20, footer.content_size.width or 48)))
        # The newest bucket is partial (still filling, or cut by the end of the stream):
        # leave it out so the line does not dip at its right edge.
        buckets = self._buckets[:-1]
        spark = self.query_one(PaneSpark)
        # Its row is always there, blank until there is a line to draw: appearing when a
        # stream started, it laid the screen out again (two layouts, 30-70 ms each,
        # measured) just as the first answer text came in, and moved every answer up.
        drawn = len(buckets) > 1
        spark.update(sparkline(buckets, spark.content_size.width or footer.content_size.width
                               or 48) if drawn else "", layout=False)

    def _show_badge(self, text: str, severity: str) -> None:
        self.build_hidden()
        badge = self._badge
        badge.set_classes(f"badge {severity}")
        badge.update(Text(text))
        badge.display = True

    @property
    def rate_series(self) -> tuple[float, ...]:
        """The latest turn's tokens per second, one value a sparkline cell, as the footer
        draws it (its newest cell is partial, and left out)."""
        return tuple(self._buckets[:-1])

    def cost_shown(self, *, even_blind: bool = False) -> str:
        """The cost as the footer shows it (hidden in a blind round: a price can be unique
        to one model); `even_blind`: the cost itself."""
        if self.state.label and not even_blind:
            return HIDDEN.shown()
        return self.cost().shown()

    def cost(self) -> Cost:
        """The latest turn's cost: a saved turn's as saved, else from what the stream
        ended with (reported, else estimated, else unknown)."""
        if self._cost_saved is not None:
            return self._cost_saved
        result = self._result
        info = self.model_info(self.state) if self.model_info else None
        return cost_of(
            self._anoman, self._usage, info, result.provider_cost if result else None,
            model=self.state.model, provider=self.state.target.price_provider)

    def show_carried_over(self, turns: int, fresh_key: str) -> None:
        """Say that the pane's new model continues the conversation shown (until the
        next turn starts); `fresh_key` starts a new one."""
        self._show_badge(f"↪ conversation carried over ({turns} turn{'s' if turns != 1 else ''})"
                         f" · {fresh_key} starts afresh", "-muted")

    def _hide_badge(self) -> None:
        self._badge.display = False

    def figures(self) -> PaneFigures:
        """The latest turn's figures, as the footer shows them (cost: reported, else est.)."""
        result = self._result
        if result is None:
            return PaneFigures(self.state.index, completed=False)
        if self.state.label:  # no "cheapest" in a blind round: it would tell the price
            # (nor a mark for a cached answer: the cache was fast, not the model)
            return PaneFigures(self.state.index, result.committed and not result.cache_hit,
                               result.metrics.ttft_s,
                               result.metrics.output_tokens_per_s, None)
        cost = self.cost().usd
        return PaneFigures(self.state.index, result.committed, result.metrics.ttft_s,
                           result.metrics.output_tokens_per_s, cost)

    def show_marks(self, labels: list[str]) -> None:
        """Show what this pane's answer won; no labels hides the line."""
        if labels:
            self.build_hidden()
        marks = self._marks
        if labels:
            marks.update(Text(marks_line(labels)))
        marks.display = bool(labels)

    def _now(self) -> float:
        if self._frozen:  # snapshots: time stands still at the last event
            return self._last_at or 0.0
        return time.monotonic()

    def _on_tick(self) -> None:
        self._spinner_frame = SPINNER[0] if self._frozen else next(self._spinner)
        if self._retry_at is not None:
            left = self._retry_at - time.monotonic()
            if left > 0:
                self._show_badge(f"◷ waiting {left:.0f} s before retrying (rate limited)",
                                 "-warning")
        # The spinner turns every tick; the live figures and the sparkline (0.25 s
        # buckets) are drawn every other tick: they cost ~1.5 ms a pane to draw, 15 times
        # a second with three panes streaming (profiled at 3 x 100 tok/s).
        self._ticks += 1
        self._draw_header()
        if self._ticks % 2 == 1:
            self._draw_footer()

    # -- streaming ------------------------------------------------------------

    def clear(self) -> None:
        """Forget every turn shown (the conversation itself is the state's), the one
        streaming included: it is closed, and its end is not drawn."""
        self.abort()
        if self._worker is not None:
            # Else the aborted turn ended after this and drew its CANCELLED note, and
            # its status, into the cleared pane (seen: Ctrl+N while panes streamed).
            self._worker.cancel()
            self._worker = None
        self._stop_tick()
        self._stream = None
        self.answer.clear()
        self._clear_turn()
        self.set_status("idle")
        self.refresh_chrome()

    @property
    def rerun_delta(self) -> RerunDelta:
        self.build_hidden()
        return self._made_rerun_delta()

    def _clear_turn(self) -> None:
        self.rerun_delta.show(None)  # a new turn: compared again when it ends
        self._hide_badge()
        self.show_marks([])
        self._reset_live()

    def start(self, stream: PaneStream, prompt: str, *, delay_s: float = 0.0) -> None:
        """Show `stream` in this pane as a new turn, below the turns shown."""
        self.abort()
        self._clear_turn()
        self.show_hint(None)
        self.answer.begin_turn(prompt)
        self._stream = stream
        self._prompt = prompt
        self._skip_delay = asyncio.Event()
        self.set_status("waiting")
        self._sent_at = None if (delay_s or self._frozen) else time.monotonic()
        self._start_tick()
        self._worker = self.run_worker(self._consume(stream, prompt, delay_s),
                                       group=f"pane-{self.state.index}", exclusive=True,
                                       exit_on_error=False)

    def catch_up(self) -> None:
        """Take in at once what the stream (begun elsewhere, and followed from its middle)
        has read so far, rather than at the next frame."""
        stream = self._stream
        if isinstance(stream, ThreadedStream):
            stream.start()
            self._take_in(stream, stream.take_backlog)
            self.answer.flush_now()

    def abort(self) -> bool:
        """Close this pane's connection (or skip its pending retry); True if one was running."""
        if self._stream is None or self.status not in ("waiting", "streaming"):
            return False
        self._stream.cancel()
        self._skip_delay.set()
        return True

    def _start_tick(self) -> None:
        # On a wall-clock grid shared by every pane and by the FrameClock (whose interval
        # divides it); each tick is drawn by the clock, in the answers' frame. Each pane
        # ticks half a frame before a frame of its own, so its footer and header are drawn
        # in that frame and the panes' chrome is not all drawn in one (~1.6 ms a pane).
        self._stop_tick()
        frame = FrameClock.INTERVAL
        frames = max(1, round(TICK_S / frame))
        phase = ((self.state.index - 1) % frames) * frame + frame / 2
        delay = TICK_S - (time.monotonic() - phase) % TICK_S
        self._tick = self.set_timer(max(0.001, delay), self._begin_ticking, name="pane-tick")

    def _begin_ticking(self) -> None:
        self._tick = self.set_interval(TICK_S, self._request_tick, name="pane-tick")
        self._request_tick()

    def _request_tick(self) -> None:
        # Drawn in the frame the answers draw in, not a frame of its own.
        FrameClock.of(self.app).request(self._on_clock_tick, key=(self, "tick"))

    def _on_clock_tick(self) -> None:
        # Not stopped in the meantime, and not being removed (an arena's next round
        # removes the panes: their children go first, while the tick may still wait).
        if self._tick is not None and self.is_mounted and self.children:
            self._on_tick()

    def _stop_tick(self) -> None:
        if self._tick is not None:
            self._tick.stop()
            self._tick = None

    async def _consume(self, stream: PaneStream, prompt: str, delay_s: float) -> None:
        try:
            await self._follow(stream, prompt, delay_s)
        except Exception:
            # A bug here must cost one pane, not the app: end the stream and say so.
            log.exception("pane %d failed while drawing its stream", self.state.index)
            stream.cancel()
            self._stop_tick()
            self.answer.end_turn(dim=True, note="✗ INTERNAL ERROR · not part of the conversation",
                                 error=True)
            self._show_badge("✗ INTERNAL ERROR while drawing this answer (details in the log)",
                             "-error")
            self.set_status("failed")

    async def _follow(self, stream: PaneStream, prompt: str, delay_s: float) -> None:
        if delay_s > 0:
            # Rate limited: wait out Retry-After before sending; abort ends the wait.
            self._retry_at = time.monotonic() + delay_s
            self._on_tick()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._skip_delay.wait(), delay_s)
            self._retry_at = None
            self._hide_badge()
        self._adopted = False
        self._frame_failure = None
        threaded = stream if isinstance(stream, ThreadedStream) else None
        clock = FrameClock.of(self.app)
        if threaded is not None:
            # Keyed by the stream: a cancelled worker's clean-up must not remove the
            # source of the stream that replaced it.
            clock.add_source(threaded, lambda: self._take_deltas(threaded),
                             lambda: threaded.caught_up)
        try:
            async for event in stream:
                if self._frame_failure is not None:
                    raise self._frame_failure  # handled as the iteration's own (_consume)
                self._stream_event(event, stream)
        finally:
            if threaded is not None:
                clock.remove_source(threaded)

    def _take_deltas(self, stream: ThreadedStream) -> None:
        # At the start of a frame: what the network thread read for it is drawn in it.
        if self._stream is not stream or self._frame_failure is not None:
            return
        self._take_in(stream, stream.take_deltas)

    def _take_in(self, stream: ThreadedStream,
                 take: Callable[[], list[StreamEvent]]) -> None:
        """Draw the events `take` gives, outside the stream's iteration."""
        try:
            for event in take():
                self._stream_event(event, stream)
        except Exception as exc:
            # A bug here must cost this pane, not the frame (nor the app): the iteration
            # raises it with its next event (the cancellation's end, at the latest).
            self._frame_failure = exc
            stream.cancel()

    def _stream_event(self, event: StreamEvent, stream: PaneStream) -> None:
        if not self._adopted:
            # The core's stamp, taken when the request went onto the wire (final by
            # the first event), so the live TTFT matches the final one.
            self._adopted = True
            self._sent_at = stream.sent_at or self._sent_at
        kind = type(event)
        if kind is TextDelta:
            assert isinstance(event, TextDelta)
            self._count(event.at)
            if self._first_text_at is None:
                self._first_text_at = event.at
            if self.status != "streaming":
                self.set_status("streaming")
            self.answer.append(event.text, event.at)
        elif kind is ReasoningDelta:
            assert isinstance(event, ReasoningDelta)
            self._count(event.at)
            self._reasoning_chunks += 1
            if self._reasoning_chunks == 1 and self.status != "streaming":
                self.set_status("streaming")
            self.answer.append_reasoning(event.text, event.at)
        elif kind is StreamOpened:
            pass
        elif kind is StreamFinished:
            assert isinstance(event, StreamFinished)
            if event.usage is not None:
                self._usage = event.usage
        elif kind is AnomanMetadata:
            assert isinstance(event, AnomanMetadata)
            self._anoman = event.block
            if event.block.cache_hit and self.state.label:
                # A blind pane's cached answer is withheld (`_conclude`): its text came
                # in the same read, so it goes before a frame draws it.
                self.answer.clear()
                self.answer.begin_turn(self._prompt)
            self._draw_footer()
        elif kind is StreamFailed:
            pass  # shown with the result, once
        elif kind is StreamDone:
            assert isinstance(event, StreamDone)
            self._finish(event.result)

    def _count(self, at: float) -> None:
        if self._first_at is None:
            self._first_at = at
        self._last_at = at
        self._chunks += 1
        index = int((at - self._first_at) / SPARK_BUCKET_S)
        while len(self._buckets) <= index:
            self._buckets.append(0.0)
        self._buckets[index] += 1 / SPARK_BUCKET_S

    def show_ended(
        self,
        prompt: str,
        result: StreamResult,
        *,
        rate_series: tuple[float, ...] = (),
        earlier: tuple[tuple[str, str], ...] = (),
        cost: Cost | None = None,
    ) -> None:
        """Show a turn that ended elsewhere (a saved comparison) exactly as it ended here:
        answer, reasoning, badge, footer and sparkline; no stream, no message posted.

        `earlier` are the (prompt, answer) turns shown above it, as the pane had them;
        `cost` the cost as it was shown then (an estimate used the prices of that day).
        """
        self.abort()
        self.show_earlier(earlier)
        self.answer.begin_turn(prompt)
        self._prompt = prompt
        self.answer.append_reasoning(result.reasoning)
        self.answer.append(result.text)
        self._chunks = result.metrics.chunks
        # The sparkline leaves out the newest cell (partial while live): keep every saved one.
        self._buckets = [*rate_series, 0.0]
        self._cost_saved = cost
        self.state.last_prompt = prompt
        self._conclude(result, drawn=True)

    def show_earlier(self, earlier: tuple[tuple[str, str], ...]) -> None:
        """Show only these (prompt, answer) turns, as a saved conversation had them."""
        self.show_hint(None)
        self.answer.clear()
        self._clear_turn()
        for before, answer in earlier:
            self.answer.begin_turn(before)
            self.answer.append(answer)
            self.answer.end_turn()

    def _finish(self, result: StreamResult) -> None:
        self._stop_tick()
        self.state.record(self._prompt, result)  # sets the state's status to the outcome
        self._conclude(result)
        self.post_message(PaneStreamFinished(self.state.index, self._prompt, result))

    def _conclude(self, result: StreamResult, *, drawn: bool = False) -> None:
        """Draw how the turn ended: its end note, reasoning, badge, status and footer.

        `drawn`: the answer's text is already in the view (else a cache hit's, which
        arrives whole with the result, is added here)."""
        self._result = result
        if result.usage is not None:
            self._usage = result.usage
        if result.anoman is not None:
            self._anoman = result.anoman
        # A blind round never shows a cached answer: it may be one revealed a round
        # earlier, which would name the model (the arena asks for no-cache; a server
        # may answer from its cache anyway).
        withheld = result.cache_hit and bool(self.state.label) and not drawn
        if not drawn and not self._reasoning_chunks and not withheld:
            # Reasoning that came whole with the result (a cache hit): the view puts
            # it above the answer, even one already drawn.
            self.answer.append_reasoning(result.reasoning)
        if result.cache_hit and not self._chunks and not drawn and not withheld:
            self.answer.append(result.text)
        cut = cut_badge(result)
        if withheld:
            self.answer.end_turn(dim=True, note=f"{CACHE_WITHHELD} · left out of this round")
        elif result.failure is not None:
            said = describe_failure(result.failure)
            self.answer.end_turn(
                dim=True, note=f"{said.symbol} {said.headline} · not part of the conversation",
                error=said.severity == "error")
        elif cut is not None:
            self.answer.end_turn(note=cut)
        else:
            self.answer.end_turn()  # (its reasoning is collapsed to one row)
        self.state.last_result = result
        self.state.status = OUTCOME_STATUS[result.status]
        if result.failure is not None:
            text, severity = failure_badge(result.failure)
            if self.state.label and self.state.model:  # a server's words may name it
                text = text.replace(self.state.model, self.state.label)
            self._show_badge(text, severity)
        elif cut is not None:
            self._show_badge(cut, "-warning")
        elif withheld:
            self._show_badge(f"● {CACHE_WITHHELD}", "-warning")
        elif result.cache_hit:
            self._show_badge("● CACHE HIT: the complete answer came from the gateway's cache",
                             "-success")
        self._show_status()
        self.refresh_chrome()
