"""The argument types and actions of the `anoman-tui` command line: each turns one
flag's text into a value or says, in one line, why it cannot.

argparse only: imported on every start-up, so nothing heavy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

def scrub_passwords(text: str) -> str:
    """`text` with the password of every URL in it replaced by `***` (what argparse
    echoes of an argument it refuses must not show it: postgresql://ann:pw@db/team)."""
    from anoman_tui.streaming.safe_text import redact_urls

    return redact_urls(text)


class SecretScrubbingParser(argparse.ArgumentParser):
    """argparse's parser, except that nothing it prints (a usage error quotes the
    argument it refuses, whole) shows a password written in a URL, and that a usage
    error is one line, as every other refusal of the command is (argparse would print
    the whole usage synopsis above it; `--help` still shows it)."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        super()._print_message(scrub_passwords(message) if message else message, file)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


class VersionAction(argparse.Action):
    """`--version`, reading the package metadata only when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        from anoman_tui import __version__

        print(f"{parser.prog} {__version__}")
        parser.exit()


def one_line(text: str) -> str:
    """`text` with its line breaks as spaces: a refusal is one line."""
    return " ".join(text.split("\n")).replace("\r", " ")


def header(value: str) -> tuple[str, str]:
    if any("\ud800" <= ch <= "\udfff" for ch in value):  # bytes that are not UTF-8
        raise argparse.ArgumentTypeError("holds bytes that are not UTF-8 text")
    name, sep, val = value.partition(":")
    name = name.strip()
    if not sep or not name or any(c in name for c in " \t\r\n") or "\n" in val or "\r" in val:
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {value!r}")
    return name, val.strip()


def positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return number


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def non_negative_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not number >= 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def temperature(value: str) -> float:
    """`--temperature`: the range every source of the setting shares
    (`anoman_tui.parameters`)."""
    from anoman_tui.parameters import parse_temperature

    try:
        return parse_temperature(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def max_tokens(value: str) -> int:
    """`--max-tokens`: the range every source of the setting shares."""
    from anoman_tui.parameters import parse_max_tokens

    try:
        return parse_max_tokens(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
