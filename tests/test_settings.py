"""Every setting reaches the wire, for the compare screen and for `anoman-tui compare`.

Both commands load settings through one path (flags, then `ANOMAN_*` variables,
then the config file). A loopback server records what each request carried:
path (endpoint and base URL), key, model, system prompt, temperature and
max_tokens; the idle timeout shows in the "stalled" failure a silent server
causes. `compare` runs as a user runs it (`anoman_tui.cli.main`, in this process), the
compare screen with Pilot, built from the same command line `anoman-tui` parses.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.cli import build_parser, settings_from_args
from anoman_tui.ui.app import AnomanApp
from tests.helpers import RecordingGateway, cli
from tests.pilot import settled, submit, until
from tests.replay_server import RecordedRequest

PROMPT = "ping"
ENDPOINT_SUFFIXES = {
    "/anthropic/v1/messages": "anthropic",
    "/anoman/v1/playground/run": "playground",
    "/v1/chat/completions": "openai",
}


Recorded = RecordedRequest


@pytest.fixture
async def gateway() -> Any:
    server = RecordingGateway()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture(autouse=True)
def isolated(clean_env: Path) -> Path:
    """The config file (not created); only what a test sets: no developer config, data
    directory or `ANOMAN_*` variable (`clean_env`, tests/conftest.py)."""
    return clean_env


# -- the settings, each with a value per source and how to see it on the wire --------

Source = str  # "file" | "env" | "flag"


@dataclass(frozen=True)
class Setting:
    key: str
    values: dict[Source, Any]
    flag: str
    seen: Callable[[Recorded], Any] = field(compare=False)


def _suffix(path: str) -> str:
    return next(s for s in ENDPOINT_SUFFIXES if path.endswith(s))


def _system(r: Recorded) -> Any:
    if "system" in r.body:
        return r.body["system"]
    first = r.body["messages"][0]
    return first["content"] if first["role"] == "system" else None


def _key(r: Recorded) -> str:
    auth = r.headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth else r.headers.get("x-api-key", "")


SETTINGS = [
    Setting("system_prompt",
            {"file": "Answer as a pirate.", "env": "Answer in French.", "flag": "Be terse."},
            "--system", _system),
    # The flag's 0 is falsy and the file's value differs: an explicit 0 must still win.
    Setting("temperature", {"file": 0.25, "env": 0.5, "flag": 0.0}, "--temperature",
            lambda r: r.body.get("temperature")),
    Setting("max_tokens", {"file": 111, "env": 222, "flag": 333}, "--max-tokens",
            lambda r: r.body.get("max_tokens")),
    Setting("models", {"file": ["f-1", "f-2", "f-3"], "env": ["e-1", "e-2", "e-3"],
                       "flag": ["g-1", "g-2", "g-3"]}, "--model", lambda r: r.body["model"]),
    # The flag's value is the default: given explicitly, it still wins over the others.
    Setting("endpoint", {"file": "anthropic", "env": "playground", "flag": "openai"},
            "--endpoint", lambda r: ENDPOINT_SUFFIXES[_suffix(r.path)]),
    # Values are path prefixes under the recording server's root.
    Setting("base_url", {"file": "/from-file", "env": "/from-env", "flag": "/from-flag"},
            "--base-url", lambda r: r.path.removesuffix(_suffix(r.path))),
    Setting("api_key", {"file": "anm-sk-file-1111aaaa", "env": "anm-sk-env-2222bbbb",
                        "flag": "anm-sk-flag-3333cccc"}, "--api-key", _key),
    # Seen in the failure a silent server causes (see `Run.values`).
    Setting("idle_timeout", {"file": 0.4, "env": 0.6, "flag": 0.8}, "--idle-timeout",
            lambda r: None),
]
BY_KEY = {s.key: s for s in SETTINGS}


def _raw(setting: Setting, source: Source, gateway: RecordingGateway) -> Any:
    value = setting.values[source]
    return gateway.base_url + value if setting.key == "base_url" else value


def file_text(settings: list[Setting], gateway: RecordingGateway, source: Source = "file"
              ) -> str:
    lines = [f"{s.key} = {json.dumps(_raw(s, source, gateway))}" for s in settings]
    if "base_url" not in {s.key for s in settings}:
        lines.insert(0, f"base_url = {json.dumps(gateway.base_url)}")
    return "\n".join(lines) + "\n"


def env_vars(settings: list[Setting], gateway: RecordingGateway) -> dict[str, str]:
    out = {}
    for s in settings:
        value = _raw(s, "env", gateway)
        out[f"ANOMAN_{s.key.upper()}"] = ",".join(value) if isinstance(value, list) else str(value)
    return out


def flags(settings: list[Setting], gateway: RecordingGateway) -> list[str]:
    out: list[str] = []
    for s in settings:
        value = _raw(s, "flag", gateway)
        for item in value if isinstance(value, list) else [value]:
            out += [s.flag, str(item)]
    return out


@dataclass
class Run:
    requests: list[Recorded]
    failures: list[str | None]

    def values(self, setting: Setting) -> list[Any]:
        """What each request carried for `setting` (sorted: panes run concurrently)."""
        if setting.key == "idle_timeout":
            found = [re.search(r"no bytes for ([\d.]+) s", f or "") for f in self.failures]
            return sorted(float(m[1]) if m else -1.0 for m in found)
        return sorted(setting.seen(r) for r in self.requests)


def expected(setting: Setting, source: Source, gateway: RecordingGateway) -> list[Any]:
    value = setting.values[source]
    return sorted(value) if setting.key == "models" else [value] * 3


# -- running each command ----------------------------------------------------------


async def run_compare(args: list[str], env: dict[str, str] | None = None) -> Run:
    """`anoman-tui compare --json` as a user runs it; the environment is the test's."""
    _, out, err = await cli("compare", PROMPT, "--json", *args, env=env)
    assert "Traceback" not in err, err
    doc = json.loads(out)
    assert set(doc) == {"id", "prompt", "endpoint", "panels"}
    return Run(
        requests=[],
        failures=[p["failure"]["message"] if p["failure"] else None for p in doc["panels"]],
    )


async def run_tui(args: list[str], env: dict[str, str] | None,
                  monkeypatch: pytest.MonkeyPatch) -> Run:
    """The compare screen, from the command line `anoman-tui` parses, sending one prompt."""
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    settings = settings_from_args(build_parser(args).parse_args(args), "anoman-tui")
    assert settings is not None
    app = AnomanApp(settings)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.compare.base_url is not None)
        # The prompt put in the box, not typed: pressing each key waits for the app to go
        # idle (40-90 ms a key), and what is checked is the request it sends.
        await submit(pilot, PROMPT)
        await until(pilot, lambda: settled(app) and all(p.last_result for p in app.panes))
        failures = [p.last_result.failure.message if p.last_result and p.last_result.failure
                    else None for p in app.panes]
    return Run(requests=[], failures=failures)


async def run(command: str, gateway: RecordingGateway, monkeypatch: pytest.MonkeyPatch,
              args: list[str] | None = None, env: dict[str, str] | None = None) -> Run:
    gateway.requests.clear()
    if command == "compare":
        result = await run_compare(args or [], env)
    else:
        result = await run_tui(args or [], env, monkeypatch)
    result.requests = gateway.streams
    assert len(result.requests) == 3
    return result


COMMANDS = ["compare", "tui"]


# -- each setting from the config file, for each command ---------------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("setting", SETTINGS, ids=[s.key for s in SETTINGS])
async def test_each_setting_in_the_config_file_reaches_the_wire(
    command: str, setting: Setting, gateway: RecordingGateway, isolated: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolated.write_text(file_text([setting], gateway))
    gateway.stall = setting.key == "idle_timeout"
    result = await run(command, gateway, monkeypatch)
    assert result.values(setting) == expected(setting, "file", gateway)
    if setting.key != "idle_timeout":
        assert result.failures == [None] * 3


# -- precedence: flags, then ANOMAN_* variables, then the file ---------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("layers", "winner"),
    [(("file",), "file"), (("file", "env"), "env"), (("file", "env", "flag"), "flag"),
     (("file", "flag"), "flag"), (("env",), "env")],
    ids=["file", "env-over-file", "flag-over-env", "flag-over-file", "env-alone"],
)
async def test_flag_beats_env_beats_file_for_every_setting(
    command: str, layers: tuple[str, ...], winner: str, gateway: RecordingGateway,
    isolated: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    if "file" in layers:
        isolated.write_text(file_text(SETTINGS, gateway))
    env = env_vars(SETTINGS, gateway) if "env" in layers else None
    args = flags(SETTINGS, gateway) if "flag" in layers else []
    gateway.stall = True  # so the idle timeout shows; every request is recorded first
    result = await run(command, gateway, monkeypatch, args=args, env=env)
    for setting in SETTINGS:
        assert result.values(setting) == expected(setting, winner, gateway), setting.key


async def test_compare_system_flag_overrides_system_prompt(
    gateway: RecordingGateway, isolated: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolated.write_text(file_text([BY_KEY["system_prompt"]], gateway))
    result = await run("compare", gateway, monkeypatch, args=["--system", "Flag wins."])
    assert result.values(BY_KEY["system_prompt"]) == ["Flag wins."] * 3


async def test_tui_shows_the_configured_system_prompt_and_parameters(
    gateway: RecordingGateway, isolated: Path,
) -> None:
    from textual.widgets import Input

    isolated.write_text(file_text(
        [BY_KEY["system_prompt"], BY_KEY["temperature"], BY_KEY["max_tokens"]], gateway))
    settings = settings_from_args(build_parser([]).parse_args([]), "anoman-tui")
    assert settings is not None
    app = AnomanApp(settings, connect=False)
    async with app.run_test(size=(160, 45)):
        # In the box, so the user sees what is sent and can change or clear it.
        assert app.compare.query_one("#system", Input).value == "Answer as a pirate."
        assert all(p.params.temperature == 0.25 and p.params.max_tokens == 111
                   for p in app.panes)


# -- bad values: one line naming the source and key, exit 2, for every command ------


BAD = [
    # (config file text, env, flags, what the line must say besides the source)
    ('temperature = "hot"\n', {}, [], ["temperature", "valid number", '"hot"']),
    ("max_tokens = -3\n", {}, [], ["max_tokens", "must be a whole number from 1 to 1000000",
                                   "(got -3)"]),
    ("temperature = -0.5\n", {}, [], ["temperature", "must be a number from 0 to 2"]),
    ('endpoint = "grpc"\n', {}, [], ["endpoint: must be one of openai, anthropic, playground",
                                    '(got "grpc")']),
    ('modles = ["a"]\n', {}, [], ["unknown key 'modles' (did you mean 'models'?)",
                                 "accepted keys: base_url, api_key, models, endpoint"]),
    ('base_url = "api.anoman.io"\n', {}, [], ["base_url", "http:// or https://"]),
    ("idle_timeout = 0\n", {}, [], ["idle_timeout", "greater than 0"]),
    ("max_tokens = 1.5\n", {}, [], ["max_tokens", "integer"]),
    ("temperature = \n", {}, [], ["not valid TOML"]),
    ("", {"ANOMAN_TEMPERATURE": "hot"}, [], ["temperature", "valid number"]),
    ("", {"ANOMAN_KEYMAP": "{not json"}, [], ["not valid JSON"]),
    # The flags' own range is argparse's line (tests/cli/test_parameter_checks.py).
    ('temperature = 0.5\n', {"ANOMAN_TEMPERATURE": "inf"}, [],
     ["temperature: must be a number from 0 to 2", '(got "inf")']),
]


def _where(env: dict[str, str], args: list[str], config: Path) -> str:
    if args:
        return f"flag {args[0]}"
    if env:
        return f"environment variable {next(iter(env))}"
    return f"config file {config}"


# `usage` loads the same settings, so a bad file stops it too; it takes no sampling flags.
BAD_RUNS = [(command, *case) for command in ("compare", "tui", "usage") for case in BAD
            if not (command == "usage" and case[2])]


@pytest.mark.parametrize(("command", "text", "env", "args", "says"), BAD_RUNS,
                         ids=[f"{run[0]}-{i % len(BAD)}" for i, run in enumerate(BAD_RUNS)])
async def test_a_bad_value_is_one_line_and_exit_two(
    command: str, text: str, env: dict[str, str], args: list[str], says: list[str],
    isolated: Path,
) -> None:
    isolated.write_text(text)
    argv = {"compare": ["compare", "x", *args], "tui": args, "usage": ["usage"]}[command]
    code, out, err = await cli(*argv, env=env)
    prog = {"compare": "anoman-tui compare", "tui": "anoman-tui", "usage": "anoman-tui usage"}
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{prog[command]}: {_where(env, args, isolated)}: "), err
    for part in says:
        assert part in err, err


# Only the compare screen uses the theme and the keymap: only it refuses bad ones.
TUI_BAD = [
    ('theme = "anoman-drak"\n', {}, [],
     ["unknown theme 'anoman-drak' (did you mean 'anoman-dark'?)",
      "available: anoman-dark, anoman-high-contrast, anoman-light, or one of Textual's: "]),
    ("", {}, ["--theme", "nope"], ["unknown theme 'nope'", "anoman-light"]),
    ('[keymap]\nabort_pane_1 = "f5"\n', {}, [],
     ["keymap: f5 is bound to both usage and abort_pane_1"]),
    ("", {"ANOMAN_KEYMAP": '{"retry": "ctrl+n"}'}, [],
     ["keymap: ctrl+n is bound to both retry and new_comparison"]),
    ('[keymap]\nsend = "ctrl+q"\n', {}, [], ["keymap: ctrl+q is bound to both quit and send"]),
]


@pytest.mark.parametrize(("text", "env", "args", "says"), TUI_BAD)
async def test_a_bad_theme_or_keymap_is_one_line_and_exit_two(
    text: str, env: dict[str, str], args: list[str], says: list[str], isolated: Path,
) -> None:
    isolated.write_text(text)
    code, out, err = await cli(*args, env=env)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"anoman-tui: {_where(env, args, isolated)}: "), err
    for part in says:
        assert part in err, err


def test_user_themes_and_textual_names_are_valid_themes(tmp_path: Path) -> None:
    from anoman_tui.locations import theme_dirs
    from anoman_tui.ui.themes import unknown_theme

    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#336699"\n')
    dirs = [*theme_dirs()[:1], tmp_path]
    assert unknown_theme("mine", dirs) is None
    assert unknown_theme("anoman-dark", dirs) is None
    assert unknown_theme("nord", dirs) is None
    problem = unknown_theme("yours", dirs)
    assert problem is not None and "mine" in problem and "anoman-dark" in problem


def test_the_readme_keymap_example_names_every_binding_once() -> None:
    import tomllib

    from anoman_tui.ui.app import AnomanApp, keymap_conflict
    from anoman_tui.ui.screens.compare import CompareScreen
    from anoman_tui.ui.widgets.prompt_box import PromptBox

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[keymap\]\n.*?)```", readme, re.DOTALL)
    assert block is not None
    keymap = tomllib.loads(block[1])["keymap"]
    assert keymap_conflict(keymap) is None
    ids = {b.id for holder in (AnomanApp, CompareScreen, PromptBox) for b in holder.BINDINGS
           if b.id is not None}
    assert set(keymap) <= ids
    # The example shows the defaults, so copying it changes nothing.
    defaults = {b.id: b.key for holder in (AnomanApp, CompareScreen, PromptBox)
                for b in holder.BINDINGS if b.id is not None}
    assert keymap == {i: defaults[i] for i in keymap}


async def test_unreadable_config_file_is_one_line(isolated: Path) -> None:
    isolated.mkdir()  # a directory where the file should be
    code, _, err = await cli("compare", "x")
    assert code == 2
    assert err == f"anoman-tui compare: config file {isolated}: cannot read it: Is a directory\n"


async def test_a_malformed_key_is_never_echoed(isolated: Path) -> None:
    isolated.write_text('api_key = ["anm-sk-secret-in-a-list-9999"]\n')
    code, _, err = await cli("compare", "x")
    assert code == 2 and "api_key" in err and "valid string" in err
    assert "anm-sk-secret" not in err


async def test_models_variable_may_be_comma_separated_or_json(monkeypatch) -> None:
    from anoman_tui.config import load_settings

    monkeypatch.setenv("ANOMAN_MODELS", "a, b,c")
    assert load_settings().models == ["a", "b", "c"]
    monkeypatch.setenv("ANOMAN_MODELS", '["x", "y"]')
    assert load_settings().models == ["x", "y"]


async def test_blank_base_url_means_the_local_gateway(monkeypatch) -> None:
    from anoman_tui.config import load_settings

    monkeypatch.setenv("ANOMAN_BASE_URL", "")
    monkeypatch.setenv("ANOMAN_API_KEY", " ")
    settings = load_settings()
    assert settings.base_url is None and settings.api_key is None


# -- --version and a quick --help ------------------------------------------------


async def test_version_flag_and_attribute() -> None:
    from importlib.metadata import version

    import anoman_tui

    assert anoman_tui.__version__ == version("anoman-tui")
    code, out, err = await cli("--version")
    assert code == 0, err
    assert out == f"anoman-tui {version('anoman-tui')}\n"


@pytest.mark.parametrize("flag", ["--help", "--version"])
async def test_help_and_version_import_nothing_heavy(flag: str) -> None:
    probe = (
        "import sys\n"
        "from anoman_tui.cli import main\n"
        "try:\n"
        f"    main([{flag!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('textual', 'rich', 'pydantic', 'httpx', 'anoman_tui.config')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", probe, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert err.decode().strip() == "[]"


def test_history_url_comes_from_flag_env_or_file_and_never_shows_its_password(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from anoman_tui.config import ConfigError, configured_history_url, load_settings

    secret = "team-pw-9f3e"
    url = f"postgresql://ann:{secret}@db.example:5433/team"
    clean_env.write_text(f'history_url = "{url}/file"\n')
    assert configured_history_url() == url + "/file"
    monkeypatch.setenv("ANOMAN_HISTORY_URL", url + "/env")
    assert configured_history_url() == url + "/env"
    assert configured_history_url(url + "/flag") == url + "/flag"
    settings = load_settings(history_url=url + "/flag")
    assert settings.history_url is not None
    assert settings.history_url.get_secret_value() == url + "/flag"
    assert secret not in repr(settings) and secret not in str(settings)
    # Empty: the SQLite file, as unset.
    monkeypatch.setenv("ANOMAN_HISTORY_URL", "")
    assert configured_history_url() is None and load_settings().history_url is None
    monkeypatch.setenv("ANOMAN_HISTORY_URL", f"https://ann:{secret}@db.example/team")
    for attempt in (configured_history_url, load_settings):
        with pytest.raises(ConfigError) as refused:
            attempt()
        assert secret not in str(refused.value) and "\n" not in str(refused.value)
        assert "environment variable ANOMAN_HISTORY_URL" in str(refused.value)
