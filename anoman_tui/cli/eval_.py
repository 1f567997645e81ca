"""`anoman-tui eval`: run a suite (TOML, or a promptfoo config) headless, or continue one
(`--resume`, `--retry-errors`); the run itself is `anoman_tui.headless.eval`, imported
only for this command. docs/suites.md is the reference."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING

from anoman_tui.cli._history import add_save_wait, command_history, command_writes
from anoman_tui.cli.arguments import header, non_negative_float, positive_float, positive_int
from anoman_tui.cli.common import settings_from_args, warn_inline_keys
from anoman_tui.cli.help import SUITES

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands
    from anoman_tui.config import Settings
    from anoman_tui.report.suite_files import ReportFiles
    from anoman_tui.suites.prepare import EvalRequest

GROUP = SUITES
NAME = "eval"
HELP = "run a suite: many prompts x models x repeats, checked, with statistics"
PROG = "anoman-tui eval"


def _usd(value: str) -> Decimal:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an amount in USD: {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return amount


def _rate(value: str) -> float:
    number = non_negative_float(value)
    if number > 1:
        raise argparse.ArgumentTypeError("a share between 0 and 1 (0.9 for 90%)")
    return number


def _retries(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    unset = argparse.SUPPRESS
    parser = commands.add_parser(
        NAME, help=HELP,
        description=(
            "Run every case of SUITE (a TOML suite, or a promptfooconfig.yaml) on every "
            "model, `repeat` times, each a stream measured as the panes measure it; check "
            "the answers' assertions; save each result to the history as it finishes; "
            "print per model the pass rate with its 95% Wilson interval, TTFT, tokens/s, "
            "cost and failures, and per pair of models an exact McNemar test (Holm) and "
            "the TTFT difference with its bootstrap interval. Exit status: 0 every judged "
            "case passed (or --min-pass-rate reached, or nothing judged), 1 otherwise, "
            "2 bad usage or suite, 3 stopped at the cost limit, 130 interrupted "
            "(continue with --resume). Reference: docs/suites.md."),
    )
    parser.add_argument("suite", nargs="?", default=None, metavar="SUITE",
                        help="the suite file (not with --resume or --retry-errors)")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="RUN_ID", default=None,
                       help="continue a stopped run: only the cells it is missing, with its "
                       "suite and settings as they were")
    again.add_argument("--retry-errors", metavar="RUN_ID", default=None,
                       help="run again only the cells of RUN_ID whose stream failed")
    parser.add_argument("--tui", action="store_true",
                        help="watch the run on the suite screen (a matrix of the cells, "
                        "their answers a key away, the summary at the end)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON document on stdout (progress on stderr)")
    parser.add_argument("--junit", type=Path, metavar="FILE", default=None,
                        help="write JUnit XML: a testcase per case, model and repeat")
    parser.add_argument("--html", type=Path, metavar="FILE", default=None,
                        help="write a self-contained HTML report")
    parser.add_argument("--concurrency", type=positive_int, metavar="N", default=None,
                        help="streams in flight in all (default: the suite's, else 4)")
    parser.add_argument("--retries", type=_retries, metavar="N", default=None,
                        help="retries of a stream that could not reach its server "
                        "(default 2)")
    parser.add_argument("--max-retry-after", type=non_negative_float, metavar="SECONDS",
                        default=None,
                        help="wait out a 429's Retry-After at most this long (default 60; "
                        "a wait of 10 s or more is announced)")
    parser.add_argument("--max-cost", type=_usd, metavar="USD", default=None,
                        help="start no new stream once the cost spent reaches this "
                        "(default: the suite's max_cost; exit status 3)")
    parser.add_argument("--min-pass-rate", type=_rate, metavar="SHARE", default=None,
                        help="exit 0 when this share of judged results passed (0..1) "
                        "instead of only when all did")
    parser.add_argument("--skip-unsupported", action="store_true",
                        help="a promptfoo config: skip what anoman-tui does not support "
                        "(listed under `skipped` and on stderr) instead of refusing it")
    parser.add_argument("--allow-outside-files", action="store_true",
                        help="read files the suite names outside its own folder (refused "
                        "by default: a suite could send any file to a model)")
    parser.add_argument("--judge", metavar="[TARGET:]MODEL", default=None,
                        help="the judge model for llm-rubric assertions and --pairwise "
                        "(wins over the suite's `judge`; docs/judges.md)")
    parser.add_argument("--pairwise", action="store_true", default=None,
                        help="judge every pair of models on every case and repeat, in "
                        "both orders")
    parser.add_argument("--allow-self-judge", action="store_true", default=None,
                        help="let the judge be one of the models under test (reports say so)")
    parser.add_argument("--header", "-H", action="append", type=header, default=[],
                        dest="headers", metavar="'NAME: VALUE'",
                        help="extra header sent on every request (repeatable)")
    parser.add_argument("--base-url", default=unset,
                        help="the gateway a plain MODEL streams from (default: "
                        "$ANOMAN_BASE_URL, then base_url in the config file, else the "
                        "local gateway)")
    parser.add_argument("--api-key", default=unset, help="API key for --base-url (prefer "
                        "$ANOMAN_API_KEY: a key on the command line ends up in shell history)")
    parser.add_argument("--target", default=unset, metavar="NAME",
                        help="the target a plain MODEL streams from")
    parser.add_argument("--idle-timeout", type=positive_float, default=unset,
                        metavar="SECONDS", help="fail a stream as stalled after this long "
                        "without a byte (default 60)")
    parser.add_argument("--no-history", dest="history", action="store_const", const=False,
                        default=unset, help="save nothing (no --resume then)")
    add_save_wait(parser)
    parser.add_argument("--no-record", dest="record", action="store_const", const=False,
                        default=unset, help="save answers without their recordings")


def _usage(args: argparse.Namespace) -> str | None:
    if args.tui and args.json:
        return "--tui shows the run on the suite screen: drop --json"
    continued = args.resume or args.retry_errors
    if continued and args.suite is not None:
        flag = "--resume" if args.resume else "--retry-errors"
        return f"{flag} runs the stored suite: drop SUITE"
    if not continued and args.suite is None:
        return "a suite file is needed (or --resume RUN_ID / --retry-errors RUN_ID)"
    if continued and getattr(args, "history", True) is False:
        return "--resume and --retry-errors read the run from the history: drop --no-history"
    if continued and args.skip_unsupported:
        return "--skip-unsupported is for reading a suite file"
    if continued and (args.judge is not None or args.pairwise):
        return "--resume and --retry-errors keep the run's judge: drop --judge and --pairwise"
    return None


def run(args: argparse.Namespace) -> int:
    problem = _usage(args)
    if problem:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    settings = settings_from_args(args, PROG)
    if settings is None:
        return 2
    warn_inline_keys(settings, PROG)
    from anoman_tui.headless.eval import run_eval
    from anoman_tui.suites.loader import SuiteError, check_models, load_suite
    from anoman_tui.suites.model import Suite
    from anoman_tui.suites.prepare import eval_request

    continued = args.resume or args.retry_errors
    stored_settings: dict[str, object] = {}
    if continued:
        with command_history(PROG) as store:
            if store is None:
                print(f"{PROG}: no history yet: no run {continued}", file=sys.stderr)
                return 2
            try:
                stored = store.run(continued)
            except ValueError as exc:  # an ambiguous prefix
                print(f"{PROG}: {exc}", file=sys.stderr)
                return 2
            if stored is None:
                print(f"{PROG}: no run {continued} in the history; `anoman-tui runs` lists "
                      "them", file=sys.stderr)
                return 2
            try:
                suite = Suite.from_json(stored.suite)
            except (KeyError, TypeError, ValueError):
                print(f"{PROG}: run {stored.run_id}'s stored suite cannot be read",
                      file=sys.stderr)
                return 2
            stored_settings = dict(stored.settings)
            run_id: str | None = stored.run_id
    else:
        try:
            suite = load_suite(args.suite, skip_unsupported=args.skip_unsupported,
                               allow_outside_files=args.allow_outside_files)
        except SuiteError as exc:
            print(f"{PROG}: {exc.message}", file=sys.stderr)
            return 2
        if args.judge is not None:
            try:
                check_models([args.judge], "--judge")
            except SuiteError as exc:
                print(f"{PROG}: {exc.message}", file=sys.stderr)
                return 2
        # Kept in the stored suite, so a resume judges as the run began.
        suite = replace(suite, judge=args.judge or suite.judge,
                        pairwise=bool(args.pairwise) or suite.pairwise)
        run_id = None

    request = eval_request(
        settings, suite, run_id=run_id, stored=stored_settings, concurrency=args.concurrency,
        retries=args.retries, max_retry_after=args.max_retry_after, max_cost=args.max_cost,
        min_pass_rate=args.min_pass_rate, allow_self_judge=args.allow_self_judge,
        headers=tuple(args.headers), retry_errors=bool(args.retry_errors),
        # --idle-timeout is in the settings; without it, a continued run keeps its own.
        idle_timeout=settings.idle_timeout if hasattr(args, "idle_timeout") or not continued
        else None)
    from anoman_tui.report.suite_files import ReportFiles

    files = ReportFiles(junit=args.junit, html=args.html)
    if args.tui:
        return _run_on_screen(request, settings, args.save_wait, files)
    if not settings.history:
        return run_eval(request, None, as_json=args.json, files=files)
    with command_history(PROG, create=True, required=False) as store, \
            command_writes(PROG, store, args.save_wait) as writes:
        return run_eval(request, store, as_json=args.json, pending=writes,
                        files=files)


def _run_on_screen(request: EvalRequest, settings: Settings, save_wait: float,
                   files: ReportFiles) -> int:
    """`eval --tui`: the run prepared as the headless command prepares it, then watched
    on the suite screen; the exit status is the headless one for what was run.

    One event loop and one HTTP pool, as the headless run has: the models are listed
    on the loop the app then runs on, through the pool its cells and judge then use."""
    import asyncio

    from anoman_tui.headless.eval import EXIT_USAGE, exit_status, prepare_or_refuse
    from anoman_tui.ui.app import AnomanApp
    from anoman_tui.ui.screens.suite import suite_client

    with contextlib.ExitStack() as stack:
        store = stack.enter_context(command_history(PROG, create=True, required=False)) \
            if settings.history else None
        writes = stack.enter_context(command_writes(PROG, store, save_wait))

        async def on_screen() -> AnomanApp | None:
            async with suite_client(request) as client:
                prepared = await prepare_or_refuse(request, store, writes, client)
                if prepared is None:
                    return None
                stack.callback(prepared.stop)
                app = AnomanApp(settings, suite=prepared, suite_files=files,
                                suite_client=client)
                await app.run_async()
                return app

        app = asyncio.run(on_screen())
        if app is None:
            return EXIT_USAGE
        if app.closing_message:
            print(f"{PROG}: {app.closing_message}", file=sys.stderr)
        screen_results = getattr(app, "suite_results", None)
        if app.return_code:
            return app.return_code
        return exit_status(screen_results or [], request.min_pass_rate)
