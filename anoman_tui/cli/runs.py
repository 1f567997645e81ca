"""`anoman-tui runs`: the suite runs in the history: a list, one run as it printed, and
the difference between two runs (for CI: exit 1 when a case regressed)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anoman_tui.cli._history import command_history
from anoman_tui.cli.help import SUITES

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands
    from anoman_tui.history import HistoryStore
    from anoman_tui.history.runs import StoredRun
    from anoman_tui.suites.model import CellResult, RunSummary, Suite

GROUP = SUITES
NAME = "runs"
HELP = "the suite runs: list them, show one, diff two"
PROG = "anoman-tui runs"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME, help=HELP,
        description="List the suite runs in the history, newest first; `runs show ID` "
        "prints one as `eval` did; `runs diff OLD NEW` shows per model the cases that went "
        "from pass to fail (regressions) and back (improvements), and the change in TTFT "
        "and cost with 95% intervals, exiting 1 when any case regressed. Only runs of one "
        "suite (by name) are compared, and only the cases both runs asked and checked "
        "alike: a case whose prompt or assertions changed is listed as changed and counts "
        "neither way; different suites, or no case left to compare, exit 2 unless "
        "--force. A RUN_ID may be shortened to a unique prefix.")
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument("--limit", type=int, default=50, metavar="N",
                        help="list at most N runs (default 50)")
    actions = parser.add_subparsers(dest="runs_action", metavar="ACTION")
    show = actions.add_parser("show", help="one run, as eval printed it")
    show.add_argument("run_id", metavar="RUN_ID")
    show.add_argument("--json", action="store_true", dest="show_json",
                      help="the run's eval --json document")
    show.add_argument("--html", type=Path, metavar="FILE", default=None,
                      help="write its self-contained HTML report")
    show.add_argument("--junit", type=Path, metavar="FILE", default=None,
                      help="write its JUnit XML")
    diff = actions.add_parser("diff", help="what changed from run OLD to run NEW")
    diff.add_argument("old", metavar="OLD")
    diff.add_argument("new", metavar="NEW")
    diff.add_argument("--json", action="store_true", dest="diff_json", help="one JSON document")
    diff.add_argument("--force", action="store_true",
                      help="compare runs of different suites, or with no case left to "
                      "compare, instead of refusing (exit status 2)")


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "runs_action", None)
    as_json = bool(args.json or getattr(args, "show_json", False)
                   or getattr(args, "diff_json", False))
    with command_history(PROG) as store:
        if action is None:
            return _list(store, args.limit, as_json)
        if store is None:
            print(f"{PROG}: no history yet: no suite runs", file=sys.stderr)
            return 2
        if action == "show":
            return _show(store, args.run_id, as_json, args.html, args.junit)
        return _diff(store, args.old, args.new, as_json, args.force)


def _list(store: HistoryStore | None, limit: int, as_json: bool) -> int:
    from anoman_tui.report.suite_json import runs_json
    from anoman_tui.report.suite_terminal import output_console, print_runs

    listings = store.runs(limit=max(1, limit)) if store is not None else []
    if as_json:
        print(json.dumps(runs_json(listings), ensure_ascii=False))
        return 0
    print_runs(output_console(), listings)
    return 0


def _load(store: HistoryStore, run_id: str) -> tuple[StoredRun, Any, list[Any]] | None:
    """The stored run, its suite and its results in suite order; None after one line
    on stderr saying why not."""
    from anoman_tui.suites.model import CellResult, Suite

    try:
        stored = store.run(run_id)
    except ValueError as exc:  # an ambiguous prefix: the sentence says so
        print(f"{PROG}: {exc}", file=sys.stderr)
        return None
    if stored is None:
        print(f"{PROG}: no run {run_id} in the history; `anoman-tui runs` lists them",
              file=sys.stderr)
        return None
    try:
        suite = Suite.from_json(stored.suite)
    except (KeyError, TypeError, ValueError):
        print(f"{PROG}: run {stored.run_id}'s stored suite cannot be read", file=sys.stderr)
        return None
    results = []
    for row in stored.results:
        try:
            results.append(CellResult.from_json(dict(row)))
        except (KeyError, TypeError, ValueError):
            continue
    return stored, suite, suite.in_order(results)


def _show(store: HistoryStore, run_id: str, as_json: bool, html: Path | None,
          junit: Path | None) -> int:
    from anoman_tui.report.suite_json import run_json
    from anoman_tui.report.suite_terminal import output_console, print_summary
    from anoman_tui.suites.summary import summarize

    loaded = _load(store, run_id)
    if loaded is None:
        return 2
    stored, suite, results = loaded
    if as_json or junit is not None:
        from anoman_tui.report.answers import with_answers

        results = with_answers(results, store, suite.models)
    from anoman_tui.secrets_in_use import secrets_in_use
    from anoman_tui.streaming.safe_text import masked  # no key a server echoed, in any report

    results = masked(results, secrets_in_use())
    judged = suite.judge if suite.rubrics or suite.pairwise else None
    summary = summarize(suite.models, results, judge=judged,
                        self_judge=bool(stored.settings.get("self_judge")), pairwise=stored.pairs,
                        judge_simulated=bool(stored.settings.get("judge_simulated")))
    reports: list[tuple[Path, Callable[[], bytes]]] = []
    if html is not None:
        from anoman_tui.report.suite_html import suite_html

        reports.append((html, lambda: suite_html(
            suite=suite, results=results, summary=summary, run_id=stored.run_id,
            created_at=stored.created_at, finished=stored.finished,
            stopped=stored.stopped).encode()))
    if junit is not None:
        from anoman_tui.report.suite_junit import junit_xml

        reports.append((junit, lambda: junit_xml(suite=suite, results=results,
                                                 run_id=stored.run_id)))
    for path, make in reports:
        try:
            path.write_bytes(make())
        except OSError as exc:
            print(f"{PROG}: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    if as_json:
        print(json.dumps(run_json(run_id=stored.run_id, suite=suite, results=results,
                                  summary=summary, finished=stored.finished,
                                  stopped=stored.stopped, skipped=suite.skipped,
                                  user=stored.user),
                         ensure_ascii=False))
        return 0
    console = output_console()
    print_summary(console, suite=suite, results=results, summary=summary,
                  run_id=stored.run_id, finished=stored.finished, stopped=stored.stopped,
                  skipped=suite.skipped, user=stored.user)
    return 0


def _judge_summary(stored: StoredRun, suite: Suite, results: list[CellResult]
                   ) -> RunSummary | None:
    """A judged run's summary (for its judge's figures and ratings); None without one."""
    if suite.judge is None or not (suite.rubrics or suite.pairwise):
        return None
    from anoman_tui.suites.summary import summarize

    return summarize(suite.models, results, judge=suite.judge,
                     self_judge=bool(stored.settings.get("self_judge")), pairwise=stored.pairs,
                     judge_simulated=bool(stored.settings.get("judge_simulated")))


def _diff(store: HistoryStore, old_id: str, new_id: str, as_json: bool,
          force: bool = False) -> int:
    from anoman_tui.report.suite_diff import diff_json, diff_runs, match_cases
    from anoman_tui.report.suite_terminal import output_console, print_diff
    from anoman_tui.report.suite_text import one_line

    old = _load(store, old_id)
    new = _load(store, new_id) if old is not None else None
    if old is None or new is None:
        return 2
    (old_stored, old_suite, old_results), (new_stored, new_suite, new_results) = old, new
    # A CI gate that passes on runs it never compared is worse than one that stops.
    if old_suite.name != new_suite.name and not force:
        print(f"{PROG}: run {old_stored.run_id} is of suite "
              f"{json.dumps(one_line(old_suite.name, 80), ensure_ascii=False)} and run "
              f"{new_stored.run_id} of suite "
              f"{json.dumps(one_line(new_suite.name, 80), ensure_ascii=False)}: not compared "
              "(--force compares them anyway)", file=sys.stderr)
        return 2
    cases = match_cases(old_suite.cases, new_suite.cases)
    if not cases.same and not force:
        print(f"{PROG}: no case of run {old_stored.run_id} is in run {new_stored.run_id} "
              f"unchanged ({len(cases.changed)} changed, {len(cases.only_in_old)} only in "
              f"the old run, {len(cases.only_in_new)} only in the new): nothing to compare "
              "(--force shows what changed anyway)", file=sys.stderr)
        return 2
    asked = [label for label, field in (("system prompt", "system"),
                                        ("temperature", "temperature"),
                                        ("max_tokens", "max_tokens"),
                                        ("endpoint format", "endpoint"))
             if getattr(old_suite, field) != getattr(new_suite, field)]
    if asked:  # compared all the same (a gate on them is what CI wants), but said
        print(f"{PROG}: note: the runs' suites differ in {', '.join(asked)}: every "
              "answer was asked differently", file=sys.stderr)
    models = [*old_suite.models, *(m for m in new_suite.models if m not in old_suite.models)]
    diff = diff_runs(old_results, new_results, models, cases)
    judges = (_judge_summary(old_stored, old_suite, old_results),
              _judge_summary(new_stored, new_suite, new_results))
    if as_json:
        print(json.dumps(diff_json(diff, judges), ensure_ascii=False))
    else:
        print_diff(output_console(), diff, judges)
    return 1 if diff.regressed else 0
