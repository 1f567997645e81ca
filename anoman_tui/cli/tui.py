"""`anoman-tui` with no command: the three-pane compare screen (Textual, imported only
here and only once the command line is checked).
"""

from __future__ import annotations

import argparse
import gc
import sys

from anoman_tui.cli.common import (
    SETTING_FLAGS,
    add_setting_arguments,
    gateway_key,
    settings_from_args,
    warn_inline_keys,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The top-level flags: the compare screen's."""
    add_setting_arguments(parser, many_models=False)
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


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if len(getattr(args, "models", ())) > 3:
        parser.error("the compare screen has three panes: give at most three --model")
    # What start-up allocates lives as long as the app: the collector's passes over it
    # free nothing and cost the first paint a full collection (50-80 ms on a busy
    # machine). The app collects once, freezes what survived and turns the collector
    # back on just after its first paint (`anoman_tui.ui.app`); a start that ends
    # before it (a bad setting) turns it back on here.
    gc.disable()
    try:
        return _run(args)
    finally:
        gc.enable()


def _run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args, "anoman-tui")
    if settings is None:
        return 2
    # Only the compare screen uses these two settings, so only it refuses bad ones.
    from anoman_tui.config import source_of
    from anoman_tui.ui.app import keymap_conflict
    from anoman_tui.ui.themes import unknown_theme

    given = {field: True for dest, field in SETTING_FLAGS.items() if hasattr(args, dest)}
    for key, problem in (("theme", unknown_theme(settings.theme)),
                         ("keymap", keymap_conflict(settings.keymap))):
        if problem:
            print(f"anoman-tui: {source_of(key, given)}: {problem}", file=sys.stderr)
            return 2
    # Before the screen takes over the terminal: the line stays above it, and after it.
    warn_inline_keys(settings, "anoman-tui")
    from anoman_tui.cli.logs import setup_file_logging

    # Every key a pane may send: the gateway's and each target's (inline or from its
    # variable) are masked in the log file.
    keys = [gateway_key(settings), *(t.key() for t in settings.all_targets().values())]
    setup_file_logging(secrets=[k for k in dict.fromkeys(keys) if k])
    from anoman_tui.ui.app import AnomanApp

    app = AnomanApp(settings, arena=args.arena)
    app.run()
    if app.closing_message:  # saves kept for the next start: said once the screen is gone
        print(f"anoman-tui: {app.closing_message}", file=sys.stderr)
    return app.return_code or 0
