"""The package's import rules (`.importlinter`), checked with import-linter.

import-linter runs in a subprocess: its command line reconfigures logging and edits
`sys.path` of the process it runs in. The subprocess analyses the package of this
checkout (the repository root goes first on its path), and the first test checks that
it did. The second test breaks every contract on a copy of the package and checks that
each one reports it, so a contract that can no longer fail does not go unnoticed.

Two rules import-linter cannot state are read from the source here: every module at
the package's root is in a layer, and no module imports a private (`_name`) name of
another.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"
PACKAGE = ROOT / "anoman_tui"

_RUN = (
    "import importlib.util, sys\n"
    "print('analysing', importlib.util.find_spec('anoman_tui').origin, flush=True)\n"
    "from importlinter.cli import lint_imports_command\n"
    "sys.exit(lint_imports_command())\n"
)


def _contract_names(config: Path) -> dict[str, str]:
    parser = configparser.ConfigParser()
    parser.read(config)
    prefix = "importlinter:contract:"
    return {
        section.removeprefix(prefix): parser[section]["name"]
        for section in parser.sections()
        if section.startswith(prefix)
    }


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(root), env.get("PYTHONPATH", "")) if p
    )
    env["COLUMNS"] = "400"  # one contract per line, whatever its name's length
    return subprocess.run(
        [sys.executable, "-c", _RUN, "--no-logo", "--no-cache", str(root / ".importlinter")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _broken(output: str, names: dict[str, str]) -> set[str]:
    return {
        contract_id
        for contract_id, name in names.items()
        if re.search(rf"^{re.escape(name)} BROKEN$", output, re.MULTILINE)
    }


def _analysed_package(output: str) -> Path:
    match = re.search(r"^analysing (.+)$", output, re.MULTILINE)
    assert match is not None, output
    return Path(match.group(1)).resolve().parent


def test_import_contracts_hold() -> None:
    names = _contract_names(CONFIG)
    done = _lint(ROOT)
    output = done.stdout + done.stderr
    assert _analysed_package(output) == ROOT / "anoman_tui"
    broken = _broken(output, names)
    report = output[output.find("Contracts") :]
    assert done.returncode == 0 and not broken, (
        f"broken import contracts: {sorted(broken) or '(see the report)'}\n{report}"
    )
    for name in names.values():
        assert re.search(rf"^{re.escape(name)} KEPT$", output, re.MULTILINE), output


# One bad import per contract: (module file, line appended, contract ids it must break).
_VIOLATIONS = [
    ("wire/base.py", "import anoman_tui.streaming.safe_text", {"wire-is-pure"}),
    ("streaming/sse.py", "import textual", {"streaming-below-ui"}),
    ("gateway/cache.py", "import anoman_tui.streaming.sse", {"gateway-apart", "layers"}),
    ("headless/run.py", "import anoman_tui.ui.messages", {"headless-without-textual", "layers"}),
    ("config.py", "import textual.app", {"config-without-textual"}),
    ("history/model.py", "import textual.widget", {"history-and-report-without-textual"}),
    ("arena/rating.py", "import anoman_tui.ui.messages",
     {"history-and-report-without-textual", "layers"}),
    ("gateway/state.py", "from anoman_tui.gateway import generation", {"no-cycles"}),
    ("ui/render/verdict.py", "import textual.widget", {"ui-render-without-textual"}),
    ("ui/render/diff.py", "import anoman_tui.ui.network", {"ui-render-without-textual"}),
    ("suites/model.py", "import rich.text", {"suites-without-views"}),
    ("judges/parse.py", "import httpx", {"judges-pure"}),
    ("judging/rounds.py", "import anoman_tui.suites.model", {"judging-without-views", "layers"}),
]


def test_every_contract_fails_when_broken(tmp_path: Path) -> None:
    names = _contract_names(CONFIG)
    covered = set().union(*(ids for _, _, ids in _VIOLATIONS))
    assert covered == set(names), "each contract needs a violation here"
    shutil.copy(CONFIG, tmp_path / ".importlinter")
    package = tmp_path / "anoman_tui"
    shutil.copytree(ROOT / "anoman_tui", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for module, line, _ in _VIOLATIONS:
        with (package / module).open("a", encoding="utf-8") as fh:
            fh.write(f"\n{line}\n")

    done = _lint(tmp_path)
    output = done.stdout + done.stderr
    assert _analysed_package(output) == package.resolve()
    assert done.returncode != 0, output
    assert _broken(output, names) == set(names), output


def test_reading_the_history_imports_no_http_stack_nor_pydantic() -> None:
    """`runs show` of a big run has a 1 s budget (benchmarks/README.md), half of which was
    once spent importing httpx and the wire models it never used."""
    code = ("import sys, anoman_tui.history, anoman_tui.suites.summary, "
            "anoman_tui.report.suite_text, anoman_tui.cli.runs; "
            "print(sorted(m for m in ('httpx', 'httpcore', 'h11', 'pydantic', 'textual') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout


def _layered() -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    layers = parser["importlinter:contract:layers"]["layers"]
    return {name.strip() for line in layers.splitlines() for name in line.split("|")
            if name.strip()}


def test_every_root_module_is_in_a_layer() -> None:
    """A module at the package's root (or a subpackage) outside the layers would escape
    their rules: it could import anything, and anything could import it."""
    children = {f"anoman_tui.{path.stem}" for path in PACKAGE.glob("*.py")
                if path.stem != "__init__"}
    children |= {f"anoman_tui.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    assert sorted(children - _layered()) == [], "add these to the layers in .importlinter"


# Private names still imported from another module, each to be made public by the work
# that owns it; the test fails once one is gone, so that its entry goes too.
_NOT_YET_PUBLIC: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path, source: str) -> set[tuple[str, str]]:
    """(module, name) for each private name that `source` (the module at `path`) imports
    from another module of the package. A private module (`cli._history`) is its
    package's own helper: the modules of that package may import it."""
    importer = _module_name(path)
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]

    def hidden_modules(dotted: str) -> set[tuple[str, str]]:
        parts = dotted.split(".")
        return {(".".join(parts[:i]), part) for i, part in enumerate(parts)
                if _private(part) and ".".join(parts[:i]) != package}

    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("anoman_tui"):
                    found |= hidden_modules(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *module.split(".")]).rstrip(".")
            if not module.startswith("anoman_tui"):
                continue
            found |= hidden_modules(module)
            found |= {(module, alias.name) for alias in node.names
                      if _private(alias.name) and module != package}
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    """What two modules share is public, named and documented where it is defined: a
    private name is free to change without a look at any other module."""
    found = {(module, name, str(path.relative_to(ROOT)))
             for path in sorted(PACKAGE.rglob("*.py"))
             for module, name in private_imports(path, path.read_text(encoding="utf-8"))}
    unexpected = sorted(f"{where} imports {module}.{name}"
                        for module, name, where in found
                        if (module, name) not in _NOT_YET_PUBLIC)
    assert unexpected == [], "make these public (named, documented) where they are defined"
    gone = _NOT_YET_PUBLIC - {(module, name) for module, name, _ in found}
    assert not gone, f"no longer imported: remove {sorted(gone)} from _NOT_YET_PUBLIC"


def test_a_private_import_is_seen() -> None:
    here = PACKAGE / "judges" / "pairs.py"
    assert private_imports(here, "from anoman_tui.arena.rating import _fit, INITIAL\n") == {
        ("anoman_tui.arena.rating", "_fit")}
    assert private_imports(here, "from ..arena.rating import _fit\n") == {
        ("anoman_tui.arena.rating", "_fit")}
    assert private_imports(here, "from anoman_tui.judges import _helpers\n") == set()
    assert private_imports(here, "from anoman_tui.cli._history import open_history\n") == {
        ("anoman_tui.cli", "_history")}
    assert private_imports(PACKAGE / "cli" / "runs.py",
                           "from anoman_tui.cli._history import open_history\n") == set()


def _layer_of() -> dict[str, int]:
    """Each top-level part of the package -> its layer's depth (0 = the top layer)."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    lines = parser["importlinter:contract:layers"]["layers"].strip().splitlines()
    return {name.strip(): depth for depth, line in enumerate(lines)
            for name in line.split("|")}


def _top(module: str) -> str:
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("shared", ["anoman_tui.streaming.safe_text",
                                    "anoman_tui.suites.scenarios"])
def test_a_shared_vocabulary_lives_in_the_lowest_layer_that_uses_it(shared: str) -> None:
    """Text made safe to show (`safe_text`) and the demo scenarios' `X-Anoman-Simulate`
    values (`scenarios`) are used across layers: each lives in the lowest of them, so no
    layer reaches up for it and none holds a copy."""
    depth = _layer_of()
    users = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if shared in names:
                users.add(_top(_module_name(path)))
    assert users, f"nothing imports {shared}"
    lowest = max(users, key=depth.__getitem__)
    assert depth[_top(shared)] == depth[lowest], (
        f"{shared} is used as low as {lowest}: it belongs there")
