"""The command palette's entries of the screen it is opened on.

A screen that has entries of its own lists `ScreenCommands` in its `COMMANDS` and
yields them from `palette_commands()`; Textual merges that provider with the app's
(`AnomanApp.get_system_commands`: theme, keys, quit). So each entry lives with the
screen that acts on it, and a screen built on another (the arena, a reopened
comparison, a replay) offers its own by overriding `palette_commands()`.

Textual shows the entries of an empty query in the order its providers answer, which
varies from one opening to the next; the screen's entries are therefore offered with a
score above the app's (whose discovery hits score 0), so they always list first, each
group sorted by title. Typed queries are scored by Textual's fuzzy matcher as before.

May import: Textual's command API. Nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from textual.app import SystemCommand
from textual.command import Hit, Hits, Provider

SCREEN_FIRST = 1.0
"""The score of a screen's entries in an empty query: above the app's (0)."""


@runtime_checkable
class OffersCommands(Protocol):
    def palette_commands(self) -> Iterable[SystemCommand]:
        """This screen's palette entries, as they are now (a toggle says its state)."""
        ...


class ScreenCommands(Provider):
    """The entries of the screen the palette was opened on (its `palette_commands()`)."""

    def _commands(self) -> list[SystemCommand]:
        screen = self.screen
        return list(screen.palette_commands()) if isinstance(screen, OffersCommands) else []

    async def discover(self) -> Hits:
        for title, help_text, callback, discover in sorted(self._commands(),
                                                           key=lambda c: c.title):
            if discover:
                yield Hit(SCREEN_FIRST, title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback, *_ in self._commands():
            if (match := matcher.match(title)) > 0:
                yield Hit(match, matcher.highlight(title), callback, help=help_text)
