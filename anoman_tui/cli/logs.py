"""File logging for the TUI: tracebacks go to a log file, never to the screen, and no
line ever carries an API key.

Set up by the commands that open the app (`tui`, `replay`), so it lives with them.
May import: the standard library, `anoman_tui.locations`."""

from __future__ import annotations

import logging
import re

from anoman_tui.locations import log_file

_KEY_PATTERN = re.compile(r"anm-sk-[A-Za-z0-9_\\-]{4,}")


class KeyRedactingFilter(logging.Filter):
    """Masks known secrets and anything shaped like an Anoman key in every record."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _KEY_PATTERN.sub(lambda m: "anm-sk-…" + m.group(0)[-4:], message)
        for secret in self._secrets:
            cleaned = cleaned.replace(secret, "…" + secret[-4:])
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def setup_file_logging(secrets: list[str] | None = None) -> None:
    path = log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(KeyRedactingFilter(secrets or []))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
