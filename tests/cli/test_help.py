"""`anoman-tui --help` lists the commands under what a user wants to do: compare;
suites; history and reports; arena; the local gateway. Each command once, with its one-line
help, as a user runs it (`anoman_tui.cli.main` with the output captured)."""

from __future__ import annotations

import os
import re

from anoman_tui.cli import COMMANDS
from tests.helpers import run_main

GROUPED = {
    "compare": ["compare"],
    "suites": ["eval", "runs"],
    "history and reports": ["history", "export", "import", "replay"],
    "arena": ["vote", "scoreboard"],
    "the local gateway": ["serve", "usage"],
}


def _help() -> str:
    env = {**os.environ, "COLUMNS": "100"}
    done = run_main(["--help"], env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _sections(text: str) -> dict[str, list[tuple[str, str]]]:
    """Heading -> [(command or flag, the start of its help)], as the help shows them."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in text.splitlines():
        heading = re.fullmatch(r"(\S.*):", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
            continue
        entry = re.fullmatch(r"  (\S+)(?:\s{2,}(.*))?", line)
        if current is not None and entry:
            current.append((entry.group(1), entry.group(2) or ""))
    return sections


def test_help_groups_every_command_under_its_heading() -> None:
    sections = _sections(_help())
    listed = {heading: [name for name, _ in entries]
              for heading, entries in sections.items() if heading in GROUPED}
    assert listed == GROUPED
    # The groups first, in this order, then the options.
    assert list(sections)[:len(GROUPED) + 1] == [*GROUPED, "options"]
    assert sorted(n for names in GROUPED.values() for n in names) == sorted(
        c.NAME for c in COMMANDS)


def test_each_command_keeps_its_one_line_help() -> None:
    text = " ".join(_help().split())  # a long help wraps onto the next line
    shown = {heading: dict(entries) for heading, entries in _sections(_help()).items()}
    for command in COMMANDS:
        heading = next(h for h, names in GROUPED.items() if command.NAME in names)
        assert shown[heading][command.NAME], command.NAME
        assert f"{command.NAME} {command.HELP}" in text, command.NAME


def test_the_flat_command_list_is_gone_but_usage_still_names_it() -> None:
    text = _help()
    assert "positional arguments" not in text
    assert "COMMAND ..." in text
    assert text.count("\n  compare ") == 1
