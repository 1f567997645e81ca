"""A request to a target is built in one place (`anoman_tui.targets.stream_request`):
its URL, key, path, usage setting and headers come from the target the same way for a
suite's cells, its judge, the arena's judge and `compare`. An AST scan: no other module
of the package calls `StreamRequest(...)`; then what the builder puts where."""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import SecretStr

from anoman_tui.streaming import ChatTurn
from anoman_tui.targets import Connection, TargetConfig, from_config, stream_request

PACKAGE = Path(__file__).resolve().parents[1] / "anoman_tui"
BUILDER = "targets.py"


def _builders() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "StreamRequest" not in source:
            continue  # (parsing only the files that name it: a tenth of the time)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (
                    getattr(node.func, "id", None) == "StreamRequest"
                    or getattr(node.func, "attr", None) == "StreamRequest"):
                found.add(path.relative_to(PACKAGE).as_posix())
    return found


def test_only_the_builder_makes_a_stream_request() -> None:
    assert _builders() == {BUILDER}


def test_the_builder_takes_where_and_how_from_the_target() -> None:
    target = from_config("litellm", TargetConfig(
        base_url="http://127.0.0.1:4000", api_key_env="LITELLM_KEY",
        headers={"X-Team": "evals"}, include_usage=False, chat_path="/chat"))
    connection = Connection(target=target, base_url="http://127.0.0.1:4000",
                            api_key=SecretStr("sk-test"))
    request = stream_request(connection, "openai", "gpt-4o-mini",
                             (ChatTurn(role="user", content="Hi"),), system="Be brief.",
                             temperature=0.0, headers=(("Cache-Control", "no-cache"),),
                             simulate="status=429", idle_timeout=5.0, pane=2)
    assert request.url == "http://127.0.0.1:4000/chat"
    assert request.api_key.get_secret_value() == "sk-test"
    assert (request.include_usage, request.key_env) == (False, "LITELLM_KEY")
    # The target's headers, then the caller's, then the local gateway's scenario.
    assert request.extra_headers == (("X-Team", "evals"), ("Cache-Control", "no-cache"),
                                     ("X-Anoman-Simulate", "status=429"))
    assert (request.system, request.temperature, request.idle_timeout, request.pane) == \
        ("Be brief.", 0.0, 5.0, 2)
    # A recording's path replaces the target's.
    assert stream_request(connection, "openai", "m", (), path="/v1/x").url == \
        "http://127.0.0.1:4000/v1/x"
