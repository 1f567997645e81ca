"""The blind arena against the real local gateway: nothing names a model before the vote
(screen, notifications, title, palette, exports), single-key votes, the reveal, failed
panes, the next round, `--arena`, sighted votes and the scoreboard screen (its table and
its picture of the ratings)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot

from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.report import export
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.arena import ArenaScreen
from anoman_tui.ui.screens.scoreboard import RatingChart, ScoreboardScreen
from anoman_tui.ui.widgets.pane import ComparePane, PaneMarks
from anoman_tui.ui.widgets.prompt_box import PromptBox
from tests.helpers import RecordingGateway
from tests.pilot import palette, ready, submit, until
from tests.replay_server import RecordedRequest, Script
from tests.ui.screen_text import screen_lines

POOL = list(CATALOGUE)
SIZES = [(80, 24), (200, 50)]


def everything_shown(app: AnomanApp) -> str:
    """The whole screen, every notification, the title and the palette's commands."""
    commands = palette(app)
    return "\n".join([
        *screen_lines(app), app.title, str(app.sub_title),
        *(str(n.message) + str(n.title) for n in app._notifications),
        *(c.title + " " + c.help for c in commands),
    ])


def names_in(text: str) -> list[str]:
    return [name for name in POOL if name in text]


async def open_arena(pilot: Pilot) -> ArenaScreen:
    app = await ready(pilot)
    await until(pilot, lambda: app.history is not None)
    app.action_arena()
    await until(pilot, lambda: isinstance(app.screen, ArenaScreen)
                and app.screen.phase == "ready")
    assert isinstance(app.screen, ArenaScreen)
    return app.screen


def saved() -> list:
    with HistoryStore.open(default_path()) as store:
        return store.recent(20)


async def test_a_sighted_vote_as_the_turn_ends_waits_for_its_save(
    make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The vote key pressed while the turn is still being written (a slow disk): it used to
    # be refused ("Only a saved comparison can be voted on") or, after an earlier turn,
    # to go to that turn.
    app = make_app()
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None and app.pending_saves is not None)
        await submit(pilot, "the first turn")
        await until(pilot, lambda: len(saved()) == 1 and app.compare.turns_ended == 1)
        pending = app.pending_saves
        write, gate = pending.save, threading.Event()

        def slow_save(*args: object, **kwargs: object) -> int | None:
            assert gate.wait(10)
            return write(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(pending, "save", slow_save)
        await submit(pilot, "the second turn")
        await until(pilot, lambda: app.compare.turns_ended == 2)
        app.compare.sighted_vote(2)
        gate.set()
        await until(pilot, lambda: len(saved()) == 2 and saved()[0].vote is not None)
        newest, first = saved()
        assert newest.prompt == "the second turn" and first.prompt == "the first turn"
        assert newest.vote is not None and (newest.vote.blind, newest.vote.winner_pane) == (
            False, 2)
        assert first.vote is None
        assert not any("Only a saved" in n.message for n in app._notifications)


@pytest.mark.parametrize("size", SIZES)
async def test_a_blind_round_names_no_model_until_the_vote(make_app, size) -> None:
    app = make_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        arena = await open_arena(pilot)
        drawn = [p.model for p in arena.panes]
        assert len(set(drawn)) == 3 and set(drawn) <= set(POOL)
        assert names_in(everything_shown(app)) == []
        await submit(pilot, "explain mutexes")
        await until(pilot, lambda: arena.phase == "voting")
        assert names_in(everything_shown(app)) == []
        assert not app.check_action("usage", ()) and not app.check_action("history", ())
        # While the round is hidden, its export names no model either.
        record = arena.export_record()
        assert record is not None
        for fmt in ("md", "html", "json"):
            assert names_in(export(record, fmt)) == [], fmt
        await until(pilot, lambda: saved() and saved()[0].blind)
        assert saved()[0].hidden
        await pilot.press("b")
        await until(pilot, lambda: arena.phase == "revealed")
        shown = everything_shown(app)
        for model in drawn:
            assert model in shown, model
        record = saved()[0]
        assert record.vote is not None and (record.vote.blind, record.vote.winner_pane) == (
            True, 2)
        assert [p.model for p in record.panes] == drawn
        assert all(p.cost_text.startswith("$") for p in record.panes)  # kept, not "hidden"
        assert app.check_action("usage", ())


async def test_a_failed_pane_cannot_win_and_all_failed_asks_no_vote(make_app) -> None:
    app = make_app(arena={"pool": ["anoman-lite", "no-such-model", "qwen3-coder"]})
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        arena = await open_arena(pilot)
        await submit(pilot, "explain queues")
        await until(pilot, lambda: arena.phase == "voting")
        failed = next(p for p in arena.panes if p.model == "no-such-model")
        label = "ABC"[failed.index - 1]
        assert "no-such-model" not in everything_shown(app)  # its 404 says the label
        await until(pilot, lambda: saved() and saved()[0].blind)
        await pilot.press(label.lower())
        await pilot.pause()
        assert arena.phase == "voting"
        assert "a failed pane cannot win" in everything_shown(app)
        await pilot.press("t")
        await until(pilot, lambda: arena.phase == "revealed")
        assert saved()[0].vote.outcome == "tie"  # type: ignore[union-attr]

    app = make_app(arena={"pool": ["nope-1", "nope-2"]})
    async with app.run_test(size=(120, 40)) as pilot:
        arena = await open_arena(pilot)
        await submit(pilot, "anyone")
        await until(pilot, lambda: arena.phase == "no_vote")
        assert not arena.check_action("vote", ("A",))
        await pilot.press("ctrl+n")  # the next round: a new draw, the same prompt
        await until(pilot, lambda: arena.round == 2)


async def test_next_round_draws_again_and_typing_a_prompt_starts_one(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        arena = await open_arena(pilot)
        await submit(pilot, "explain caches")
        await until(pilot, lambda: arena.phase == "voting")
        await pilot.press("ctrl+n")  # refused: vote first
        assert arena.round == 1
        await until(pilot, lambda: saved() and saved()[0].blind)
        await pilot.press("x")
        await until(pilot, lambda: arena.phase == "revealed")
        assert saved()[0].vote.outcome == "bad"  # type: ignore[union-attr]
        await pilot.press("ctrl+n")
        await until(pilot, lambda: arena.round == 2 and arena.phase == "voting")
        assert all(p.label for p in arena.panes)  # blind again
        assert arena.last_prompt == "explain caches"
        await until(pilot, lambda: len(saved()) == 2)
        await pilot.press("a")
        await until(pilot, lambda: arena.phase == "revealed")
        await submit(pilot, "explain queues")  # a new prompt starts round 3
        await until(pilot, lambda: arena.round == 3 and arena.phase == "voting")
        await pilot.press("escape")  # leaves the arena when nothing streams
        await until(pilot, lambda: app.screen is app.compare)


async def test_the_arena_flag_waits_for_a_history_slow_to_open(make_app, monkeypatch) -> None:
    # The gateway answers first (on a busy machine): the arena waits for the history
    # rather than saying there is none. The history opens once the arena is seen open
    # (a fixed 1 s was at times over before the arena opened, with a core busy).
    real_open = HistoryStore.open.__func__  # type: ignore[attr-defined]
    arena_open = threading.Event()

    def slow_open(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        arena_open.wait(30)  # (in the history's own thread)
        return real_open(cls, *args, **kwargs)

    monkeypatch.setattr(HistoryStore, "open", classmethod(slow_open))
    app = make_app()
    app.start_in_arena = True
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ArenaScreen))
        assert app.history is None  # still opening when the arena opened
        arena_open.set()
        await until(pilot, lambda: app.history is not None
                    and isinstance(app.screen, ArenaScreen) and app.screen.phase == "ready")


async def test_the_arena_flag_opens_it_once_connected(make_app) -> None:
    app = make_app()
    app.start_in_arena = True
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ArenaScreen)
                    and app.screen.phase == "ready")
        # A round is drawn: the panes say A, B, C and nothing names a model.
        assert [p.label for p in app.screen.panes] == ["A", "B", "C"]
        assert all(p.model for p in app.screen.panes)


async def test_a_sighted_vote_and_the_scoreboard_screen(make_app, tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await submit(pilot, "explain sockets")
        await until(pilot, lambda: saved() and all(
            p.status == "done" for p in app.compare.query(ComparePane))
            and app.compare._saved)
        app.compare.sighted_vote(2)
        await until(pilot, lambda: saved()[0].vote is not None)
        vote = saved()[0].vote
        assert vote is not None and (vote.blind, vote.winner_pane) == (False, 2)
        app.action_scoreboard()
        await until(pilot, lambda: isinstance(app.screen, ScoreboardScreen))
        board = app.screen
        assert isinstance(board, ScoreboardScreen)
        await pilot.pause(0.5)
        assert board.rows == []  # blind votes only: none yet
        await pilot.press("s")  # blind and sighted
        await until(pilot, lambda: len(board.rows) == 3)
        assert app.panes[1].model in "\n".join(screen_lines(app))


async def test_the_judge_gives_its_verdict_beside_the_vote_and_never_before(
        make_app) -> None:
    app = make_app(arena={"judge": "anoman-judge",
                          "pool": ["anoman-lite", "claude-sonnet-4-6", "deepseek-r1",
                                   "anoman-judge"]})
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        arena = await open_arena(pilot)
        # The judge grades rounds: never drawn into one, even when the pool names it.
        assert "anoman-judge" not in [m for _, m in arena._pool]
        assert sorted(p.model for p in arena.panes) == [
            "anoman-lite", "claude-sonnet-4-6", "deepseek-r1"]
        await submit(pilot, "How should I size a Postgres connection pool?")
        await until(pilot, lambda: arena.phase == "voting")
        await until(pilot, lambda: saved() and saved()[0].blind)
        assert "judge" not in everything_shown(app).lower()
        round_id = saved()[0].id
        with HistoryStore.open(default_path()) as store:
            assert store.round_judgement(round_id) is None
        await pilot.press("a")
        await until(pilot, lambda: arena.phase == "revealed")
        await until(pilot, lambda: (arena.judge_said or "").startswith("judge anoman-judge"),
                    timeout=30)
        said = arena.judge_said or ""
        assert "(simulated)" in said and ("agrees" in said or "differs" in said)
        assert said in " ".join(" ".join(screen_lines(app)).split())
        with HistoryStore.open(default_path()) as store:
            kept = store.round_judgement(round_id)
        assert kept is not None and kept.outcome in ("win", "tie")
        assert kept.best in (None, "claude-sonnet-4-6")  # it never loses a pair
        assert len(kept.data["verdicts"]) == 3

        # The scoreboard screen: people, the judge, both; the agreement under it.
        app.action_scoreboard()
        await until(pilot, lambda: isinstance(app.screen, ScoreboardScreen))
        board = app.screen
        assert isinstance(board, ScoreboardScreen)
        await until(pilot, lambda: board.agreement is not None and len(board.rows) == 3)
        assert board.agreement is not None and board.agreement.rounds == 1
        await until(pilot, lambda: "1 round rated by both" in "\n".join(screen_lines(app)))
        await pilot.press("r")
        await until(pilot, lambda: board.rater == "judge" and board.rows
                    and "the judge's verdicts" in "\n".join(screen_lines(app)))
        await pilot.press("r")
        await until(pilot, lambda: board.rater == "all" and board.rows
                    and board.rows[0].rounds == 2)


def voted_rounds_in_the_history(rounds: int = 12) -> None:
    """Blind rounds voted on before the app opens the history: people pick
    claude-sonnet-4-6 (deepseek-r1 one round in four), the judge always anoman-lite."""
    models = ("claude-sonnet-4-6", "anoman-lite", "deepseek-r1")
    default_path().parent.mkdir(parents=True, exist_ok=True)
    with HistoryStore.open(default_path()) as store:
        for i in range(rounds):
            panes = tuple(PaneRecord(pane=n, model=model, base_url="http://x",
                                     endpoint="openai", text="an answer", label="ABC"[n - 1],
                                     simulated=model == "anoman-lite")
                          for n, model in enumerate(models, start=1))
            round_id = store.save(ComparisonRecord(prompt=f"round {i}", panes=panes,
                                                   blind=True))
            store.cast_vote(round_id, "win", 3 if i % 4 == 0 else 1, blind=True)
            store.save_round_judgement(round_id, "anoman-judge", "win", "anoman-lite",
                                       {"verdicts": []})


async def test_the_scoreboard_draws_each_rating_with_its_interval(make_app) -> None:
    voted_rounds_in_the_history()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        app.action_scoreboard()
        await until(pilot, lambda: isinstance(app.screen, ScoreboardScreen))
        board = app.screen
        assert isinstance(board, ScoreboardScreen)
        await until(pilot, lambda: len(board.rows) == 3)
        chart = board.query_one(RatingChart)

        def figures() -> list[str]:
            return [f"{r.rating:.0f} [{r.ci_low:.0f}–{r.ci_high:.0f}]" for r in board.rows]

        def shown() -> str:
            return "\n".join(screen_lines(app))

        # People's votes: each model's rating and interval in words beside its picture.
        assert board.rows[0].model == "claude-sonnet-4-6"
        people = figures()
        await until(pilot, lambda: all(f in shown() for f in people))
        drawn = chart.plain().split("\n")
        assert len(drawn) == 3 + 2  # a line per model, the axis and its ticks
        for row, line, words in zip(board.rows, drawn[:3], people, strict=True):
            assert line.startswith(row.model) and line.rstrip().endswith(words)
            assert "●" in line
        assert "anoman-lite (simulated)" in chart.plain()

        # `r`: the judge's verdicts, a new order and new figures, drawn again.
        await pilot.press("r")
        await until(pilot, lambda: board.rater == "judge" and bool(board.rows)
                    and board.rows[0].model == "anoman-lite")
        judged = figures()
        assert judged != people
        await until(pilot, lambda: all(f in shown() for f in judged))
        assert chart.plain().split("\n")[0].startswith("anoman-lite (simulated)")

        # Narrower: drawn again at the widget's width, every figure still in words.
        await pilot.resize_terminal(50, 40)
        await until(pilot, lambda: chart.content_size.width <= 50)
        await until(pilot, lambda: all(f in shown() for f in judged))
        assert all(len(line) <= chart.content_size.width
                   for line in chart.plain().split("\n"))


# -- the cache: a model drawn again is never given away by a cached answer ---------------

THREE = ["anoman-lite", "claude-sonnet-4-6", "qwen3-coder"]


async def test_ctrl_n_repeats_the_prompt_and_no_pane_is_a_cache_hit(make_app, ui_gateway
                                                                    ) -> None:
    # A pool of three: every round draws the same models for the same prompt, which the
    # gateway's cache holds from round 1 on. Only `Cache-Control: no-cache` on every
    # request keeps rounds 2 and 3 from being answered from it (the ledger says
    # `cache_hit` for a request answered from the cache).
    app = make_app(arena={"pool": THREE})
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        arena = await open_arena(pilot)
        ledger = ui_gateway.state.ledger
        await submit(pilot, "explain the arena's cache")
        for round_number in (1, 2, 3):
            await until(pilot, lambda n=round_number: arena.round == n
                        and arena.phase == "voting")
            assert sorted(p.model for p in arena.panes) == sorted(THREE)
            results = [p.last_result for p in arena.panes]
            assert all(r is not None and r.committed and not r.cache_hit for r in results)
            assert "CACHE" not in everything_shown(app)
            await until(pilot, lambda rs=results: all(
                ledger.get(r.request_id) is not None for r in rs))
            assert [ledger.get(r.request_id)["status"] for r in results] == [
                "completed"] * 3
            await until(pilot, lambda n=round_number: len(saved()) == n)
            await pilot.press("t")
            await until(pilot, lambda: arena.phase == "revealed")
            if round_number < 3:
                await pilot.press("ctrl+n")  # the same prompt, drawn again


class CachingServer(RecordingGateway):
    """An OpenAI-compatible server that answers every request from its cache, `no-cache`
    or not (as a server may): a JSON answer marked as a cache hit."""

    TEXT = "The very answer revealed a round earlier."

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method != "POST":
            return super().script_for(request)
        body = {"id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": self.TEXT}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 8, "total_tokens": 15},
                "_anoman": {"cache": {"hit": True}, "cost_usd": "0.000000"}}
        return Script(content_type="application/json", body=[json.dumps(body).encode()],
                      chunked=False)


async def test_a_pane_answered_from_a_cache_anyway_is_withheld_and_cannot_win(
        make_app, monkeypatch) -> None:
    server = CachingServer()
    await server.start()
    try:
        monkeypatch.setenv("ANOMAN_TEST_CACHING_KEY", "sk-caching-1234")
        app = make_app(
            idle_timeout=30,  # (its server shares the test's busy event loop)
            targets={"caching": {"base_url": server.base_url,
                                 "api_key_env": "ANOMAN_TEST_CACHING_KEY"}},
            arena={"pool": ["caching:listed-1", "anoman-lite", "qwen3-coder"]})
        async with app.run_test(size=(200, 50), notifications=True) as pilot:
            arena = await open_arena(pilot)
            await submit(pilot, "explain the cache")
            await until(pilot, lambda: arena.phase == "voting")
            (request,) = server.streams
            assert request.headers["cache-control"] == "no-cache"
            cached = next(p for p in arena.panes if p.model == "listed-1")
            label = "ABC"[cached.index - 1]
            assert cached.last_result is not None and cached.last_result.cache_hit
            shown = everything_shown(app)
            assert CachingServer.TEXT not in shown  # withheld, not revealed
            assert "CACHE HIT withheld" in shown
            # No "fastest first token" for the cache's 0.0 s: it goes to a model.
            fastest = [p for p in arena.query(ComparePane)
                       if p.query_one(PaneMarks).display
                       and "fastest first token" in str(p.query_one(PaneMarks).render())]
            assert all(p.state.model != "listed-1" for p in fastest)
            await until(pilot, lambda: saved() and saved()[0].blind)
            await pilot.press(label.lower())
            await pilot.pause()
            assert arena.phase == "voting"
            assert "answered from the gateway's cache" in everything_shown(app)
            await pilot.press("t")
            await until(pilot, lambda: arena.phase == "revealed")
    finally:
        await server.stop()


@pytest.mark.parametrize("key", ["B", "shift+b"])
async def test_vote_keys_work_in_either_case_and_the_locked_box_takes_no_text(
        make_app, key) -> None:
    # Shift+B, or b with Caps Lock on: the terminal sends `B` (or, reporting modifiers,
    # shift+b). Today's bug: `B` went into the locked prompt box and Enter did nothing.
    app = make_app(arena={"pool": THREE})
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        arena = await open_arena(pilot)
        await submit(pilot, "explain locks")
        await until(pilot, lambda: arena.phase == "voting")
        box = arena.query_one(PromptBox)
        assert box.locked
        for typed in ("q", "Q", "enter", "ctrl+j"):  # no vote: nothing happens at all
            await pilot.press(typed)
        box.insert("typed where no box had focus")  # as the screen does with such keys
        await pilot.pause()
        assert box.text == "" and arena.phase == "voting"
        await until(pilot, lambda: saved() and saved()[0].blind)
        await pilot.press(key)
        await until(pilot, lambda: arena.phase == "revealed")
        assert arena.voted == "B" and not box.locked
        vote = saved()[0].vote
        assert vote is not None and vote.winner_pane == 2
        assert box.text == "explain locks"  # Enter: the same prompt, a new draw


async def test_the_scoreboard_at_80x24_says_what_it_left_out_and_shows_arena_judge(
        make_app) -> None:
    models = ("claude-sonnet-4-6", "anoman-lite", "deepseek-r1")
    default_path().parent.mkdir(parents=True, exist_ok=True)
    with HistoryStore.open(default_path()) as store:
        for i in range(6):  # voted blind rounds, no judge
            round_id = store.save(ComparisonRecord(prompt=f"round {i}", blind=True, panes=tuple(
                PaneRecord(pane=n, model=model, base_url="http://x", endpoint="openai",
                           text="an answer", label="ABC"[n - 1])
                for n, model in enumerate(models, start=1))))
            store.cast_vote(round_id, "win", 1 + i % 3, blind=True)
        store.save(ComparisonRecord(prompt="hi", panes=tuple(  # a request refused: 400s
            PaneRecord(pane=n, model=model, base_url="http://x", endpoint="openai",
                       status="failed", committed=False,
                       failure={"kind": "http_error", "status": 400, "message": "400"})
            for n, model in enumerate(models, start=1))))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        app.action_scoreboard()
        await until(pilot, lambda: isinstance(app.screen, ScoreboardScreen))
        board = app.screen
        assert isinstance(board, ScoreboardScreen)
        await until(pilot, lambda: len(board.rows) == 3)

        def words() -> str:
            return " ".join(" ".join(screen_lines(app)).split())

        await until(pilot, lambda: "1 round refused for the request itself" in words())
        assert "3 answers" in words() and "refused before streaming" not in words()
        # The key bar fits 80 columns whole: every key's label, none cut mid-word.
        await until(pilot, lambda: screen_lines(app)[-1].startswith("esc Back"))
        bar = screen_lines(app)[-1]
        for label in ("esc Back", "s Blind/all", "r Rated by", "^q Quit", "f5 Usage",
                      "^p palette"):
            assert label in bar, bar
        # `[arena] judge` as written, never read as markup.
        assert "no round rated by both yet ([arena] judge gives a verdict" in words()
        await pilot.press("r")
        await until(pilot, lambda: "No judge verdicts yet: set [arena] judge in the "
                    "config file" in words())
