"""The export dialog offers a recording for a saved, recorded comparison (not for a blind
round before its vote), and writes the file `anoman-tui import` reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, default_path
from anoman_tui.history.portable import read_comparison_document
from anoman_tui.streaming.recording import StreamRecording
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.export import default_path as export_path
from anoman_tui.ui.screens.export import format_choices
from anoman_tui.ui.screens.history import HistoryScreen
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.text_input import TextInputScreen
from tests.pilot import ready, until


def recording(pane: int, model: str) -> StreamRecording:
    frame = json.dumps({"choices": [{"index": 0, "delta": {"content": "Tides rise"},
                                     "finish_reason": "stop"}]})
    return StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model=model, status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.01,
        reads=((0.02, f"data: {frame}\n\n".encode()), (0.03, b"data: [DONE]\n\n")),
        ending="completed", ended_at=0.03, pane=pane)


def comparison(**changes: object) -> ComparisonRecord:
    models = ("anoman-lite", "claude-sonnet-4-6", "qwen3-coder")
    record = ComparisonRecord(
        prompt="Explain tides", created_at=1_700_000_000.0, panes=tuple(
            PaneRecord(pane=n, model=m, base_url="http://127.0.0.1:1", endpoint="openai",
                       text="Tides rise", metrics={"ttft_s": 0.01, "chunks": 1},
                       recording=recording(n, m))
            for n, m in enumerate(models, 1)))
    return replace(record, **changes)  # type: ignore[arg-type]


def test_the_recording_is_offered_only_for_a_saved_recorded_comparison() -> None:
    record = comparison(id=4)
    assert format_choices(record, svg=True) == ["md", "html", "json", "recording", "svg"]
    assert format_choices(None, svg=True) == ["svg"]
    assert "recording" not in format_choices(replace(record, id=None), svg=False)
    unrecorded = record.without_recordings()
    assert "recording" not in format_choices(unrecorded, svg=False)
    # As the history reads it: recorded, its streams in the store.
    assert "recording" in format_choices(replace(unrecorded, recorded=True), svg=False,
                                         store=object())  # type: ignore[arg-type]
    hidden = replace(record, blind=True, panes=tuple(
        replace(p, label="ABC"[p.pane - 1]) for p in record.panes))
    assert hidden.hidden and "recording" not in format_choices(hidden, svg=False)
    assert export_path(record, "recording", Path("/nowhere")).name == \
        "comparison-4.anoman-recording.json"


async def test_export_a_recording_from_the_history_list(
        make_app: Callable[..., AnomanApp], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with HistoryStore.open(default_path()) as store:
        recorded = store.save(comparison())
        hidden = comparison(blind=True, prompt="Which is which?")
        store.save(replace(hidden, panes=tuple(replace(p, label="ABC"[p.pane - 1])
                                               for p in hidden.panes)))
        original = store.get(recorded)
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        await until(pilot, lambda: app.history is not None)
        await pilot.press("f6")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen)
                    and app.screen.query_one(OptionList).option_count == 2)

        async def formats() -> list[str | None]:
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
            return [o.id for o in app.screen.query_one(OptionList)._options]

        assert await formats() == ["md", "html", "json"]  # the blind round, not voted on
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        app.screen.query_one(OptionList).highlighted = 1
        assert await formats() == ["md", "html", "json", "recording"]
        options = app.screen.query_one(OptionList)
        options.highlighted = 3
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TextInputScreen))
        path = Path(app.screen.query_one(Input).value)
        assert path == tmp_path / f"comparison-{recorded}.anoman-recording.json"
        await pilot.press("enter")
        await until(pilot, lambda: path.exists() and "Wrote" in " ".join(
            str(n.message) for n in app._notifications))
    back = read_comparison_document(path.read_bytes())
    assert original is not None and back == replace(original, id=None)
    assert [p.recording for p in back.panes] == [p.recording for p in comparison().panes]
