"""The key bar: Textual's `Footer`, with keys that never overlap in a narrow terminal.

Textual's footer lays its keys out on one row and docks the palette key on the right,
over whatever does not fit (at 80 columns: `^q Q▏^p palettee`, Quit and Usage hidden).
`KeyBar` hides the least needed keys until the rest fit, in the order it is given; keys
not named there (Quit, Usage) and the palette key always stay. A hidden key still works.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from anoman_tui.ui.textual_internals import set_footer_key_enabled


def _action_name(widget: Widget) -> str | None:
    """The action a footer key runs, without arguments ("abort" for "abort(1)")."""
    action = getattr(widget, "action", None)
    if isinstance(action, str):
        return action.split("(", 1)[0].rsplit(".", 1)[-1]
    for child in widget.children:  # a group of keys ("f1 f2 f3"): its keys' action
        name = _action_name(child)
        if name is not None:
            return name
    return None


class KeyBar(Footer):
    """A compact `Footer` that drops keys, least needed first, until the rest fit."""

    def __init__(self, *, shed: Iterable[str] = (), compact: bool = True,
                 labels: Callable[[], dict[str, str]] | None = None) -> None:
        super().__init__(compact=compact)
        self.shed = tuple(shed)
        """Actions whose keys may be hidden, least needed first."""
        self.labels = labels
        """Action -> the label to show now, for keys whose label names what they act on."""

    _composed: tuple[object, ...] | None = None
    """What the keys were last built from (`_signature`)."""
    _stale = False
    """The bindings changed while the bar's screen was not shown."""

    def on_mount(self) -> None:  # (Footer's own on_mount runs too: one per class)
        self.app.screen_change_signal.subscribe(self, self._screen_changed)

    def _screen_changed(self, screen: Screen[object]) -> None:
        if self._stale and screen is self.screen:
            self._stale = False
            self.bindings_changed(screen)

    @contextmanager
    def _as_own_screen(self) -> Iterator[None]:
        """While the bindings are read: the app's keys checked for this bar's screen
        (`AnomanApp.keys_of`), which need not be the one shown."""
        app = self.app
        if not hasattr(app, "keys_of"):
            yield
            return
        earlier = app.keys_of
        app.keys_of = self.screen
        try:
            yield
        finally:
            app.keys_of = earlier

    def _signature(self) -> tuple[object, ...]:
        """Everything the bar's keys are built from: the shown bindings and our labels."""
        with self._as_own_screen():
            active = self.screen.active_bindings
        keys = tuple(
            (binding.key, binding.action, binding.description, binding.group, enabled,
             tooltip, self.app.get_key_display(binding))
            for (_, binding, enabled, tooltip) in active.values()
            if binding.show
        )
        return keys, self.labels() if self.labels is not None else None, self.compact

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Textual rebuilds the keys (a layout of the whole screen: 40-60 ms measured at
        # the start of a comparison) whenever anything asks to refresh the bindings,
        # e.g. on every focus change; rebuild only when the keys would differ, and not
        # when only whether they are enabled does (a pane starting or ending its stream).
        # Not while its screen is out of sight either: some keys are shown or not by
        # what the current screen is (F6 History is off on a suite's case screen), so
        # the keys worked out then would be another screen's; they are worked out when
        # the screen is shown again.
        if self._composed is not None and self.is_attached and screen is self.screen:
            if not screen.is_current:
                self._stale = True
                return
            if self._refreshed_in_place():
                return
        super().bindings_changed(screen)

    @staticmethod
    def _without_enabled(signature: tuple[object, ...]) -> tuple[object, ...]:
        keys, labels, compact = signature
        assert isinstance(keys, tuple)
        return tuple(k[:4] + k[5:] for k in keys), labels, compact

    def _refreshed_in_place(self) -> bool:
        """True if the keys shown already are the keys to show, each key's enabled state
        brought up to date in place (dimmed or not) rather than by rebuilding the bar:
        opening a suite's running case after an ended one rebuilt its ~15 keys, a third
        of the case screen's first frame (benchmarks/suite_screen.py)."""
        signature = self._signature()
        composed = self._composed
        if signature == composed:
            return True
        if composed is None or self._without_enabled(signature) != self._without_enabled(
                composed):
            return False
        keys = signature[0]
        assert isinstance(keys, tuple)
        enabled = {(k[0], k[1]): k[4] for k in keys}
        for widget in self.query("FooterKey"):  # by its CSS type: the class is private
            on = enabled.get((getattr(widget, "key", None), getattr(widget, "action", None)))
            if on is None:
                continue
            if widget.has_class("-disabled") == on:
                set_footer_key_enabled(widget, on)
        self._composed = signature
        return True

    def compose(self) -> ComposeResult:
        # What the keys are built from, taken as Footer.compose reads the bindings (the
        # bindings may change while the old keys are removed, before this runs); only
        # once it builds keys (it builds none until the screen's bindings are ready).
        signature = self._signature() if self.is_attached else None
        built = False
        widgets = iter(super().compose())
        with self._as_own_screen():  # Footer reads the bindings before its first key
            first = next(widgets, None)
        if first is not None:
            built = True
            yield self._styled_compact(first)
            yield from map(self._styled_compact, widgets)
        if built and signature is not None:
            self._composed = signature

    def _styled_compact(self, widget: Widget) -> Widget:
        # A key bound to the bar's `compact` takes its `-compact` class as it mounts,
        # which restyles the key a second time (~16 keys, each time the bar is built);
        # given the class before it mounts, it is styled once.
        if self.compact and type(widget).__name__ == "FooterKey":  # (a private class)
            widget.set_class(True, "-compact", update=False)
        return widget

    async def recompose(self) -> None:
        if self._composed is not None and self.is_attached and self._refreshed_in_place():
            # A rebuild asked for earlier (Textual runs it after the next refresh) whose
            # keys are already there: measured, one came with the first prompt sent
            # after start-up, and its layout delayed the first answer text.
            return
        await super().recompose()  # Textual rebuilds the keys whenever the bindings change
        if self.labels is not None:
            labels = self.labels()
            for key in self.query("FooterKey"):  # by its CSS type: the class is private
                name = _action_name(key)
                if name in labels and isinstance(getattr(key, "description", None), str):
                    key.description = labels[name]  # type: ignore[attr-defined]
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Show every key, hide keys in `shed` order while they overflow the bar, then
        give back the most needed of the hidden ones that fit in the room left."""
        units = self._units()
        for unit in units:
            for widget in unit:
                widget.display = True
        palette = [w for w in self.children if w.has_class("-command-palette")]
        room = self.size.width - sum(self._width(w) for w in palette)
        need = sum(self._width(w) for unit in units for w in unit)
        hidden: list[tuple[list[Widget], int]] = []
        for action in self.shed:
            if need <= room:
                break
            for unit in units:
                if _action_name(unit[0]) == action:
                    width = sum(self._width(widget) for widget in unit)
                    for widget in unit:
                        widget.display = False
                    need -= width
                    hidden.append((unit, width))
        for unit, width in reversed(hidden):
            if need + width <= room:
                for widget in unit:
                    widget.display = True
                need += width

    def _units(self) -> list[list[Widget]]:
        """The bar's keys, a group's keys together with the label that follows them."""
        units: list[list[Widget]] = []
        for widget in self.children:
            if widget.has_class("-command-palette"):
                continue
            if _action_name(widget) is None and units:
                units[-1].append(widget)  # a group's label ("Abort pane")
            else:
                units.append([widget])
        return units

    def _width(self, widget: Widget) -> int:
        """Columns `widget` takes in the bar, margins included."""
        if widget.children:
            inner = sum(self._width(child) for child in widget.children)
        elif type(widget).__name__ == "FooterKey":  # (a private class)
            inner = _key_width(widget)
        else:
            inner = widget.get_content_width(self.size, self.app.size)
        return inner + widget.styles.gutter.width + widget.styles.margin.width


def _key_width(key: Widget) -> int:
    """A footer key's content width, as its `render()` lays it out (the key between its
    padding, then the description between its own, if any), without rendering it: the bar
    is fitted as its keys are first built, and rendering each key for its width was ~6 ms
    of the compare screen's first paint (benchmarks/startup.py)."""
    shown = cell_len(getattr(key, "key_display", ""))
    description = getattr(key, "description", "")
    if not description:
        return shown
    key_padding = key.get_component_styles("footer-key--key").padding
    description_padding = key.get_component_styles("footer-key--description").padding
    return (shown + key_padding.left + key_padding.right + description_padding.left
            + cell_len(description) + description_padding.right)
