"""The answer view's layers: the Markdown block splitter is plain Python (no Rich, no
Textual) and the Rich rendering of a block does not import Textual; nothing in
`anoman_tui.ui.render` does."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def imported_top_level_packages(module: str) -> set[str]:
    """Top-level packages in sys.modules after importing `module` in a fresh interpreter."""
    code = f"import sys, {module}; print(*{{name.split('.')[0] for name in sys.modules}})"
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )
    return set(done.stdout.split())


@pytest.mark.parametrize(
    ("module", "needs", "forbidden"),
    [
        (
            "anoman_tui.ui.render.markdown_blocks",
            set(),
            {"rich", "textual", "markdown_it", "pygments"},
        ),
        ("anoman_tui.ui.render.markdown_render", {"rich"}, {"textual"}),
        ("anoman_tui.ui.render.fence_render", {"rich", "pygments"}, {"textual", "markdown_it"}),
    ],
)
def test_module_imports_only_its_layer(module: str, needs: set[str], forbidden: set[str]) -> None:
    loaded = imported_top_level_packages(module)
    assert "anoman_tui" in loaded and needs <= loaded
    assert not loaded & forbidden, f"{module} imports {sorted(loaded & forbidden)}"


def test_render_folder_runs_without_textual() -> None:
    # The import-linter contract sees the package's own imports; this sees what a fresh
    # interpreter really loads, third-party imports of imports included.
    folder = ROOT / "anoman_tui" / "ui" / "render"
    modules = sorted(f"anoman_tui.ui.render.{path.stem}" for path in folder.glob("[!_]*.py"))
    assert "anoman_tui.ui.render.pane_state" in modules
    loaded = imported_top_level_packages(", ".join(modules))
    assert "textual" not in loaded
