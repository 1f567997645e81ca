"""What the code cites, a reader of the repository can open.

Comments and docstrings point at `docs/wire-contract.md §N` (or at a test), never at a
document outside the repository or at the number of an issue in a tracker the reader
does not have; and every cited section exists.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "docs" / "wire-contract.md"
# Text files of the project that a reader opens (the snapshots are pictures).
SUFFIXES = {".py", ".md", ".toml", ".tcss", ".cfg", ".ini", ""}
FORBIDDEN = [
    (re.compile(r"\bSPEC\b(?!_)"), "a SPEC outside the repository"),
    (re.compile(r"SPEC\.md|DESIGN\.md|shared/|seed/streaming"), "a file outside the repository"),
    (re.compile(r"\bissues? #?\d+\b|\(#\d+\)", re.I), "an issue number of a tracker"),
]
CITATION = re.compile(r"wire-contract\.md[^\n§]{0,40}((?:§\d+(?:\.\d+)?(?:[-–,\s]+(?:and\s+)?)?)+)")


def _files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.split()
    return [
        ROOT / name for name in listed
        if (ROOT / name).is_file() and (ROOT / name).suffix in SUFFIXES
        and "__snapshots__" not in name and name != "tests/test_references.py"
    ]


def test_nothing_cites_what_a_reader_cannot_open() -> None:
    found = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for pattern, what in FORBIDDEN:
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: cites {what}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_cited_contract_section_exists() -> None:
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", CONTRACT.read_text(), re.M))
    assert {"1", "2", "3", "4", "5", "6", "7", "8"} <= sections
    missing = []
    for path in _files():
        for match in CITATION.finditer(path.read_text(encoding="utf-8", errors="replace")):
            for cited in re.findall(r"§(\d+(?:\.\d+)?)", match.group(1)):
                if cited not in sections:
                    missing.append(f"{path.relative_to(ROOT)} cites §{cited}")
    assert not missing, "\n".join(missing)
