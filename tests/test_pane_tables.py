"""`[[panes]]` in the config file: each pane its own target, model, endpoint format and
parameters, reaching the wire in `compare` and on the screen; `models` still wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.config import ConfigError, load_settings
from anoman_tui.ui.app import AnomanApp
from tests.frames import ANTHROPIC_EXAMPLE_STREAM
from tests.helpers import RecordingGateway, cli
from tests.pilot import settled, submit, until
from tests.replay_server import RecordedRequest, Script


class Gateway(RecordingGateway):
    """Also answers the Anthropic format at another server's `/v1/messages`."""

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method == "POST" and request.path.endswith("/v1/messages"):
            return Script(body=list(ANTHROPIC_EXAMPLE_STREAM))
        return super().script_for(request)


@pytest.fixture(autouse=True)
def isolated(clean_env: Path) -> Path:
    """The config file (not created); only what a test sets (`clean_env`, tests/conftest.py)."""
    return clean_env


@pytest.fixture
async def server() -> Any:
    gateway = Gateway()
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def config(path: Path, server: RecordingGateway, extra: str = "") -> None:
    path.write_text(f"""
base_url = "{server.base_url}"
temperature = 0.5
{extra}
[targets.second]
kind = "anthropic"
base_url = "{server.base_url}/second"
api_key_env = "SECOND_KEY"

[[panes]]
model = "m-one"
endpoint = "playground"
max_tokens = 64

[[panes]]
model = "second:m-two"
temperature = 0.1

[[panes]]
model = "m-three"
""", encoding="utf-8")


def test_each_pane_table_resolves_its_target_format_and_parameters(
        isolated: Path, server: RecordingGateway) -> None:
    config(isolated, server)
    specs = load_settings().pane_specs()
    assert [(s.target.name, s.model, s.endpoint, s.temperature, s.max_tokens)
            for s in specs] == [
        ("gateway", "m-one", "playground", 0.5, 64),
        # An anthropic target serves the anthropic format only.
        ("second", "m-two", "anthropic", 0.1, None),
        ("gateway", "m-three", "openai", 0.5, None),
    ]
    # `models`, from any source, wins over the tables.
    assert [s.model for s in load_settings(models=["x", "y"]).pane_specs()] == ["x", "y"]


def test_a_bad_pane_table_is_one_line(isolated: Path, server: RecordingGateway) -> None:
    config(isolated, server)
    isolated.write_text(isolated.read_text() + '\n[[panes]]\nmodel = "m"\ncolour = "red"\n')
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert "panes.3.colour" in str(raised.value) and "\n" not in str(raised.value)
    isolated.write_text(isolated.read_text().replace('colour = "red"', "temperature = -1"))
    with pytest.raises(ConfigError, match=r"panes\.3\.temperature"):
        load_settings()


async def test_compare_sends_each_pane_as_its_table_says(
        isolated: Path, server: RecordingGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    config(isolated, server)
    monkeypatch.setenv("SECOND_KEY", "sk-second-key-7777")
    code, out, err = await cli("compare", "hello", "--json", "--no-history")
    assert code == 0, err
    doc = json.loads(out)
    assert [p["endpoint"] for p in doc["panels"]] == ["playground", "anthropic", "openai"]
    by_model = {r.body["model"]: r for r in server.streams}
    one, two, three = by_model["m-one"], by_model["m-two"], by_model["m-three"]
    assert one.path.endswith("/anoman/v1/playground/run")
    assert (one.body["max_tokens"], one.body["temperature"]) == (64, 0.5)
    assert two.path == "/second/v1/messages"  # the anthropic target's own path
    assert two.headers["x-api-key"] == "sk-second-key-7777"
    assert two.body["temperature"] == 0.1
    assert three.path.endswith("/v1/chat/completions") and "max_tokens" not in three.body


async def test_the_screen_takes_each_pane_from_its_table(
        isolated: Path, server: RecordingGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    config(isolated, server)
    monkeypatch.setenv("SECOND_KEY", "sk-second-key-7777")
    app = AnomanApp(load_settings(theme="anoman-dark"))
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.compare.base_url is not None)
        assert [(p.model, p.target.name, p.endpoint, p.params.temperature,
                 p.params.max_tokens) for p in app.panes] == [
            ("m-one", "gateway", "playground", 0.5, 64),
            ("m-two", "second", "anthropic", 0.1, None),
            ("m-three", "gateway", "openai", 0.5, None),
        ]
        await submit(pilot, "hello")
        await until(pilot, lambda: settled(app))
        paths = sorted(r.path for r in server.streams)
        assert "/second/v1/messages" in paths
        assert any(p.endswith("/anoman/v1/playground/run") for p in paths)
        assert json.dumps([r.body for r in server.streams])  # every body was JSON
