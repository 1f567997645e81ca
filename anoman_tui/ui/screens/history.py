"""The history screen: every saved comparison, newest first; typing filters it.

The list reads the history a page at a time (`HistoryStore.recent`, keyset paging by
id), in a thread so that SQLite never blocks a frame; typing in the filter box runs a
full-text search by prompt and model (each word a prefix), the newest query winning.
Enter reopens a comparison read-only (`RecordScreen`); Ctrl+S exports the highlighted one;
Ctrl+R replays a recorded one (marked ⏺). The newest suite runs are listed first,
marked SUITE (found by the suite's name or run id too); Enter reopens one on the suite
screen.

A shared history holds many people's work: Ctrl+O shows only one's own (the `user`
setting, the history's `store.user`) or everyone's, and a `user:NAME` word in the filter
shows NAME's. The title says whose are shown; while the list holds more than one
person's, each row names its author.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from anoman_tui.ui.screens.compare import CompareScreen
from anoman_tui.ui.screens.record import RecordScreen, when
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.pane import SIMULATED_STYLE

if TYPE_CHECKING:
    from anoman_tui.history import (
        ComparisonRecord,
        HistoryStore,
        ListedComparison,
        ListedPane,
        RunListing,
    )

PAGE = 50
# Load the next page when the highlight comes this close to the end of the list.
PAGE_AHEAD = 10
OUTCOME = {"completed": ("✓", "done"), "failed": ("✗", "failed"),
           "cancelled": ("⊘", "cancelled")}
OUTCOME_STYLE = {"completed": "", "failed": "bold", "cancelled": "italic"}


def pane_summary(pane: ListedPane, simulated: bool | None = None) -> Text:
    """`1 gpt-4o ✓ done $0.0012`: the model, its outcome in a symbol and a word, its cost;
    `1 anoman-lite · simulated ✓ done …` for a simulated model's answer. `simulated`:
    whether to say so (default: whether it was)."""
    symbol, word = OUTCOME.get(pane.status, ("?", pane.status))
    text = Text()
    text.append(f"{pane.pane} ", style="dim")
    text.append(pane.model, style="bold")
    if pane.simulated if simulated is None else simulated:
        text.append(" · ")
        text.append("simulated", style=SIMULATED_STYLE)
    text.append(f" {symbol} {word}", style=OUTCOME_STYLE.get(pane.status, ""))
    text.append(f" {pane.cost_text}", style="dim")
    return text


def author_text(user: str) -> Text:
    """`by ann` (`by unknown` for one saved before authors were kept)."""
    return Text.assemble(("by ", "dim"), (" ".join(user.split()) or "unknown", "italic"),
                         "  ")


def record_option(record: ListedComparison, width: int = 200, *,
                  author: bool = False) -> Option:
    """Id, time (and with `author`, who ran it) and the prompt on one line; the panes'
    summaries on the next, or one line each when they do not fit in `width` together."""
    prompt = " ".join(record.prompt.split())
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(f"#{record.id}", style="bold")
    head.append(f"  {when(record.created_at)}  ", style="dim")
    if author:
        head.append_text(author_text(record.user))
    if record.recorded:
        head.append("⏺ ", style="dim")  # recorded: it can be replayed
    if record.follow_up:
        head.append("↳ ", style="dim")  # a follow-up turn of a conversation
    head.append(prompt or "(empty prompt)")
    # A blind round not voted on: "simulated" on some panes only would tell them apart.
    every = all(p.simulated for p in record.panes)
    summaries = [pane_summary(p, p.simulated and (every or not record.hidden))
                 for p in record.panes]
    panes = Text("   ", no_wrap=True, overflow="ellipsis")
    panes.append_text(Text(" · ").join(summaries))
    lines = [head, panes]
    if panes.cell_len > width:
        lines = [head, *(Text.assemble("   ", summary, no_wrap=True, overflow="ellipsis")
                         for summary in summaries)]
    return Option(Text("\n").join(lines), id=str(record.id))


RUNS_LISTED = 20
"""Suite runs listed above the comparisons (the newest; `anoman-tui runs` lists them all)."""


def run_option(run: RunListing, width: int = 200, *, author: bool = False) -> Option:
    """A suite run, marked as one: `SUITE name · run id · time` (and with `author`, who
    started it), then its counts."""
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append("SUITE ", style="bold reverse")
    head.append(f" {run.name}", style="bold")
    head.append(f"  {run.run_id}  {when(run.created_at)}  ", style="dim")
    if author:
        head.append_text(author_text(run.user))
    head.rstrip()
    state = "finished" if run.finished else (run.stopped or "not finished")
    counts = Text(f"   {run.results}/{run.cells} cells · {len(run.models)} models · "
                  f"passed {run.passed} of {run.judged} judged · failed streams "
                  f"{run.failed} · {state}", no_wrap=True, overflow="ellipsis", style="dim")
    return Option(Text("\n").join([head, counts]), id=f"run:{run.run_id}")


def run_matches(run: RunListing, search: str) -> bool:
    """Every word of `search` is in the run's name or id (any case)."""
    haystack = f"{run.name} {run.run_id}".lower()
    return all(word in haystack for word in search.lower().split())


USER_TOKEN = "user:"


def split_filter(text: str) -> tuple[str, str | None]:
    """The filter box's text as (the words searched, the person named by a `user:NAME`
    word, else None); of several `user:` words the last counts, and a bare `user:` (one
    still being typed) names no one."""
    words, user = [], None
    for word in text.split():
        if word.lower().startswith(USER_TOKEN):
            user = word[len(USER_TOKEN):] or user
        else:
            words.append(word)
    return " ".join(words), user


class HistoryScreen(Screen[None]):
    """The saved comparisons. Enter opens one, Ctrl+S exports it, Esc goes back."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="history.back", priority=True),
        Binding("enter", "open", "Open", id="history.open", show=True),
        Binding("ctrl+s", "export", "Export", id="history.export", priority=True),
        # Shown only while the highlighted comparison is recorded (check_action). Not a
        # letter: typing goes to the filter box.
        Binding("ctrl+r", "replay", "Replay", id="history.replay", priority=True),
        # Not a letter either (typing goes to the filter box).
        Binding("ctrl+o", "toggle_mine", "Mine / everyone", id="history.mine",
                priority=True),
        # From the filter box, the arrows move through the list.
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
    ]

    def __init__(self, store: HistoryStore, live: CompareScreen) -> None:
        super().__init__(id="history")
        self.store = store
        self.live = live
        """The app's compare screen: where re-run and continue take a comparison."""
        self.search = ""
        """The filter box's text as typed (a `user:NAME` word included)."""
        self.mine = False
        """Ctrl+O: only the comparisons of the history's user (`store.user`)."""
        self._records: dict[int, ListedComparison] = {}  # those listed, in order
        self._runs: list[RunListing] = []  # suite runs, listed first
        self._oldest: int | None = None  # id of the last one listed: the next page is older
        self._more = False
        self._loading_more = False
        self._drawn_width = 0
        self._drawn_authors = False  # whether the rows drawn name their authors
        self.shown_at: float | None = None
        """perf_counter when the latest query's results were shown (for the benchmark)."""

    def compose(self) -> ComposeResult:
        yield Label(self._title(None), classes="screen-title", id="history-title")
        yield Input(placeholder="Filter by prompt or model (each word a prefix; user:NAME "
                                "one person's) · ↑↓ choose · Enter open · Esc back",
                    id="history-filter")
        yield Label("reading the history…", id="history-status", classes="usage-status")
        yield OptionList(id="history-list")
        yield KeyBar(shed=())

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._query("")

    # -- reading ------------------------------------------------------------------

    @on(Input.Changed, "#history-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._query(event.value)

    def _query(self, search: str) -> None:
        self.search = search
        self._load(*self._view())

    def _view(self) -> tuple[str, str | None]:
        """What the list shows now: (the words searched, whose comparisons: None for
        everyone's). A `user:NAME` word wins over Ctrl+O's "mine"."""
        words, named = split_filter(self.search)
        return words, named if named is not None else self.store.user if self.mine else None

    def _title(self, user: str | None) -> Text:
        """Whose comparisons are shown (as Text: a name is never read as markup)."""
        if user is None:
            return Text("History · everyone's comparisons")
        name = " ".join(user.split()) or "unknown"
        if self.mine and user == self.store.user:
            return Text(f"History · mine ({name})")
        return Text(f"History · {name}'s comparisons")

    def action_toggle_mine(self) -> None:
        self.mine = not self.mine
        self._load(*self._view())

    @work(exclusive=True, group="history-query", exit_on_error=False)
    async def _load(self, search: str, user: str | None) -> None:
        from anoman_tui.history import HistoryUnavailable

        self.query_one("#history-title", Label).update(self._title(user))
        try:
            records = await asyncio.to_thread(self.store.listing, PAGE, search or None,
                                              user=user)
            runs = await asyncio.to_thread(self.store.runs, RUNS_LISTED, user=user)
        except HistoryUnavailable as exc:
            self._say(Text(f"Could not read the history: {exc.reason}", style="bold"))
            return
        if (search, user) != self._view():
            return  # typed on while this ran: the newer query shows its own results
        self._records = {r.id: r for r in records}
        self._runs = [r for r in runs if run_matches(r, search)]
        self._fill(0)
        self._oldest = records[-1].id if records else None
        self._more = len(records) == PAGE
        self._loading_more = False
        self._show_count()
        self.shown_at = time.perf_counter()

    def _width(self) -> int:
        options = self.query_one(OptionList)
        return max(20, options.scrollable_content_region.width - 2)

    def _authors(self) -> bool:
        """Whether the rows name their authors: the list holds more than one person's."""
        authors = {r.user for r in self._runs} | {r.user for r in self._records.values()}
        return len(authors) > 1

    def _fill(self, highlighted: int | None) -> None:
        """(Re)draw the list from the records read, drawn for the list's width."""
        options = self.query_one(OptionList)
        width = self._width()
        self._drawn_width = width
        author = self._drawn_authors = self._authors()
        options.set_options([*(run_option(r, width, author=author) for r in self._runs),
                             *(record_option(r, width, author=author)
                               for r in self._records.values())])
        if options.option_count and highlighted is not None:
            options.highlighted = min(highlighted, options.option_count - 1)

    def on_resize(self) -> None:
        if (self._records or self._runs) and self._width() != self._drawn_width:
            self._fill(self.query_one(OptionList).highlighted)

    def _show_count(self) -> None:
        count = len(self._records)
        more = "+" if self._more else ""
        search, user = self._view()
        matching = f" matching “{search}”" if search else ""
        by = "" if user is None else f" by {' '.join(user.split()) or 'unknown'}"
        toggle = " · Ctrl+O everyone's" if self.mine else " · Ctrl+O mine"
        if self._runs and not count:
            self._say(f"{len(self._runs)} suite run{'s' if len(self._runs) != 1 else ''}"
                      f"{by}{matching} · Enter opens one on the suite screen{toggle}")
        elif count:
            what = f"{count}{more} comparison{'s' if count != 1 or more else ''}"
            replay = " · ⏺ recorded: Ctrl+R replay" if any(
                r.recorded for r in self._records.values()) else ""
            runs = f"{len(self._runs)} suite run{'s' if len(self._runs) != 1 else ''} and " \
                if self._runs else ""
            self._say(f"{runs}{what}{by}{matching}, newest first · Enter open · Ctrl+S "
                      f"export{replay}{toggle}")
        elif search:
            self._say(f"Nothing{by} matches “{search}” (a prompt's words or a model's "
                      f"name).{toggle}")
        elif user is not None:
            self._say(f"No comparisons{by} yet.{toggle}")
        else:
            self._say("No comparisons yet: each one is saved here when its last pane ends.")

    def _say(self, text: str | Text) -> None:
        # As Text: what was typed in the filter, or a name, is never read as markup.
        self.query_one("#history-status", Label).update(
            Text(text) if isinstance(text, str) else text)

    def _highlighted_listing(self) -> ListedComparison | None:
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        option = options.get_option_at_index(options.highlighted)
        if (option.id or "").startswith("run:"):
            return None
        return self._records.get(int(option.id or 0))

    def _highlighted_run(self) -> str | None:
        """The run id of the highlighted suite run, if a run is highlighted."""
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        option_id = options.get_option_at_index(options.highlighted).id or ""
        return option_id[4:] if option_id.startswith("run:") else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "replay":
            listed = self._highlighted_listing() if self.is_mounted else None
            return listed is not None and listed.recorded and not listed.hidden
        return True

    @on(OptionList.OptionHighlighted, "#history-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.refresh_bindings()  # Replay: shown for a recorded comparison only
        options = self.query_one(OptionList)
        if (self._more and not self._loading_more and event.option_index is not None
                and event.option_index >= options.option_count - PAGE_AHEAD):
            self._loading_more = True
            self._load_more(*self._view(), self._oldest)

    @work(group="history-more", exit_on_error=False)
    async def _load_more(self, search: str, user: str | None, before: int | None) -> None:
        from anoman_tui.history import HistoryUnavailable

        try:
            records = await asyncio.to_thread(self.store.listing, PAGE, search or None,
                                              before=before, user=user)
        except HistoryUnavailable:
            self._loading_more = False
            return
        if (search, user) != self._view() or before != self._oldest:
            return  # the list was replaced meanwhile
        self._records.update({r.id: r for r in records})
        if self._authors() != self._drawn_authors:
            # The page brought a second author: every row now names its own.
            self._fill(self.query_one(OptionList).highlighted)
        else:
            width = self._width()
            self.query_one(OptionList).add_options(
                [record_option(r, width, author=self._drawn_authors) for r in records])
        self._oldest = records[-1].id if records else self._oldest
        self._more = len(records) == PAGE
        self._loading_more = False
        self._show_count()

    # -- acting -------------------------------------------------------------------

    async def highlighted_record(self) -> ComparisonRecord | None:
        """The highlighted comparison, read whole; None (said) if none or unreadable."""
        from anoman_tui.history import HistoryUnavailable

        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            self.notify("No comparison is highlighted.", timeout=2)
            return None
        option = options.get_option_at_index(options.highlighted)
        option_id = option.id or ""
        if option_id.startswith("run:"):
            self.notify("A suite run: Enter opens it on the suite screen; its reports: "
                        f"anoman-tui runs show {option_id[4:]} --html FILE", timeout=5)
            return None
        try:
            record = await self.to_thread_get(int(option.id or 0))
        except HistoryUnavailable as exc:
            self.notify(f"Could not read it: {exc.reason}.", severity="error", timeout=6)
            return None
        if record is None:
            self.notify("That comparison is no longer in the history.", timeout=3)
            return None
        return record.masked()  # a blind round: its labels only, until its vote

    def action_move(self, by: int) -> None:
        options = self.query_one(OptionList)
        if not options.option_count:
            return
        now = options.highlighted or 0
        options.highlighted = max(0, min(options.option_count - 1, now + by))

    @on(Input.Submitted, "#history-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_open()

    @on(OptionList.OptionSelected, "#history-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open()

    async def to_thread_get(self, comparison_id: int) -> ComparisonRecord | None:
        return await asyncio.to_thread(self.store.get, comparison_id)

    @work(exclusive=True, group="history-open", exit_on_error=False)
    async def action_open(self) -> None:
        run_id = self._highlighted_run()
        if run_id is not None:
            open_run = getattr(self.app, "open_suite_run", None)
            if open_run is not None:
                open_run(run_id)
            return
        record = await self.highlighted_record()
        if record is not None:
            self.app.push_screen(RecordScreen(record, self.live))

    @work(exclusive=True, group="history-open", exit_on_error=False)
    async def action_replay(self) -> None:
        """Replay the highlighted comparison from its recording, at a speed picked first."""
        from anoman_tui.ui.screens.replay import choose_replay

        record = await self.highlighted_record()
        if record is not None:
            choose_replay(self, record, self.live)

    @work(exclusive=True, group="history-open", exit_on_error=False)
    async def action_export(self) -> None:
        from anoman_tui.ui.screens.export import export_comparison

        record = await self.highlighted_record()
        if record is None:
            return
        export_comparison(self.app, record, title=f"Export comparison #{record.id}",
                          store=self.store)

    def action_back(self) -> None:
        self.dismiss()
