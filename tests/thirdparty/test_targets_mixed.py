"""One comparison, three servers: the local gateway, a real LiteLLM proxy, and another
OpenAI-compatible server (a second gateway standing in for Ollama), configured in one
file as `[targets.NAME]` and picked per pane with `-m TARGET:MODEL`, in `compare` and
in the app."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from anoman_tui.config import load_settings
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore, default_path
from anoman_tui.ui.app import AnomanApp
from tests.helpers import LocalGateways
from tests.pilot import settled, submit, until
from tests.thirdparty.helpers import OPENAI_MOCK_TEXT, LiteLLMProxy

# One proxy for the session: both files run on the same worker.
pytestmark = [pytest.mark.thirdparty, pytest.mark.xdist_group("litellm"),
              pytest.mark.usefixtures("clean_env")]

KEY_VAR = "ANOMAN_TEST_LITELLM_KEY"


@pytest.fixture(scope="module")
def other_server(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """An OpenAI-compatible server of its own (the local gateway's code on another port),
    reached as a plain `openai-compatible` target: no Anoman block is read from it."""
    return make_module_gateway(time_scale=0.05, cache_enabled=False)


def write_config(path: Path, proxy: LiteLLMProxy, other: EmbeddedGateway) -> None:
    path.write_text(f"""
[targets.litellm]
kind = "openai-compatible"
base_url = "{proxy.base_url}"
api_key_env = "{KEY_VAR}"
messages_path = "/v1/messages"

[targets.box]
kind = "openai-compatible"
base_url = "{other.base_url}"
api_key_env = "ANOMAN_TEST_BOX_KEY"
""", encoding="utf-8")


def environment(tmp_path: Path, proxy: LiteLLMProxy, other: EmbeddedGateway) -> dict[str, str]:
    env = dict(os.environ)  # clean_env: no ANOMAN_* of ours
    config = tmp_path / "config.toml"
    write_config(config, proxy, other)
    env.update({"ANOMAN_CONFIG": str(config), "XDG_DATA_HOME": str(tmp_path / "data"),
                KEY_VAR: proxy.master_key, "ANOMAN_TEST_BOX_KEY": other.api_key})
    return env


async def test_compare_with_a_pane_on_each_target(
        litellm_proxy: LiteLLMProxy, other_server: EmbeddedGateway, tmp_path: Path) -> None:
    env = environment(tmp_path, litellm_proxy, other_server)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", "compare", "Say hello in one sentence.",
        "-m", "anoman-lite", "-m", f"litellm:{litellm_proxy.openai_model}",
        "-m", "box:claude-sonnet-4-6", "--json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, err.decode()
    doc = json.loads(out)
    local, litellm, box = doc["panels"]
    assert box["text"] and box["usage"]["completion_tokens"] > 0
    assert [p["target"] for p in doc["panels"]] == ["local", "litellm", "box"]
    assert [p["status"] for p in doc["panels"]] == ["completed"] * 3
    assert litellm["text"] == OPENAI_MOCK_TEXT
    assert local["anoman"] is not None  # the local gateway's own block
    assert litellm["anoman"] is None  # LiteLLM sends none: its cost is its own
    assert float(litellm["provider_cost_usd"]) > 0  # LiteLLM's usage.cost
    # The history keeps where each pane streamed from (never a key).
    with HistoryStore.open(Path(env["XDG_DATA_HOME"]) / "anoman-tui" / "history.sqlite3") as h:
        record = h.recent(1)[0]
    assert [p.target for p in record.panes] == ["local", "litellm", "box"]
    assert record.panes[1].base_url == litellm_proxy.base_url
    assert record.panes[2].base_url == other_server.base_url
    assert litellm_proxy.master_key not in out.decode() + err.decode()

    # Text output says where each went.
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", "compare", "Say hello in one sentence.",
        "-m", "anoman-lite", "-m", f"litellm:{litellm_proxy.openai_model}", "--no-history",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, err.decode()
    assert f"litellm ({litellm_proxy.base_url})" in out.decode()
    assert "local gateway" in out.decode()


async def test_the_anthropic_format_goes_to_the_targets_own_path(
        litellm_proxy: LiteLLMProxy, other_server: EmbeddedGateway, tmp_path: Path) -> None:
    env = environment(tmp_path, litellm_proxy, other_server)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", "compare", "Say hello in one sentence.",
        "-m", f"litellm:{litellm_proxy.messages_model}", "--endpoint", "anthropic", "--json",
        "--no-history",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, err.decode()
    (pane,) = json.loads(out)["panels"]
    assert pane["status"] == "completed" and pane["text"]


async def test_the_app_streams_each_pane_from_its_target(
        litellm_proxy: LiteLLMProxy, other_server: EmbeddedGateway, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in environment(tmp_path, litellm_proxy, other_server).items():
        monkeypatch.setenv(name, value)
    settings = load_settings(models=["anoman-lite", f"litellm:{litellm_proxy.openai_model}",
                                     "box:claude-sonnet-4-6"], theme="anoman-dark")
    app = AnomanApp(settings)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: app.compare.base_url is not None, timeout=60)
        await until(pilot, lambda: app.history is not None)
        headers = [str(p.query_one(".pane-header").render()) for p in app.compare.query(
            "ComparePane")]
        assert "@local" in headers[0] and "@litellm" in headers[1] and "@box" in headers[2]
        status = str(app.compare.query_one("#status-line").render())
        assert "targets:" in status and f"litellm ({litellm_proxy.base_url})" in status
        await submit(pilot, "Say hello in one sentence.")
        await until(pilot, lambda: settled(app), timeout=60)
        assert [p.status for p in app.panes] == ["done"] * 3
        assert app.compare.pane(2).answer.text == OPENAI_MOCK_TEXT
        footer = str(app.compare.pane(2).query_one(".pane-footer").render())
        assert "(provider)" in footer  # LiteLLM's own cost
        await until(pilot, lambda: default_path().exists())
