"""No test module imports another test module or a conftest.py.

Shared code lives in helper modules (``tests/helpers.py``, ``tests/<dir>/helpers.py``,
``tests/pilot.py``, ...) and fixtures in ``conftest.py``, which pytest loads itself:
importing a ``test_*`` module runs (and, under xdist, may collect) its tests twice, and
importing a conftest.py creates a second copy of its fixtures and state.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _is_test_module(dotted: str) -> bool:
    last = dotted.rsplit(".", 1)[-1]
    return last == "conftest" or last.startswith("test_")


def _package(path: Path) -> list[str]:
    """The dotted package of a file under the repository root, as parts."""
    return list(path.relative_to(ROOT).with_suffix("").parts[:-1])


def offences(path: Path, source: str) -> list[str]:
    """Each import in ``source`` (the file at ``path``) of a test module or a conftest,
    as "line N: imports NAME"; nested imports (inside a function) count too."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            if node.level:
                package = _package(path)
                base = package[:len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from tests.gateway import conftest` imports the module named after it.
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        for name in names:
            if _is_test_module(name):
                found.append(f"line {node.lineno}: imports {name}")
    return found


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py")
                  if _is_test_module(p.stem) and "__snapshots__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_module_imports_another_or_a_conftest(path: Path) -> None:
    found = offences(path, path.read_text(encoding="utf-8"))
    assert not found, (f"{path.relative_to(ROOT)} imports test code: " + "; ".join(found)
                       + " (move what is shared to a helper module or a fixture)")


@pytest.mark.parametrize(("source", "bad"), [
    ("from tests.test_settings import cli\n", ["tests.test_settings"]),
    ("import tests.ui.test_answer_view as v\n", ["tests.ui.test_answer_view"]),
    ("from tests.gateway.conftest import auth\n", ["tests.gateway.conftest"]),
    ("from tests.gateway import conftest\n", ["tests.gateway.conftest"]),
    ("from .conftest import auth\n", ["tests.gateway.conftest"]),
    ("from . import test_streams\n", ["tests.gateway.test_streams"]),
    ("from ..test_stream_core import make_request\n", ["tests.test_stream_core"]),
    ("def f():\n    from .test_serve_embedded import start\n",
     ["tests.gateway.test_serve_embedded"]),
    ("from tests.helpers import cli\nfrom .helpers import auth\nimport tests.pilot\n", []),
    # A function named test_* is collected again wherever it is imported.
    ("from tests.gateway.helpers import test_shared\n", ["tests.gateway.helpers.test_shared"]),
])
def test_the_check_finds_each_kind_of_import(source: str, bad: list[str]) -> None:
    found = offences(TESTS / "gateway" / "test_example.py", source)
    assert [line.split("imports ", 1)[1] for line in found] == bad
