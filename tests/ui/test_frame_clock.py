"""Frame economy while answers stream: one frame per clock tick for everything that
asked for it, styled answer rows reused across scrolls, pane status restyling only the
pane, and the first-render warm-up."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widgets import Static

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render.markdown_render import WARM_LANGUAGES, _lexer, warm_up
from anoman_tui.ui.textual_internals import StylesCache, styles_cache
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.frame_clock import FrameClock
from anoman_tui.ui.widgets.pane import ComparePane
from tests.pilot import until
from tests.ui.deck_host import DeckHost, GatewayFeed
from tests.ui.helpers import Host, drained


class Three(App[None]):
    def compose(self) -> ComposeResult:
        for index in range(3):
            yield Static("-", id=f"s{index}")


def count_frames(app: App[None], in_tick: list[bool] | None = None) -> list[int]:
    """Count the screen's composites (Screen._compositor_refresh calls); with `in_tick`,
    also note for each one whether the frame clock drew it (inside its tick)."""
    frames = [0]
    screen = app.screen
    original = screen._compositor_refresh
    clock = FrameClock.of(app)
    tick = clock._tick
    ticking = [False]

    def ticked() -> None:
        ticking[0] = True
        try:
            tick()
        finally:
            ticking[0] = False

    def counted() -> None:
        frames[0] += 1
        if in_tick is not None:
            in_tick.append(ticking[0])
        original()

    clock._tick = ticked  # type: ignore[method-assign]
    screen._compositor_refresh = counted  # type: ignore[method-assign]
    return frames


async def test_requests_run_together_in_one_frame() -> None:
    app = Three()
    async with app.run_test(size=(30, 5)) as pilot:
        await pilot.pause(0.1)
        clock = FrameClock.of(app)
        drawn_by_clock: list[bool] = []
        frames = count_frames(app, drawn_by_clock)
        ran: list[str] = []

        def updater(index: int) -> Callable[[], None]:
            def update() -> None:
                ran.append(f"s{index}")
                # Same size: a repaint, no layout (a layout is the screen's own frame).
                app.query_one(f"#s{index}", Static).update(f"new {index}", layout=False)

            return update

        for index in range(3):
            clock.request(updater(index), key=index)
        clock.request(updater(0), key=0)  # same key: still once
        assert clock._timer is not None
        await until(pilot, lambda: len(ran) == 3, timeout=5)
        # Drawn by the clock itself, right after the callbacks (the repaints they asked
        # for reach the screen only when each widget next goes idle, after the tick): no
        # update-timer frame.
        assert frames[0] == 1
        assert drawn_by_clock == [True]
        assert sorted(ran) == ["s0", "s1", "s2"]
        assert clock._timer is None, "an idle clock leaves no timer running"
        await pilot.pause(0.1)
        assert frames[0] == 1
        text = app.export_screenshot().replace("&#160;", " ")
        assert all(f"new {index}" in text for index in range(3))


async def test_a_request_made_during_a_tick_waits_for_the_next() -> None:
    app = Three()
    async with app.run_test(size=(30, 5)) as pilot:
        clock = FrameClock.of(app)
        ticks: list[str] = []

        def second() -> None:
            ticks.append("second")

        def first() -> None:
            ticks.append("first")
            clock.request(second)
            assert clock._timer is not None  # scheduled for the next grid point

        clock.request(first)
        await until(pilot, lambda: ticks == ["first", "second"], timeout=5)


async def test_a_source_is_polled_as_each_frame_begins_and_draws_in_it() -> None:
    app = Three()
    async with app.run_test(size=(30, 5)) as pilot:
        await pilot.pause(0.1)
        clock = FrameClock.of(app)
        drawn_by_clock: list[bool] = []
        frames = count_frames(app, drawn_by_clock)
        polls: list[float] = []
        label = app.query_one("#s0", Static)

        def poll() -> None:
            # The grid point the frame is for: not the time it began (a frame begun late,
            # with a core busy, is followed by one on time: a gap of a few ms that said
            # nothing about frames coming too often).
            polls.append(clock._due_at)
            if len(polls) == 3:  # something arrived: drawn in this frame
                clock.request(lambda: label.update("arrived", layout=False), key="draw")

        clock.add_source("source", poll)
        await until(pilot, lambda: len(polls) >= 6, timeout=5)
        # A frame on every grid point while the source is there; only the one that had
        # something to draw composited the screen.
        gaps = [b - a for a, b in itertools.pairwise(polls)]
        assert all(gap > FrameClock.INTERVAL / 2 for gap in gaps), gaps
        assert frames[0] == 1 and drawn_by_clock == [True]
        assert "arrived" in app.export_screenshot().replace("&#160;", " ")
        clock.remove_source("source")
        await pilot.pause(0.1)
        count = len(polls)
        await pilot.pause(0.2)
        assert len(polls) == count
        assert clock._timer is None, "an idle clock leaves no timer running"


async def test_a_frame_waits_a_little_for_a_source_still_taking_in_a_read() -> None:
    app = Three()
    async with app.run_test(size=(30, 5)) as pilot:
        await pilot.pause(0.1)
        clock = FrameClock.of(app)
        loop = asyncio.get_running_loop()
        waited: dict[str, list[float]] = {"never": [], "soon": []}

        def poll(name: str) -> Callable[[], None]:
            return lambda: waited[name].append(loop.time() - clock._due_at)

        clock.add_source("never", poll("never"), lambda: False)
        await until(pilot, lambda: len(waited["never"]) >= 3, timeout=5)
        clock.remove_source("never")
        # Never ready: each frame waits its longest, then goes ahead without it.
        assert all(w >= FrameClock.SOURCE_WAIT for w in waited["never"]), waited
        await pilot.pause(0.1)
        # Ready 4 ms past the grid point: the frame begins then, not before.
        clock.add_source("soon", poll("soon"), lambda: loop.time() - clock._due_at >= 0.004)
        await until(pilot, lambda: len(waited["soon"]) >= 5, timeout=5)
        clock.remove_source("soon")
        assert all(w >= 0.004 for w in waited["soon"]), waited
        assert sorted(waited["soon"])[2] < FrameClock.SOURCE_WAIT, waited


async def test_scrolled_rows_reuse_their_styled_lines() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(AnswerView)
        view.append("".join(f"paragraph number {i} of the answer\n\n" for i in range(80)))
        view.finish()
        await drained(pilot, view)
        rows = view._rendered_lines()
        height = view.scrollable_content_region.height

        def on_screen() -> list[str]:
            return [strip.text.rstrip() for strip in view.render_lines(view.size.region)]

        calls = [0]
        original = StylesCache.render_line

        def counting(self: StylesCache, *args: object) -> object:
            calls[0] += self is styles_cache(view)
            return original(self, *args)  # type: ignore[arg-type]

        StylesCache.render_line = counting  # type: ignore[assignment,method-assign]
        try:
            view.scroll_to(y=40, animate=False)
            await pilot.pause()
            assert on_screen() == rows[40 : 40 + height]
            calls[0] = 0
            view.scroll_to(y=41, animate=False)  # every row moves up by one
            await pilot.pause()
            assert on_screen() == rows[41 : 41 + height]
            # Only the newly exposed row is styled again (Textual alone restyles all).
            assert calls[0] <= 2, f"{calls[0]} rows restyled for a one-row scroll"
        finally:
            StylesCache.render_line = original  # type: ignore[method-assign]

        # A style change reaches rows styled before it.
        plain = [strip for strip in view.render_lines(view.size.region)]
        view.dimmed = True
        await pilot.pause()
        dimmed = view.render_lines(view.size.region)
        assert [s.text for s in dimmed] == [s.text for s in plain]
        assert [list(s) for s in dimmed] != [list(s) for s in plain]


def settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


def test_warm_up_builds_the_common_lexers() -> None:
    warm_up()
    assert _lexer.cache_info().currsize >= len(WARM_LANGUAGES)


async def test_app_warms_up_after_first_paint_and_restyles_only_a_pane(
    make_app: Callable[..., AnomanApp],
) -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.warmed_up and app.compare.base_url is not None)
        pane = app.compare.query_one(ComparePane)
        restyled: list[str] = []
        original = app.stylesheet.update_nodes

        def recording(nodes: object, animate: bool = False) -> None:
            nodes = list(nodes)  # type: ignore[call-overload]
            restyled.extend(type(node).__name__ for node in nodes)
            original(nodes, animate=animate)

        app.stylesheet.update_nodes = recording  # type: ignore[method-assign]
        pane.set_status("waiting")
        assert pane.has_class("-waiting") and not pane.has_class("-idle")
        assert restyled == ["ComparePane"]
        app.stylesheet.update_nodes = original  # type: ignore[method-assign]
        pane.set_status("idle")
        await pilot.pause()


async def test_frames_take_in_what_the_streams_read_for_them(gateway_feed: GatewayFeed,
                                                            monkeypatch) -> None:
    """While panes stream, each frame first takes in the text read for it (a clock source;
    the iterator gets the rest, and the stream's start and end): together the whole
    answer, once, in order; no source is left once the streams end. (A deck alone, fed
    by the local gateway: tests/ui/deck_host.py.)"""
    from anoman_tui.ui.render import pane_state

    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none", "ttft=0.02,rate=100,tokens=300")
    polls = [0]
    original_take = ComparePane._take_deltas

    def take(self: ComparePane, stream: object) -> None:
        polls[0] += 1
        original_take(self, stream)  # type: ignore[arg-type]

    monkeypatch.setattr(ComparePane, "_take_deltas", take)
    app = DeckHost(3, frozen_clock=False)
    async with app.run_test(size=(160, 45)) as pilot:
        # A busy UI (long frames): reads wait for it.
        busy = app.set_interval(0.04, lambda: time.sleep(0.03))
        gateway_feed.play(app.deck, "stream it")
        await until(pilot, lambda: settled(app), timeout=30)
        busy.stop()
        for pane in app.deck.widgets:
            result = pane.state.last_result
            assert pane.status == "done" and result is not None
            await until(pilot, lambda pane=pane: pane.answer.caught_up, timeout=10)
            assert result.text in pane.answer.text
        assert polls[0] > 3 * 25, f"the panes' sources were polled {polls[0]} times in 3 s"
        assert not FrameClock.of(app)._sources


async def test_a_failure_drawing_a_frames_deltas_costs_only_its_pane(
        gateway_feed: GatewayFeed, monkeypatch) -> None:
    from anoman_tui.ui.network import ThreadedStream
    from anoman_tui.ui.render import pane_state
    from tests.pilot import badge_text

    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none", "ttft=0.02,rate=100,tokens=200")
    original = ThreadedStream.take_deltas
    broken: list[ThreadedStream] = []

    def take(self: ThreadedStream) -> list[object]:
        events = original(self)
        if self.request.pane == 2 and self._received > 3 and not broken:  # streaming
            broken.append(self)
            raise RuntimeError("a bug while drawing")
        return events  # type: ignore[return-value]

    monkeypatch.setattr(ThreadedStream, "take_deltas", take)
    app = DeckHost(3, frozen_clock=False)
    async with app.run_test(size=(160, 45)) as pilot:
        gateway_feed.play(app.deck, "stream it")
        await until(pilot, lambda: settled(app), timeout=30)
        one, two, three = app.deck.widgets
        assert broken, "no frame took deltas in pane 2"
        assert two.status == "failed" and "INTERNAL ERROR" in badge_text(two)
        assert one.status == "done" and three.status == "done"
        assert not FrameClock.of(app)._sources
