"""`anoman-tui compare`: one prompt to several models at once, without the TUI (the
run itself is `anoman_tui.headless`, imported only for this command); also
`--replay` and `--rerun` of a saved comparison."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anoman_tui.cli._history import add_save_wait, command_history, command_writes
from anoman_tui.cli.arguments import header, positive_float, positive_int
from anoman_tui.cli.common import (
    add_setting_arguments,
    gateway_key,
    settings_from_args,
    warn_inline_keys,
)
from anoman_tui.cli.help import COMPARE

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands
    from anoman_tui.config import Settings
    from anoman_tui.history import ComparisonRecord
    from anoman_tui.streaming.recording import StreamRecording

GROUP = COMPARE
NAME = "compare"
HELP = "stream one prompt to several models at once and print the results"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Stream one prompt to every --model concurrently (one request each), show live "
            "progress, then each answer and a summary table. Exit status: 0 when every "
            "model completed, 1 otherwise, 2 for bad usage."
        ),
    )
    parser.add_argument("prompt", nargs="?", default=None,
                         help="the user prompt (not with --replay or --rerun)")
    add_setting_arguments(parser, many_models=True)
    parser.add_argument(
        "--header", "-H", action="append", type=header, default=[], dest="headers",
        metavar="'NAME: VALUE'", help="extra header sent on every request (repeatable)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print exactly one JSON document on stdout"
    )
    parser.add_argument(
        "--blind", action="store_true",
        help="a blind arena round: three distinct models drawn at random from the pool "
        "(--model given, else arena.pool in the config file, else every model the default "
        "target lists), shown as A, B and C only; vote with `anoman-tui vote ID`",
    )
    again = parser.add_mutually_exclusive_group()
    again.add_argument(
        "--replay", type=positive_int, metavar="ID", default=None,
        help="replay saved comparison ID from its recording, at its recorded pace, through "
        "the same stream core: no network, no key, nothing saved",
    )
    again.add_argument(
        "--rerun", type=positive_int, metavar="ID", default=None,
        help="send saved comparison ID's prompt and conversation again (to its models, or "
        "to --model ...) and show what changed against it",
    )
    parser.add_argument(
        "--speed", type=positive_float, default=None, metavar="X",
        help="with --replay: play X times as fast as recorded (default 1)",
    )
    add_save_wait(parser)


def run(args: argparse.Namespace) -> int:
    prog = "anoman-tui compare"
    problem = _compare_usage(args)
    if problem:
        print(f"{prog}: {problem}", file=sys.stderr)
        return 2
    settings = settings_from_args(args, prog)
    if settings is None:
        return 2
    from anoman_tui.headless import (
        CompareSpec,
        PaneSpec,
        replay_spec,
        rerun_spec,
        run_compare_with_target,
        run_replay,
    )

    if args.replay is not None:
        found = load_saved(args.replay, prog, recordings=True)
        if isinstance(found, int):
            return found
        record, recordings = found
        return run_replay(replay_spec(record, recordings, speed=args.speed or 1.0,
                                      idle_timeout=settings.idle_timeout), as_json=args.json)
    original = None
    if args.rerun is not None:
        loaded = load_saved(args.rerun, prog, recordings=False)
        if isinstance(loaded, int):
            return loaded
        original = loaded[0]
        if not hasattr(args, "models"):
            # Its own models, each on its target with its format and parameters.
            settings = _saved_panes(settings, original, prog)
            if settings is None:
                return 2
    warn_inline_keys(settings, prog)
    if args.blind:
        if not settings.history:
            print("anoman-tui compare: --blind needs the history (a round is voted on by its "
                  "history id): drop --no-history", file=sys.stderr)
            return 2
        # The pool: the models given, else the config's arena.pool, else (below, once
        # listed) every model of the default target.
        pool = list(args.models) if hasattr(args, "models") else list(settings.arena.pool)
        judge = _arena_judge(settings)
        if judge is not None:  # the arena's judge grades rounds; it never answers in one
            pool = [spec for spec in pool if _where(settings, spec) != judge]
        if pool and len(set(pool)) < 2:
            print("anoman-tui compare: a blind round needs at least two distinct models in "
                  "its pool", file=sys.stderr)
            return 2
        import random

        drawn = random.sample(sorted(set(pool)), min(3, len(set(pool)))) if pool else []
        settings = settings.model_copy(update={"models": drawn, "panes": []})
    panes = settings.pane_specs()
    spec = CompareSpec(
        prompt=args.prompt,
        panes=tuple(PaneSpec(model=p.model, endpoint=p.endpoint, temperature=p.temperature,
                             max_tokens=p.max_tokens, target=p.target) for p in panes),
        default_target=settings.all_targets()[settings.default_target],
        base_url=settings.base_url or "",
        api_key=gateway_key(settings),
        endpoint=settings.endpoint,
        system=settings.system_prompt or None,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        idle_timeout=settings.idle_timeout,
        headers=tuple(args.headers),
        blind=args.blind,
        never_draw=_never_drawn(settings) if args.blind else frozenset(),
        record_limit=settings.recording_limit(),
    )
    if original is not None:
        spec = rerun_spec(original, spec)
    if not settings.history:
        return run_compare_with_target(spec, as_json=args.json)
    # A history that cannot be opened leaves the comparison unsaved, not undone.
    with command_history(prog, create=True, required=False) as store, \
            command_writes(prog, store, args.save_wait) as writes:
        return run_compare_with_target(spec, as_json=args.json, history=writes)


def load_saved(comparison_id: int, prog: str, *, recordings: bool
               ) -> tuple[ComparisonRecord, dict[int, StreamRecording]] | int:
    """A comparison from the user's history (and its recordings), or the exit status
    after one line on stderr: 2 for one that cannot be used (1 when the history cannot
    be read: `command_history`)."""
    from anoman_tui.cli._history import history_label, history_location
    from anoman_tui.streaming.recording import RecordingError

    path = history_label(history_location(prog))
    record = None
    found: dict[int, StreamRecording] = {}
    try:
        with command_history(prog) as store:
            if store is not None:
                record = store.get(comparison_id)
                if record is not None and recordings and not record.hidden:
                    found = store.recordings(comparison_id)
    except RecordingError as exc:
        print(f"{prog}: comparison {comparison_id}'s recording cannot be replayed: "
              f"{exc.reason}", file=sys.stderr)
        return 2
    if record is None:
        print(f"{prog}: no comparison {comparison_id} in the history ({path}); "
              "`anoman-tui history` lists the ids", file=sys.stderr)
        return 2
    if record.hidden:
        print(f"{prog}: comparison {comparison_id} is a blind round not voted on yet: vote "
              f"first (anoman-tui vote {comparison_id} A|B|C|tie|bad)", file=sys.stderr)
        return 2
    if recordings:
        missing = [p.pane for p in record.panes if p.pane not in found]
        if len(missing) == len(record.panes):
            print(f"{prog}: comparison {comparison_id} was not recorded (recording was off, "
                  "its streams were over record_limit_mb, or it was saved before recording "
                  "existed)", file=sys.stderr)
            return 2
        if missing or [p.pane for p in record.panes] != list(range(1, len(record.panes) + 1)):
            print(f"{prog}: comparison {comparison_id} is not recorded whole (no recording "
                  f"of pane {', '.join(map(str, missing)) or '?'})", file=sys.stderr)
            return 2
    return record, found


def _compare_usage(args: argparse.Namespace) -> str | None:
    """Why this `compare` command line cannot run, or None."""
    again = "--replay" if args.replay is not None else "--rerun" if args.rerun else None
    if args.prompt is not None and _not_utf8(args.prompt):
        # Neither sendable as JSON nor storable: said before anything starts.
        return "the prompt holds bytes that are not UTF-8 text"
    if again and args.prompt is not None:
        return f"{again} sends the saved comparison's prompt: drop the prompt argument"
    if not again and args.prompt is None:
        return "a prompt is needed (or --replay ID / --rerun ID)"
    if args.speed is not None and args.replay is None:
        return "--speed is for --replay"
    if again and args.blind:
        return f"--blind draws a new round: it does not go with {again}"
    if args.replay is not None:
        given = [flag for flag, dest in (("--model", "models"), ("--target", "target"),
                                         ("--base-url", "base_url"), ("--endpoint", "endpoint"),
                                         ("--system", "system"))
                 if hasattr(args, dest)]
        if given:
            return (f"--replay plays what was recorded: {', '.join(given)} cannot change it "
                    "(--rerun sends the prompt again to other models)")
    return None


def _not_utf8(text: str) -> bool:
    from anoman_tui.config import not_utf8

    return not_utf8(text)


def _saved_panes(settings: Settings, record: ComparisonRecord, prog: str) -> Settings | None:
    """`settings` with the saved comparison's panes: each model on its target (the
    default one for a comparison saved before targets), format and parameters."""
    from pydantic import ValidationError

    from anoman_tui.config import PaneConfig

    known = settings.all_targets()
    panes = []
    for p in record.panes:
        if p.target and p.target not in known:
            print(f"{prog}: pane {p.pane}'s target {p.target!r} is not configured here; "
                  "give the models with -m TARGET:MODEL", file=sys.stderr)
            return None
        try:
            panes.append(PaneConfig(model=f"{p.target}:{p.model}" if p.target else p.model,
                                    endpoint=p.endpoint, temperature=p.temperature,
                                    max_tokens=p.max_tokens))
        except ValidationError as exc:  # saved before the ranges were checked
            error = exc.errors()[0]
            print(f"{prog}: pane {p.pane}'s {'.'.join(map(str, error['loc']))} cannot be sent "
                  f"again: {error['msg'].removeprefix('Value error, ')} (got "
                  f"{error.get('input')}); give the models with -m TARGET:MODEL",
                  file=sys.stderr)
            return None
    return settings.model_copy(update={"models": [], "panes": panes})


def _where(settings: Settings, spec: str) -> tuple[str, str]:
    """(target name, model) of a `[TARGET:]MODEL`."""
    from anoman_tui.targets import split_model

    name, model = split_model(spec, settings.all_targets())
    return name or settings.default_target, model


def _arena_judge(settings: Settings) -> tuple[str, str] | None:
    """(target name, model) of the arena's judge, if one is configured."""
    return _where(settings, settings.arena.judge) if settings.arena.judge else None


def _never_drawn(settings: Settings) -> frozenset[str]:
    """The default target's models a blind round with no pool never draws."""
    judge = _arena_judge(settings)
    return frozenset({judge[1]} if judge and judge[0] == settings.default_target else ())
