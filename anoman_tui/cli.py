"""The `anoman-tui` command: the compare screen by default, and its subcommands.

Heavy imports (the stream core, Rich, the gateway, Textual) happen inside the
subcommand that needs them, so `anoman-tui --help` and start-up stay quick.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anoman_tui.config import Settings
    from anoman_tui.history import ComparisonRecord, HistoryStore
    from anoman_tui.streaming.recording import StreamRecording

KEY_FLAG_HELP = (
    "API key (default: $ANOMAN_API_KEY, then api_key in the config file). Prefer the "
    "environment variable or the config file: a key on the command line can end up in "
    "shell history and process lists."
)
# Flags that set a `Settings` field (argparse dest → field). Every one defaults to
# "not given" (argparse.SUPPRESS), so an unset flag never hides the environment or the
# config file, and one given explicitly wins even when it equals the default.
SETTING_FLAGS = {
    "base_url": "base_url", "api_key": "api_key", "models": "models", "endpoint": "endpoint",
    "theme": "theme", "system": "system_prompt", "temperature": "temperature",
    "max_tokens": "max_tokens", "idle_timeout": "idle_timeout", "history": "history",
    "record": "record", "target": "target",
}


class _VersionAction(argparse.Action):
    """`--version`, reading the package metadata only when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from anoman_tui import __version__

        print(f"{parser.prog} {__version__}")
        parser.exit()


def _header(value: str) -> tuple[str, str]:
    name, sep, val = value.partition(":")
    name = name.strip()
    if not sep or not name or any(c in name for c in " \t\r\n") or "\n" in val or "\r" in val:
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {value!r}")
    return name, val.strip()


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return number


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _non_negative_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number >= 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def _add_setting_arguments(parser: argparse.ArgumentParser, *, many_models: bool) -> None:
    """The flags for every setting both the compare screen and `compare` read."""
    unset = argparse.SUPPRESS
    parser.add_argument(
        "--base-url", default=unset,
        help="remote gateway root, e.g. https://api.anoman.io (a trailing /v1 is accepted); "
        "default $ANOMAN_BASE_URL, then base_url in the config file; "
        "unset: start the local gateway in-process",
    )
    parser.add_argument("--api-key", default=unset, help=KEY_FLAG_HELP)
    parser.add_argument(
        "--model", "-m", action="append", dest="models", metavar="[TARGET:]MODEL",
        default=unset,
        help="a model to compare, repeat for each"
        + ("" if many_models else " (up to three, one per pane)")
        + "; TARGET:MODEL streams it from that target (local, anoman, openai, anthropic, "
        "openrouter, ollama, or one of the config file's [targets.NAME]); default: "
        "$ANOMAN_MODELS (comma separated), then models in the config file, then the first "
        "three the default target lists",
    )
    parser.add_argument(
        "--target", default=unset, metavar="NAME",
        help="the target a plain MODEL streams from (default: $ANOMAN_TARGET, then target "
        "in the config file, then the gateway at --base-url, else the local gateway)",
    )
    parser.add_argument(
        "--endpoint", choices=("openai", "anthropic", "playground"), default=unset,
        help="gateway endpoint and frame format (default: $ANOMAN_ENDPOINT, then endpoint "
        "in the config file, then openai)",
    )
    screen = "" if many_models else " (the screen's starting value, editable there)"
    parser.add_argument(
        "--system", default=unset, metavar="TEXT",
        help=f"system prompt{screen}; default: $ANOMAN_SYSTEM_PROMPT, then system_prompt "
        "in the config file",
    )
    parser.add_argument(
        "--max-tokens", type=_positive_int, default=unset, metavar="N",
        help=f"most tokens per answer{screen}; default: $ANOMAN_MAX_TOKENS, then max_tokens "
        "in the config file; unset: not sent (the anthropic format sends 4096)",
    )
    parser.add_argument(
        "--temperature", type=_non_negative_float, default=unset, metavar="T",
        help=f"sampling temperature, 0 or more{screen}; default: $ANOMAN_TEMPERATURE, then "
        "temperature in the config file; unset: not sent",
    )
    parser.add_argument(
        "--idle-timeout", type=_positive_float, default=unset, metavar="SECONDS",
        help="fail a stream as stalled after this long without a byte (default: "
        "$ANOMAN_IDLE_TIMEOUT, then idle_timeout in the config file, then 60)",
    )
    parser.add_argument(
        "--no-history", dest="history", action="store_const", const=False, default=unset,
        help="save nothing to the history (default: $ANOMAN_HISTORY, then history in the "
        "config file, then save every comparison)",
    )
    parser.add_argument(
        "--no-record", dest="record", action="store_const", const=False, default=unset,
        help="save comparisons without recording their streams for replay (default: "
        "$ANOMAN_RECORD, then record in the config file, then record every comparison "
        "up to record_limit_mb)",
    )


def settings_from_args(args: argparse.Namespace, prog: str) -> Settings | None:
    """The settings for a parsed command line, or None after printing why they are bad.

    The flags given win, then `ANOMAN_*` variables, then the config file: one
    implementation (`load_settings`) for every command.
    """
    from anoman_tui.config import ConfigError, load_settings

    given = {field: getattr(args, dest) for dest, field in SETTING_FLAGS.items()
             if hasattr(args, dest)}
    try:
        return load_settings(**given)
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anoman-tui",
        description=(
            "Compare LLMs side by side while they stream, through an Anoman gateway. "
            "With no command, opens the three-pane compare screen."
        ),
    )
    parser.add_argument("--version", action=_VersionAction,
                        help="print the version and exit")
    _add_setting_arguments(parser, many_models=False)
    parser.add_argument(
        "--arena", action="store_true",
        help="open the blind arena once connected: three models drawn at random from "
        "arena.pool (else every model the default target lists), shown as A, B and C "
        "until you vote",
    )
    parser.add_argument(
        "--theme", default=argparse.SUPPRESS,
        help="theme name (see themes/; default: $ANOMAN_THEME, then theme in the config file)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    compare = commands.add_parser(
        "compare",
        help="stream one prompt to several models at once and print the results",
        description=(
            "Stream one prompt to every --model concurrently (one request each), show live "
            "progress, then each answer and a summary table. Exit status: 0 when every "
            "model completed, 1 otherwise, 2 for bad usage."
        ),
    )
    compare.add_argument("prompt", nargs="?", default=None,
                         help="the user prompt (not with --replay or --rerun)")
    _add_setting_arguments(compare, many_models=True)
    compare.add_argument(
        "--header", "-H", action="append", type=_header, default=[], dest="headers",
        metavar="'NAME: VALUE'", help="extra header sent on every request (repeatable)",
    )
    compare.add_argument(
        "--json", action="store_true", help="print exactly one JSON document on stdout"
    )
    compare.add_argument(
        "--blind", action="store_true",
        help="a blind arena round: three distinct models drawn at random from the pool "
        "(--model given, else arena.pool in the config file, else every model the default "
        "target lists), shown as A, B and C only; vote with `anoman-tui vote ID`",
    )
    again = compare.add_mutually_exclusive_group()
    again.add_argument(
        "--replay", type=_positive_int, metavar="ID", default=None,
        help="replay saved comparison ID from its recording, at its recorded pace, through "
        "the same stream core: no network, no key, nothing saved",
    )
    again.add_argument(
        "--rerun", type=_positive_int, metavar="ID", default=None,
        help="send saved comparison ID's prompt and conversation again (to its models, or "
        "to --model ...) and show what changed against it",
    )
    compare.add_argument(
        "--speed", type=_positive_float, default=None, metavar="X",
        help="with --replay: play X times as fast as recorded (default 1)",
    )

    serve = commands.add_parser(
        "serve",
        help="run the local Anoman-compatible gateway in the foreground",
        description="Run the local Anoman-compatible gateway until Ctrl+C or SIGTERM.",
    )
    if "serve" in argv:
        # Only then: the gateway's imports (uvicorn, Starlette) stay off the TUI's start-up.
        from anoman_tui.gateway.serve import add_serve_arguments

        add_serve_arguments(serve)

    usage = commands.add_parser(
        "usage",
        help="print the usage ledger as a table",
        description=(
            "Print the metering ledger, newest first: from a running gateway with --base-url "
            "(GET /anoman/v1/usage), else from the local gateway's ledger file."
        ),
    )
    usage.add_argument("--base-url", default=argparse.SUPPRESS,
                       help="a running gateway (default: $ANOMAN_BASE_URL, then base_url in "
                       "the config file)")
    usage.add_argument("--api-key", default=argparse.SUPPRESS, help=KEY_FLAG_HELP)
    usage.add_argument("--db", type=Path, default=None, metavar="PATH",
                       help="the local ledger file (default: the user data directory)")
    usage.add_argument("--limit", type=_positive_int, default=50, help="rows (default 50)")
    usage.add_argument("--json", action="store_true", help="print the rows as JSON")

    history = commands.add_parser(
        "history",
        help="list the saved comparisons, newest first",
        description=(
            "List the comparisons saved to the history (by the compare screen and by "
            "`compare`), newest first: id, time, prompt, and each model's status and cost."
        ),
    )
    history.add_argument("--search", metavar="TEXT", default=None,
                         help="only comparisons whose prompt or a model matches every word")
    history.add_argument("--limit", type=_positive_int, default=50, metavar="N",
                         help="how many (default 50)")
    history.add_argument("--json", action="store_true",
                         help="one JSON object per line instead of a table")

    vote = commands.add_parser(
        "vote",
        help="vote on a blind round and see which model was which",
        description=(
            "Record the vote on a blind round (`anoman-tui compare --blind`) and print the "
            "reveal: which model each label was, with its numbers. Exit status 2 for an "
            "unknown id, a round already voted on, or a label whose pane failed."
        ),
    )
    vote.add_argument("id", type=_positive_int, help="the round's id (from compare --blind)")
    vote.add_argument("choice", choices=("A", "B", "C", "tie", "bad"),
                      help="the best answer's label, tie, or bad (every answer bad)")
    vote.add_argument("--json", action="store_true", help="print the reveal as JSON")

    board = commands.add_parser(
        "scoreboard",
        help="per model: the blind votes' rating, wins and what the history knows",
        description=(
            "Per model, best first: rounds, wins, ties, losses, win rate and a "
            "Bradley-Terry rating on the Elo scale with its 95%% bootstrap interval (from "
            "the blind votes), beside TTFT p50/p95, tokens/s p50, mean cost per answer, "
            "cost per win and failure rates by kind (from every answer in the history)."
        ),
    )
    board.add_argument("--json", action="store_true", help="one JSON document")
    board.add_argument("--include-sighted", action="store_true",
                       help="count votes cast with the names on screen too")

    export = commands.add_parser(
        "export",
        help="write a saved comparison as a Markdown, HTML or JSON report, or a recording",
        description=(
            "Write the comparison with this id (see `anoman-tui history`) as a report: "
            "Markdown, one self-contained HTML file (no scripts, no network), or JSON; or "
            "with --format recording, as one portable file with its recorded streams that "
            "`anoman-tui import` adds to another history (docs/recording-format.md). "
            "Exit status 2 for an unknown id or a comparison that cannot be shared."
        ),
    )
    export.add_argument("id", type=_positive_int, help="the comparison's id")
    export.add_argument("--format", "-f", choices=("md", "html", "json", "recording"),
                        default="md", help="report format, or recording (default: md)")
    export.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="where to write it ('-' for stdout; default: "
                        "comparison-ID.FORMAT in the current directory, "
                        "comparison-ID.anoman-recording.json for a recording, which a "
                        "FILE ending in .gz gets gzip-compressed)")

    import_ = commands.add_parser(
        "import",
        help="add a comparison recording (from export --format recording) to the history",
        description=(
            "Read a file written by `anoman-tui export ID --format recording` (perhaps on "
            "another machine), check it strictly and add it to the history, from where it "
            "can be reopened and replayed. Exit status 2 for a file that is refused, 1 "
            "when the history cannot be used."
        ),
    )
    import_.add_argument("file", metavar="FILE", help="the recording ('-' for stdin)")

    replay = commands.add_parser(
        "replay",
        help="replay a recorded comparison on the compare screen, offline",
        description=(
            "Open the compare screen and stream the comparison with this id again from its "
            "recording, at the recorded pace: the same text, footers and failures. No "
            "network, no gateway, no key. Exit status 2 for an unknown id or a comparison "
            "that cannot be replayed, 1 when the history cannot be read."
        ),
    )
    replay.add_argument("id", type=_positive_int, help="the comparison's id")
    replay.add_argument("--speed", type=_speed, default=1.0, metavar="X",
                        help="pace: 2 twice as fast, 0.5 half as fast (default 1)")
    return parser


def _speed(value: str) -> float:
    number = _positive_float(value)
    if number == float("inf"):
        raise argparse.ArgumentTypeError("must be a finite number")
    return number


def _replay(args: argparse.Namespace) -> int:
    """Refuse what cannot be replayed with one line, before the screen opens."""
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.streaming.recording import RecordingError

    settings = settings_from_args(args, "anoman-tui replay")
    if settings is None:
        return 2
    path, record, recordings = default_path(), None, {}
    try:
        if path.exists():
            with HistoryStore.open(path) as store:
                record = store.get(args.id)
                if record is not None and not record.hidden:
                    recordings = store.recordings(args.id)
    except HistoryUnavailable as exc:
        print(f"anoman-tui replay: {exc.reason}", file=sys.stderr)
        return 1
    except RecordingError as exc:
        print(f"anoman-tui replay: comparison {args.id}'s recording is damaged: {exc.reason}",
              file=sys.stderr)
        return 2
    problem = (f"no comparison {args.id} in the history ({path}); `anoman-tui history` "
               "lists the ids" if record is None else
               f"comparison {args.id} is a blind round not voted on yet: its recording would "
               "name the models; vote first (anoman-tui vote ID)" if record.hidden else
               f"comparison {args.id} was saved without recordings (recording off, or over "
               "record_limit_mb): there is nothing to replay" if not recordings else None)
    if problem:
        print(f"anoman-tui replay: {problem}", file=sys.stderr)
        return 2
    assert record is not None
    from anoman_tui.logs import setup_file_logging
    from anoman_tui.ui.app import AnomanApp

    setup_file_logging()
    app = AnomanApp(settings, replay=(record, recordings, args.speed))
    app.run()
    return app.return_code or 0


def warn_inline_keys(settings: Settings, prog: str) -> None:
    """One line on stderr for each target whose key is written in the config file."""
    for name in settings.inline_keys():
        print(f"{prog}: warning: targets.{name}.api_key is written in the config file; "
              "prefer api_key_env (the name of an environment variable holding it)",
              file=sys.stderr)


def _key(settings: Settings) -> str:
    return settings.api_key.get_secret_value() if settings.api_key else ""


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
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
        api_key=_key(settings),
        endpoint=settings.endpoint,
        system=settings.system_prompt or None,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        idle_timeout=settings.idle_timeout,
        headers=tuple(args.headers),
        blind=args.blind,
        record_limit=settings.recording_limit(),
    )
    if original is not None:
        spec = rerun_spec(original, spec)
    store = _open_compare_history(settings.history)
    try:
        return run_compare_with_target(spec, as_json=args.json, history=store)
    finally:
        if store is not None:
            store.close()


def _open_compare_history(enabled: bool) -> HistoryStore | None:
    """The user's history, or None (with one line on stderr saying why it cannot be used)."""
    from anoman_tui.history import HistoryStore, HistoryUnavailable

    if not enabled:
        return None
    try:
        return HistoryStore.open()
    except HistoryUnavailable as exc:
        print(f"anoman-tui compare: history disabled: {exc.reason}", file=sys.stderr)
        return None


def load_saved(comparison_id: int, prog: str, *, recordings: bool
               ) -> tuple[ComparisonRecord, dict[int, StreamRecording]] | int:
    """A comparison from the user's history (and its recordings), or the exit status
    after one line on stderr: 2 for one that cannot be used, 1 when the history cannot
    be read."""
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.streaming.recording import RecordingError

    path = default_path()
    record = None
    found: dict[int, StreamRecording] = {}
    if path.exists():
        try:
            with HistoryStore.open(path) as store:
                record = store.get(comparison_id)
                if record is not None and recordings and not record.hidden:
                    found = store.recordings(comparison_id)
        except HistoryUnavailable as exc:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            return 1
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


def _saved_panes(settings: Settings, record: Any, prog: str) -> Settings | None:
    """`settings` with the saved comparison's panes: each model on its target (the
    default one for a comparison saved before targets), format and parameters."""
    from anoman_tui.config import PaneConfig

    known = settings.all_targets()
    panes = []
    for p in record.panes:
        if p.target and p.target not in known:
            print(f"{prog}: pane {p.pane}'s target {p.target!r} is not configured here; "
                  "give the models with -m TARGET:MODEL", file=sys.stderr)
            return None
        panes.append(PaneConfig(model=f"{p.target}:{p.model}" if p.target else p.model,
                                endpoint=p.endpoint, temperature=p.temperature,
                                max_tokens=p.max_tokens))
    return settings.model_copy(update={"models": [], "panes": panes})


def _usage(args: argparse.Namespace) -> int:
    settings = settings_from_args(args, "anoman-tui usage")
    if settings is None:
        return 2
    from anoman_tui.gateway.ledger import format_usage_table

    if settings.base_url:
        from anoman_tui.streaming import GatewayRequestError, StreamClient

        base_url, key = settings.base_url, _key(settings)

        async def fetch() -> list[dict[str, object]]:
            async with StreamClient() as client:
                return await client.fetch_usage(base_url, key, args.limit)

        try:
            rows = asyncio.run(fetch())
        except GatewayRequestError as exc:
            print(f"anoman-tui usage: {exc}", file=sys.stderr)
            return 1
    else:
        from anoman_tui.gateway.config import default_db_path
        from anoman_tui.gateway.ledger import UsageLedger

        path = args.db or default_db_path()
        if not path.exists():
            print(f"anoman-tui usage: no ledger at {path} yet (nothing was metered)",
                  file=sys.stderr)
            return 1
        ledger = UsageLedger(path)
        try:
            rows = ledger.recent(args.limit)
        finally:
            ledger.close()
    if args.json:
        print(json.dumps({"data": rows}, default=str))
    else:
        print(format_usage_table(rows))
    return 0


def _export(args: argparse.Namespace) -> int:
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.report import export

    path = default_path()
    record = None
    if path.exists():
        try:
            with HistoryStore.open(path) as store:
                record = store.get(args.id)
                if record is not None and args.format == "recording":
                    return _export_recording(args, store, record)
        except HistoryUnavailable as exc:
            print(f"anoman-tui export: {exc.reason}", file=sys.stderr)
            return 1
    if record is None:
        print(f"anoman-tui export: no comparison {args.id} in the history ({path}); "
              "`anoman-tui history` lists the ids", file=sys.stderr)
        return 2
    text = export(record.masked(), args.format)  # a blind round: labels until its vote
    if args.output == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    target = Path(args.output or f"comparison-{args.id}.{args.format}")
    try:
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"anoman-tui export: cannot write {target}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0


def _known_keys() -> list[str]:
    """Every key this user's settings hold (the gateway's, each target's): an exported
    recording masks them wherever a server echoed one."""
    import os

    from anoman_tui.config import ConfigError, load_settings

    keys = [os.environ.get("ANOMAN_API_KEY", "")]
    try:
        settings = load_settings()
    except ConfigError:
        return [k for k in keys if k]  # a broken config file: the variable's key still
    keys += [_key(settings), *(t.key() for t in settings.all_targets().values())]
    return [k for k in dict.fromkeys(keys) if k]


def _export_recording(args: argparse.Namespace, store: Any, record: Any) -> int:
    """`export --format recording`: the comparison with its streams, as one file."""
    from anoman_tui.history.portable import (
        FILE_SUFFIX,
        PortableRefused,
        comparison_document,
        dumps,
    )
    from anoman_tui.streaming.recording import RecordingError

    prog = "anoman-tui export"
    try:
        recordings = {} if record.hidden else store.recordings(args.id)
        text = dumps(comparison_document(record, recordings, _known_keys()))
    except PortableRefused as exc:
        print(f"{prog}: comparison {args.id} cannot be exported as a recording: {exc.reason}",
              file=sys.stderr)
        return 2
    except RecordingError as exc:
        print(f"{prog}: comparison {args.id}'s recording is damaged: {exc.reason}",
              file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    target = Path(args.output or f"comparison-{args.id}{FILE_SUFFIX}")
    try:
        if target.suffix == ".gz":  # SSE compresses about tenfold; import reads either
            import gzip

            target.write_bytes(gzip.compress(text.encode("ascii"), mtime=0))
        else:
            target.write_text(text, encoding="ascii")
    except OSError as exc:
        print(f"{prog}: cannot write {target}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0


def _import_bytes(file: str) -> bytes:
    """The file's bytes ('-': stdin), never more than the limit + 1 of them in memory (a
    bigger file is refused anyway; a regular one before a byte of it is read)."""
    import os

    from anoman_tui.history import portable

    limit = portable.MAX_FILE_BYTES
    if file == "-":
        return sys.stdin.buffer.read(limit + 1)
    with open(file, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise portable.too_large()
        return handle.read(limit + 1)


def _import(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from anoman_tui.history import HistoryStore, HistoryUnavailable, VoteRefused
    from anoman_tui.history.portable import PortableRefused, read_comparison_document
    from anoman_tui.safe_text import terminal_safe

    name = "-" if args.file == "-" else terminal_safe(args.file)
    prog = "anoman-tui import"
    try:
        record = read_comparison_document(_import_bytes(args.file))
    except OSError as exc:
        print(f"{prog}: {name}: cannot read it: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except PortableRefused as exc:
        print(f"{prog}: {name}: {exc.reason}", file=sys.stderr)
        return 2
    record = replace(record, source="import")
    try:
        with HistoryStore.open() as store:
            new_id = store.save(record)
            if record.vote is not None:
                vote = record.vote
                try:
                    store.cast_vote(new_id, vote.outcome, vote.winner_pane, blind=vote.blind,
                                    voted_at=vote.voted_at)
                except VoteRefused as exc:  # a comparison just saved: not expected
                    print(f"{prog}: {name}: imported without its vote: {exc.reason}",
                          file=sys.stderr)
    except HistoryUnavailable as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        return 1
    prompt = " ".join(terminal_safe(record.prompt).split())
    if len(prompt) > 60:
        prompt = prompt[:59] + "…"
    count = len(record.panes)
    print(f"imported as comparison {new_id}: {prompt} ({count} pane{'' if count == 1 else 's'}, "
          "recorded)")
    return 0


def _vote(args: argparse.Namespace) -> int:
    from anoman_tui.history import HistoryStore, HistoryUnavailable, VoteRefused, default_path

    prog = "anoman-tui vote"
    path = default_path()
    if not path.exists():
        print(f"{prog}: no comparison {args.id}: the history ({path}) is empty", file=sys.stderr)
        return 2
    try:
        with HistoryStore.open(path) as store:
            record = store.get(args.id)
            problem = _vote_problem(record, args.id, args.choice)
            if problem:
                print(f"{prog}: {problem}", file=sys.stderr)
                return 2
            assert record is not None
            winner = next((p.pane for p in record.panes if p.label == args.choice), None)
            outcome = args.choice if args.choice in ("tie", "bad") else "win"
            try:
                store.cast_vote(args.id, outcome, winner, blind=True)
            except VoteRefused as exc:
                print(f"{prog}: {exc.reason}", file=sys.stderr)
                return 2
    except HistoryUnavailable as exc:
        print(f"{prog}: {exc.reason}", file=sys.stderr)
        return 1
    reveal: dict[str, dict[str, Any]] = {
        p.label: {"model": p.model, "target": p.target, "status": p.status,
                  "cost": p.cost_text, "metrics": dict(p.metrics)}
        for p in record.panes
    }
    if args.json:
        print(json.dumps({"id": args.id, "outcome": outcome,
                          "winner": args.choice if outcome == "win" else None,
                          "reveal": reveal}, ensure_ascii=False))
        return 0
    from anoman_tui.safe_text import terminal_safe

    for label, pane in reveal.items():
        ttft, rate = pane["metrics"].get("ttft_s"), pane["metrics"].get("output_tokens_per_s")
        where = f" @{pane['target']}" if pane["target"] else ""
        line = (f"{label}  {pane['model']}{where}  {pane['status']}"
                f"  TTFT {f'{ttft:.2f} s' if ttft is not None else '—'}"
                f"  {f'{rate:.1f}' if rate is not None else '—'} tok/s  {pane['cost']}"
                + ("  ← your pick" if label == args.choice else ""))
        print(terminal_safe(line))
    if outcome != "win":
        print("your vote: a tie" if outcome == "tie" else "your vote: every answer bad")
    return 0


def _scoreboard(args: argparse.Namespace) -> int:
    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.report.scoreboard import build

    prog = "anoman-tui scoreboard"
    path = default_path()
    rows = []
    if path.exists():
        try:
            with HistoryStore.open(path) as store:
                rows = build(store.voted_rounds(include_sighted=args.include_sighted),
                             store.model_numbers())
        except HistoryUnavailable as exc:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps({"include_sighted": args.include_sighted,
                          "models": [r.to_json() for r in rows]}, ensure_ascii=False))
        return 0
    if not rows:
        print("No votes yet: run `anoman-tui compare --blind`, then `anoman-tui vote ID`.")
        return 0
    from rich.console import Console
    from rich.table import Table

    from anoman_tui.report.scoreboard import COLUMNS, cells

    table = Table(title="Scoreboard" + (" (blind and sighted votes)" if args.include_sighted
                                        else " (blind votes)"), title_justify="left")
    for name, justify in COLUMNS:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        name, *rest = cells(r)
        table.add_row(name + (" (few rounds)" if r.unstable else ""), *rest)
    console = Console(highlight=False)
    table.columns[0].no_wrap = True  # a cut name is another model
    if not console.is_terminal:  # a file or a pipe: as wide as it needs, never squeezed
        unbounded = console.options.update_width(10_000)
        console.width = max(console.width, console.measure(table, options=unbounded).maximum)
    console.print(table)
    return 0


def _vote_problem(record: Any, comparison_id: int, choice: str) -> str | None:
    """Why this vote cannot be cast, in one sentence; None if it can."""
    if record is None:
        return f"no comparison {comparison_id} in the history; `anoman-tui history` lists them"
    if not record.blind:
        return f"comparison {comparison_id} is not a blind round (see compare --blind)"
    if record.vote is not None:
        return f"round {comparison_id} was already voted on"
    if all(p.status != "completed" for p in record.panes):
        return f"every pane of round {comparison_id} failed: there is nothing to vote on"
    if choice in ("tie", "bad"):
        return None
    pane = next((p for p in record.panes if p.label == choice), None)
    if pane is None:
        labels = ", ".join(p.label for p in record.panes)
        return f"round {comparison_id} has no pane {choice} (its panes: {labels})"
    if pane.status != "completed":
        return f"pane {choice} of round {comparison_id} {pane.status}: a failed pane cannot win"
    return None


def _history(args: argparse.Namespace) -> int:
    import shutil
    from datetime import datetime

    from anoman_tui.history import HistoryStore, HistoryUnavailable, default_path
    from anoman_tui.safe_text import terminal_safe

    path = default_path()
    records = []
    if path.exists():
        try:
            with HistoryStore.open(path) as store:
                records = store.recent(args.limit, args.search)
        except HistoryUnavailable as exc:
            print(f"anoman-tui history: {exc.reason}", file=sys.stderr)
            return 1
    if not records:
        what = (f"no saved comparison matches {args.search!r}" if args.search and path.exists()
                else f"no comparisons saved yet (the history lives in {path})")
        print(what[0].upper() + what[1:], file=sys.stderr if args.json else sys.stdout)
        return 0
    width = shutil.get_terminal_size().columns
    for record in records:
        when = datetime.fromtimestamp(record.created_at).astimezone()
        hidden = record.hidden
        record = record.masked()  # a blind round shows its labels until its vote
        if args.json:
            entry: dict[str, Any] = {
                "id": record.id,
                "time": when.isoformat(timespec="seconds"),
                "prompt": record.prompt,
                "panes": [{"pane": p.pane, "model": None if hidden else p.model,
                           "status": p.status, "cost": None if hidden else p.cost_text}
                          | ({"label": p.label} if record.blind else {})
                          for p in record.panes],
            }
            if record.blind:
                entry["blind"] = True
                entry["voted"] = not hidden
            print(json.dumps(entry, ensure_ascii=False))
            continue
        head = f"{record.id:>5}  {when:%Y-%m-%d %H:%M}  "
        tail = "  " + "  ·  ".join(f"{p.model} {p.status} {p.cost_text}"
                                    for p in record.panes)
        prompt = " ".join(terminal_safe(record.prompt).split())
        room = max(20, width - len(head) - len(tail))
        if len(prompt) > room:
            prompt = prompt[: room - 1] + "…"
        print(f"{head}{prompt:<{room}}{terminal_safe(tail)}".rstrip())
    return 0


def _tui(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if len(getattr(args, "models", ())) > 3:
        parser.error("the compare screen has three panes: give at most three --model")
    settings = settings_from_args(args, "anoman-tui")
    if settings is None:
        return 2
    # Only the compare screen uses these two settings, so only it refuses bad ones.
    from anoman_tui.config import source_of
    from anoman_tui.themes import unknown_theme
    from anoman_tui.ui.app import keymap_conflict

    given = {field: True for dest, field in SETTING_FLAGS.items() if hasattr(args, dest)}
    for key, problem in (("theme", unknown_theme(settings.theme)),
                         ("keymap", keymap_conflict(settings.keymap))):
        if problem:
            print(f"anoman-tui: {source_of(key, given)}: {problem}", file=sys.stderr)
            return 2
    # Before the screen takes over the terminal: the line stays above it, and after it.
    warn_inline_keys(settings, "anoman-tui")
    from anoman_tui.logs import setup_file_logging

    # Every key a pane may send: the gateway's and each target's (inline or from its
    # variable) are masked in the log file.
    keys = [_key(settings), *(t.key() for t in settings.all_targets().values())]
    setup_file_logging(secrets=[k for k in dict.fromkeys(keys) if k])
    from anoman_tui.ui.app import AnomanApp

    app = AnomanApp(settings, arena=args.arena)
    app.run()
    return app.return_code or 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command == "compare":
        return _compare(args, parser)
    if args.command == "serve":
        from anoman_tui.gateway.serve import serve_main

        return serve_main(args)
    if args.command == "usage":
        return _usage(args)
    if args.command == "history":
        return _history(args)
    if args.command == "export":
        return _export(args)
    if args.command == "import":
        return _import(args)
    if args.command == "vote":
        return _vote(args)
    if args.command == "scoreboard":
        return _scoreboard(args)
    if args.command == "replay":
        return _replay(args)
    return _tui(args, parser)


if __name__ == "__main__":
    sys.exit(main())
