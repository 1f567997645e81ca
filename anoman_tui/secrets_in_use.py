"""Every secret this user's settings hold, for `anoman_tui.streaming.safe_text.masked` to hide
at every exit (the terminal, `--json`, each report and export).

The keys are the values of the key variables in use (`ANOMAN_API_KEY` and each
target's `api_key_env`), every inline key of the config file, and the password of
every target's base URL. A config file that cannot be read still leaves the
variables' keys to mask.

May import: the standard library, `anoman_tui.config`, `anoman_tui.targets`,
`anoman_tui.streaming.safe_text`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from anoman_tui.streaming.safe_text import secret_list, url_password

# Read even when the config file cannot be: the built-in targets' key variables.
_KEY_VARIABLES = ("ANOMAN_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                  "OPENROUTER_API_KEY")


def secrets_in_use(extra: Iterable[str | None] = (),
                   environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The secrets to mask, longest first (`secret_list`): the settings' and the
    environment's, and `extra` (a key given by a flag, a running gateway's)."""
    from anoman_tui.config import ConfigError, load_settings

    environ = os.environ if environ is None else environ
    found = [environ.get(name, "") for name in _KEY_VARIABLES]
    found.append(url_password(environ.get("ANOMAN_BASE_URL")))
    found += [value or "" for value in extra]
    try:
        settings = load_settings()
    except ConfigError:
        return secret_list(found)
    if settings.api_key is not None:
        found.append(settings.api_key.get_secret_value())
    found.append(url_password(settings.base_url))
    for target in settings.all_targets().values():
        found.append(target.key(environ))
        if target.api_key is not None:
            found.append(target.api_key.get_secret_value())
        found.append(url_password(target.base_url))
        found.append(url_password(target.resolved_base_url(environ)))
    return secret_list(found)
