"""Where files live: XDG config and data directories, and the bundled files.

Computed by hand from the XDG variables so no extra dependency is needed. Files
that ship with the package (stylesheet, themes) are found with
`importlib.resources`, so they load the same from a checkout, an editable
install or a built wheel (`tests/test_packaging.py` installs one to check).
"""

from __future__ import annotations

import os
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

APP_DIR = "anoman-tui"


def _xdg(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable, "").strip()
    base = Path(value) if value and Path(value).is_absolute() else Path.home() / fallback
    return base / APP_DIR


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config")


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share")


def config_file() -> Path:
    """`$ANOMAN_CONFIG`, else `$XDG_CONFIG_HOME/anoman-tui/config.toml`."""
    override = os.environ.get("ANOMAN_CONFIG", "").strip()
    return Path(override).expanduser() if override else config_dir() / "config.toml"


def log_file() -> Path:
    return data_dir() / "anoman-tui.log"


# The repository's top-level themes/ folder, shipped as this data package (setup.py).
BUNDLED_THEMES = "anoman_tui.theme_files"


def bundled(name: str) -> Traversable:
    """A file or folder shipped inside the `anoman_tui.ui` package (package data)."""
    return files("anoman_tui.ui").joinpath(name)


def stylesheet() -> str:
    """The app's one stylesheet, as a path Textual can load (and watch with --dev)."""
    return str(bundled("anoman.tcss"))


def theme_dirs() -> list[Traversable]:
    """The bundled themes, then the user's own, which win."""
    return [files(BUNDLED_THEMES), config_dir() / "themes"]
