"""Targets: the built-in servers, `TARGET:MODEL`, and `[targets.NAME]` tables on the wire.

The command-line tests run `anoman-tui compare` as a user does, against one recording
loopback server: each target in the config file is a path prefix under it, so the path
of every request says which target (and which of its paths) it went to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.streaming.request import ChatTurn, StreamRequest
from anoman_tui.targets import BUILT_IN, connect, split_model
from tests.frames import ANTHROPIC_EXAMPLE_STREAM
from tests.helpers import RecordingGateway, cli
from tests.replay_server import RecordedRequest, Script

SECRET = "sk-inline-SECRET-4242abcd"

# -- the built-in targets ------------------------------------------------------------

BUILT_INS = {
    # name: (kind, base URL, key variable, chat path, messages path, playground path)
    "local": ("anoman", None, None, "/v1/chat/completions", "/anthropic/v1/messages",
              "/anoman/v1/playground/run"),
    "anoman": ("anoman", "https://api.anoman.io", "ANOMAN_API_KEY", "/v1/chat/completions",
               "/anthropic/v1/messages", "/anoman/v1/playground/run"),
    "openai": ("openai-compatible", "https://api.openai.com", "OPENAI_API_KEY",
               "/v1/chat/completions", None, None),
    "anthropic": ("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", None,
                  "/v1/messages", None),
    "openrouter": ("openai-compatible", "https://openrouter.ai/api", "OPENROUTER_API_KEY",
                   "/v1/chat/completions", None, None),
    "ollama": ("openai-compatible", "http://127.0.0.1:11434", None, "/v1/chat/completions",
               None, None),
}


@pytest.mark.parametrize("name", list(BUILT_INS))
def test_each_built_in_target_has_its_kind_url_key_and_paths(name: str) -> None:
    kind, base_url, key_env, chat, messages, playground = BUILT_INS[name]
    target = BUILT_IN[name]
    assert (target.name, target.kind, target.base_url, target.api_key_env) == (
        name, kind, base_url, key_env)
    assert (target.chat_path, target.messages_path, target.playground_path) == (
        chat, messages, playground)
    assert target.models_path == "/v1/models"
    assert target.is_local == (name == "local")
    served = [e for e, p in (("openai", chat), ("anthropic", messages),
                             ("playground", playground)) if p]
    assert target.endpoints == served
    assert set(BUILT_IN) == set(BUILT_INS)


def _request(name: str, endpoint: str, environ: dict[str, str]) -> StreamRequest:
    target = BUILT_IN[name]
    connection = connect(target, environ=environ)
    return StreamRequest(endpoint=endpoint, model="m", base_url=connection.base_url,
                         api_key=connection.api_key, path=target.path_for(endpoint),
                         messages=(ChatTurn(role="user", content="hi"),))


def test_openrouter_streams_from_its_api_prefix_with_its_key() -> None:
    request = _request("openrouter", "openai", {"OPENROUTER_API_KEY": "sk-or-1"})
    assert request.url == "https://openrouter.ai/api/v1/chat/completions"
    assert request.headers()["Authorization"] == "Bearer sk-or-1"


def test_anthropic_serves_messages_only_with_its_own_key_headers() -> None:
    target = BUILT_IN["anthropic"]
    assert target.endpoints == ["anthropic"]
    assert target.default_endpoint("openai") == "anthropic"
    request = _request("anthropic", "anthropic", {"ANTHROPIC_API_KEY": "sk-ant-1"})
    assert request.url == "https://api.anthropic.com/v1/messages"
    headers = request.headers()
    assert headers["x-api-key"] == "sk-ant-1" and "Authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"
    # Its model list takes the key as x-api-key too, never as a bearer token.
    connection = connect(target, environ={"ANTHROPIC_API_KEY": "sk-ant-1"})
    assert connection.list_models_args() == (
        "https://api.anthropic.com", "",
        (("anthropic-version", "2023-06-01"), ("x-api-key", "sk-ant-1")), "/v1/models")
    # Without a key, no empty x-api-key header.
    bare = connect(target, environ={}).list_models_args()
    assert bare[2] == (("anthropic-version", "2023-06-01"),)


def test_openai_compatible_lists_models_with_a_bearer_key() -> None:
    connection = connect(BUILT_IN["openai"], environ={"OPENAI_API_KEY": "sk-oa-1"})
    assert connection.list_models_args() == ("https://api.openai.com", "sk-oa-1", (),
                                             "/v1/models")


def test_ollama_is_loopback_and_needs_no_key() -> None:
    target = BUILT_IN["ollama"]
    assert target.base_url is not None and target.base_url.startswith("http://127.0.0.1:")
    assert target.api_key_env is None
    connection = connect(target, environ={"OPENAI_API_KEY": "x", "ANOMAN_API_KEY": "y"})
    assert connection.api_key.get_secret_value() == ""
    assert "Authorization" not in _request("ollama", "openai", {}).headers()


def test_local_needs_the_running_gateway() -> None:
    with pytest.raises(ValueError):
        connect(BUILT_IN["local"])
    connection = connect(BUILT_IN["local"], local=("http://127.0.0.1:9", "anm-local"))
    assert connection.base_url == "http://127.0.0.1:9"
    assert connection.api_key.get_secret_value() == "anm-local"


@pytest.mark.parametrize(("spec", "expected"), [
    ("ollama:llama3.2:1b", ("ollama", "llama3.2:1b")),
    ("llama3.2:1b", (None, "llama3.2:1b")),
    ("anoman-lite", (None, "anoman-lite")),
    ("local:anoman-lite", ("local", "anoman-lite")),
    ("nosuch:model", (None, "nosuch:model")),  # not a target: part of the model id
    ("openai:", (None, "openai:")),  # a target with no model is no split
])
def test_split_model(spec: str, expected: tuple[str | None, str]) -> None:
    assert split_model(spec, BUILT_IN) == expected


# -- `[targets.NAME]` tables reach the wire through `compare -m NAME:MODEL` --------------


class Recorder(RecordingGateway):
    """Answers a messages path (any prefix) in the Anthropic format, the rest as OpenAI."""

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method == "POST" and request.path.endswith("messages"):
            return Script(body=list(ANTHROPIC_EXAMPLE_STREAM))
        return super().script_for(request)


@pytest.fixture
async def server() -> Any:
    recorder = Recorder()
    await recorder.start()
    try:
        yield recorder
    finally:
        await recorder.stop()


@pytest.fixture(autouse=True)
def config(clean_env: Path) -> Path:
    """The config file (not created); only what a test sets: no developer config, data
    directory or `ANOMAN_*` variable (`clean_env`, tests/conftest.py)."""
    return clean_env


def write(config: Path, server: Recorder, tables: str, *, top: str = "") -> None:
    """The config file: the default target is a gateway under /gw on `server` (so no
    local gateway starts), then `tables`, where {url} is the server's root."""
    config.write_text(f'base_url = "{server.base_url}/gw"\n{top}\n'
                      + tables.replace("{url}", server.base_url), encoding="utf-8")


async def compare(*args: str, env: dict[str, str] | None = None
                  ) -> tuple[int, dict[str, Any] | None, str, str]:
    code, out, err = await cli("compare", "ping", "--json", *args, env=env)
    assert "Traceback" not in err, err
    return code, (json.loads(out) if code in (0, 1) else None), out, err


def posts(server: Recorder) -> list[RecordedRequest]:
    return [r for r in server.requests if r.method == "POST"]


MINE = """
[targets.mine]
kind = "openai-compatible"
base_url = "{url}/mine"
api_key_env = "ANOMAN_TEST_MINE_KEY"
headers = { "X-Team" = "blue", "X-Trace" = "on" }
chat_path = "/custom/chat"
models_path = "/custom/models"
"""


async def test_a_config_target_sends_to_its_url_and_path_with_its_headers_and_key(
        server: Recorder, config: Path) -> None:
    write(config, server, MINE)
    code, doc, out, err = await compare("-m", "mine:my-model", "--no-history",
                                        env={"ANOMAN_TEST_MINE_KEY": "sk-mine-1234"})
    assert code == 0, err
    assert doc is not None and doc["panels"][0]["status"] == "completed"
    (request,) = posts(server)
    assert request.path == "/mine/custom/chat"
    assert request.body["model"] == "my-model"
    assert request.headers["authorization"] == "Bearer sk-mine-1234"
    assert request.headers["x-team"] == "blue" and request.headers["x-trace"] == "on"
    assert request.body["stream_options"] == {"include_usage": True}
    # Its model list (for prices) is read at its own models path, with its key.
    listed = [r for r in server.requests if r.method == "GET" and r.path.startswith("/mine")]
    assert [r.path for r in listed] == ["/mine/custom/models"]
    assert listed[0].headers["authorization"] == "Bearer sk-mine-1234"
    assert "sk-mine-1234" not in out + err


async def test_an_anthropic_kind_target_sends_x_api_key_to_its_messages_path(
        server: Recorder, config: Path) -> None:
    write(config, server, """
[targets.claude]
kind = "anthropic"
base_url = "{url}/claude"
api_key_env = "ANOMAN_TEST_CLAUDE_KEY"
messages_path = "/api/messages"
headers = { "X-Org" = "acme" }
""")
    code, doc, _, err = await compare("-m", "claude:claude-x", "--no-history",
                                      env={"ANOMAN_TEST_CLAUDE_KEY": "sk-ant-5678"})
    assert code == 0, err
    assert doc is not None and doc["panels"][0]["status"] == "completed"
    (request,) = posts(server)
    assert request.path == "/claude/api/messages"
    assert request.headers["x-api-key"] == "sk-ant-5678"
    assert "authorization" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["x-org"] == "acme"
    assert request.body["model"] == "claude-x" and "max_tokens" in request.body


async def test_include_usage_false_drops_stream_options(server: Recorder, config: Path
                                                        ) -> None:
    write(config, server, MINE + "include_usage = false\n")
    code, _, _, err = await compare("-m", "mine:a", "-m", "b", "--no-history",
                                    env={"ANOMAN_TEST_MINE_KEY": "k"})
    assert code == 0, err
    by_path = {r.path: r.body for r in posts(server)}
    assert "stream_options" not in by_path["/mine/custom/chat"]
    # The default target (an Anoman gateway) is still asked for usage.
    assert by_path["/gw/v1/chat/completions"]["stream_options"] == {"include_usage": True}


async def test_compare_json_panels_carry_their_target(server: Recorder, config: Path) -> None:
    write(config, server, MINE)
    code, doc, _, err = await compare("-m", "mine:a", "-m", "b", "-m", "mine:c",
                                      "--no-history", env={"ANOMAN_TEST_MINE_KEY": "k"})
    assert code == 0, err
    assert doc is not None
    assert [(p["model"], p["target"]) for p in doc["panels"]] == [
        ("a", "mine"), ("b", "gateway"), ("c", "mine")]
    assert sorted((r.path, r.body["model"]) for r in posts(server)) == [
        ("/gw/v1/chat/completions", "b"), ("/mine/custom/chat", "a"),
        ("/mine/custom/chat", "c")]


async def test_an_inline_key_works_with_one_warning_and_is_never_shown(
        server: Recorder, config: Path, tmp_path: Path) -> None:
    write(config, server, f"""
[targets.inline]
base_url = "{{url}}/inline"
api_key = "{SECRET}"
""")
    code, doc, out, err = await compare("-m", "inline:a", "-m", "b")
    assert code == 0, err
    assert doc is not None and doc["panels"][0]["target"] == "inline"
    (request,) = [r for r in posts(server) if r.path.startswith("/inline")]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "targets.inline.api_key" in warnings[0], err
    assert "api_key_env" in warnings[0]
    assert SECRET not in out + err
    # Saved to the history (where the target is its name and URL), never with the key.
    data = tmp_path / "data"
    files = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.name == "history.sqlite3" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    code, listing, err = await cli("history", "--json")
    assert code == 0 and "inline" not in err and SECRET not in listing + err


# -- bad values: exit 2, one line naming the problem --------------------------------

BAD_TARGETS = [
    ('[targets.x]\nkind = "grpc"\nbase_url = "http://h"\n', [],
     ["targets.x.kind", "must be one of anoman, openai-compatible, anthropic"]),
    ('[targets.x]\nbase_url = "example.com/v1"\n', [],
     ["targets.x.base_url", "http:// or https://"]),
    ('[targets.x]\nbase_url = "http://h"\napi_key_env = "sk-live-0123456789abcdef"\n', [],
     ["targets.x.api_key_env", "name of an environment variable, not a key"]),
    ('[targets.x]\nbase_url = "http://h"\napi_key = ["sk-live-0123456789abcdef"]\n', [],
     ["targets.x.api_key", "valid string"]),
    ('[targets.x]\nbase_url = "http://h"\nmodel_path = "/m"\n', [],
     ["targets.x.model_path"]),
    ('[targets."my box"]\nbase_url = "http://h"\n', [],
     ["target name 'my box'", "letters, digits"]),
    ('[targets.local]\nbase_url = "http://h"\n', [],
     ["'local' is the embedded gateway and cannot be redefined"]),
    ('[targets.x]\nbase_url = "http://h"\nchat_path = "v1/chat"\n', [],
     ["targets.x.chat_path", "a path starts with /"]),
    ("", ["--target", "nosuch"], ["flag --target", "no target named 'nosuch'"]),
    ('target = "olama"\n', [], ["target", "no target named 'olama' (did you mean 'ollama'?)"]),
]


@pytest.mark.parametrize("command", ["compare", "tui"])
@pytest.mark.parametrize(("text", "args", "says"), BAD_TARGETS,
                         ids=["kind", "base_url", "key-as-env", "malformed-key", "unknown-field",
                              "name", "local", "path", "--target", "target-in-file"])
async def test_a_bad_target_is_one_line_and_exit_two(
        command: str, text: str, args: list[str], says: list[str], config: Path) -> None:
    config.write_text(text, encoding="utf-8")
    argv = ["compare", "x", *args] if command == "compare" else args
    code, out, err = await cli(*argv)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("anoman-tui compare: " if command == "compare" else "anoman-tui: ")
    for part in says:
        assert part in err, err
    # A key written where a variable name belongs is not echoed back either.
    assert "sk-live-0123456789abcdef" not in err


# -- where a plain MODEL goes: --target, ANOMAN_TARGET, `target` in the file ----------


@pytest.mark.parametrize("source", ["flag", "env", "file"])
async def test_the_default_target_takes_plain_models(
        source: str, server: Recorder, config: Path) -> None:
    write(config, server, MINE, top='target = "mine"' if source == "file" else "")
    args = ["--target", "mine"] if source == "flag" else []
    env = {"ANOMAN_TEST_MINE_KEY": "k"}
    if source == "env":
        env["ANOMAN_TARGET"] = "mine"
    code, doc, _, err = await compare("-m", "plain-1", "-m", "gateway:plain-2",
                                      "--no-history", *args, env=env)
    assert code == 0, err
    assert doc is not None
    assert [p["target"] for p in doc["panels"]] == ["mine", "gateway"]
    assert sorted((r.path, r.body["model"]) for r in posts(server)) == [
        ("/gw/v1/chat/completions", "plain-2"), ("/mine/custom/chat", "plain-1")]


async def test_the_flag_beats_the_variable_beats_the_file(server: Recorder, config: Path
                                                         ) -> None:
    write(config, server, MINE + '\n[targets.other]\nbase_url = "{url}/other"\n',
          top='target = "gateway"')
    env = {"ANOMAN_TEST_MINE_KEY": "k", "ANOMAN_TARGET": "other"}
    code, _, _, err = await compare("-m", "p", "--no-history", env=env)
    assert code == 0, err
    assert [r.path for r in posts(server)] == ["/other/v1/chat/completions"]
    server.requests.clear()
    code, _, _, err = await compare("-m", "p", "--no-history", "--target", "mine", env=env)
    assert code == 0, err
    assert [r.path for r in posts(server)] == ["/mine/custom/chat"]


def test_the_compare_screen_warns_about_an_inline_key_too(
        config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    from anoman_tui import cli as cli_module
    from anoman_tui.cli import logs
    from anoman_tui.ui.app import AnomanApp

    config.write_text(f'[targets.inline]\nbase_url = "http://127.0.0.1:9"\n'
                      f'api_key = "{SECRET}"\n', encoding="utf-8")
    started: list[AnomanApp] = []
    monkeypatch.setattr(AnomanApp, "run", lambda self, *a, **k: started.append(self))
    monkeypatch.setattr(logs, "setup_file_logging", lambda secrets=None: None)
    assert cli_module.main([]) == 0
    assert len(started) == 1 and "inline" in started[0].connector.targets
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(
        "anoman-tui: warning: targets.inline.api_key is written in the config file"), err
    assert SECRET not in out + err


def test_a_target_table_may_cap_a_suite_runs_streams() -> None:
    """`max_concurrency` in `[targets.NAME]`: how many streams a suite run keeps in flight
    on that target; unset, the run's own limit; below 1 refused."""
    from anoman_tui.targets import TargetConfig, from_config

    assert from_config("t", TargetConfig(base_url="http://127.0.0.1:9")).max_concurrency is None
    capped = from_config("t", TargetConfig(base_url="http://127.0.0.1:9", max_concurrency=2))
    assert capped.max_concurrency == 2
    with pytest.raises(ValueError, match="max_concurrency"):
        TargetConfig(base_url="http://127.0.0.1:9", max_concurrency=0)


# -- OPENAI_BASE_URL and [targets.openai] ------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    ("http://127.0.0.1:4000/v1", "http://127.0.0.1:4000"),   # as the SDK takes it
    ("http://127.0.0.1:4000/v1/", "http://127.0.0.1:4000"),
    ("https://proxy.example/openai", "https://proxy.example/openai"),
    ("", "https://api.openai.com"),                          # set but empty: the default
])
def test_the_openai_target_goes_to_openai_base_url(value: str, expected: str) -> None:
    connection = connect(BUILT_IN["openai"], environ={"OPENAI_BASE_URL": value,
                                                      "OPENAI_API_KEY": "sk-oa-1"})
    assert connection.base_url == expected
    assert connection.api_key.get_secret_value() == "sk-oa-1"


def test_openai_base_url_is_read_when_connecting_and_only_by_openai(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert connect(BUILT_IN["openai"]).base_url == "https://api.openai.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    # The built-in table is unchanged; the connection made now follows the variable.
    assert BUILT_IN["openai"].base_url == "https://api.openai.com"
    assert connect(BUILT_IN["openai"]).base_url == "http://127.0.0.1:9"
    for other in ("anoman", "anthropic", "openrouter", "ollama"):
        assert connect(BUILT_IN[other]).base_url == BUILT_IN[other].base_url


async def test_compare_sends_openai_models_to_openai_base_url(
        server: Recorder, config: Path) -> None:
    write(config, server, "")
    code, doc, out, err = await compare(
        "-m", "openai:gpt-x", "--no-history",
        env={"OPENAI_BASE_URL": f"{server.base_url}/via-env/v1", "OPENAI_API_KEY": "sk-oa-77"})
    assert code == 0, err
    assert "sk-oa-77" not in out + err
    assert doc is not None and doc["panels"][0]["status"] == "completed"
    (request,) = posts(server)
    assert request.path == "/via-env/v1/chat/completions"
    assert request.body["model"] == "gpt-x"
    assert request.headers["authorization"] == "Bearer sk-oa-77"


async def test_a_targets_openai_table_replaces_the_built_in_and_its_variable(
        server: Recorder, config: Path) -> None:
    write(config, server, """
[targets.openai]
base_url = "{url}/from-table"
api_key_env = "ANOMAN_TEST_OA_KEY"
""")
    code, doc, _, err = await compare(
        "-m", "openai:gpt-x", "--no-history",
        env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "ANOMAN_TEST_OA_KEY": "sk-t-1"})
    assert code == 0, err
    assert doc is not None and doc["panels"][0]["status"] == "completed"
    (request,) = posts(server)
    assert request.path == "/from-table/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-t-1"


# -- where each model goes, said before anything is sent -----------------------

@pytest.mark.parametrize(("spec", "default", "refused"), [
    ("opnai:gpt-4o", "local", True),        # a typo of a target
    ("opnai:gpt-4o", "gateway", True),
    ("anthrpoic:claude-x", "openai", True),  # two letters swapped
    ("foo:bar", "local", True),             # no local model has a colon
    ("llama3.2:1b", "ollama", False),       # an ollama tag, not a target
    ("llama3:8b", "ollama", False),
    ("ft:gpt-4o-mini:org:x", "openai", False),
    ("openai:gpt-4o", "local", False),
    ("gpt-4o", "local", False),
])
def test_a_prefix_that_reads_as_a_mistyped_target_is_refused(
        spec: str, default: str, refused: bool) -> None:
    from anoman_tui.targets import unknown_target

    targets = {**BUILT_IN, "gateway": BUILT_IN["anoman"]}
    problem = unknown_target(spec, targets, default)
    assert (problem is not None) == refused, problem
    if problem:
        prefix = spec.partition(":")[0]
        assert problem.startswith(f'no target named "{prefix}" (targets: local, anoman, '
                                  "openai, anthropic, openrouter, ollama"), problem


@pytest.mark.parametrize("command", ["compare", "tui"])
@pytest.mark.parametrize(("config_text", "args"), [
    ("", ["-m", "opnai:gpt-4o"]),
    ('[[panes]]\nmodel = "opnai:gpt-4o"\n', []),
    ('base_url = "http://127.0.0.1:9"\n', ["-m", "opnai:gpt-4o"]),
])
async def test_a_mistyped_target_is_one_line_and_nothing_is_started(
        command: str, config_text: str, args: list[str], config: Path, server: Recorder
        ) -> None:
    config.write_text(config_text, encoding="utf-8")
    argv = ["compare", "hi", *args] if command == "compare" else args
    code, out, err = await cli(*argv, env={"OPENAI_BASE_URL": server.base_url,
                                           "OPENAI_API_KEY": "sk-oa-1"})
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert 'no target named "opnai" (targets: local, anoman, openai, anthropic' in err, err
    assert 'did you mean "openai:gpt-4o"?' in err
    assert server.requests == []
    assert not (config.parent / "data" / "anoman-tui" / "usage.sqlite3").exists()


async def test_a_model_on_another_target_is_announced_there_and_no_local_gateway_starts(
        server: Recorder, config: Path) -> None:
    code, out, err = await cli(
        "compare", "ping", "-m", "openai:gpt-x", "--no-history",
        env={"OPENAI_BASE_URL": f"{server.base_url}/v1", "OPENAI_API_KEY": "sk-oa-1"})
    assert code == 0, err
    assert out.splitlines()[0] == (
        f"Comparing 1 model via openai ({server.base_url}) (openai format)"), out
    assert "local gateway" not in out + err
    # The local gateway keeps its ledger under the data directory from its first start.
    assert not (config.parent / "data" / "anoman-tui" / "usage.sqlite3").exists()
    assert [r.path for r in posts(server)] == ["/v1/chat/completions"]


async def test_models_on_two_targets_are_each_announced(
        server: Recorder, config: Path) -> None:
    code, out, err = await cli(
        "compare", "ping", "-m", "openai:gpt-x", "-m", "anoman-lite", "--no-history",
        env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-oa-1"})
    assert code == 0, err
    heading = out.splitlines()[0]
    assert heading.startswith(f"Comparing 2 models via openai ({server.base_url}), local "
                              "gateway (127.0.0.1:"), heading


async def test_a_target_whose_key_variable_is_unset_is_named_before_sending(
        server: Recorder, config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = await cli("compare", "ping", "-m", "openai:gpt-x", "-m", "anoman-lite",
                               env={"OPENAI_BASE_URL": server.base_url})
    assert code == 2 and out == ""
    assert err == ("anoman-tui compare: target openai takes its key from OPENAI_API_KEY, "
                   "which is not set (for gpt-x): set it, or choose another target; nothing "
                   "was sent\n")
    assert server.requests == []
    assert not (config.parent / "data" / "anoman-tui" / "usage.sqlite3").exists()
