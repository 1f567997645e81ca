"""The pane deck alone (tests/ui/deck_host.py) fed by the local gateway over real sockets
through the real stream core: what a pane does with its stream (its answer, footer,
badges, a cache hit, an abort, a follow-up, a cleared deck), which the compare screen
shows the same way (the screen's own part, typing and sending a prompt, its status line,
New and Retry, is tested on the app: test_compare_screen.py)."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from textual.widgets import Tabs

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.streaming import ModelInfo, StreamFinished
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.widgets.pane import PaneFooter, PaneHeader
from anoman_tui.wire import Usage
from tests.pilot import badge_text, until
from tests.ui.deck_host import DeckHost, GatewayFeed
from tests.ui.scripted import ScriptedStream, text_events


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


async def test_three_panes_stream_and_complete(gateway_feed: GatewayFeed) -> None:
    # (the compare screen's own part, its status line and the key never drawn:
    # test_compare_screen.py)
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        gateway_feed.play(host.deck, "compare pooling strategies, on a deck")
        await until(pilot, lambda: settled(host))
        for pane in host.deck.widgets:
            assert pane.status == "done", badge_text(pane)
            assert pane.answer.text.strip()
            assert len(pane.state.history) == 2
            footer = str(pane.query_one(PaneFooter).render())
            assert "$0.0" in footer and "realtime/id" in footer and "miss" in footer
            assert pane.state.last_result is not None
            assert pane.state.last_result.metrics.ttft_s is not None


async def test_a_deck_cleared_while_panes_stream_is_left_empty(
        gateway_feed: GatewayFeed, ui_gateway: EmbeddedGateway, monkeypatch) -> None:
    # Seen in a terminal: the aborted turns ended after the panes were cleared (Ctrl+N,
    # the compare screen's New, which clears the deck) and drew their CANCELLED notes and
    # status into the new comparison.
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    host = DeckHost(3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        for pane in host.deck.panes:
            pane.scenario = "slow_thinking"
        host.deck.panes[2].scenario = "none"  # a reasoning model: still waiting for its text
        metered_before = len(ui_gateway.state.ledger.recent(limit=10_000))
        gateway_feed.play(host.deck, "explain clearing while streaming")
        await until(pilot, lambda: host.deck.pane(1)._chunks >= 3)
        host.deck.clear()

        def metered() -> list[str]:
            rows = ui_gateway.state.ledger.recent(limit=10_000)
            return [row["status"] for row in rows[: len(rows) - metered_before]]

        # The aborted streams end meanwhile (the gateway metered every stream of the turn:
        # panes 1 and 2 cancelled), and what ended them reaches the UI loop.
        await until(pilot, lambda: len(metered()) == 3 and metered().count("cancelled") >= 2)
        await pilot.pause()
        for pane in host.deck.widgets:
            assert pane.status == "idle", pane.status
            assert pane.answer.text == ""
            assert "CANCELLED" not in "\n".join(pane.answer._rendered_lines())
            assert pane.state.history == [] and pane.state.last_result is None
        gateway_feed.play(host.deck, "and a new one")  # the cleared panes stream again
        await until(pilot, lambda: settled(host))
        for pane in host.deck.widgets:
            assert pane.status == "done", badge_text(pane)
            assert len(pane.state.history) == 2  # the new prompt and its answer only


@pytest.mark.parametrize(
    ("scenarios", "expected"),
    [
        (("interrupt", "drop", "malformed"),
         ("STREAM INTERRUPTED after 40 tokens", "TRUNCATED", "PROTOCOL ERROR")),
        (("stall", "guardrail", "rate_limit"),
         ("STALLED", "BLOCKED (simulated) by the injection guardrail (score 0.97)",
          "429 RATE LIMITED: retry in 1 s")),
    ],
)
async def test_failure_badges_commit_nothing(gateway_feed: GatewayFeed, scenarios,
                                             expected) -> None:
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        for pane, scenario in zip(host.deck.panes, scenarios, strict=True):
            pane.scenario = scenario
        gateway_feed.play(host.deck, f"show failures {scenarios[0]}")
        await until(pilot, lambda: settled(host))
        for pane, words in zip(host.deck.widgets, expected, strict=True):
            assert pane.status == "failed"
            assert words in badge_text(pane)
            assert pane.state.history == []
            assert pane.has_class("-failed")
        # a failure in one pane never froze the app: it still takes keys
        await pilot.press("f4")
        await until(pilot, lambda: host.deck.pane(2).has_class("-current"))


async def test_cache_hit_shows_the_whole_answer_with_a_badge(gateway_feed: GatewayFeed) -> None:
    # At temperature 0 the three panes draw one answer, so pane 1's is the one cached.
    host = DeckHost(3, models=["anoman-lite"] * 3, frozen_clock=False)
    async with host.run_test(size=(160, 45)) as pilot:
        for state in host.deck.panes:
            state.params = pane_state.PaneParams(temperature=0)
        gateway_feed.play(host.deck, "cache me please, deck")
        await until(pilot, lambda: settled(host))
        first = host.deck.pane(1).answer.text
        host.deck.clear()
        gateway_feed.play(host.deck, "cache me please, deck")
        await until(pilot, lambda: settled(host))
        pane = host.deck.pane(1)
        assert pane.status == "done"
        assert "CACHE HIT" in badge_text(pane)
        assert pane.answer.text == first
        assert "HIT" in str(pane.query_one(PaneFooter).render())
        # bypassing the cache streams afresh
        gateway_feed.bypass_cache = True
        host.deck.clear()
        gateway_feed.play(host.deck, "cache me please, deck")
        await until(pilot, lambda: settled(host))
        assert "CACHE HIT" not in badge_text(host.deck.pane(1))


async def test_cost_is_estimated_without_an_anoman_block() -> None:
    info = ModelInfo("plain-model", input_usd_per_mtok=Decimal("3"),
                     output_usd_per_mtok=Decimal("15"))
    host = DeckHost(1, models=["plain-model"],
                    model_info=lambda state: info if state.model == info.id else None)
    async with host.run_test(size=(160, 45)) as pilot:
        events = text_events("a plain answer", ttft=0.2, rate=50)
        usage = Usage(prompt_tokens=1000, completion_tokens=2000, total_tokens=3000)
        events.append(StreamFinished(events[-1].at, "stop", usage))
        pane = host.deck.pane(1)
        pane.start(ScriptedStream(events), "hi")  # type: ignore[arg-type]
        await until(pilot, lambda: pane.status == "done")
        footer = str(pane.query_one(PaneFooter).render())
        assert "~$0.033000 (est.)" in footer


async def test_a_panes_status_is_its_states_and_the_pane_shows_every_change() -> None:
    # (the compare screen's status line counting from the states: test_compare_screen.py)
    host = DeckHost(3, models=["m1", "m2", "m3"])
    async with host.run_test(size=(160, 45)) as pilot:
        pane, state = host.deck.pane(1), host.deck.panes[0]
        assert pane.state is state

        def header() -> str:
            return str(pane.query_one(PaneHeader).render())

        pane.set_status("streaming")
        assert state.status == pane.status == "streaming"
        assert pane.has_class("-streaming") and not pane.has_class("-idle")
        assert "streaming" in header()
        with pytest.raises(AttributeError):
            setattr(pane, "status", "done")  # noqa: B010 (read-only: set_status() is the way)
        pane.set_status("idle")
        await pilot.pause()
        assert state.status == "idle" and pane.has_class("-idle")

        # A finished stream: the state records the outcome, the pane shows the same.
        pane.start(ScriptedStream(text_events("an answer", ttft=0.01, rate=200)), "hi")  # type: ignore[arg-type]
        await until(pilot, lambda: state.status == "done")
        assert pane.status == "done" and pane.has_class("-done")
        assert not pane.has_class("-waiting") and not pane.has_class("-streaming")
        assert "done" in header()

        # The state reset on its own (benchmarks do): the pane's next clear shows it.
        state.reset()
        pane.clear()
        assert pane.status == "idle" and pane.has_class("-idle") and not pane.has_class("-done")
        assert "idle" in header()
