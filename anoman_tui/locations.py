"""Where files live: XDG config and data directories, and the bundled themes.

Computed by hand from the XDG variables so no extra dependency is needed.
"""

from __future__ import annotations

import os
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


def theme_dirs() -> list[Path]:
    """Bundled themes (the repository's `themes/`), then the user's own, which win."""
    bundled = Path(__file__).resolve().parent.parent / "themes"
    return [bundled, config_dir() / "themes"]
