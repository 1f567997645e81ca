"""`anoman-tui usage`: the metering ledger, from a running gateway or the local file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from anoman_tui.cli.arguments import positive_int
from anoman_tui.cli.common import KEY_FLAG_HELP, gateway_key, settings_from_args
from anoman_tui.cli.help import LOCAL_GATEWAY

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = LOCAL_GATEWAY
NAME = "usage"
HELP = "print the usage ledger as a table"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Print the metering ledger, newest first: from a running gateway with --base-url "
            "(GET /anoman/v1/usage), else from the local gateway's ledger file."
        ),
    )
    parser.add_argument("--base-url", default=argparse.SUPPRESS,
                       help="a running gateway (default: $ANOMAN_BASE_URL, then base_url in "
                       "the config file)")
    parser.add_argument("--api-key", default=argparse.SUPPRESS, help=KEY_FLAG_HELP)
    parser.add_argument("--db", type=Path, default=None, metavar="PATH",
                       help="the local ledger file (default: the user data directory)")
    parser.add_argument("--limit", type=positive_int, default=50, help="rows (default 50)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args, "anoman-tui usage")
    if settings is None:
        return 2
    from anoman_tui.gateway.ledger import format_usage_table

    if settings.base_url:
        import asyncio  # here, not at the top: it costs `anoman-tui --help` ~70 ms

        from anoman_tui.streaming import GatewayRequestError, StreamClient

        base_url, key = settings.base_url, gateway_key(settings)

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
