"""`FrameClock`: one timer for everything that redraws while answers stream.

Three answers flushing their text, three pane footers and spinners ticking, and three
scrollbar thumbs following their answers would each ask Textual for a repaint at their
own moment, and each repaint composites the screen again (measured at 3 x 300 tok/s:
40% of the frames were for a footer or a scrollbar alone, 3-10 ms each). Instead they ask
this clock, which runs every waiting callback on one grid of `INTERVAL` seconds and then
draws the screen at once, so all of it lands in one frame. Drawing at once also skips the
wait for the screen's own update timer (up to 1/60 s; p99 25 ms measured).

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

from anoman_tui.ui.textual_internals import composite_screen_now, is_batching

__all__ = ["FrameClock"]


class FrameClock:
    """Runs requested callbacks together on a shared grid, then draws the screen."""

    INTERVAL: ClassVar[float] = 0.04
    """Seconds between frames while something is waiting (25 frames/s). The network
    thread reads talking streams just before each (`anoman_tui.ui.network.FRAME_S`)."""

    _clocks: ClassVar[weakref.WeakKeyDictionary[App[Any], FrameClock]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, app: App[Any]) -> None:
        self._app = weakref.ref(app)
        self._waiting: dict[object, Callable[[], object]] = {}  # key -> callback, in order
        self._timer: asyncio.TimerHandle | None = None

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
            self._timer = loop.call_at(when, self._due)

    def _due(self) -> None:
        # In the app's message loop, as its own timers' callbacks run.
        app = self._app()
        if app is None or not app.is_running:
            self._timer = None
            self._waiting.clear()
            return
        app.call_next(self._tick)

    def _tick(self) -> None:
        self._timer = None
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
