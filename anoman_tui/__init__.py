"""anoman-tui: compare LLMs side by side while they stream, through an Anoman gateway."""

from __future__ import annotations

from typing import Any


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
