"""The `anoman-tui` command: the compare screen by default, and its subcommands.

Heavy imports (the stream core, Rich, the gateway, Textual) happen inside the
subcommand that needs them, so `anoman-tui --help` and start-up stay quick.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

ENV_BASE_URL = "ANOMAN_BASE_URL"
ENV_API_KEY = "ANOMAN_API_KEY"
KEY_FLAG_HELP = (
    f"API key (default: ${ENV_API_KEY}). Prefer the environment variable or the config "
    "file: a key on the command line can end up in shell history and process lists."
)


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


def _add_target_arguments(parser: argparse.ArgumentParser, *, many_models: bool) -> None:
    parser.add_argument(
        "--base-url", default=os.environ.get(ENV_BASE_URL),
        help=f"remote gateway root, e.g. https://api.anoman.io (a trailing /v1 is accepted); "
        f"default ${ENV_BASE_URL}; unset: start the local gateway in-process",
    )
    parser.add_argument("--api-key", default=None, help=KEY_FLAG_HELP)
    parser.add_argument(
        "--model", "-m", action="append", dest="models", metavar="MODEL",
        help="a model to compare, repeat for each"
        + ("" if many_models else " (up to three, one per pane)")
        + "; default: the first three the gateway lists",
    )
    parser.add_argument(
        "--endpoint", choices=("openai", "anthropic", "playground"), default=None,
        help="gateway endpoint and frame format (default: openai)",
    )


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anoman-tui",
        description=(
            "Compare LLMs side by side while they stream, through an Anoman gateway. "
            "With no command, opens the three-pane compare screen."
        ),
    )
    _add_target_arguments(parser, many_models=False)
    parser.add_argument("--theme", default=None, help="theme name (see themes/)")
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
    compare.add_argument("prompt", help="the user prompt")
    _add_target_arguments(compare, many_models=True)
    compare.add_argument("--system", default=None, help="system prompt")
    compare.add_argument("--max-tokens", type=_positive_int, default=None)
    compare.add_argument("--temperature", type=float, default=None)
    compare.add_argument(
        "--idle-timeout", type=_positive_float, default=60.0, metavar="SECONDS",
        help="fail a stream as stalled after this long without a byte (default: 60)",
    )
    compare.add_argument(
        "--header", "-H", action="append", type=_header, default=[], dest="headers",
        metavar="'NAME: VALUE'", help="extra header sent on every request (repeatable)",
    )
    compare.add_argument(
        "--json", action="store_true", help="print exactly one JSON document on stdout"
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
    usage.add_argument("--base-url", default=os.environ.get(ENV_BASE_URL),
                       help=f"a running gateway (default ${ENV_BASE_URL})")
    usage.add_argument("--api-key", default=None, help=KEY_FLAG_HELP)
    usage.add_argument("--db", type=Path, default=None, metavar="PATH",
                       help="the local ledger file (default: the user data directory)")
    usage.add_argument("--limit", type=_positive_int, default=50, help="rows (default 50)")
    usage.add_argument("--json", action="store_true", help="print the rows as JSON")
    return parser


def _api_key(args: argparse.Namespace) -> str:
    return args.api_key if args.api_key is not None else os.environ.get(ENV_API_KEY, "")


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from anoman_tui.headless import CompareSpec, run_compare_with_target

    spec = CompareSpec(
        prompt=args.prompt,
        models=args.models or [],
        base_url=args.base_url or "",
        api_key=_api_key(args),
        endpoint=args.endpoint or "openai",
        system=args.system,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        idle_timeout=args.idle_timeout,
        headers=tuple(args.headers),
    )
    return run_compare_with_target(spec, as_json=args.json)


def _usage(args: argparse.Namespace) -> int:
    from anoman_tui.gateway.ledger import format_usage_table

    if args.base_url:
        from anoman_tui.streaming import GatewayRequestError, StreamClient

        async def fetch() -> list[dict[str, object]]:
            async with StreamClient() as client:
                return await client.fetch_usage(args.base_url, _api_key(args), args.limit)

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


def _tui(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.models and len(args.models) > 3:
        parser.error("the compare screen has three panes: give at most three --model")
    from anoman_tui.config import check_config_file, load_settings
    from anoman_tui.logs import setup_file_logging

    problem = check_config_file()
    if problem:
        print(f"anoman-tui: {problem}", file=sys.stderr)
        return 2
    settings = load_settings(
        base_url=args.base_url, api_key=args.api_key, endpoint=args.endpoint, theme=args.theme
    )
    setup_file_logging(secrets=[settings.api_key.get_secret_value()] if settings.api_key else [])
    from anoman_tui.ui.app import AnomanApp

    app = AnomanApp(settings, models=args.models)
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
    return _tui(args, parser)


if __name__ == "__main__":
    sys.exit(main())
