"""The one masking every exit applies (`anoman_tui.streaming.safe_text`): what it hides and what it
leaves alone. The exits themselves are tested where a user meets them
(tests/reliability/test_secrets_in_output.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from anoman_tui.secrets_in_use import secrets_in_use
from anoman_tui.streaming.safe_text import (
    mask_partial_end,
    mask_secrets,
    masked,
    redact_url,
    secret_list,
    url_password,
)

KEY = "anm-sk-known-secret-key-7f3a9c1e5b2d4086"


@pytest.mark.parametrize("written", [
    "https://user:p'a\"ss@host/v1",
    json.dumps("https://user:p'a\"ss@host/v1"),  # as a JSON string
    repr("https://user:p'a\"ss@host/v1"),  # as argparse quotes it
    "postgresql://ann:s3cr%40t@db:5432/team",
])
def test_a_url_keeps_its_user_and_host_never_its_password(written: str) -> None:
    shown = redact_url(written)
    assert ":***@" in shown and ("user:" in shown or "ann:" in shown), shown
    assert "p'a" not in shown and 'a"ss' not in shown and "s3cr" not in shown, shown


def test_what_is_not_a_password_is_left_alone() -> None:
    for text in ("mail me at ann@example.com", "https://host:8443/v1", "a @ b: c",
                 "https://host/v1?model=x@y"):
        assert redact_url(text) == text
    assert redact_url("postgresql://db/team?password=hunter22&x=1") == \
        "postgresql://db/team?password=***&x=1"


def test_the_password_of_a_url() -> None:
    assert url_password("https://user:p'a\"ss@host/v1") == "p'a\"ss"
    assert url_password("https://user:s3cr%40t@host") == "s3cr@t"
    assert url_password("https://host/v1") == url_password(None) == ""


def test_keys_are_masked_to_their_last_four_anywhere_in_a_document() -> None:
    @dataclass(frozen=True)
    class Answer:
        text: str
        failure: dict[str, object] | None
        turns: tuple[tuple[str, str], ...]
        tokens: int

    other = "sk-other-target-secret-99887766aabb"
    answer = Answer(f"key {KEY}", {"message": f"bad {other}", "status": 401},
                    (("user", f"is {other} mine?"),), 7)
    shown = masked(answer, [KEY, other])
    assert shown == Answer("key anm-sk-…4086", {"message": "bad …aabb", "status": 401},
                           (("user", "is …aabb mine?"),), 7)
    untouched = Answer("nothing here", None, (), 1)
    assert masked(untouched, [KEY]) is untouched  # nothing to mask: the same object


def test_an_unknown_anoman_key_is_masked_a_short_secret_is_not() -> None:
    assert mask_secrets("a key anm-sk-0123456789abcdefZZ9x here") == "a key anm-sk-…ZZ9x here"
    assert secret_list(["pass", "", KEY, KEY]) == (KEY,)
    assert mask_secrets("pass the salt", secret_list(["pass"])) == "pass the salt"


def test_a_key_half_arrived_at_the_end_of_a_live_view_is_hidden() -> None:
    assert mask_partial_end(f"your key is {KEY[:15]}", [KEY]) == "your key is …"
    assert mask_partial_end("your key is", [KEY]) == "your key is"


def test_the_secrets_in_use(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_env.write_text('[targets.box]\nbase_url = "http://u:box-password-1@h:1"\n'
                         'api_key_env = "BOX_KEY"\n')
    monkeypatch.setenv("BOX_KEY", "box-key-0123456789")
    monkeypatch.setenv("ANOMAN_API_KEY", KEY)
    found = secrets_in_use(["flag-key-0123456789"])
    assert {"box-key-0123456789", KEY, "box-password-1", "flag-key-0123456789"} <= set(found)
    assert list(found) == sorted(found, key=len, reverse=True)
    clean_env.write_text("not = [toml")  # a broken config file: the variables' keys still
    assert KEY in secrets_in_use()
