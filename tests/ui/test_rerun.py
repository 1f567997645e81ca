"""A rerun from the history beside its original: each pane's `vs #ID` line (TTFT,
tokens/s, cost and outcome against the original's pane in the same position), the
`rerun_of` it is saved with, Ctrl+O's diff against the original's answer, and the same
lines when the rerun is reopened from the history.

Everything runs against the real local gateway and a real history file; expected
figures are computed here from the two saved records.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.render.diff import word_diff
from anoman_tui.ui.screens.compare import CompareScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.widgets.pane import ComparePane
from anoman_tui.ui.widgets.rerun_delta import RerunDelta
from tests.pilot import ready, settled, until
from tests.ui.helpers import open_history, saved, screen_text, turn

SIZES = [(80, 24), (200, 50)]
MINUS = "−"


def signed(value: float, unit: str = "") -> str:
    return ("+" if value > 0 else MINUS if value < 0 else "±") + f"{abs(value):.0f}" + unit


def expected_ttft(new: PaneRecord, old: PaneRecord) -> str | None:
    """`−120` ms, from the records; None when either has no first token."""
    a, b = new.metrics.get("ttft_s"), old.metrics.get("ttft_s")
    if a is None or b is None:
        return None
    return signed(round((a - b) * 1000))


def expected_outcome(pane: PaneRecord) -> str:
    if pane.status == "completed":
        hit = (pane.anoman or {}).get("cache", {}).get("hit") is True
        return "done (cache hit)" if hit else "done"
    return pane.status


async def rerun_from_history(pilot: Pilot, count: int) -> None:
    """Reopen the newest comparison, re-run it with the same models, wait until saved."""
    app = pilot.app
    assert isinstance(app, AnomanApp)
    await open_history(pilot)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, RecordScreen))
    await pilot.press("r")
    await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
    await pilot.press("enter")  # the same models
    await until(pilot, lambda: app.screen is app.compare)
    await until(pilot, lambda: settled(app) and len(saved()) == count)
    await pilot.pause()


def delta_lines(screen: CompareScreen) -> dict[int, str]:
    return {pane.state.index: pane.rerun_delta.line() for pane in screen.query(ComparePane)}


def check_deltas(screen: CompareScreen, rerun: ComparisonRecord,
                 original: ComparisonRecord) -> None:
    """Each pane's line says what the two records say changed."""
    for new, old in zip(rerun.panes, original.panes, strict=True):
        widget = screen.pane(new.pane).query_one(RerunDelta)
        delta = widget.delta
        assert delta is not None and widget.display
        line = widget.line()
        assert line.startswith(f"vs #{original.id}"), line
        assert "\n" not in line
        if screen.pane(new.pane).display:  # (a narrow screen shows one pane: its tab's)
            assert len(line) <= widget.content_size.width
        ttft = expected_ttft(new, old)
        if ttft is None:
            assert delta.ttft_ms is None and "TTFT —" in line
        else:
            assert signed(delta.ttft_ms or 0) == ttft
            assert f"{ttft} ms" in line or f"{ttft}ms" in line, line
            if delta.ttft_ms and delta.ttft_ms < 0:
                assert "▲" in line  # a shorter wait is better
        rate_new = new.metrics.get("output_tokens_per_s")
        rate_old = old.metrics.get("output_tokens_per_s")
        if rate_new is not None and rate_old:
            assert delta.rate == pytest.approx(rate_new - rate_old)
            pct = (rate_new - rate_old) / rate_old * 100
            digits = 1 if abs(pct) < 9.95 else 0
            sign = "+" if pct > 0 else MINUS
            if round(abs(pct), digits) == 0:
                sign = "±"
            assert f"{sign}{abs(pct):.{digits}f}%" in line, line
        was, now = expected_outcome(old), expected_outcome(new)
        if was == now:
            assert delta.was is None and "→" not in line
        else:
            assert (delta.was or "").startswith(was) and delta.now == now
            assert now in line


@pytest.mark.parametrize("size", SIZES)
async def test_a_rerun_shows_each_pane_against_the_original(make_app, size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        app.panes[0].scenario = "interrupt"  # the original's first pane fails
        await turn(pilot, f"rerun deltas at {size[0]} columns", 1)
        original = saved()[0]
        assert original.panes[0].status == "failed"
        await rerun_from_history(pilot, 2)

        rerun = saved()[0]
        assert rerun.rerun_of == original.id and original.rerun_of is None
        # Measured again: the gateway's cache (which holds the original's answers) is
        # bypassed for a rerun.
        assert all(expected_outcome(p) != "done (cache hit)" for p in rerun.panes)
        screen = app.compare
        check_deltas(screen, rerun, original)
        one = screen.pane(1).rerun_delta
        assert one.delta is not None and one.delta.was == "failed: interrupted"
        assert one.delta.now == "done"
        assert "interrupted" in one.line() and "done" in one.line()
        text = screen_text(app)
        assert f"rerun of #{original.id}" in text.splitlines()[0]
        assert f"vs #{original.id}" in text
        if size[0] >= 200:
            assert f"Diff vs #{original.id}" in text.splitlines()[-1]

        # Ctrl+O: the current pane's answer against the original's, and back.
        pane = screen.pane(1)
        await pilot.press("ctrl+o")
        await pilot.pause()
        label = f"#{original.id} ({original.panes[0].model})"
        assert pane.diff_base == label and pane.diff_view.display
        assert pane.diff_view.diff == word_diff(original.panes[0].text, pane.answer.text)
        assert pane.diff_view.summary_text().startswith(f"Diff against {label}: +")
        assert f"⇄ diff vs {label}" in screen_text(app)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert pane.diff_base is None and pane.answer.display

        # Reopened from the history, the rerun shows the same lines.
        shown = delta_lines(screen)
        await open_history(pilot)
        await pilot.press("enter")  # the newest: the rerun
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        reopened = app.screen
        assert isinstance(reopened, RecordScreen) and reopened.record.id == rerun.id
        await until(pilot, lambda: reopened.pane(1).rerun_delta.delta is not None)
        await pilot.pause()
        check_deltas(reopened, rerun, original)
        assert delta_lines(reopened) == shown
        assert f"rerun of #{original.id}" in screen_text(app)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert reopened.pane(1).diff_base == label
        await pilot.press("escape", "escape")
        await until(pilot, lambda: app.screen is app.compare)

        # A new comparison is no rerun: the lines and the note go.
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not any(delta_lines(screen).values())
        assert "rerun of" not in screen_text(app)
        assert screen.check_action("diff_original", ()) is False


async def test_the_diff_against_the_original_follows_the_rerun_as_it_streams(
        make_app, monkeypatch) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await turn(pilot, "a rerun diffed while it streams", 1)
        original = saved()[0]
        # The rerun (sent without a scenario) streams until it is aborted.
        monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "none",
                            "ttft=0.05,rate=30,tokens=2000")
        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is app.compare)
        pane = app.compare.pane(1)
        await until(pilot, lambda: pane.status == "streaming" and pane._chunks >= 3)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert pane.state.running, "the rerun must still stream for this test"
        shown = pane.diff_view.summary_text()
        assert f"#{original.id} ({original.panes[0].model})" in shown and "(so far)" in shown
        assert "Pane 1 is still streaming" in shown
        assert not pane.rerun_delta.display  # drawn when the turn ends
        await pilot.press("escape")  # abort all
        await until(pilot, lambda: settled(app) and len(saved()) == 2)
        await pilot.pause()
        assert "so far" not in pane.diff_view.summary_text()
        assert pane.diff_view.diff == word_diff(original.panes[0].text, pane.answer.text)
        delta = pane.rerun_delta.delta
        assert delta is not None and delta.was == "done" and delta.now == "cancelled"
        line = pane.rerun_delta.line()
        assert "was done → now cancelled" in line or "done→cancelled" in line, line
        assert saved()[0].rerun_of == original.id


async def test_a_reopened_rerun_whose_original_is_gone_says_so(make_app) -> None:
    pane = PaneRecord(1, "anoman-lite", "http://local", "openai", text="an answer",
                      metrics={"ttft_s": 0.2, "output_tokens_per_s": 50.0})
    with HistoryStore.open(default_path()) as store:
        kept = store.save(ComparisonRecord(prompt="gone original", panes=(pane,),
                                           rerun_of=999))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await open_history(pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RecordScreen))
        screen = app.screen
        assert isinstance(screen, RecordScreen) and screen.record.id == kept
        await until(pilot, lambda: "not in history" in screen_text(app))
        assert "rerun of #999 (original #999 not in history)" in screen_text(app)
        assert not screen.pane(1).rerun_delta.display
        assert screen.check_action("diff_original", ()) is False
