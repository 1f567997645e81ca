"""Theme files (TOML, Textual `Theme` fields) turned into Textual themes.

The bundled ones are the repository's top-level themes/ folder, shipped in the wheel as
the data package `anoman_tui.theme_files`; `anoman_tui.locations.theme_dirs` says where
they and the user's own are.

Part of the UI: it builds Textual `Theme`s. May import: the standard library, Textual,
`anoman_tui.locations`.
"""

from __future__ import annotations

import difflib
import logging
import tomllib
from dataclasses import fields
from importlib.resources.abc import Traversable

from textual.theme import BUILTIN_THEMES, Theme

from anoman_tui.locations import theme_dirs

log = logging.getLogger(__name__)
_FIELDS = {f.name for f in fields(Theme)}


def load_theme(path: Traversable) -> Theme:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"unknown theme keys: {', '.join(sorted(unknown))}")
    if "name" not in data or "primary" not in data:
        raise ValueError("a theme needs at least 'name' and 'primary'")
    return Theme(**data)


def load_themes(dirs: list[Traversable] | None = None) -> dict[str, Theme]:
    """Every readable theme file; a broken one is logged and skipped, never fatal."""
    themes: dict[str, Theme] = {}
    for directory in dirs if dirs is not None else theme_dirs():
        if not directory.is_dir():
            continue
        for path in sorted(
            (p for p in directory.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name
        ):
            try:
                theme = load_theme(path)
            except (OSError, ValueError, TypeError, tomllib.TOMLDecodeError) as exc:
                log.warning("skipping theme %s: %s", path, exc)
                continue
            themes[theme.name] = theme
    return themes


def unknown_theme(name: str, dirs: list[Traversable] | None = None) -> str | None:
    """A sentence naming the themes there are when `name` is none of them, else None.

    Valid: the bundled themes, the user's own (`theme_dirs()`), and Textual's
    built-in names.
    """
    own = list(load_themes(dirs))
    if name in own or name in BUILTIN_THEMES:
        return None
    close = difflib.get_close_matches(name, [*own, *BUILTIN_THEMES], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"unknown theme {name!r}{hint}; available: {', '.join(own)}, "
            f"or one of Textual's: {', '.join(BUILTIN_THEMES)}")
