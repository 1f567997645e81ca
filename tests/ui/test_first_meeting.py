"""The empty compare screen says what to do: a hint in the panes until the first prompt
is sent (what to type, the keys that matter most, that the local gateway's models are
simulated and how to reach real ones), never part of an answer, an export or a save."""

from __future__ import annotations

import pytest
from textual.selection import Selection

from anoman_tui.ui.screens import compare, export
from anoman_tui.ui.widgets.pane import ComparePane
from tests.pilot import ready, settled, submit, until
from tests.ui.screen_text import screen_lines, svg_lines

SIZES = [(80, 24), (200, 50)]
# What the hint must say, each phrase whole on the screen (not cut by the pane).
SAID = ["Type a prompt below", "Enter", "F1–F3", "Esc", "Ctrl+P", "F6",
        "These models are simulated", "--base-url URL", "ANOMAN_BASE_URL", "ANOMAN_API_KEY",
        "--model", "TARGET:MODEL", "[targets.NAME]", "in the config file."]


def hint_shown(app: compare.CompareScreen | object) -> bool:
    return any(pane.hint_shown for pane in app.compare.query(ComparePane))  # type: ignore[attr-defined]


def screen_text(app: object) -> str:
    # Joined without line ends or padding: a phrase wrapped across lines still reads whole.
    return " ".join(" ".join(line.replace("│", " ").split()) for line in screen_lines(app)
                    if line.strip())  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES)
async def test_the_empty_screen_says_what_to_do_until_the_first_prompt(
    make_app, fast_answers, size: tuple[int, int]
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await until(pilot, lambda: hint_shown(app))
        await pilot.pause()
        shown = screen_text(app)
        for phrase in SAID:
            assert phrase in shown, (phrase, shown)
        # It fits: each visible pane's hint, wrapped, is no taller than the room it has.
        for pane in app.compare.query(ComparePane):
            if pane.display:
                view = pane.answer
                rows = view._placeholder_rows
                assert rows is not None and rows[0] == view.scrollable_content_region.width
                assert len(rows[1]) <= view.scrollable_content_region.height, len(rows[1])
                # Not part of the answer: nothing to copy or select.
                assert view.text == "" and view.get_selection(
                    Selection(None, None)) == ("", "\n")
        # The first prompt sent: gone from every pane, and not back on a new comparison.
        await submit(pilot, "what is a socket")
        await until(pilot, lambda: settled(app) and all(
            p.last_prompt == "what is a socket" for p in app.panes))
        assert not hint_shown(app)
        assert "Type a prompt below" not in screen_text(app)
        for pane in app.compare.query(ComparePane):
            assert "Type a prompt" not in pane.answer.text  # what F9 copies
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not hint_shown(app)


async def test_the_hint_is_never_exported_or_saved(make_app, fast_answers, monkeypatch
                                                   ) -> None:
    pictures: list[str] = []

    def exporting(app: object, record: object, *, svg: str | None = None,
                  **_: object) -> None:
        assert svg is not None
        pictures.append(svg)

    monkeypatch.setattr(export, "export_comparison", exporting)
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: hint_shown(app) and app.history is not None)
        # Ctrl+S before any prompt: the screenshot is taken without the hint...
        await pilot.press("ctrl+s")
        await until(pilot, lambda: bool(pictures))
        drawn = "\n".join(svg_lines(pictures[0], app.size))
        assert "Type a prompt below" not in drawn and "ANOMAN_API_KEY" not in drawn
        assert "claude-sonnet-4-6" in drawn  # (the screen itself is there)
        # ...and the hint comes back.
        await until(pilot, lambda: hint_shown(app))
        await submit(pilot, "what is a socket")
        await until(pilot, lambda: settled(app) and app.compare.turns_ended)
        store = app.history
        assert store is not None
        await until(pilot, lambda: bool(store.recent(limit=1)))
        record = store.recent(limit=1)[0]
        assert record.prompt == "what is a socket"
        assert all("Type a prompt" not in p.text for p in record.panes)


def test_the_hint_names_the_keys_as_bound() -> None:
    keys = {"send": "Enter", "newline": "Ctrl+J", "abort_pane_1": "F11",
            "abort_pane_3": "F13", "abort_all": "Esc", "history": "Ctrl+H",
            "palette": "Ctrl+P"}
    ask, keys_part, where = compare.first_hint(keys, simulated=True)
    assert "--base-url" in where.plain and "ANOMAN_API_KEY" in where.plain
    assert "F11–F13  abort pane 1–3" in keys_part.plain
    assert "Ctrl+H   history" in keys_part.plain  # (aligned under the widest key)
    assert "Ctrl+J starts a new line" in ask.plain
    # Not simulated (a real gateway): nothing about simulated models or how to leave them.
    _, _, real = compare.first_hint(keys, simulated=False)
    assert "simulated" not in real.plain and "--base-url" not in real.plain
    assert compare.readable_key("ctrl+p") == "Ctrl+P"
    assert compare.readable_key("escape") == "Esc"
    assert compare.readable_key("f6") == "F6"
