"""A screen of panes sends the terminal only what changed, and what it sends is right.

`textual_internals.draw_dirty_lines_only` replaces how every screen that shows panes (the
compare screen, the arena's, a replay's, a reopened comparison's) composites a partial
update. These tests replay every update such a screen produces onto a grid of terminal
cells, as a terminal would, and compare the grid with a full render of the screen after
each one; and they check that a frame renders no more than its dirty lines. They run on
the deck alone under its prompt box (tests/ui/deck_host.py), whose screen composites as
the compare screen does, fed by the local gateway over real sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, LayoutUpdate
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from anoman_tui.ui.render import pane_state
from tests.pilot import until
from tests.ui.deck_host import DeckHost, GatewayFeed

Cell = tuple[str, Style | None]


def cells(segments: Iterable[Segment]) -> list[Cell]:
    row: list[Cell] = []
    for text, style, control in segments:
        if control:
            continue
        for char in text:
            row.append((char, style))
    return row


class Terminal:
    """A grid of cells that takes the screen's updates as a terminal would."""

    def __init__(self) -> None:
        self.rows: list[list[Cell]] = []
        self.partial_updates = 0

    def take(self, update: object) -> None:
        if isinstance(update, LayoutUpdate):
            self.rows = [cells(Strip.join(line)) for line in update.strips]
        elif isinstance(update, ChopsUpdate):
            self.partial_updates += 1
            for y, x1, x2 in update.spans:
                line = update.chops[y]
                for end, (x, strip) in zip(update.chop_ends[y], line.items(), strict=False):
                    if strip is None or x > x2 or end <= x1:
                        continue
                    if not (x2 > x >= x1 and end <= x2):
                        strip = strip.crop(0, min(end, x2) - x)
                    piece = cells(strip)
                    self.rows[y][x : x + len(piece)] = piece


def watch(screen: Screen[None], check: Callable[[Terminal], None]) -> Terminal:
    compositor = screen._compositor
    terminal = Terminal()
    terminal.rows = [cells(strip) for strip in compositor.render_strips()]  # as drawn so far
    original = compositor.render_update

    def render_update(full: bool = False, screen_stack: object = None,
                      simplify: bool = False) -> object:
        update = original(full=full, screen_stack=screen_stack, simplify=simplify)  # type: ignore[arg-type]
        if update is not None:
            terminal.take(update)
            check(terminal)
        return update

    compositor.render_update = render_update  # type: ignore[method-assign]
    return terminal


@pytest.fixture
def steady_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fast enough for a short test, slow enough for many frames while the panes scroll.
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none", "ttft=0,rate=120")


def settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


@pytest.mark.usefixtures("steady_answers")
async def test_every_partial_update_leaves_the_terminal_as_a_full_render(
    gateway_feed: GatewayFeed,
) -> None:
    app = DeckHost(3, prompt=True, frozen_clock=False)
    mismatches: list[str] = []

    def differences(terminal: Terminal, *, bars: bool) -> Iterable[tuple[int, list[Cell],
                                                                      list[Cell]]]:
        compositor = app.deck_screen._compositor
        full = [cells(strip) for strip in compositor.render_strips()]
        # Not yet due: a widget that asked for a repaint since this update was made (it
        # reaches the next one), and an answer's scrollbar, which repaints its thumb at
        # most twice a second while text streams in (answer_view._ThumbScrollBar), so
        # the terminal may show it a fraction of a cell behind. All checked at the end.
        masked = [] if bars else [
            region
            for widget, (region, _) in compositor.visible_widgets.items()
            if type(widget).__name__ == "_ThumbScrollBar"
            or widget._repaint_required or widget._repaint_regions
        ]
        for y, (seen, want) in enumerate(zip(terminal.rows, full, strict=True)):
            if masked:
                seen, want = list(seen), list(want)
                for region in masked:
                    if region.y <= y < region.bottom:
                        seen[region.x : region.right] = want[region.x : region.right]
            if seen != want:
                yield y, seen, want

    def check(terminal: Terminal) -> None:
        for y, seen, want in differences(terminal, bars=False):
            if len(mismatches) < 5:
                mismatches.append(
                    f"update {terminal.partial_updates}, row {y}:\n"
                    f"  terminal {''.join(c for c, _ in seen)!r}\n"
                    f"  screen   {''.join(c for c, _ in want)!r}"
                )

    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        terminal = watch(app.deck_screen, check)
        gateway_feed.play(app.deck, "Explain streaming, with a list, a table and some code.")
        await until(pilot, lambda: settled(app), timeout=60)
        # Once the last frames after the answers' ends are drawn (each pane's footer and
        # header, the scrollbars' thumbs), the terminal shows the screen: waited for, as
        # long as a loaded machine takes to draw them.
        try:
            await until(pilot, lambda: not any(differences(terminal, bars=True)), timeout=10)
        except AssertionError:
            left = [y for y, _, _ in differences(terminal, bars=True)]
            raise AssertionError(
                f"rows {left} differ from the screen once the answers ended") from None
        assert terminal.partial_updates > 20, "the answers streamed in too few frames"
        assert not mismatches, "\n".join(mismatches)


async def test_a_frame_renders_only_the_widgets_and_lines_it_changes() -> None:
    # (The host's prompt box does not blink: a blink repaints it on its own clock, and on
    # a loaded machine fell inside the counted frames.)
    app = DeckHost(3, prompt=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        rendered: list[tuple[Widget, int]] = []
        original = Widget.render_lines

        def counting(self: Widget, crop: object) -> list[Strip]:
            strips = original(self, crop)  # type: ignore[arg-type]
            rendered.append((self, len(strips)))
            return strips

        Widget.render_lines = counting  # type: ignore[method-assign]
        try:
            view = app.deck.pane(1).answer
            view.append("".join(f"paragraph {n}\n\n" for n in range(5)) + "the last")
            await until(pilot, lambda: "the last" in view.text)
            await pilot.pause(0.2)
            rendered.clear()
            view.append(" one")  # the last paragraph's row changes: no new row, no scroll
            await until(pilot, lambda: any(w is view for w, _ in rendered), timeout=5)
            await pilot.pause(0.1)
        finally:
            Widget.render_lines = original  # type: ignore[method-assign]
        widgets = {type(w).__name__ for w, _ in rendered}
        # Not the screen, the containers behind the answers or the other panes (Textual
        # renders every widget in the dirty box over its whole height).
        assert widgets == {"AnswerView"}, widgets
        # The changed row (the tenth) alone: not the rows above it, nor the blank rows
        # below the answer.
        assert all(rows == 1 for _, rows in rendered), rendered


async def test_a_widget_gone_without_a_repaint_is_repainted() -> None:
    """The area of a widget that left the screen is repainted even when nothing marked
    it (seen in a terminal: a toast that expired while answers streamed, after a resize,
    left its text beside the prompt box; the layout had found nothing to mark)."""
    from textual.widgets._toast import Toast

    app = DeckHost(3, prompt=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        screen = app.deck_screen
        terminal = watch(screen, lambda _: None)
        compositor = screen._compositor

        def text() -> str:
            return "\n".join("".join(char for char, _ in row) for row in terminal.rows)

        app.notify("gone soon", timeout=60)
        await until(pilot, lambda: "gone soon" in text())
        toasts = [(toast, compositor.visible_widgets[toast][0]) for toast in screen.query(Toast)]
        assert toasts
        # The toast goes with no update drawn meanwhile, and the layout's marks are lost.
        original = screen._compositor_refresh
        screen._compositor_refresh = lambda: None  # type: ignore[method-assign]
        for toast, _ in toasts:
            await toast.remove()
        await pilot.pause(0.2)
        screen._compositor_refresh = original  # type: ignore[method-assign]
        compositor._dirty_regions.clear()
        update = compositor.render_partial_update()
        assert update is not None, "nothing repaints where the toast was"
        terminal.take(update)
        rows = {y for y, _, _ in update.spans}
        for _, region in toasts:
            assert set(range(region.y, region.bottom)) <= rows
        assert "gone soon" not in text()
