"""The key bar: keys whose enabled state changes are dimmed or lit in place, not rebuilt;
keys that change are rebuilt."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding

from anoman_tui.ui.widgets.key_bar import KeyBar
from tests.pilot import until


class Bar(App[None]):
    BINDINGS = [Binding("f1", "abort", "Abort"), Binding("f2", "zoom", "Zoom")]

    def __init__(self) -> None:
        super().__init__()
        self.streaming = False

    def compose(self) -> ComposeResult:
        yield KeyBar()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "abort":
            return self.streaming or None  # None: shown dimmed
        return True

    def action_abort(self) -> None:
        pass

    def action_zoom(self) -> None:
        pass


def keys(app: App[None]) -> dict[str, object]:
    return {key.action: key for key in app.query_one(KeyBar).query("FooterKey")}  # type: ignore[attr-defined]


async def test_a_key_enabled_or_dimmed_in_place_and_new_keys_rebuilt() -> None:
    app = Bar()
    async with app.run_test(size=(80, 5)) as pilot:
        await until(pilot, lambda: "abort" in keys(app))
        before = keys(app)
        abort = before["abort"]
        assert abort.has_class("-disabled")  # type: ignore[attr-defined]
        app.streaming = True
        app.refresh_bindings()
        await until(pilot, lambda: not abort.has_class("-disabled"))  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        assert keys(app) == before  # the same widgets: nothing rebuilt
        assert not abort._disabled  # type: ignore[attr-defined]  # a click runs it now
        app.streaming = False
        app.refresh_bindings()
        await until(pilot, lambda: abort.has_class("-disabled"))  # type: ignore[attr-defined]
        assert keys(app) == before
        # A key that is new (not only enabled) rebuilds the bar.
        app.bind("f3", "zoom_out", description="Wider")
        app.refresh_bindings()
        await until(pilot, lambda: "zoom_out" in keys(app))
        assert keys(app)["abort"] is not abort


class Grouped(Bar):
    BINDINGS = [
        *[Binding(f"f{n}", f"abort({n})", f"Abort {n}", group=Binding.Group("Abort pane"))
          for n in (1, 2, 3)],
        Binding("f4", "zoom", "Zoom ⇧"), Binding("ctrl+s", "export", "Export"),
    ]


async def test_the_bar_measures_each_key_as_it_renders() -> None:
    # The bar fits its keys from their widths worked out without rendering them
    # (`_key_width`): the same as the width of what each key renders, compact or not.
    for compact in (True, False):
        await _check_key_widths(compact)


async def _check_key_widths(compact: bool) -> None:
    from anoman_tui.ui.widgets.key_bar import _key_width

    app = Grouped()
    async with app.run_test(size=(120, 5)) as pilot:
        bar = app.query_one(KeyBar)
        bar.compact = compact
        await until(pilot, lambda: len(app.query_one(KeyBar).query("FooterKey")) == 6)
        await pilot.pause()
        for key in bar.query("FooterKey"):
            assert _key_width(key) == key.get_content_width(bar.size, app.size), key
