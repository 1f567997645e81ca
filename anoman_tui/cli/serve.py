"""`anoman-tui serve`: the local gateway in the foreground (its flags and run live
in `anoman_tui.gateway.serve`, imported only for this command)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anoman_tui.cli.help import LOCAL_GATEWAY

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands

GROUP = LOCAL_GATEWAY
NAME = "serve"
HELP = "run the local Anoman-compatible gateway in the foreground"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description="Run the local Anoman-compatible gateway until Ctrl+C or SIGTERM.",
    )
    if "serve" in argv:
        # Only then: the gateway's imports (uvicorn, Starlette) stay off the TUI's start-up.
        from anoman_tui.gateway.serve import add_serve_arguments

        add_serve_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from anoman_tui.gateway.serve import serve_main

    return serve_main(args)
