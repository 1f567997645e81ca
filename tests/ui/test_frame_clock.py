"""Frame economy while answers stream: one frame per clock tick for everything that
asked for it, styled answer rows reused across scrolls, pane status restyling only the
pane, and the first-render warm-up."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widgets import Static

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.markdown_render import WARM_LANGUAGES, _lexer, warm_up
from anoman_tui.ui.textual_internals import StylesCache, styles_cache
from anoman_tui.ui.widgets.answer_view import AnswerView
from anoman_tui.ui.widgets.frame_clock import FrameClock
from anoman_tui.ui.widgets.pane import ComparePane
from tests.pilot import until
from tests.ui.test_answer_view import Host, drained


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
