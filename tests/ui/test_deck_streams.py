"""The pane deck alone (tests/ui/deck_host.py) fed by the local gateway over real sockets
through the real stream core: what a pane does with its stream, which the compare screen
shows the same way (the screen's own part, typing and sending a prompt, is tested on the
app: test_compare_screen.py)."""

from __future__ import annotations

import time

from textual.widgets import Tabs

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.ui.render import pane_state
from tests.pilot import badge_text, until
from tests.ui.deck_host import DeckHost, GatewayFeed


def settled(host: DeckHost) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in host.deck.panes)


async def test_abort_pane_two_cancels_only_pane_two(
        gateway_feed: GatewayFeed, ui_gateway: EmbeddedGateway, monkeypatch) -> None:
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        host.deck.panes[1].scenario = "slow_thinking"
        gateway_feed.play(host.deck, "explain abort handling")
        pane2 = host.deck.pane(2)
        await until(pilot, lambda: pane2._chunks >= 3)
        aborted_at = time.time()
        await pilot.press("f2")
        await until(pilot, lambda: settled(host))
        statuses = [p.status for p in host.deck.widgets]
        assert statuses == ["done", "cancelled", "done"]
        assert "CANCELLED" in badge_text(pane2) and "not committed" in badge_text(pane2)
        assert pane2.state.history == []
        assert pane2.answer.turn_dimmed
        result = pane2.state.last_result
        assert result is not None and result.request_id
        # the gateway metered the cancelled stream, as cancelled, promptly
        await until(pilot, lambda: ui_gateway.state.ledger.get(result.request_id) is not None,
                    timeout=2)
        row = ui_gateway.state.ledger.get(result.request_id)
        assert row is not None
        assert row["status"] == "cancelled"
        assert row["routing_mode"] == "streaming_cancelled"
        assert row["completion_tokens"] >= 3
        assert row["ended_at"] - aborted_at < 1.0


async def test_follow_up_continues_each_conversation(gateway_feed: GatewayFeed) -> None:
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        gateway_feed.play(host.deck, "first question")
        await until(pilot, lambda: settled(host))
        gateway_feed.play(host.deck, "second question")
        await until(pilot, lambda: settled(host)
                    and all(p.last_prompt == "second question" for p in host.deck.panes))
        for pane in host.deck.panes:
            assert [t.role for t in pane.history] == ["user", "assistant"] * 2


async def test_narrow_terminal_shows_tabs_one_pane_at_a_time() -> None:
    host = DeckHost(3)
    async with host.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert host.deck.query_one(Tabs).display
        shown = [p.state.index for p in host.deck.widgets if p.display]
        assert shown == [1]
        await pilot.press("f4")
        shown = [p.state.index for p in host.deck.widgets if p.display]
        assert shown == [2]
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        assert not host.deck.query_one(Tabs).display
        assert all(p.display for p in host.deck.widgets)


async def test_pre_stream_http_errors_have_their_badges(gateway_feed: GatewayFeed,
                                                        monkeypatch) -> None:
    # Reuse three scenario slots for the statuses no built-in scenario sends.
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "interrupt", "status=401")
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "drop", "status=404")
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "stall", "status=503")
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        for pane, scenario in zip(host.deck.panes, ("interrupt", "drop", "stall"),
                                  strict=True):
            pane.scenario = scenario
        gateway_feed.play(host.deck, "http errors")
        await until(pilot, lambda: settled(host))
        badges = [badge_text(p) for p in host.deck.widgets]
        assert "401 UNAUTHORIZED: check your API key" in badges[0]
        assert "404 MODEL NOT FOUND" in badges[1]
        assert "503 GATEWAY ERROR" in badges[2]
        assert all(p.state.history == [] for p in host.deck.widgets)
