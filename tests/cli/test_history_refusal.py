"""Every subcommand that reads the history meets an unusable one the same way (one
opener, `anoman_tui.cli._history.command_history`): one line on stderr naming the
command and the reason, exit status 1, the file left as it was. `compare` instead
runs without saving (tests/cli/test_history_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anoman_tui.cli import main

READERS = [
    ("history",), ("history", "--json"), ("export", "1"), ("export", "1", "-f", "recording"),
    ("vote", "1", "A"), ("scoreboard",), ("replay", "1"),
    ("compare", "--replay", "1"), ("compare", "--rerun", "1"),
]


@pytest.fixture
def unusable_history(clean_env: Path) -> Path:
    path = clean_env.parent / "data" / "anoman-tui" / "history.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage, not sqlite\n" * 100)
    return path


@pytest.mark.parametrize("args", READERS, ids=" ".join)
def test_an_unusable_history_is_one_line_and_status_one(
        unusable_history: Path, args: tuple[str, ...],
        capsys: pytest.CaptureFixture[str]) -> None:
    before = unusable_history.read_bytes()
    assert main(list(args)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"anoman-tui {args[0]}: {unusable_history} is not a readable history database "
        "(corrupt or another kind of file)"]
    assert unusable_history.read_bytes() == before
