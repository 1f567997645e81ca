"""Record and replay on screen: the compare screen saves each turn with its streams; a
replay (`anoman-tui replay ID`, the history) streams them again through the stream core
and shows what the live run showed, offline, saving nothing.

Recordings are kept short (30 tokens at 200 tok/s) to keep the suite fast.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from anoman_tui.cli import main
from anoman_tui.config import Settings
from anoman_tui.history import ComparisonRecord, HistoryStore, default_path
from anoman_tui.suites.scenarios import SCENARIO_HEADERS
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.screens.replay import ReplayScreen
from anoman_tui.ui.widgets.pane import ComparePane, PaneHeader
from tests.pilot import badge_text, ready, settled, submit, until
from tests.ui.screen_text import screen_lines

FAST = "ttft=0.05,rate=200,tokens=30"
# Pane 1 completes, pane 2 is interrupted by an error frame, pane 3 stalls (the app's
# idle timeout, 1.5 s in these tests, ends it).
OUTCOMES = {1: FAST, 2: FAST + ",interrupt-after=12", 3: FAST + ",stall-after=8"}


def saved() -> list[ComparisonRecord]:
    if not default_path().exists():
        return []
    with HistoryStore.open(default_path()) as store:
        return store.recent(limit=100)


def simulate(app: AnomanApp, monkeypatch: pytest.MonkeyPatch,
             headers: dict[int, str]) -> None:
    """Pane N sends `X-Anoman-Simulate: headers[N]` with every prompt."""
    for index, header in headers.items():
        name = f"replay-test-{index}"
        monkeypatch.setitem(SCENARIO_HEADERS, name, header)  # type: ignore[arg-type]
        state = app.panes[index - 1]
        state.scenario, state.scenario_pinned = name, True  # type: ignore[assignment]


def seen(pane: ComparePane) -> tuple[str, str, str]:
    """What a pane shows of its turn: status, answer text and badge."""
    return pane.status, pane.answer.text, badge_text(pane)


def header(pane: ComparePane) -> str:
    return str(pane.query_one(PaneHeader).render())


def replay_panes(app: AnomanApp) -> list[ComparePane]:
    return list(app.screen.query(ComparePane))


def notes(app: AnomanApp) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


async def live_turn(pilot: Pilot, app: AnomanApp, prompt: str
                    ) -> tuple[int, list[tuple[str, str, str]]]:
    """Send `prompt` on the compare screen; (its history id, each pane as it ended)."""
    await until(pilot, lambda: app.history is not None)
    before = len(saved())
    await submit(pilot, prompt)
    await until(pilot, lambda: settled(app) and len(saved()) == before + 1)
    views = [seen(p) for p in app.compare.query(ComparePane)]
    record = saved()[0]
    assert record.id is not None
    return record.id, views


async def test_a_live_turn_is_saved_recorded_and_replays_as_it_was(make_app, monkeypatch
                                                                  ) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        simulate(app, monkeypatch, OUTCOMES)
        comparison_id, live = await live_turn(pilot, app, "replay: three outcomes")
        assert [v[0] for v in live] == ["done", "failed", "failed"]
        assert app.history is not None
        recordings = app.history.recordings(comparison_id)
        assert sorted(recordings) == [1, 2, 3]
        assert [recordings[i].ending for i in (1, 2, 3)] == ["completed", "completed",
                                                            "stalled"]
        record = app.history.get(comparison_id)
        assert record is not None and record.recorded
        count = len(saved())

        app.push_screen(ReplayScreen(record, recordings, app.compare, speed=2))
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await until(pilot, lambda: any(p.running for p in screen.panes))
        await until(pilot, lambda: f"REPLAY of #{comparison_id}" in screen_lines(app)[0])
        assert "2×" in screen_lines(app)[0]
        await until(pilot, lambda: any(p.running for p in screen.panes))
        await until(pilot, lambda: not any(p.running for p in screen.panes))
        assert [seen(p) for p in replay_panes(app)] == live
        # The header says the outcome was simulated, as it did live.
        assert "simulated replay-test-2" in header(replay_panes(app)[1])
        # (the status line is redrawn once the last pane's end has been handled)
        await until(pilot, lambda: "replay ended" in screen_lines(app)[0])
        assert len(saved()) == count  # a replay is not a new comparison

        # Again, and pane 3 aborted while it stalls: only pane 3 is cancelled.
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.panes[2].running)
        await until(pilot, lambda: [p.status for p in screen.panes] == [
            "done", "failed", "streaming"])
        await pilot.press("f3")
        await until(pilot, lambda: not any(p.running for p in screen.panes))
        views = [seen(p) for p in replay_panes(app)]
        assert views[2][0] == "cancelled"
        assert views[:2] == live[:2]
        assert len(saved()) == count


async def test_recordings_over_the_limit_are_dropped_with_one_notice(make_app, monkeypatch
                                                                    ) -> None:
    app = make_app(record_limit_mb=0.001)  # 1,000 bytes: less than one pane's stream
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        simulate(app, monkeypatch, {1: FAST, 2: FAST, 3: FAST})
        comparison_id, _ = await live_turn(pilot, app, "replay: over the limit")
        said = notes(app)
        assert said.count("saved without its recording") == 1
        assert "MB of streams, over the 0.001 MB limit (record_limit_mb)" in said
        assert app.history is not None
        assert app.history.recordings(comparison_id) == {}
        record = saved()[0]
        assert not record.recorded


async def test_no_recording_when_recording_is_off(make_app, monkeypatch) -> None:
    app = make_app(record=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        simulate(app, monkeypatch, {1: FAST, 2: FAST, 3: FAST})
        comparison_id, _ = await live_turn(pilot, app, "replay: recording off")
        assert app.history is not None and app.history.recordings(comparison_id) == {}
        assert "recording" not in notes(app)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_history_marks_recorded_rows_and_replays_from_them(make_app, monkeypatch,
                                                                 size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        simulate(app, monkeypatch, OUTCOMES)
        comparison_id, live = await live_turn(pilot, app, f"replay: from history {size}")
        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await until(pilot, lambda: history.shown_at is not None)
        await pilot.pause()
        first = str(history.query_one(OptionList).get_option_at_index(0).prompt)
        assert first.startswith(f"#{comparison_id}") and "⏺" in first
        await until(pilot, lambda: "^r Replay" in screen_lines(app)[-1])
        if size[0] >= 200:  # (the line above the list, cut at 80 columns)
            assert "⏺ recorded: Ctrl+R replay" in "\n".join(screen_lines(app))
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("down", "enter")  # from 1× (as recorded) to 2×
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.speed == 2
        await until(pilot, lambda: settled_screen(replay))
        assert [seen(p) for p in replay_panes(app)] == live
        # (the key bar is redrawn once the last pane's end has been handled)
        await until(pilot, lambda: "Replay again" in screen_lines(app)[-1] or size[0] < 100)
        await pilot.press("escape")  # nothing streams: back to the history
        await until(pilot, lambda: app.screen is history)

        # From the reopened comparison: p.
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await until(pilot, lambda: "p Replay" in screen_lines(app)[-1])
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")  # as recorded (1×)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        await until(pilot, lambda: replay.panes[2].running)
        await until(pilot, lambda: "1×" in screen_lines(app)[0])
        await pilot.press("escape")  # streaming: Esc aborts every pane, stays
        await until(pilot, lambda: settled_screen(replay))
        assert app.screen is replay and replay.panes[2].status == "cancelled"


def settled_screen(screen: ReplayScreen) -> bool:
    return all(p.status in ("done", "failed", "cancelled") for p in screen.panes)


async def test_replay_command_opens_without_gateway_or_key(make_app, monkeypatch) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        simulate(app, monkeypatch, {1: FAST, 2: FAST, 3: FAST})
        comparison_id, live = await live_turn(pilot, app, "replay: from the command")
    with HistoryStore.open(default_path()) as store:
        record = store.get(comparison_id)
        recordings = store.recordings(comparison_id)
    assert record is not None
    count = len(saved())

    def no_gateway() -> None:
        raise AssertionError("a replay must not start a gateway")

    offline = AnomanApp(Settings(idle_timeout=1.5, theme="anoman-dark"),  # type: ignore[call-arg]
                        gateway_factory=no_gateway, replay=(record, recordings, 4.0))
    async with offline.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(offline.screen, ReplayScreen))
        screen = offline.screen
        assert isinstance(screen, ReplayScreen)
        await until(pilot, lambda: settled_screen(screen))
        assert [seen(p) for p in screen.query(ComparePane)] == live
        assert offline.history is None and offline.compare.base_url is None
        await pilot.press("escape")  # the first screen: Esc does not leave it
        assert offline.screen is screen
        # No gateway, so no usage ledger: F5 is not offered and does nothing.
        assert "Usage" not in screen_lines(offline)[-1]
        await pilot.press("f5")
        await pilot.pause()
        assert offline.screen is screen
    assert len(saved()) == count


def test_replay_command_refusals(capsys, monkeypatch) -> None:
    assert main(["replay", "7"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no comparison 7 in the history" in err
    with HistoryStore.open(default_path()) as store:
        plain = store.save(ComparisonRecord(prompt="p", panes=(), created_at=1.0))
        blind = store.save(ComparisonRecord(prompt="b", panes=(), created_at=1.0, blind=True))
        damaged = store.save(ComparisonRecord(prompt="d", panes=(), created_at=1.0))
        store._conn.execute("INSERT INTO recordings (comparison_id, pane, body_bytes, data) "
                            "VALUES (?, 1, 3, ?)", (damaged, b"not zlib"))
        if store._conn.in_transaction:
            store._conn.commit()
    for comparison_id, words in ((plain, "saved without recordings"),
                                 (blind, "blind round not voted on yet"),
                                 (damaged, "recording is damaged: pane 1")):
        assert main(["replay", str(comparison_id)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    with pytest.raises(SystemExit):
        main(["replay", "1", "--speed", "0"])


async def test_an_arena_round_is_recorded_but_not_replayable_before_its_vote(make_app
                                                                           ) -> None:
    from anoman_tui.ui.screens.arena import ArenaScreen

    app = make_app(max_tokens=20)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        app.action_arena()
        await until(pilot, lambda: isinstance(app.screen, ArenaScreen)
                    and app.screen.phase == "ready")
        arena = app.screen
        assert isinstance(arena, ArenaScreen)
        await submit(pilot, "replay: a blind round")
        await until(pilot, lambda: arena.phase == "voting" and bool(saved()))
        record = saved()[0]
        assert record.blind and record.hidden and record.id is not None
        assert app.history is not None and len(app.history.recordings(record.id)) == 3
        app.open_replay(record.masked())  # what the history screen hands over
        await pilot.pause()
        assert not isinstance(app.screen, ReplayScreen | ChoiceScreen)
        assert "blind round not voted on yet cannot be replayed" in notes(app)
