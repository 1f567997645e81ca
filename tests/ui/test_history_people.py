"""The history screen on a history two people wrote (a SQLite file): Ctrl+O shows one's
own comparisons (the `user` setting) or everyone's, a `user:NAME` word in the filter
shows NAME's, the title says which, and while the list holds more than one person's
work each row names its author. The key is in the key bar and the Keys panel."""

from __future__ import annotations

import time

import pytest
from textual.widgets import Input, KeyPanel, Label, OptionList

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.history import PAGE, HistoryScreen, split_filter
from tests.pilot import ready, until
from tests.ui.helpers import open_history, screen_text, turn


def _record(prompt: str) -> ComparisonRecord:
    panes = tuple(PaneRecord(pane=p, model=f"model-{p}", base_url="http://x",
                             endpoint="openai", text="an answer") for p in (1, 2))
    return ComparisonRecord(prompt=prompt, panes=panes)


def _write(user: str, prompts: list[str], *, run: str | None = None) -> list[int]:
    """`prompts` saved as `user`'s comparisons (oldest first), and a suite run of theirs
    named `run`, straight into the history file the app opens."""
    with HistoryStore.open(default_path()) as store:
        store.user = user
        ids = [store.save(_record(prompt)) for prompt in prompts]
        if run is not None:
            store.create_run(f"run-{user}", name=run, suite={}, settings={},
                             models=["model-1"], cells=0, created_at=time.time())
    return ids


def rows(screen: HistoryScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def title(screen: HistoryScreen) -> str:
    return str(screen.query_one("#history-title", Label).render())


def status(screen: HistoryScreen) -> str:
    return str(screen.query_one("#history-status", Label).render())


async def shown(pilot, screen: HistoryScreen, heading: str, count: int) -> list[str]:  # type: ignore[no-untyped-def]
    """The rows, once the title says `heading` and `count` rows are listed."""
    await until(pilot, lambda: title(screen) == heading and len(rows(screen)) == count)
    return rows(screen)


def test_a_user_word_is_taken_out_of_the_search() -> None:
    assert split_filter("kafka user:bob lag") == ("kafka lag", "bob")
    assert split_filter("User:Ann") == ("", "Ann")
    assert split_filter("user: kafka") == ("kafka", None)  # still being typed
    assert split_filter("user:ann user:bob") == ("", "bob")
    assert split_filter("users of kafka") == ("users of kafka", None)


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
async def test_mine_or_everyones_and_a_user_word(make_app, size) -> None:  # type: ignore[no-untyped-def]
    _write("bob", ["explain kafka lag", "explain raft"], run="bob's regression suite")
    app: AnomanApp = make_app(user="ann")
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "explain kafka partitions", 3)
        screen = await open_history(pilot)

        # Everyone's, each row naming its author (two people's work is listed).
        listed = await shown(pilot, screen, "History · everyone's comparisons", 4)
        assert "SUITE" in listed[0] and "by bob" in listed[0]
        assert "explain kafka partitions" in listed[1] and "by ann" in listed[1]
        assert "explain raft" in listed[2] and "by bob" in listed[2]
        assert "explain kafka lag" in listed[3] and "by bob" in listed[3]
        assert "f6" not in screen_text(app).splitlines()[-1]
        assert "^o Mine / everyone" in screen_text(app).splitlines()[-1]  # the key bar

        # Ctrl+O: mine only (the `user` setting); one author, so no row names it.
        await pilot.press("ctrl+o")
        listed = await shown(pilot, screen, "History · mine (ann)", 1)
        assert "explain kafka partitions" in listed[0] and "by " not in listed[0]
        # (the status line follows the list by a message: waited for, here and below)
        await until(pilot, lambda: "1 comparison by ann" in status(screen))
        # A search within mine.
        await pilot.press(*"raft")
        await until(pilot, lambda: not rows(screen))
        await until(pilot, lambda: status(screen).startswith("Nothing by ann matches “raft”"))
        screen.query_one(Input).value = ""
        await shown(pilot, screen, "History · mine (ann)", 1)

        # Again: everyone's.
        await pilot.press("ctrl+o")
        await shown(pilot, screen, "History · everyone's comparisons", 4)

        # user:NAME in the filter: NAME's, searched as usual with the other words.
        screen.query_one(Input).value = "user:bob"
        listed = await shown(pilot, screen, "History · bob's comparisons", 3)
        assert "SUITE" in listed[0] and "explain raft" in listed[1]
        assert not any("by bob" in row for row in listed)
        await until(pilot, lambda: "2 comparisons by bob" in status(screen))
        screen.query_one(Input).value = "kafka user:bob"
        listed = await shown(pilot, screen, "History · bob's comparisons", 1)
        assert "explain kafka lag" in listed[0]
        screen.query_one(Input).value = "user:ann"
        listed = await shown(pilot, screen, "History · ann's comparisons", 1)
        assert "explain kafka partitions" in listed[0]
        screen.query_one(Input).value = "user:carol"
        await shown(pilot, screen, "History · carol's comparisons", 0)
        # (the status line follows the list by a message: wait for it, not only the list)
        await until(pilot, lambda: status(screen).startswith("No comparisons by carol yet."))
        screen.query_one(Input).value = "user:[b]x[/b] [red]"  # shown as typed, not markup
        await shown(pilot, screen, "History · [b]x[/b]'s comparisons", 0)
        await until(pilot, lambda: status(screen).startswith("Nothing by [b]x[/b] matches “[red]”"))
        screen.query_one(Input).value = "kafka"
        listed = await shown(pilot, screen, "History · everyone's comparisons", 2)
        assert "by ann" in listed[0] and "by bob" in listed[1]

        # Enter still opens what is highlighted in a per-person view.
        screen.query_one(Input).value = "user:bob raft"
        await shown(pilot, screen, "History · bob's comparisons", 1)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not screen)
        assert "explain raft" in screen_text(app)


async def test_the_keys_panel_lists_the_key(make_app) -> None:  # type: ignore[no-untyped-def]
    app: AnomanApp = make_app(user="ann")
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        screen = await open_history(pilot)
        binding = next(b for b in HistoryScreen.BINDINGS if getattr(b, "id", None)
                       == "history.mine")
        assert binding.key == "ctrl+o"  # type: ignore[union-attr]
        app.action_show_help_panel()
        await until(pilot, lambda: bool(screen.query(KeyPanel)))
        # The panel, docked on the right: a row of it (not the key bar, the last line)
        # with the key and its description.
        await until(pilot, lambda: any("^o" in line and "Mine / everyone" in line
                                       for line in screen_text(app).splitlines()[:-1]))
        app.action_hide_help_panel()


async def test_a_later_page_with_another_author_names_every_rows_author(  # type: ignore[no-untyped-def]
        make_app) -> None:
    _write("bob", ["bob's question"])
    _write("ann", [f"ann's question {i}" for i in range(PAGE + 5)])
    app: AnomanApp = make_app(user="ann")
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        screen = await open_history(pilot)
        listed = await shown(pilot, screen, "History · everyone's comparisons", PAGE)
        assert not any("by ann" in row for row in listed)  # one author so far
        screen.query_one(OptionList).highlighted = PAGE - 1  # near the end: the next page
        await until(pilot, lambda: len(rows(screen)) == PAGE + 6)
        listed = rows(screen)
        assert all("by ann" in row for row in listed[:-1]) and "by bob" in listed[-1]
        assert screen.query_one(OptionList).highlighted == PAGE - 1


async def test_the_key_can_be_rebound_by_its_id(make_app) -> None:  # type: ignore[no-untyped-def]
    _write("bob", ["explain raft"])
    app: AnomanApp = make_app(user="ann", keymap={"history.mine": "ctrl+y"})
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        screen = await open_history(pilot)
        await shown(pilot, screen, "History · everyone's comparisons", 1)
        assert "^y Mine / everyone" in screen_text(app).splitlines()[-1]
        await pilot.press("ctrl+y")
        await shown(pilot, screen, "History · mine (ann)", 0)
        assert status(screen).startswith("No comparisons by ann yet.")
