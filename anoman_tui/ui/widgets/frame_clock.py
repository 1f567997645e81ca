"""`FrameClock`: one timer for everything that redraws while answers stream.

Three answers flushing their text, three pane footers and spinners ticking, and three
scrollbar thumbs following their answers would each ask Textual for a repaint at their
own moment, and each repaint composites the screen again (measured at 3 x 300 tok/s:
40% of the frames were for a footer or a scrollbar alone, 3-10 ms each). Instead they ask
this clock, which runs every waiting callback on one grid of `INTERVAL` seconds and then
draws the screen at once, so all of it lands in one frame. Drawing at once also skips the
wait for the screen's own update timer (up to 1/60 s; p99 25 ms measured).

A *source* (`add_source`) is polled at the start of every frame while it is registered,
before the waiting callbacks: a streaming pane takes in there what the network thread
read for this frame, and while that thread is still decoding such a read the frame waits
for it (`SOURCE_WAIT` at most). Handed over through the event loop alone, a read made
just before a frame often reached the pane after the frame had begun and waited a whole
frame more: in slow spells 8-13% of the tokens at 3 x 300 tok/s, and display lag p99
57-105 ms over six runs, against 55-59 ms with sources in six runs alternated with them
(benchmarks/app_display_lag.py).

May import: the standard library, `textual` and `anoman_tui.ui.textual_internals`
(through which alone it uses Textual internals).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import App
from textual.widget import Widget

from anoman_tui.ui.textual_internals import composite_screen_now, is_batching

__all__ = ["FrameClock", "when_laid_out"]


class FrameClock:
    """Runs requested callbacks together on a shared grid, then draws the screen."""

    SOURCE_WAIT: ClassVar[float] = 0.010
    """How long past its grid point a frame may wait for a source that is still taking
    in a read (see `add_source`), re-checking every `SOURCE_POLL` seconds."""
    SOURCE_POLL: ClassVar[float] = 0.001

    INTERVAL: ClassVar[float] = 0.04
    """Seconds between frames while something is waiting (25 frames/s). The network
    thread reads talking streams just before each (`anoman_tui.ui.network.FRAME_S`)."""

    _clocks: ClassVar[weakref.WeakKeyDictionary[App[Any], FrameClock]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, app: App[Any]) -> None:
        self._app = weakref.ref(app)
        self._waiting: dict[object, Callable[[], object]] = {}  # key -> callback, in order
        # key -> (poll, ready), every frame
        self._sources: dict[object, tuple[Callable[[], object], Callable[[], bool]]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._due_at = 0.0  # the grid point of the frame being drawn (loop time)

    @classmethod
    def of(cls, app: App[Any]) -> FrameClock:
        """The clock of `app` (made on first use)."""
        clock = cls._clocks.get(app)
        if clock is None:
            clock = cls._clocks[app] = cls(app)
        return clock

    def request(self, callback: Callable[[], object], key: object = None) -> None:
        """Run `callback` at the next frame (once per `key`; default: the callback)."""
        self._waiting[callback if key is None else key] = callback
        self._schedule()

    def add_source(self, key: object, poll: Callable[[], object],
                   ready: Callable[[], bool] = lambda: True) -> None:
        """Call `poll` at the start of every frame until `remove_source(key)`: what it
        requests (`request`) is drawn in that same frame. The clock keeps ticking on its
        grid meanwhile, so that a frame is due whenever something may have arrived.

        While `ready()` is False (the source is still taking in what was read for this
        frame) the frame waits for it, `SOURCE_WAIT` at most past its grid point.
        """
        self._sources[key] = (poll, ready)
        self._schedule()

    def remove_source(self, key: object) -> None:
        self._sources.pop(key, None)

    def _schedule(self) -> None:
        app = self._app()
        if self._timer is None and app is not None:
            # At the next point of the monotonic clock's grid, so that intervals that are
            # multiples of INTERVAL (the panes' ticks) line up, and the network thread's
            # reads land just before it. An absolute time: a Textual timer counts its
            # delay from when its task first runs, which for a request made during a
            # frame is after that frame (measured: frames began 7-10 ms after their
            # grid point, p50).
            loop = asyncio.get_running_loop()
            interval = self.INTERVAL
            when = (math.floor(loop.time() / interval) + 1) * interval
            self._due_at = when
            self._timer = loop.call_at(when, self._due)

    def _due(self) -> None:
        # In the app's message loop, as its own timers' callbacks run.
        app = self._app()
        if app is None or not app.is_running:
            self._timer = None
            self._waiting.clear()
            self._sources.clear()
            return
        app.call_next(self._tick)

    def draw_now(self) -> None:
        """Draw a frame now, off the grid, with what waits for the next one (the sources'
        news, the requested callbacks): a screen just shown in a key's handler gets its
        first frame without waiting for the loop to come round to it. The grid goes on."""
        for poll, _ in list(self._sources.values()):
            poll()
        self._draw()

    def _tick(self) -> None:
        self._timer = None
        sources = list(self._sources.values())
        if sources and not all(ready() for _, ready in sources):
            loop = asyncio.get_running_loop()
            if loop.time() - self._due_at < self.SOURCE_WAIT:
                # Idle meanwhile: the network thread gets the GIL to finish its read.
                self._timer = loop.call_later(self.SOURCE_POLL, self._due)
                return
        for poll, _ in sources:
            poll()  # its requests join this frame's
        if self._sources:
            self._schedule()  # the next grid point, however this frame goes
        if not self._waiting:
            return  # the sources brought nothing, and nothing else waits
        self._draw()

    def _draw(self) -> None:
        """Run the requested callbacks, then draw the screen."""
        waiting, self._waiting = self._waiting, {}
        for callback in waiting.values():
            callback()  # a request made here waits for the next frame
        app = self._app()
        if app is None or is_batching(app) or not app.is_running:
            return
        screen = app.screen
        if screen.is_current:
            # What the screen's update timer would do on its next beat: lay out if
            # needed, then composite the dirty widgets.
            composite_screen_now(screen)


def when_laid_out(widget: Widget, callback: Callable[[], object]) -> None:
    """Call `callback` once, after the next layout of `widget`'s screen.

    A widget shown again (its `display`, or an ancestor's, set) is not always told so:
    a frame drawn after the change but before the layout it asks for (this clock draws
    at any moment, and the hidden widget may already wait in the screen's dirty set, e.g.
    once focused) has Textual place it in its map on the spot, so the layout that follows
    finds nothing newly shown and sends it neither `Show` nor `Resize` (Textual 8.2.8).
    What must follow a widget getting its size waits for the layout itself instead.
    One waiting callback per widget (a second replaces the first)."""
    if not widget.is_running:
        return
    signal = widget.screen.screen_layout_refresh_signal

    def laid_out(_screen: object) -> None:
        signal.unsubscribe(widget)
        callback()

    signal.unsubscribe(widget)
    signal.subscribe(widget, laid_out)
