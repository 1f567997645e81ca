"""Demo scenarios are one-shot unless pinned, say they are simulated; guardrail categories
show. The scenario picker runs on the app; what a scenario does to a pane's requests and
what the pane shows of it, on a deck alone fed by the local gateway
(tests/ui/deck_host.py)."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.widgets.pane import PaneFooter, PaneHeader
from tests.pilot import badge_text, ready, until
from tests.ui.deck_host import DeckHost, GatewayFeed

SIZES = [(80, 24), (200, 50)]


async def pick(pilot: Pilot, app: AnomanApp, pane: int, choice: str) -> None:
    """Choose `choice` in the pane's scenario picker with the keyboard, as a user would."""
    app.compare.pick_scenario(pane)
    await until(pilot, lambda: isinstance(app.screen, ChoiceScreen)
                and bool(app.screen.query(OptionList)))
    await pilot.pause()
    options = app.screen.query_one(OptionList)
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    target = ids.index(choice)
    await pilot.press("home")
    for _ in range(target):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, ChoiceScreen))


def header(app: AnomanApp, n: int) -> str:
    return str(app.compare.pane(n).query_one(PaneHeader).render())


async def test_the_picker_sets_a_panes_scenario_one_shot_or_pinned(make_app) -> None:
    # What a scenario does to the pane's next requests and header: on a deck alone, below.
    app = make_app(models=["anoman-lite"] * 3)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await pick(pilot, app, 1, "interrupt")
        assert app.panes[0].scenario == "interrupt" and not app.panes[0].scenario_pinned
        assert "simulating" in header(app, 1)
        await pick(pilot, app, 2, "rate_limit+pinned")
        assert app.panes[1].scenario == "rate_limit" and app.panes[1].scenario_pinned
        assert "simulating rate limit (pinned)" in header(app, 2)
        # Picking "none" unpins it.
        await pick(pilot, app, 2, "none")
        assert app.panes[1].scenario == "none" and not app.panes[1].scenario_pinned
        assert "simulating" not in header(app, 2)


# -- a deck alone (tests/ui/deck_host.py), fed by the local gateway ------------------------


def deck_header(host: DeckHost, n: int) -> str:
    return str(host.deck.pane(n).query_one(PaneHeader).render())


def deck_settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


async def play(pilot: Pilot, host: DeckHost, feed: GatewayFeed, prompt: str,
               panes: list[int] | None = None) -> None:
    """Send `prompt` from `panes` (default: all) and wait until every pane has ended."""
    feed.play(host.deck, prompt, panes)
    await until(pilot, lambda: deck_settled(host) and all(
        host.deck.panes[n - 1].last_prompt == prompt for n in panes or (1, 2, 3)))


@pytest.mark.parametrize("size", SIZES)
async def test_scenario_is_one_shot_and_retry_succeeds(gateway_feed: GatewayFeed,
                                                       size) -> None:
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=size) as pilot:
        state = host.deck.panes[0]
        state.set_scenario("interrupt")  # as the scenario picker sets it
        host.deck.pane(1).refresh_chrome()
        assert state.scenario == "interrupt" and not state.scenario_pinned
        assert "simulating" in deck_header(host, 1) or size[0] < 200  # narrow: cut
        await play(pilot, host, gateway_feed, f"retry after a simulated fault ({size[0]})")
        pane1 = host.deck.pane(1)
        assert pane1.status == "failed"
        assert state.scenario == "none"  # consumed by the request it applied to
        assert state.applied_scenario == "interrupt"
        if size[0] >= 200:
            assert "simulated interruption" in deck_header(host, 1)
        # The retry (the compare screen's Ctrl+R) sends the failed pane's prompt again.
        await play(pilot, host, gateway_feed, state.last_prompt or "", [1])
        assert pane1.status == "done"
        assert len(state.history) == 2
        # The scenario's mark is gone (the model's own "· simulated" stays).
        assert "simulated int" not in deck_header(host, 1)
        assert "simulating" not in deck_header(host, 1)
        assert [p.status for p in host.deck.widgets] == ["done", "done", "done"]


@pytest.mark.parametrize("size", SIZES)
async def test_pinned_scenario_fires_on_every_request(gateway_feed: GatewayFeed,
                                                      size) -> None:
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=size) as pilot:
        state = host.deck.panes[1]
        state.set_scenario("rate_limit+pinned")
        host.deck.pane(2).refresh_chrome()
        assert state.scenario == "rate_limit" and state.scenario_pinned
        if size[0] >= 200:
            assert "simulating rate limit (pinned)" in deck_header(host, 2)
        pane2 = host.deck.pane(2)
        for prompt in ("pinned once", "pinned twice"):
            await play(pilot, host, gateway_feed, f"{prompt} ({size[0]})")
            assert pane2.status == "failed" and "429" in badge_text(pane2)
        assert state.scenario == "rate_limit"
        # "none" unpins it, and the next prompt goes through.
        state.set_scenario("none")
        assert state.scenario == "none" and not state.scenario_pinned
        await play(pilot, host, gateway_feed, f"not pinned any more ({size[0]})")
        assert pane2.status == "done"


async def test_guardrail_scenario_says_it_is_simulated(gateway_feed: GatewayFeed) -> None:
    # One size: nothing here depends on it (at 200 columns the badge is on screen too).
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=(200, 50)) as pilot:
        host.deck.panes[2].set_scenario("guardrail")
        await play(pilot, host, gateway_feed, "Explain TCP slow start")
        pane3 = host.deck.pane(3)
        assert pane3.status == "failed"
        assert "BLOCKED (simulated) by the injection guardrail" in badge_text(pane3)
        assert [p.status for p in host.deck.widgets][:2] == ["done", "done"]


async def test_footer_names_the_moderation_category(gateway_feed: GatewayFeed) -> None:
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=(200, 50)) as pilot:
        await play(pilot, host, gateway_feed, "I will murder him")
        footer = str(host.deck.pane(1).query_one(PaneFooter).render())
        assert "moderation flag 0.60 (violence)" in footer
        host.deck.clear()  # (the compare screen's Ctrl+N)
        await play(pilot, host, gateway_feed, "How do I keep my Kubernetes cluster stable?")
        await play(pilot, host, gateway_feed, "And how do I keep it stable under load?")
        footer = str(host.deck.pane(1).query_one(PaneFooter).render())
        assert "moderation pass" in footer and "(violence)" not in footer


def test_picker_offers_each_scenario_once_and_pinned() -> None:
    from anoman_tui.ui.render.pane_state import SCENARIO_LABELS, PaneState, scenario_choices

    ids = [key for key, _ in scenario_choices()]
    assert ids.count("none") == 1
    for name in SCENARIO_LABELS:
        if name != "none":
            assert name in ids and f"{name}+pinned" in ids
    labels = dict(scenario_choices())
    assert all(labels[k].startswith("simulate ") for k in ids if k != "none")
    assert all(len(label) <= 64 for label in labels.values())  # one line in the 80x24 dialog
    state = PaneState(1)
    state.set_scenario("stall+pinned")
    assert state.scenario_choice == "stall+pinned"
    with pytest.raises(ValueError):
        state.set_scenario("bogus")


def test_header_note_follows_the_scenario_and_tolerates_registered_ones(monkeypatch) -> None:
    from anoman_tui.targets import BUILT_IN, connect
    from anoman_tui.ui.render import pane_state

    state = pane_state.PaneState(1, model="anoman-lite")
    local = connect(BUILT_IN["local"], local=("http://127.0.0.1:1", "k"))
    kwargs = {"connection": local, "system": None,
              "idle_timeout": 60.0, "bypass_cache": False, "compare_id": "c"}
    state.set_scenario("stall")
    assert state.scenario_note(running=False) == "simulating stall (next prompt)"
    request = state.build_request("p", **kwargs)
    assert ("X-Anoman-Simulate", "stall-after=30") in request.extra_headers
    assert state.scenario == "none" and state.scenario_note(running=True) == "simulated stall"
    assert state.build_request("p", **kwargs).extra_headers == ()  # one-shot
    # Tools (the benchmarks) register header-only scenarios of their own.
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "bench-1", "ttft=0.05")
    state.scenario = "bench-1"  # type: ignore[assignment]
    assert state.scenario_note(running=False) == "simulating bench-1 (next prompt)"
