"""anoman-tui: compare LLMs side by side while they stream, through an Anoman gateway."""

from __future__ import annotations

import sys
from typing import Any

# httpx imports its optional command-line client (`httpx._main`: click, Pygments' lexers,
# Rich's console, progress and syntax) whenever those are installed, as they are beside
# Textual: about 40% of httpx's import time, and Rich in every headless command. Nothing
# here runs httpx's CLI (its own `httpx` command is another process, unaffected).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anoman-tui")
    except PackageNotFoundError:
        # Run from a source checkout that was never installed: the project file says.
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])


def __getattr__(name: str) -> Any:
    # Computed on first use: reading package metadata costs start-up time nobody else needs.
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
