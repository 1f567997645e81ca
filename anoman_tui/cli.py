"""The `anoman-tui` command: the compare screen by default, and its subcommands.

Heavy imports (the stream core, Rich, the gateway, Textual) happen inside the
subcommand that needs them, so `anoman-tui --help` and start-up stay quick.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anoman-tui",
        description="Compare LLMs side by side while they stream, through an Anoman gateway.",
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
    compare.add_argument("prompt", help="the user prompt")
    compare.add_argument(
        "--model", "-m", action="append", dest="models", metavar="MODEL", required=True,
        help="a model to compare (repeat for each model)",
    )
    compare.add_argument(
        "--base-url", default=os.environ.get(ENV_BASE_URL),
        help=f"gateway root, e.g. https://api.anoman.io; a trailing /v1 is accepted "
        f"(default: ${ENV_BASE_URL})",
    )
    compare.add_argument("--api-key", default=None, help=KEY_FLAG_HELP)
    compare.add_argument(
        "--endpoint", choices=("openai", "anthropic", "playground"), default="openai",
        help="which gateway endpoint and frame format to use (default: openai)",
    )
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
    return parser


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from anoman_tui.headless import CompareSpec, run_compare

    if not args.base_url:
        parser.error(f"compare needs --base-url (or ${ENV_BASE_URL})")
    api_key = args.api_key if args.api_key is not None else os.environ.get(ENV_API_KEY, "")
    spec = CompareSpec(
        prompt=args.prompt,
        models=args.models,
        base_url=args.base_url,
        api_key=api_key,
        endpoint=args.endpoint,
        system=args.system,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        idle_timeout=args.idle_timeout,
        headers=tuple(args.headers),
    )
    return asyncio.run(run_compare(spec, as_json=args.json))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "compare":
        return _compare(args, parser)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
