"""`anoman-tui import` of one file by several processes at once: one imports it, the
others say it is already in the history, all exit 0. Before, a process whose look-up
came just before another's save was told the history "cannot be used: UNIQUE
constraint failed: comparisons.uid" (exit 1)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anoman_tui import cli
from anoman_tui.history import HistoryStore
from anoman_tui.history.model import ComparisonRecord, PaneRecord
from anoman_tui.history.portable import comparison_document, dumps
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording
from tests.cli.helpers import ROOT


def _recording_file(tmp_path: Path, uid: str) -> Path:
    recordings = {p: StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model=f"m{p}", status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.05,
        reads=((0.1, b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'),
               (0.2, b"data: [DONE]\n\n")),
        ending="completed", ended_at=0.25, pane=p) for p in (1, 2)}
    panes = tuple(PaneRecord(pane=p, model=f"m{p}", base_url="http://x", endpoint="openai",
                             text="hi", cost=Cost(None, "unknown")) for p in (1, 2))
    record = ComparisonRecord(prompt=f"shared {uid}", panes=panes, created_at=1.7e9,
                              recorded=True, uid=uid)
    path = tmp_path / f"{uid}.json"
    path.write_text(dumps(comparison_document(record, recordings)))
    return path


def _import(home: Path, path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    os.environ.update(XDG_DATA_HOME=str(home), ANOMAN_CONFIG=os.devnull)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["import", str(path)])
    return code, out.getvalue(), err.getvalue()


def test_an_import_that_loses_the_race_says_already_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window made certain: this import's look-up sees nothing (another process has
    not committed yet), then its save finds the uid held (the other has)."""
    home = tmp_path / "home"
    path = _recording_file(tmp_path, "uid-race-1")
    assert _import(home, path)[:2] == (0, "imported as comparison 1: shared uid-race-1 "
                                          "(2 panes, recorded)\n")
    real = HistoryStore.find_uid
    looked: list[str] = []

    def late(store: HistoryStore, uid: str) -> int | None:
        looked.append(uid)
        return None if len(looked) == 1 else real(store, uid)

    monkeypatch.setattr(HistoryStore, "find_uid", late)
    assert _import(home, path) == (
        0, "already in the history as comparison 1: nothing imported\n", "")
    monkeypatch.setattr(HistoryStore, "find_uid", real)
    with HistoryStore.open(home / "anoman-tui" / "history.sqlite3") as store:
        assert len(store.recent()) == 1


def test_processes_importing_one_file_at_once_import_it_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _import(home, _recording_file(tmp_path, "uid-first"))[0] == 0  # the history exists
    path = _recording_file(tmp_path, "uid-shared")
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(home),
               ANOMAN_CONFIG=os.devnull)
    started = [subprocess.Popen([sys.executable, "-m", "anoman_tui.cli", "import", str(path)],
                                env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    said = []
    for process in started:
        out, err = process.communicate(timeout=120)
        assert (process.returncode, err) == (0, "")
        said.append(out)
    assert sorted(said) == ["already in the history as comparison 2: nothing imported\n"] * 3 \
        + ["imported as comparison 2: shared uid-shared (2 panes, recorded)\n"]
