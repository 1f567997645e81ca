"""Each pane streams from its own target: the local gateway, a second gateway reached as a
plain OpenAI-compatible server (`[targets.second]`), and a recording loopback server
(`[targets.third]`, whose model list differs from the gateways').

Chosen with `TARGET:MODEL` or the palette ("Target for pane N", then that target's
models); shown in each pane's header and the status line; kept in the history and
brought back by "continue".
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.config import Settings
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import ComparisonRecord, HistoryStore, default_path
from anoman_tui.targets import TargetConfig
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.widgets.deck import LiveSource
from anoman_tui.ui.widgets.pane import ComparePane
from tests.helpers import LISTED, LocalGateways, RecordingGateway
from tests.pilot import ready, settled, submit, until
from tests.ui.deck_host import DeckHost
from tests.ui.screen_text import screen_lines
from tests.ui.scripted import ScriptedStream, completed, text_events

SIZES = [(80, 24), (200, 50)]
SECOND_KEY_VAR = "ANOMAN_TEST_SECOND_KEY"
THIRD_KEY_VAR = "ANOMAN_TEST_THIRD_KEY"


@pytest.fixture(scope="module")
def second(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """Another server of its own (the gateway's code on another port, with its own key
    and ledger): no cache, so every request streams and is metered there."""
    return make_module_gateway(time_scale=0.05, cache_enabled=False)


@pytest.fixture
async def third() -> Any:
    server = RecordingGateway()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def targets_file(isolated_config: Path, second: EmbeddedGateway, third: RecordingGateway,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(SECOND_KEY_VAR, second.api_key)
    monkeypatch.setenv(THIRD_KEY_VAR, "sk-third-7777")
    isolated_config.write_text(f"""
[targets.second]
kind = "openai-compatible"
base_url = "{second.base_url}"
api_key_env = "{SECOND_KEY_VAR}"

[targets.third]
kind = "openai-compatible"
base_url = "{third.base_url}"
api_key_env = "{THIRD_KEY_VAR}"

[targets.claude]
kind = "anthropic"
base_url = "{third.base_url}"

[targets.dead]
kind = "openai-compatible"
base_url = "http://127.0.0.1:{closed_port()}"
""", encoding="utf-8")
    return isolated_config


def rows(gateway: EmbeddedGateway) -> list[dict[str, Any]]:
    return gateway.state.ledger.recent(limit=10_000)


def headers(app: AnomanApp) -> list[str]:
    return [str(p.query_one(".pane-header").render()) for p in app.compare.query(ComparePane)]


def status_line(app: AnomanApp) -> str:
    return str(app.compare.query_one("#status-line").render())


def notes(app: AnomanApp) -> list[Any]:
    return list(app._notifications)


async def choose(pilot: Pilot, option_id: str, *, after: object = None) -> list[str]:
    """In the next ChoiceScreen (not `after`), pick `option_id`; the ids it offered."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ChoiceScreen) and app.screen is not after
                and bool(app.screen.query(OptionList)))
    screen = app.screen
    options = screen.query_one(OptionList)
    offered = [str(options.get_option_at_index(i).id) for i in range(options.option_count)]
    options.highlighted = offered.index(option_id)
    await pilot.press("enter")
    await until(pilot, lambda: app.screen is not screen)
    return offered


# -- TARGET:MODEL per pane ----------------------------------------------------------


async def test_each_pane_streams_from_its_own_target(
        make_app: Callable[..., AnomanApp], ui_gateway: EmbeddedGateway,
        second: EmbeddedGateway, targets_file: Path) -> None:
    # (How each pane's header shows its target at each size: on a deck alone, below.)
    size = (200, 50)
    app = make_app(["anoman-lite", "second:qwen3-coder", "second:claude-sonnet-4-6"],
                   history=False)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        assert [p.target.name for p in app.panes] == ["local", "second", "second"]
        shown = headers(app)
        assert "@local" in shown[0] and "@second" in shown[1] and "@second" in shown[2]
        await until(pilot, lambda: "second" in app.connector.target_models)
        status = status_line(app)
        assert "targets:" in status and "requests go to:" not in status
        assert "local gateway (" in status and f"second ({second.base_url})" in status

        local_before, second_before = len(rows(ui_gateway)), len(rows(second))
        await submit(pilot, f"Name one prime number ({size[0]} columns, targets)")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in app.panes] == ["done"] * 3
        await until(pilot, lambda: len(rows(second)) == second_before + 2)
        await until(pilot, lambda: len(rows(ui_gateway)) >= local_before + 1)
        assert sorted(r["model"] for r in rows(second)[:2]) == ["claude-sonnet-4-6",
                                                                 "qwen3-coder"]
        assert [r["model"] for r in rows(ui_gateway)[: len(rows(ui_gateway)) - local_before]
                ] == ["anoman-lite"]
        # The second server is not an Anoman gateway to this app: only the OpenAI format.
        assert {r["endpoint"] for r in rows(second)[:2]} == {"/v1/chat/completions"}


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_target_never_pushes_the_state_out_of_a_panes_header(
        size: tuple[int, int]) -> None:
    """On screen, the target's name never pushes the state word out of the header (at 80
    columns one pane shows at a time: F4 brings the next one). The headers are the deck's:
    a deck alone (tests/ui/deck_host.py), each pane's turn scripted."""
    settings = Settings(targets={"second": TargetConfig(kind="openai-compatible",
                                                        base_url="http://127.0.0.1:9/v1")})
    targets = settings.all_targets()
    host = DeckHost(panes=[
        PaneState(index=1, model="anoman-lite", target=targets["local"]),
        PaneState(index=2, model="qwen3-coder", target=targets["second"]),
        PaneState(index=3, model="claude-sonnet-4-6", target=targets["second"])])
    async with host.run_test(size=size) as pilot:
        host.deck.play(f"Name one prime number ({size[0]} columns, targets)", {
            n: LiveSource(ScriptedStream(completed(text_events("Seven is prime.", ttft=0.1,
                                                               rate=100),
                                                   prompt_tokens=5, cost="0", weight=1)))
            for n in (1, 2, 3)})
        await until(pilot, lambda: all(p.status == "done" for p in host.deck.panes))
        for n, target in ((1, "@local"), (2, "@second"), (3, "@second")):
            if n > 1 and size[0] < 100:
                await pilot.press("f4")

            def header_row(n: int = n, target: str = target) -> list[int]:
                return [i for i, line in enumerate(screen_lines(host))
                        if f" {n}  " in line and target in line
                        and re.search(r"\bdone\b", line)]

            # (each tab drawn by its next frame: waited for)
            await until(pilot, lambda: bool(header_row()), 10)
            lines = screen_lines(host)
            text = "\n".join(lines)
            assert all(len(line) <= size[0] for line in lines)
            at = [i for i, line in enumerate(lines) if f" {n}  " in line and target in line]
            assert at, text
            header = next(h for h in re.findall(r"│([^│]*)│", lines[at[0]])
                          if h.startswith(f" {n}  "))
            assert target in header and re.search(r"\bdone\b", header), text


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_one_target_for_every_pane_keeps_one_url_on_the_status_line(
        make_app: Callable[..., AnomanApp], second: EmbeddedGateway, targets_file: Path,
        size: tuple[int, int]) -> None:
    app = make_app(["second:anoman-lite", "second:qwen3-coder", "second:gpt-5-mini"],
                   history=False)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        status = status_line(app)
        # All on `second` while the default is local: it names `second`, not the local one.
        assert "targets:" in status and f"second ({second.base_url})" in status
        assert "local gateway" not in status

    app = make_app(history=False)  # every pane on the default target
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        status = status_line(app)
        assert "requests go to:" in status and "targets:" not in status
        assert all("@local" in h for h in headers(app))


# -- the palette: a pane's target, then that target's models ---------------------------


async def test_target_for_pane_then_that_targets_models(
        make_app: Callable[..., AnomanApp], third: RecordingGateway, targets_file: Path
        ) -> None:
    app = make_app(history=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        before = [(p.target.name, p.model) for p in app.panes]
        app.compare.pick_target(2)
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        picker = app.screen
        offered = await choose(pilot, "third")
        assert {"local", "anoman", "openai", "anthropic", "openrouter", "ollama", "second",
                "third", "claude", "dead"} <= set(offered)
        models = await choose(pilot, "listed-2", after=picker)
        assert models == LISTED  # from the third server's /v1/models, not the gateway's
        listing = [r for r in third.requests if r.method == "GET"]
        assert listing and listing[-1].path == "/v1/models"
        assert listing[-1].headers["authorization"] == "Bearer sk-third-7777"
        assert (app.panes[1].target.name, app.panes[1].model) == ("third", "listed-2")
        assert app.panes[1].endpoint == "openai"
        assert [(p.target.name, p.model) for i, p in enumerate(app.panes) if i != 1] == [
            before[0], before[2]]
        assert "@third" in headers(app)[1] and "listed-2" in headers(app)[1]
        assert "targets:" in status_line(app) and "third (" in status_line(app)

        # A prompt now streams pane 2 from the third server, with its key.
        await submit(pilot, "Name one prime number (picked target)")
        await until(pilot, lambda: settled(app))
        (request,) = third.streams
        assert request.path == "/v1/chat/completions" and request.body["model"] == "listed-2"
        assert request.headers["authorization"] == "Bearer sk-third-7777"
        assert [p.status for p in app.panes] == ["done"] * 3


async def test_an_unreachable_targets_model_list_is_one_error_and_changes_nothing(
        make_app: Callable[..., AnomanApp], targets_file: Path) -> None:
    app = make_app(history=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        before = [(p.target, p.model, p.endpoint) for p in app.panes]
        header_before = headers(app)[0]
        errors_before = len([n for n in notes(app) if n.severity == "error"])
        app.compare.pick_target(1)
        await choose(pilot, "dead")
        await until(pilot, lambda: any("dead" in str(n.message) for n in notes(app)))
        await pilot.pause(0.3)
        errors = [n for n in notes(app) if n.severity == "error"][errors_before:]
        assert len(errors) == 1 and str(errors[0].message).startswith("dead: ")
        assert errors[0].title == "No model list"
        assert not isinstance(app.screen, ChoiceScreen)  # no empty model picker
        assert [(p.target, p.model, p.endpoint) for p in app.panes] == before
        assert headers(app)[0] == header_before and "@local" in header_before


async def test_a_pane_on_an_unreachable_target_costs_that_pane_only(
        make_app: Callable[..., AnomanApp], targets_file: Path) -> None:
    app = make_app(["anoman-lite", "dead:some-model", "qwen3-coder"], history=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: any(str(n.message).startswith("dead: ")
                                       for n in notes(app)))
        await pilot.pause(0.3)
        assert len([n for n in notes(app) if str(n.message).startswith("dead: ")]) == 1
        await submit(pilot, "Name one prime number (one target down)")
        await until(pilot, lambda: settled(app))
        assert [p.status for p in app.panes] == ["done", "failed", "done"]


# -- the endpoint picker offers what the pane's target serves ---------------------------


async def test_the_endpoint_picker_offers_only_the_targets_formats(
        make_app: Callable[..., AnomanApp], targets_file: Path) -> None:
    app = make_app(["anoman-lite", "second:qwen3-coder", "claude:claude-x"], history=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        # A target that does not serve the configured format starts on one it does.
        assert [p.endpoint for p in app.panes] == ["openai", "openai", "anthropic"]
        served = {}
        for n in (1, 2, 3):
            app.compare.pick_endpoint(n)
            await until(pilot, lambda: isinstance(app.screen, ChoiceScreen)
                        and bool(app.screen.query(OptionList)))
            options = app.screen.query_one(OptionList)
            served[n] = [str(options.get_option_at_index(i).id)
                         for i in range(options.option_count)]
            labels = " ".join(str(options.get_option_at_index(i).prompt)
                              for i in range(options.option_count))
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))
            if n == 3:
                assert "/v1/messages" in labels and "/anthropic/" not in labels
        assert served == {1: ["openai", "anthropic", "playground"], 2: ["openai"],
                          3: ["anthropic"]}


# -- the history keeps each pane's target; "continue" streams from it again -------------


def saved() -> list[ComparisonRecord]:
    if not default_path().exists():
        return []
    with HistoryStore.open(default_path()) as store:
        return store.recent(limit=100)


async def test_history_keeps_each_panes_target_and_continue_goes_back_to_it(
        make_app: Callable[..., AnomanApp], ui_gateway: EmbeddedGateway,
        second: EmbeddedGateway, third: RecordingGateway, targets_file: Path) -> None:
    app = make_app(["anoman-lite", "second:qwen3-coder", "third:listed-1"])
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await submit(pilot, "Name one prime number (history of targets)")
        await until(pilot, lambda: settled(app) and len(saved()) == 1)
        record = saved()[0]
        assert [p.target for p in record.panes] == ["local", "second", "third"]
        assert [p.base_url for p in record.panes] == [ui_gateway.base_url, second.base_url,
                                                      third.base_url]
        assert [p.model for p in record.panes] == ["anoman-lite", "qwen3-coder", "listed-1"]

        # The compare screen moves on: every pane back on the local gateway.
        await pilot.press("ctrl+n")
        for state in app.panes:
            state.target = app.connector.targets["local"]
            state.model = "gpt-5-mini"

        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await until(pilot, lambda: history.shown_at is not None)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        reopened = app.screen
        await pilot.pause()
        shown = [str(p.query_one(".pane-header").render()) for p in reopened.query(ComparePane)]
        assert "@local" in shown[0] and "@second" in shown[1] and "@third" in shown[2]
        await pilot.press("c")
        await until(pilot, lambda: app.screen is app.compare)
        assert [(p.target.name, p.model) for p in app.panes] == [
            ("local", "anoman-lite"), ("second", "qwen3-coder"), ("third", "listed-1")]
        assert "@second" in headers(app)[1] and "@third" in headers(app)[2]

        second_before = len(rows(second))
        third.requests.clear()
        await submit(pilot, "and another?")
        await until(pilot, lambda: settled(app) and len(saved()) == 2)
        await until(pilot, lambda: len(rows(second)) == second_before + 1)
        (follow_up,) = third.streams
        assert follow_up.body["model"] == "listed-1"
        assert [m["role"] for m in follow_up.body["messages"]] == ["user", "assistant", "user"]
        assert [p.target for p in saved()[0].panes] == ["local", "second", "third"]
