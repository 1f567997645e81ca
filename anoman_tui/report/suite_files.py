"""The files `eval --junit` and `--html` ask for, written when a run ends (by the
headless command and the suite screen alike)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anoman_tui.suites.model import CellResult, RunSummary
    from anoman_tui.suites.prepare import EvalRequest


@dataclass(frozen=True)
class ReportFiles:
    """Where a run's `--junit` and `--html` files go (None: not asked for). The command
    line's, kept apart from the run's request: the suite engine never writes a file."""

    junit: Path | None = None
    html: Path | None = None

    @property
    def need_answers(self) -> bool:
        """Whether a file carries the answers (JUnit does), read back from the history."""
        return self.junit is not None


def write_files(files: ReportFiles, request: EvalRequest, results: list[CellResult],
                summary: RunSummary, run_id: str, created_at: float, finished: bool,
                stopped: str | None,
                problem: Callable[[str], None] | None = None) -> None:
    """The `--junit` and `--html` files asked for; a file that cannot be written is told
    to `problem` in one line (else on stderr) and the others are still written."""
    from anoman_tui.report.suite_html import suite_html
    from anoman_tui.report.suite_junit import junit_xml
    from anoman_tui.secrets_in_use import secrets_in_use
    from anoman_tui.streaming.safe_text import masked

    if files.junit is None and files.html is None:
        return
    suite = request.suite
    # No key in a file: a server may echo one into an answer or an error.
    results = masked(results, secrets_in_use([t.key() for t in request.targets.values()]))
    if files.junit is not None:
        _write(files.junit, junit_xml(suite=suite, results=results, run_id=run_id),
               problem)
    if files.html is not None:
        _write(files.html, suite_html(suite=suite, results=results, summary=summary,
                                        run_id=run_id, created_at=created_at,
                                        finished=finished, stopped=stopped).encode(), problem)


def _write(path: Path, data: bytes, problem: Callable[[str], None] | None) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        line = f"cannot write {path}: {exc.strerror or exc}"
        if problem is not None:
            problem(line)
        else:
            print(f"anoman-tui eval: {line}", file=sys.stderr)
