"""The package's import rules (`.importlinter`), checked with import-linter.

import-linter runs in a subprocess: its command line reconfigures logging and edits
`sys.path` of the process it runs in. The subprocess analyses the package of this
checkout (the repository root goes first on its path), and the first test checks that
it did. The second test breaks every contract on a copy of the package and checks that
each one reports it, so a contract that can no longer fail does not go unnoticed.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"

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
    ("wire/base.py", "import anoman_tui.safe_text", {"wire-is-pure"}),
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
