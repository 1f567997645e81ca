"""What the `anoman-tui` subcommands share: the settings flags and turning them (with the
environment and the config file) into `Settings`, the gateway key and the warning about
keys written in the config file.

Imported on every start-up: the config (pydantic) only inside the functions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from anoman_tui.cli.arguments import max_tokens, positive_float, temperature

if TYPE_CHECKING:
    from anoman_tui.config import Settings

    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]
    """What `add_subparsers` returns: each subcommand module adds its parser to it."""


class Command(Protocol):
    """A subcommand's module: its name and one-line help, its parser and its run."""

    NAME: str
    GROUP: str
    """Its heading in `--help` (`anoman_tui.cli.help.GROUPS`)."""
    HELP: str

    def add_parser(self, commands: Subcommands, argv: Sequence[str]) -> None:
        """Add its parser (`argv`: the command line, for flags only some runs need)."""

    def run(self, args: argparse.Namespace) -> int:
        """Run it; the exit status."""


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
    "record": "record", "target": "target", "history_url": "history_url",
}
HISTORY_URL_HELP = (
    "keep the history in a team's shared PostgreSQL database, "
    "postgresql://user@host:port/database (the password from PGPASSWORD or ~/.pgpass "
    "rather than the URL: a command line can end up in shell history); default: "
    "$ANOMAN_HISTORY_URL, then history_url in the config file, then the SQLite file "
    "under the data directory"
)


def add_history_url_argument(parser: argparse.ArgumentParser) -> None:
    """`--history-url`, for every command that reads or writes the history."""
    parser.add_argument("--history-url", default=argparse.SUPPRESS, metavar="URL",
                        help=HISTORY_URL_HELP)



def add_setting_arguments(parser: argparse.ArgumentParser, *, many_models: bool) -> None:
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
        "--max-tokens", type=max_tokens, default=unset, metavar="N",
        help=f"most tokens per answer{screen}; default: $ANOMAN_MAX_TOKENS, then max_tokens "
        "in the config file; unset: not sent (the anthropic format sends 4096)",
    )
    parser.add_argument(
        "--temperature", type=temperature, default=unset, metavar="T",
        help=f"sampling temperature, 0 to 2{screen}; default: $ANOMAN_TEMPERATURE, then "
        "temperature in the config file; unset: not sent",
    )
    parser.add_argument(
        "--idle-timeout", type=positive_float, default=unset, metavar="SECONDS",
        help="fail a stream as stalled after this long without a byte (default: "
        "$ANOMAN_IDLE_TIMEOUT, then idle_timeout in the config file, then 60)",
    )
    parser.add_argument(
        "--no-history", dest="history", action="store_const", const=False, default=unset,
        help="save nothing to the history (default: $ANOMAN_HISTORY, then history in the "
        "config file, then save every comparison)",
    )
    add_history_url_argument(parser)
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


def warn_inline_keys(settings: Settings, prog: str) -> None:
    """One line on stderr for each target whose key is written in the config file."""
    for name in settings.inline_keys():
        print(f"{prog}: warning: targets.{name}.api_key is written in the config file; "
              "prefer api_key_env (the name of an environment variable holding it)",
              file=sys.stderr)


def gateway_key(settings: Settings) -> str:
    """The key for the gateway at `base_url` ("" when none is set)."""
    return settings.api_key.get_secret_value() if settings.api_key else ""
