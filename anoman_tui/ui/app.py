"""The Textual app: settings, themes, keymap, its screens and the app-wide commands.

`AnomanApp` paints the compare screen first and only then has its `Connector`
(`ui/connection.py`) start the local gateway (or reach the remote one) and read its
model list in a worker, so the first paint never waits on the network or on uvicorn.
The palette's entries belong to the screens that act on them (`ui/palette.py`); the app
adds only Textual's theme, keys and quit.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import select
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, ScreenStackError, SystemCommand, UnknownModeError
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES

from anoman_tui.config import Settings, persist_setting
from anoman_tui.locations import stylesheet
from anoman_tui.ui.connection import Connector, LocalGateway
from anoman_tui.ui.render.pane_state import PaneParams, PaneState
from anoman_tui.ui.screens.compare import CompareScreen
from anoman_tui.ui.screens.deck_keys import DeckKeys
from anoman_tui.ui.textual_internals import end_process_if_exit_blocks, start_with_theme
from anoman_tui.ui.themes import load_themes
from anoman_tui.ui.widgets.pane import ComparePane
from anoman_tui.ui.widgets.prompt_box import PromptBox

# Only the compare screen is imported with the app: every other screen, the history, the
# HTTP stack below httpx and the local gateway are imported where first used, after the
# first paint (benchmarks/startup.py; tests/test_startup.py keeps them out).
if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, HistoryStore
    from anoman_tui.history.pending import PendingSaves
    from anoman_tui.report.suite_files import ReportFiles
    from anoman_tui.streaming import StreamClient
    from anoman_tui.streaming.recording import StreamRecording
    from anoman_tui.suites.prepare import Prepared

    Replay = tuple[ComparisonRecord, dict[int, StreamRecording], float]

ARENA_SCREEN = "anoman_tui.ui.screens.arena"
RECORD_SCREEN = "anoman_tui.ui.screens.record"

log = logging.getLogger(__name__)

READY_POLL_S = 0.03
READY_NOTICE_S = 0.5
"""A key waiting for what it opens says so after this long (the history's server, a
gateway starting): a shorter wait is not worth a notice."""
HISTORY_STATUS_S = 1.0
"""How often the status line's history field is checked (a count read: no drawing while
it stays the same)."""


def _saves(n: int) -> str:
    return f"{n} save{'s' if n != 1 else ''}"


def short_reason(reason: str) -> str:
    """The reason the history is unavailable, in the few words the status line has."""
    if "cannot be reached" in reason:
        return "server not reachable"
    if "refused the user or password" in reason:
        return "wrong credentials"
    if "has no database" in reason:
        return "no such database"
    if "no permission" in reason:
        return "no permission"
    if "locked" in reason:
        return "file locked"
    return "cannot be used"
PANES = 3
HANGUP_EXIT_CODE = 129  # 128 + SIGHUP, as a shell reports a hung-up job
HANGUP_GRACE_S = 2.0  # then the process ends, as a hang-up signal would have ended it
# The palette's own entries kept from Textual's: the rest (screenshot, maximize) are
# not this app's and crowded its commands out.
TEXTUAL_COMMANDS_KEPT = ("Theme", "Keys", "Quit")


def keymap_conflict(keymap: dict[str, str]) -> str | None:
    """A sentence naming two binding ids the keymap puts on one key, else None.

    Checked over the bindings active together on the compare screen (the app's,
    the screen's and the prompt box's): there, one key can run only one of them, and
    which one would depend on Textual's lookup order, not on what the user meant.
    """
    owners: dict[str, str] = {}
    for holder in (AnomanApp, CompareScreen, PromptBox):
        for binding in holder.BINDINGS:
            if not isinstance(binding, Binding) or binding.id is None:
                continue
            keys = keymap.get(binding.id, binding.key)
            for key in (k.strip() for k in keys.split(",")):
                other = owners.setdefault(key, binding.id)
                if other != binding.id:
                    return f"keymap: {key} is bound to both {other} and {binding.id}"
    return None


def _is_screen(screen: Screen[Any] | None, module: str, name: str) -> bool:
    """`screen` is an instance of `module`'s class `name`, asked without importing the
    module: the app's keys are checked for the first frame, before that screen's module
    is (and while it is not, no screen of it can be shown)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(screen, getattr(loaded, name))


def _freeze_startup_objects() -> None:
    """Move everything alive after the first paint out of the collector's reach, and
    turn the collector on (`anoman-tui` starts with it off: nothing start-up builds
    before the first paint is garbage worth a pass).

    Measured: full collections over Textual's start-up objects paused streaming
    frames by 20–60 ms; frozen, p99 display lag at 3 × 300 tok/s fell ~20 ms.
    """
    gc.collect()
    gc.freeze()
    gc.enable()


class StreamingCollector:
    """Keep the cyclic GC's full collections small while answers stream.

    A full collection walks every tracked object and holds the GIL throughout; with
    three panes drawing, Textual's `Strip`s (seven small caches each) put ~100k objects
    in the old generation and full collections paused for 35-60 ms, 67 times in 35 s
    (benchmarks/app_metrics_truth.py): long enough to delay the network thread's
    timestamps and an abort. While a stream runs, `tick()` freezes the survivors each
    second (those that die by reference count are still freed), so a full collection
    only walks the last second's objects. Once nothing streams, everything is
    unfrozen and collected in one go (reclaiming any cycles frozen meanwhile), then
    refrozen as after start-up.

    While a stream runs the youngest generation is also collected less often
    (`STREAMING_GEN0` allocations instead of CPython's 700): a frame allocates
    thousands of short-lived containers, most freed by reference count before a larger
    threshold is reached. Measured at 3 x 1,000 tok/s: 978 young collections (347 ms
    of GC in a 5.2 s stream) fell to 101 (214 ms).
    """

    STREAMING_GEN0: ClassVar[int] = 5_000

    def __init__(self) -> None:
        self._frozen_while_streaming = False
        self._idle_ticks = 0
        self._thresholds: tuple[int, int, int] | None = None  # CPython's, while raised

    def tick(self, streaming: bool) -> None:
        if streaming:
            gc.freeze()
            self._frozen_while_streaming = True
            self._idle_ticks = 0
            if self._thresholds is None:
                self._thresholds = gc.get_threshold()
                gen0, *older = self._thresholds
                gc.set_threshold(max(gen0, self.STREAMING_GEN0), *older)
        elif self._frozen_while_streaming:
            # Not on the first idle tick: the last frames of the answers (finish())
            # may still be on their way, and this collection pauses for ~80 ms.
            self._idle_ticks += 1
            if self._idle_ticks >= 2:
                self._frozen_while_streaming = False
                self.restore()
                gc.unfreeze()
                _freeze_startup_objects()

    def restore(self) -> None:
        """CPython's thresholds again (nothing streams, or the app ends)."""
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None


class AnomanApp(App[None]):
    CSS_PATH = stylesheet()
    TITLE = "anoman-tui"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        # Not Ctrl+U: the prompt box (a TextArea) uses it to delete to the line start.
        Binding("f5", "usage", "Usage", id="usage"),
        # Shown only while no gateway answers (see check_action).
        Binding("ctrl+g", "reconnect", "Reconnect", id="reconnect", priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        models: list[str] | None = None,
        frozen_clock: bool = False,
        gateway_factory: Callable[[], LocalGateway] | None = None,
        connect: bool = True,
        arena: bool = False,
        replay: Replay | None = None,
        suite: Prepared | None = None,
        suite_files: ReportFiles | None = None,
        suite_client: StreamClient | None = None,
    ) -> None:
        """`replay`: (comparison, its recordings by pane, speed) to replay as the first
        screen (`anoman-tui replay ID`): then no gateway is started or reached, and the
        history is not opened. `suite`: a suite run to watch on the suite screen
        (`anoman-tui eval --tui`), over the compare screen, `suite_files` the files it
        writes when it ends and `suite_client` the pool that prepared it (on the loop
        this app then runs on), where its cells go too. The compare screen beneath
        connects once the suite screen is left: until then the run's pool is the only
        one, and its loop the only one on the client side."""
        super().__init__()
        for theme in load_themes().values():
            self.register_theme(theme)
        if settings.theme in self.available_themes:
            # Before the start, so the stylesheet is first parsed with its colours: set
            # once running, it parsed the app's CSS again and restyled every widget.
            start_with_theme(self, settings.theme)
        # The theme picker offers the app's and the user's themes, not Textual's twenty:
        # only the one in use stays (a built-in name is a valid `theme` setting).
        for name in BUILTIN_THEMES:
            if name != self.theme:
                self.unregister_theme(name)
        self._suite = suite
        self._suite_files = suite_files
        self._suite_client = suite_client
        self.settings = settings
        self._collector: StreamingCollector | None = None  # made when mounted
        self.panes: list[PaneState] = []
        """The compare screen's pane states (filled below)."""
        self.connector = Connector(self, settings, self.panes, gateway_factory=gateway_factory)
        """Where requests go and how they travel (`ui/connection.py`)."""
        self.start_in_arena = arena
        self._frozen = frozen_clock
        self._replay = replay
        self._connect_on_mount = connect and replay is None and suite is None
        self._connect_later = connect and replay is None and suite is not None
        self.history: HistoryStore | None = None
        self.pending_saves: PendingSaves | None = None
        """The history, once open (`_open_history`); None while opening, off or unavailable."""
        self.history_problem = ""
        """Why the history could not be opened, in one sentence ("" if it could)."""
        self._history_status = ""
        self.closing_message = ""
        """One line for the terminal once the app has closed ("" for none): saves kept
        in the spool for the next start."""
        self._history_settled = asyncio.Event()  # opened, failed to, or never to be opened
        self._awaited: set[str] = set()  # keys waiting for what they open (`_when_ready`)
        self.warmed_up = False
        """True once the first-render warm-up (a thread after the first paint) is over."""
        specs = (settings.model_copy(update={"models": models}) if models
                 else settings).pane_specs()
        for i in range(PANES):
            if i < len(specs):
                spec = specs[i]
                self.panes.append(PaneState(
                    index=i + 1, model=spec.model, target=spec.target, endpoint=spec.endpoint,
                    params=PaneParams(spec.temperature, spec.max_tokens)))
            else:
                target = self.connector.default_target
                self.panes.append(PaneState(
                    index=i + 1, target=target,
                    endpoint=target.default_endpoint(settings.endpoint),
                    params=PaneParams(settings.temperature, settings.max_tokens)))

    # -- start and stop -------------------------------------------------------

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self.compare = CompareScreen(
            self.panes, frozen_clock=self._frozen, system_prompt=self.settings.system_prompt
        )
        self.push_screen(self.compare)
        if self._replay is not None:
            from anoman_tui.ui.screens.replay import ReplayScreen

            record, recordings, speed = self._replay
            self.push_screen(ReplayScreen(record, recordings, self.compare, speed=speed,
                                          back=False, frozen_clock=self._frozen))
        if self._suite is not None:
            from anoman_tui.ui.screens.suite import SuiteScreen

            self.push_screen(SuiteScreen(self._suite, files=self._suite_files,
                                         client=self._suite_client),
                             lambda _: self._connect_deferred())
        self.connector.listener = self.compare
        if self._connect_on_mount:
            # After the first paint: the network thread and the local gateway start in
            # threads, whose imports would otherwise take the GIL from the first frame.
            self.call_after_refresh(self.connector.reconnect, announce=False)
        if self.settings.history and self._replay is None:
            # Like the gateway: opened after the first paint.
            self.call_after_refresh(lambda: self.run_worker(
                self._open_history(), name="history", exit_on_error=False))
        else:
            self._history_settled.set()
        self.call_after_refresh(_freeze_startup_objects)
        # After the first paint, and off the UI thread: the first answers then draw
        # without one-time set-up stalls.
        self.call_after_refresh(
            self.run_worker, self._warm_up, thread=True, name="warm-up", exit_on_error=False
        )
        self._watch_for_hangup()
        collector = self._collector = StreamingCollector()
        self.set_interval(1.0, lambda: collector.tick(self._streaming()), name="streaming-gc")

    def _connect_deferred(self) -> None:
        """(`eval --tui`) The suite screen is left: the compare screen connects now."""
        if self._connect_later:
            self._connect_later = False
            self.connector.reconnect(announce=True)

    def _streaming(self) -> bool:
        """A pane streams: the compare screen's, or a replay's on top of it."""
        try:
            screen: Screen[Any] | None = self.screen
        except (ScreenStackError, UnknownModeError):
            # The once-a-second tick fired while the app shut down, its screens gone.
            screen = None
        if any(p.running for p in self.panes) or (
                isinstance(screen, DeckKeys) and screen.deck.running):
            return True
        # A suite run streams (a worker of the app), whatever screen is on top of it.
        return any(getattr(getattr(s, "runner", None), "running", False)
                   for s in self.screen_stack)

    def _watch_for_hangup(self) -> None:
        """Exit when the terminal goes away, as a hang-up signal would make us.

        Closing a terminal normally sends SIGHUP, which ends the process. When the
        terminal goes without one (its pseudo-terminal's other end just closes), Textual
        8's input thread reads end-of-file forever at 100% CPU (measured): look for a
        hang-up on the terminal once a second instead.
        """
        if self.is_headless or sys.__stdin__ is None:
            return
        try:
            fd = sys.__stdin__.fileno()
            if not os.isatty(fd):
                return
            poller = select.poll()
            poller.register(fd, select.POLLIN)  # hang-ups and errors are always reported
            gone = select.POLLHUP | select.POLLERR | select.POLLNVAL
            if any(mask & gone for _, mask in poller.poll(0)):
                return  # poll() cannot watch this terminal (macOS: POLLNVAL for devices)
        except (OSError, ValueError, AttributeError):  # (no select.poll on Windows)
            return

        def check() -> None:
            if any(mask & gone for _, mask in poller.poll(0)):
                log.warning("the terminal hung up: exiting")
                # Restoring the terminal on the way out can wait forever on Textual's
                # stopped output thread; a hang-up signal would have ended the process
                # at once: give the orderly exit a moment, then do so.
                end_process_if_exit_blocks(HANGUP_EXIT_CODE, HANGUP_GRACE_S)
                self.exit(return_code=HANGUP_EXIT_CODE)

        self.set_interval(1.0, check, name="hangup-watch")

    def _warm_up(self) -> None:
        # The answer renderer is first imported here, after the first paint.
        from anoman_tui.ui.render.markdown_render import warm_up

        warm_up()
        if any(p.target.kind != "anoman" for p in self.panes):
            # Costs not reported are estimated from the price library: its first import
            # (~150 ms) belongs here, not in the frame that shows the first answer's end.
            from anoman_tui.streaming import preload_price_library

            preload_price_library()
        # What the warm-up built lives as long as the app: out of the collector's reach,
        # as the start-up objects are. Else the first full collection of the first
        # comparison walked it (21-43 ms, in a frame ~0.8 s into the first stream).
        gc.freeze()
        self.warmed_up = True

    keys_of: Screen[Any] | None = None
    """The screen whose key bar is asking which app keys to show (`KeyBar` sets it while
    it reads the bindings), when that screen is not the one shown: the suite's case
    screen is built out of sight, and its keys must be its own."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        screen = self.keys_of or self.screen
        if action == "reconnect":
            # In the footer only while it is useful; the palette entry always works.
            compare = getattr(self, "compare", None)
            return compare is not None and compare.unavailable
        if action == "history":
            # Not from a comparison reopened from the history: Esc goes back to it.
            return not (_is_screen(screen, RECORD_SCREEN, "RecordScreen")
                        or _is_screen(screen, ARENA_SCREEN, "ArenaScreen"))
        if action == "usage" and _is_screen(screen, ARENA_SCREEN, "ArenaScreen"):
            return not getattr(screen, "hidden", False)  # the ledger names each request's model
        # `anoman-tui replay` runs offline: there is no gateway whose ledger to show.
        return not (action == "usage" and self._replay is not None)

    def action_reconnect(self) -> None:
        self.connector.reconnect()

    async def _open_history(self) -> None:
        # The team's shared history (history_url) or, unset, the SQLite file.
        url = self.settings.history_url
        location = url.get_secret_value() if url is not None else None
        author = self.settings.author()

        def open_store() -> tuple[HistoryStore | None, str, Any]:
            # Imported in the thread too: SQLite's import stays off the UI's thread.
            from anoman_tui.history import HistoryStore, HistoryUnavailable
            from anoman_tui.history.spool import replay

            try:
                store = HistoryStore.open(location)
            except HistoryUnavailable as exc:
                return None, exc.reason, None
            store.user = author  # whose comparisons and votes these are
            # What an earlier session left waiting for this server, before anything new.
            return store, "", replay(store)

        try:
            self.history, reason, replayed = await asyncio.to_thread(open_store)
        finally:
            self._history_settled.set()
        self.history_problem = reason
        if self.history is not None:
            from anoman_tui.history.pending import PendingSaves

            self.pending_saves = PendingSaves(self.history, on_written=self._waited_save,
                                              on_failed=self._waited_save_failed)
        if reason:
            log.warning("history unavailable: %s", reason)
            self.notify(f"Comparisons are not saved this session: {reason}.",
                        title="History unavailable", severity="warning", timeout=10)
        if replayed is not None:
            for problem in replayed.problems:
                log.warning("history spool: %s", problem)
                self.notify(f"{problem}.", title="History", severity="warning", timeout=10)
            if replayed.written:
                self.notify(f"{_saves(replayed.written)} kept from an earlier session "
                            f"{'was' if replayed.written == 1 else 'were'} written to the "
                            "history.", title="History", timeout=6)
        self.refresh_history_status()
        self.set_interval(HISTORY_STATUS_S, self.refresh_history_status,
                          name="history-status")

    def history_status(self, *, narrow: bool = False) -> str:
        """The status line's history field ("" when there is nothing to say: history off,
        or the usual SQLite file working): the shared store's `host:port/db` (not on a
        `narrow` line, where it would take a third row), that it is unavailable and why,
        or how many saves wait for its server."""
        if not self.settings.history or self._replay is not None:
            return ""
        pending = self.pending_saves
        if pending is not None and pending.waiting:
            return f"{_saves(pending.waiting)} waiting"
        if self.history is None:
            if not self._history_settled.is_set():
                return ""
            return f"unavailable ({short_reason(self.history_problem)})"
        return "" if narrow else self.history.address or ""

    def refresh_history_status(self) -> None:
        """Redraw the status lines when the history's field changed (a cheap check, once
        a second and after each save: no work while nothing changes)."""
        text = self.history_status()
        if text == self._history_status:
            return
        self._history_status = text
        for screen in self.screen_stack:
            update = getattr(screen, "update_status", None)
            if update is not None and screen.is_mounted:
                update()

    def _waited_save(self, token: Any, result: Any) -> None:
        # (from the retrying thread) A write that waited for the server is written.
        what = token or "A save"
        extra = f" (id {result})" if what == "A comparison" and result is not None else ""
        with contextlib.suppress(RuntimeError):  # the app is closing
            self.call_from_thread(self._tell_written, f"{what} that waited for the "
                                  f"history's server is saved{extra}.")

    def _tell_written(self, message: str) -> None:
        self.notify(message, title="History", timeout=6)
        self.refresh_history_status()

    def _waited_save_failed(self, token: Any, reason: str) -> None:
        what = token or "A save"
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(
                self.notify, f"{what} that waited for the history's server could not "
                f"be saved: {reason}.", title="History", severity="error", timeout=10)

    async def on_unmount(self) -> None:
        for pane in self.query(ComparePane):
            pane.abort()
        if self._collector is not None:
            self._collector.restore()
        if self.pending_saves is not None:
            pending, self.pending_saves = self.pending_saves, None
            await asyncio.to_thread(self._keep_what_waits, pending)
        if self.history is not None:
            # A save still running in its thread finishes first (the store's lock).
            store, self.history = self.history, None
            await asyncio.to_thread(store.close)
        await self.connector.close()

    def _keep_what_waits(self, pending: PendingSaves) -> None:
        """(a thread, at close) What still waits for the server goes to the spool, for
        the next start; `closing_message` says so once the terminal is back."""
        from anoman_tui.history.spool import spool, spool_path

        if not pending.close():
            return
        writes, address = pending.take_left(), pending.store.address
        if address is None:  # (a file's writes never wait)
            return
        try:
            where = spool(spool_path(), address, writes)
        except OSError as exc:
            self.closing_message = (f"{_saves(len(writes))} waiting for the history's "
                                    f"server could not be kept: {exc.strerror or exc}")
        else:
            self.closing_message = (f"{_saves(len(writes))} waiting for the history's "
                                    f"server {'is' if len(writes) == 1 else 'are'} kept "
                                    f"in {where} and written at the next start")
        log.warning("%s", self.closing_message)

    def _theme_changed(self, theme: Any) -> None:
        if theme.name == self.settings.theme:
            return
        self.settings.theme = theme.name
        try:
            persist_setting("theme", theme.name)
        except OSError as exc:
            self.notify(f"Could not save the theme choice: {exc}", severity="warning")

    # -- the screens the app opens -------------------------------------------

    async def history_settled(self) -> None:
        """Return once the history has opened or failed to (at once when it is off)."""
        await self._history_settled.wait()

    def action_history(self) -> None:
        """The history: every saved comparison, newest first, searchable. Asked for while
        it still opens (F6 as the screen first shows): opened once it is."""
        from anoman_tui.ui.screens.history import HistoryScreen

        if self.history is None and not self._history_settled.is_set():
            self._when_ready(self._history_settled.is_set, self.action_history,
                             "The history is still opening: it shows once open.",
                             key="history")
            return
        if self.history is None:
            if not self.settings.history:
                why = "history is off (--no-history, or history = false in the config)"
            else:
                why = self.history_problem or "the history is still opening"
            self.notify(f"No history to show: {why}.", title="History", timeout=6)
            return
        self.push_screen(HistoryScreen(self.history, self.compare))

    def open_replay(self, record: ComparisonRecord) -> None:
        """Pick a speed, then replay saved comparison `record` over the current screen."""
        from anoman_tui.ui.screens.replay import choose_replay

        choose_replay(self.screen, record, self.compare)

    def action_usage(self) -> None:
        """The gateway's usage ledger; asked for while the gateway is still starting (or
        being reached), shown once it answers."""
        compare = getattr(self, "compare", None)
        connecting = (compare is not None and not compare.unavailable
                      and self.connector.ready_url is None and self._connect_on_mount)
        if connecting:
            self._when_ready(lambda: self.connector.ready_url is not None
                             or self.compare.unavailable, self.action_usage,
                             "The gateway is still starting: its ledger shows once it "
                             "answers.", key="usage")
            return
        from anoman_tui.ui.screens.usage import UsageScreen

        self.push_screen(UsageScreen())

    def _when_ready(self, ready: Callable[[], bool], then: Callable[[], None], waiting: str,
                    *, key: str) -> None:
        """Run `then` once `ready()` holds: a key pressed as the screen first shows, before
        what it opens is there, is acted on rather than lost. Said after a moment of
        waiting; dropped if another screen was opened meanwhile."""
        if key in self._awaited:
            return  # pressed again while waiting: once is enough
        self._awaited.add(key)
        asked_on = self.screen

        async def wait() -> None:
            started = time.monotonic()
            told = False
            try:
                while not ready():
                    if not told and time.monotonic() - started > READY_NOTICE_S:
                        self.notify(waiting, timeout=4)
                        told = True
                    await asyncio.sleep(READY_POLL_S)
            finally:
                self._awaited.discard(key)
            if self.screen is asked_on:
                then()

        self.run_worker(wait(), name=f"when-ready-{key}", exit_on_error=False)

    # -- the command palette: the app-wide entries -----------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's theme, keys and quit; each screen adds its own (`ui/palette.py`)."""
        for command in super().get_system_commands(screen):
            if command.title in TEXTUAL_COMMANDS_KEPT:
                yield command

    def action_run_suite(self) -> None:
        """Ctrl+P → *Run a suite…*: a path (completed as typed), then the suite screen."""
        from pathlib import Path

        from anoman_tui.ui.screens.suite_open import PathSuggester, check_suite_path, open_suite
        from anoman_tui.ui.screens.text_input import TextInputScreen

        def chosen(text: str | None) -> None:
            if text:
                self.run_worker(open_suite(self, self.settings, self.history,
                                           path=Path(text).expanduser()),
                                group="suite", exit_on_error=False)

        self.push_screen(TextInputScreen(
            "Run a suite", placeholder="examples/support-suite.toml",
            help="a suite file or a promptfoo config · → completes · Enter run · Esc cancel",
            check=check_suite_path, suggester=PathSuggester()), chosen)

    def open_suite_run(self, run_id: str) -> None:
        """A suite run from the history, on the suite screen (continued if stopped)."""
        from anoman_tui.ui.screens.suite_open import open_suite

        self.run_worker(open_suite(self, self.settings, self.history, run_id=run_id),
                        group="suite", exit_on_error=False)

    def action_arena(self) -> None:
        """Blind rounds over the compare screen (which stays as it was)."""
        if self.compare.base_url is None:
            self.notify("Not connected yet: the arena starts once the gateway answers.",
                        timeout=4)
            return
        from anoman_tui.ui.screens.arena import ArenaScreen

        self.push_screen(ArenaScreen(self.compare, frozen_clock=self._frozen))

    def action_scoreboard(self) -> None:
        """The scoreboard of the blind votes (from the history)."""
        from anoman_tui.ui.screens.scoreboard import ScoreboardScreen

        if self.history is None:
            self.notify("No scoreboard: the history is off or not available.", timeout=5)
            return
        self.push_screen(ScoreboardScreen(self.history))
