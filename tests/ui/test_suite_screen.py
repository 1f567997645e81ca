"""The suite screen (`eval --tui`): a real run against the local gateway, watched on the
screen; its keys (pause, failures only, filter, open a case, stop)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from textual import events

from anoman_tui.config import Settings
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from anoman_tui.report.suite_files import ReportFiles
from anoman_tui.streaming import TextDelta
from anoman_tui.suites.engine import RunOptions
from anoman_tui.suites.loader import load_suite
from anoman_tui.suites.prepare import EvalRequest, Prepared, prepare_run
from anoman_tui.targets import Target, TargetConfig, from_config
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.screens.record import RecordScreen
from anoman_tui.ui.screens.suite import SuiteScreen, suite_client
from anoman_tui.ui.widgets.case_matrix import CaseMatrix
from tests.helpers import RecordingGateway, run_main
from tests.pilot import until
from tests.replay_server import RecordedRequest, Script
from tests.ui.screen_text import screen_lines

SUITE = """
name = "screen"
models = ["anoman-lite", "qwen3-coder"]
[[case]]
id = "steps"
prompt = "How do I descale a kettle?"
[[case.assert]]
type = "not-icontains"
value = "zebra"
[[case]]
id = "zebra"
prompt = "Tell me about kettles"
[[case.assert]]
type = "icontains"
value = "zebra"
[[case]]
id = "plain"
prompt = "Anything about tea"
"""


class Shared:
    """The session's gateway, not stopped by the run (it is the fixtures')."""

    def __init__(self, gateway: EmbeddedGateway) -> None:
        self.base_url, self.api_key = gateway.base_url, gateway.api_key

    def stop(self) -> None:
        pass


async def prepared(tmp_path: Path, gateway: EmbeddedGateway, store: HistoryStore,
                   simulate: str, *, suite: str | None = None,
                   targets: dict[str, Target] | None = None) -> Prepared:
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(suite or SUITE)
    settings = Settings()
    request = EvalRequest(
        suite=load_suite(suite_file), targets={**settings.all_targets(), **(targets or {})},
        default_target=settings.default_target, endpoint=settings.endpoint,
        options=RunOptions(concurrency=2, headers=(("X-Anoman-Simulate", simulate),)))
    # On this loop, the app's under `run_test` (the screen then makes its run's pool).
    async with suite_client(request) as client:
        return await prepare_run(request, store, lambda: Shared(gateway), client)


def app_for(run: Prepared, gateway: EmbeddedGateway,
            files: ReportFiles | None = None) -> AnomanApp:
    return AnomanApp(Settings(theme="anoman-dark"), suite=run,  # type: ignore[call-arg]
                     suite_files=files, gateway_factory=lambda: gateway)


def matrix_text(screen: SuiteScreen) -> str:
    matrix = screen.query_one("#suite-matrix", CaseMatrix)
    return "\n".join(matrix.row_text(i) for i in range(matrix.row_count))


async def test_a_run_on_the_screen_pauses_filters_opens_a_case_and_ends(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.05,rate=20,tokens=40")
        app = app_for(run, ui_gateway, ReportFiles(junit=tmp_path / "run.junit.xml"))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            # Pause at once: no new stream starts; the progress line says so.
            await pilot.press("p")
            await until(pilot, lambda: screen.runner.paused)
            await until(pilot, lambda: "PAUSED" in screen.progress_line)
            progress = screen.runner.run.progress if screen.runner.run else None
            assert progress is not None
            # Those in flight end; then nothing more starts while paused.
            await until(pilot, lambda: progress.running == 0)
            settled_at = progress.done
            assert settled_at < 6
            await pilot.pause(0.5)
            assert progress.running == 0 and progress.done == settled_at
            await pilot.press("p")
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            text = matrix_text(screen)
            # Every cell in words: passed, failed assertion, recorded without assertion.
            assert "pass" in text and "FAIL" in text and "done" in text
            assert "live" not in text and "wait" not in text
            # Failures only: the zebra case alone.
            await pilot.press("f")
            await pilot.pause()
            assert [r for r in screen._shown_rows] == ["zebra"]
            await pilot.press("f")
            # A filter by prompt words.
            await pilot.press("slash")
            for key in "tea":
                await pilot.press(key)
            await until(pilot, lambda: screen._shown_rows == ["plain"])
            await pilot.press("enter")  # keeps the filter, back on the matrix
            assert screen.filter_text == "tea" and screen._shown_rows == ["plain"]
            # Enter on the row opens that case's comparison, read-only; Esc comes back.
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, RecordScreen))
            record = app.screen
            assert isinstance(record, RecordScreen)
            assert record.record.prompt == "Anything about tea"
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
        results = store.run(run.run_id)
        assert results is not None and results.finished and len(results.results) == 6
    # eval --tui --junit: every case's answer is in its <system-out>, as headless eval's is.
    import xml.etree.ElementTree as ET

    outs = [e.text or "" for e in ET.parse(tmp_path / "run.junit.xml").iter("system-out")]
    assert len(outs) == 6
    # Each holds more than the simulated note (and the unjudged one): the answer itself.
    assert all(len(out.split("\n\n")) >= 2 and not out.split("\n\n")[-1].startswith(
        ("simulated:", "not judged:")) for out in outs), outs


async def test_esc_asks_then_stops_a_run_that_can_be_continued(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        # Slow streams: the run is still going when Esc is pressed.
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.05,rate=10,tokens=400")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: "live" in matrix_text(screen))
            await pilot.press("escape")
            await pilot.pause()
            assert screen.runner.running  # asked, not stopped
            await pilot.press("escape")
            await until(pilot, lambda: screen.summary is not None, timeout=30)
            assert app.screen is screen
        stored = store.run(run.run_id)
        assert stored is not None and not stored.finished
        assert stored.stopped == "interrupted"


async def test_quitting_the_app_mid_run_marks_the_run_interrupted(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.05,rate=10,tokens=400")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: "live" in matrix_text(screen))
            app.exit()  # Ctrl+Q's way out: the run's worker is cancelled mid-stream
        stored = store.run(run.run_id)
        assert stored is not None and not stored.finished
        assert stored.stopped == "interrupted"


async def test_a_running_case_opens_live_and_an_aborted_pane_is_its_cells_result(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    from anoman_tui.ui.screens.suite_case import CaseScreen
    from anoman_tui.ui.widgets.pane import ComparePane

    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.05,rate=10,tokens=200")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(160, 45)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: all(screen.cells[("steps", m)].live
                                           for m in screen.models))
            await pilot.pause(0.6)  # some text has streamed
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, CaseScreen))
            case = app.screen
            assert isinstance(case, CaseScreen)
            panes = list(case.query(ComparePane))
            # The text so far is there at once, and more follows.
            await until(pilot, lambda: all(p.status == "streaming" for p in panes[:2]))
            await until(pilot, lambda: len(panes[0].answer.text) > 0)
            await pilot.press("f2")  # abort the second model's stream
            await until(pilot, lambda: panes[1].status == "cancelled")
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            await until(pilot, lambda: 1 in screen.cells[("steps", "qwen3-coder")].results)
            assert screen.cells[("steps", "qwen3-coder")].results[1].status == "cancelled"
            assert "cancelled" in matrix_text(screen)
            # Leaving the case closed no other stream: the two not aborted still run.
            others = [m for m in screen.models if m != "qwen3-coder"]
            await pilot.pause(0.5)
            assert all(screen.cells[("steps", m)].live for m in others)
            assert not any(screen.cells[("steps", m)].results for m in others)
            keys = list(case.query("FooterKey"))
            assert "app.history" not in {k.action for k in keys}  # type: ignore[attr-defined]
            # Opened again: the same case screen, loaded afresh, the text so far at once
            # (nothing rebuilt, its keys neither), drawn whole in the Enter key's handler
            # with the text its streams had read by then. The matrix beneath keeps what
            # changes while it is covered (drawing it would repaint the case on top).
            run = screen.runner.run
            assert run is not None
            slot = screen.prepared.slots[screen.case_slots[0]]
            stream = run.live[("steps", slot.spec, 1)]
            so_far = sum(len(e.text) for e in list(stream.events or ())
                         if isinstance(e, TextDelta))
            assert so_far > 0
            drawn: list[int] = []
            whole = case._compositor.render_full_update

            def counted(*args: Any, **kwargs: Any) -> Any:
                drawn.append(len(case.pane(1).answer.text))
                return whole(*args, **kwargs)

            case._compositor.render_full_update = counted  # type: ignore[method-assign]
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is case)
            assert len(case.pane(1).answer.text) > 0 and case.pane(1).status == "streaming"
            await pilot.pause(0.3)
            assert drawn and drawn[0] >= so_far, (drawn, so_far)
            assert screen._covered()
            await pilot.pause(0.2)
            assert list(case.query("FooterKey")) == keys
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            assert not screen._covered()
            assert all(screen.cells[("steps", m)].live for m in others)
            screen.runner.stop()
            await until(pilot, lambda: screen.summary is not None, timeout=30)


async def test_the_history_lists_suite_runs_and_reopens_one_on_the_screen(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    from textual.widgets import OptionList

    from anoman_tui.history import default_path
    from anoman_tui.ui.screens.history import HistoryScreen

    with HistoryStore.open(default_path()) as store:  # the app's own history
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.01,rate=2000,tokens=20")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            first = app.screen
            assert isinstance(first, SuiteScreen)
            await until(pilot, lambda: first.summary is not None, timeout=60)
            # The compare screen beneath connects once it is shown, not beside the run.
            assert app.connector.ready_url is None
            await pilot.press("escape")  # ended: back to the compare screen
            await until(pilot, lambda: app.screen is app.compare)
            await until(pilot, lambda: app.connector.ready_url is not None)
            await until(pilot, lambda: app.history is not None)
            await pilot.press("f6")
            await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
            history = app.screen
            for key in "screen":  # the suite's name
                await pilot.press(key)
            options = history.query_one(OptionList)
            await until(pilot, lambda: options.option_count >= 1 and str(
                options.get_option_at_index(0).id) == f"run:{run.run_id}")
            assert "SUITE" in str(options.get_option_at_index(0).prompt)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen)
                        and app.screen is not first, timeout=30)
            again = app.screen
            assert isinstance(again, SuiteScreen)
            await until(pilot, lambda: again.summary is not None, timeout=30)
            # The finished run, as it ended: every cell, nothing run again.
            assert again.prepared.todo == [] and "wait" not in matrix_text(again)
            await pilot.press("escape")


async def test_the_palette_runs_a_suite_file_with_its_path_completed(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    from anoman_tui.ui.screens.suite_open import PathSuggester, check_suite_path

    suite_file = tmp_path / "my-suite.toml"
    suite_file.write_text(SUITE)
    (tmp_path / "notes.txt").write_text("not a suite")
    suggester = PathSuggester()
    assert await suggester.get_suggestion(str(tmp_path / "my-")) == str(suite_file)
    assert await suggester.get_suggestion(str(tmp_path / "no")) is None  # .txt: not offered
    assert check_suite_path(str(tmp_path / "missing.toml")) is not None
    assert check_suite_path(str(suite_file)) is None
    app = AnomanApp(Settings(theme="anoman-dark"), gateway_factory=lambda: ui_gateway)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.compare.base_url is not None)
        app.action_run_suite()
        await pilot.pause()
        for key in str(suite_file):
            await pilot.press(key if key != "/" else "slash")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, SuiteScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, SuiteScreen)
        assert screen.prepared.request.suite.name == "screen"
        screen.runner.stop()
        await until(pilot, lambda: screen.summary is not None, timeout=30)


async def test_ctrl_s_writes_the_runs_report_in_each_format(
        tmp_path: Path, ui_gateway: EmbeddedGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import xml.etree.ElementTree as ET

    from anoman_tui.ui.screens.pickers import ChoiceScreen

    monkeypatch.chdir(tmp_path)
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0.01,rate=2000,tokens=20")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            for downs, ending in ((0, "html"), (1, "json"), (2, "junit.xml"), (3, "md"),
                                  (4, "svg")):
                await pilot.press("ctrl+s")
                await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
                for _ in range(downs):
                    await pilot.press("down")
                await pilot.press("enter")
                written = tmp_path / f"{run.run_id}.{ending}"
                await until(pilot, lambda w=written: w.exists() and w.stat().st_size > 0)
                assert app.screen is screen
    html = (tmp_path / f"{run.run_id}.html").read_text()
    assert "<html" in html.lower() and "zebra" in html
    document = json.loads((tmp_path / f"{run.run_id}.json").read_text())
    assert document["run_id"] == run.run_id and len(document["results"]) == 6
    junit = ET.parse(tmp_path / f"{run.run_id}.junit.xml").getroot()
    assert junit.tag == "testsuites"
    markdown = (tmp_path / f"{run.run_id}.md").read_text()
    assert "## Per model" in markdown and "## Failed (2)" in markdown
    assert "<svg" in (tmp_path / f"{run.run_id}.svg").read_text()


async def test_with_four_models_a_case_opens_with_the_three_chosen(
        tmp_path: Path, ui_gateway: EmbeddedGateway) -> None:
    from anoman_tui.ui.screens.pickers import ChoiceScreen
    from anoman_tui.ui.screens.record import RecordScreen

    four = SUITE.replace('models = ["anoman-lite", "qwen3-coder"]',
                         'models = ["anoman-lite", "qwen3-coder", "claude-sonnet-4-6", '
                         '"deepseek-r1"]')
    (tmp_path / "four").mkdir()
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        suite_file = tmp_path / "four" / "suite.toml"
        suite_file.write_text(four)
        settings = Settings()
        request = EvalRequest(
            suite=load_suite(suite_file), targets=settings.all_targets(),
            default_target=settings.default_target, endpoint=settings.endpoint,
            options=RunOptions(concurrency=4, headers=(
                ("X-Anoman-Simulate", "ttft=0.01,rate=2000,tokens=20"),)))
        async with suite_client(request) as client:
            run = await prepare_run(request, store, lambda: Shared(ui_gateway), client)
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
            await pilot.press("down")  # the second trio: 1st, 2nd and 4th models
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is screen)
            assert screen.case_slots == [0, 1, 3]
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, RecordScreen))
            record = app.screen
            assert isinstance(record, RecordScreen)
            assert [p.model for p in record.record.panes] == [
                "anoman-lite", "qwen3-coder", "deepseek-r1"]


async def test_at_80x24_the_matrix_shows_every_models_column_whole(
        tmp_path: Path, ui_gateway: EmbeddedGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "SUITE", SUITE.replace(
        'models = ["anoman-lite", "qwen3-coder"]',
        'models = ["anoman-lite", "qwen3-coder", "claude-sonnet-4-6"]'))
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        run = await prepared(tmp_path, ui_gateway, store, "ttft=0,rate=4000")
        app = app_for(run, ui_gateway)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
            screen = app.screen
            assert isinstance(screen, SuiteScreen)
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            matrix = screen.query_one("#suite-matrix", CaseMatrix)
            top = matrix.region.y

            def rows() -> list[str]:
                return screen_lines(app)[top:top + 4]

            # Every cell has its final words: a pass, a failure or done, with its time.
            await until(pilot, lambda: all(re.search(r"(pass|FAIL|done) \d+\.\d\ds$", row)
                                           for row in rows()[1:]), timeout=10)
            header, *cells = rows()
            assert header.split() == ["case", "anoman-lite", "qwen3-coder", "claude-sonnet-4-6"]
            assert "→" not in header
            for row in cells:
                assert len(re.findall(r"(?:✓ pass|✗ FAIL|○ done) \d+\.\d\ds", row)) == 3, row


class PartlyCached(RecordingGateway):
    """An OpenAI-compatible server that answers the tea prompt from its cache, `no-cache`
    or not (as a server may: a JSON answer marked as a cache hit), and streams the rest."""

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method == "POST" and "tea" in json.dumps(request.body):
            body = {"id": "chatcmpl-1", "object": "chat.completion",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "Cached tea."}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                    "_anoman": {"cache": {"hit": True}, "cost_usd": "0.000000"}}
            return Script(content_type="application/json", body=[json.dumps(body).encode()],
                          chunked=False)
        return super().script_for(request)


async def test_the_matrix_and_the_figures_count_ttft_as_the_summary_does(
        tmp_path: Path, ui_gateway: EmbeddedGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    # A cache hit is answered, but not timed: the summary leaves it out of TTFT, and so
    # must its matrix cell and the per-model figures beside the matrix.
    server = PartlyCached()
    await server.start()
    monkeypatch.setenv("ANOMAN_TEST_CACHING_KEY", "sk-caching-1234")
    caching = from_config("caching", TargetConfig(base_url=server.base_url,
                                                  api_key_env="ANOMAN_TEST_CACHING_KEY"))
    suite = SUITE.replace('models = ["anoman-lite", "qwen3-coder"]',
                          'models = ["anoman-lite", "caching:listed-1"]')
    try:
        with HistoryStore.open(tmp_path / "h.sqlite3") as store:
            run = await prepared(tmp_path, ui_gateway, store, "ttft=0.01,rate=2000,tokens=20",
                                 suite=suite, targets={"caching": caching})
            app = app_for(run, ui_gateway)
            async with app.run_test(size=(160, 40)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, SuiteScreen))
                screen = app.screen
                assert isinstance(screen, SuiteScreen)
                await until(pilot, lambda: screen.summary is not None, timeout=60)
                summary = screen.summary
                assert summary is not None
                cached = {(r.case, r.model) for r in screen.results if r.cache_hit}
                assert cached == {("plain", "caching:listed-1")}
                for model in summary.models:
                    p50, p95 = model.ttft_p50_s, model.ttft_p95_s
                    assert p50 is not None and p95 is not None
                    figures = screen._shown["suite-models"].plain
                    assert f"TTFT p50 {p50:.2f} s · p95 {p95:.2f} s" in figures
                for result in screen.results:
                    cell = screen.cells[(result.case, result.model)].text().plain
                    if result.cache_hit:
                        assert cell == "○ done cached", cell
                    else:
                        assert result.timed and result.ttft_s is not None
                        assert cell.endswith(f" {result.ttft_s:.2f}s"), cell
    finally:
        await server.stop()


def test_eval_tui_runs_on_the_apps_loop_through_one_pool(
        tmp_path: Path, ui_gateway: EmbeddedGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    """`anoman-tui eval --tui` (in this process): the models listed, the cells streamed
    and the judge asked on the loop the app runs on, its thread, through one client (one
    pool), the only one made; the screen's keys answer while the cells stream."""
    from anoman_tui.streaming import StreamClient

    made: list[int] = []
    calls: list[tuple[str, str, int, int, asyncio.AbstractEventLoop]] = []
    init, stream, list_models = (StreamClient.__init__, StreamClient.stream,
                                 StreamClient.list_models)

    def counted(self: StreamClient, *args: Any, **kwargs: Any) -> None:
        made.append(id(self))
        init(self, *args, **kwargs)

    def streamed(self: StreamClient, request: Any) -> Any:
        calls.append(("stream", request.model, id(self), threading.get_ident(),
                      asyncio.get_running_loop()))
        return stream(self, request)

    async def listed(self: StreamClient, *args: Any, **kwargs: Any) -> Any:
        calls.append(("list", "", id(self), threading.get_ident(), asyncio.get_running_loop()))
        return await list_models(self, *args, **kwargs)

    monkeypatch.setattr(StreamClient, "__init__", counted)
    monkeypatch.setattr(StreamClient, "stream", streamed)
    monkeypatch.setattr(StreamClient, "list_models", listed)
    app_loop: list[asyncio.AbstractEventLoop] = []
    key_waits: list[float] = []
    streaming: list[bool] = []
    run_async = AnomanApp.run_async

    async def on_a_terminal(self: AnomanApp, **_: Any) -> Any:
        async def watch(pilot: Any) -> None:
            app_loop.append(asyncio.get_running_loop())
            await until(pilot, lambda: isinstance(pilot.app.screen, SuiteScreen))
            screen = pilot.app.screen
            matrix = screen.query_one("#suite-matrix", CaseMatrix)
            # Once the start-up's one-time work is over (the renderer's warm-up, the case
            # screen made ready), which delays a key by up to a second as the run starts
            # on a busy machine, the run on the thread of its own or not.
            await until(pilot, lambda: pilot.app.warmed_up and screen._case_screen is not None
                        and not any(w.group == "case-screen" and not w.is_finished
                                    for w in pilot.app.workers))
            await until(pilot, lambda: "live" in matrix_text(screen))
            for key in ("down", "up", "down", "up"):  # while the cells stream
                # As the terminal's driver posts a key (`pilot.press` waits for the whole
                # screen to be idle as well, which a streaming run seldom is).
                row, pressed = matrix.cursor_row, time.monotonic()
                pilot.app.post_message(events.Key(key, None))
                while matrix.cursor_row == row and time.monotonic() - pressed < 10:
                    await asyncio.sleep(0.005)
                key_waits.append(time.monotonic() - pressed)
                streaming.append(screen.runner.running)
            await until(pilot, lambda: screen.summary is not None, timeout=60)
            pilot.app.exit()

        return await run_async(self, headless=True, size=(120, 40), auto_pilot=watch)

    monkeypatch.setattr(AnomanApp, "run_async", on_a_terminal)
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.replace('name = "screen"', 'name = "screen"\n'
                                   'judge = "anoman-judge"\nconcurrency = 8') + """
[[case]]
id = "judged"
prompt = "How long should tea steep?"
[[case.assert]]
type = "llm-rubric"
value = "says how long"
""" + "".join(f'[[case]]\nid = "more-{i}"\nprompt = "Tea question {i}"\n'
              for i in range(6)))
    done = run_main(["eval", str(suite), "--tui", "--base-url", ui_gateway.base_url,
                     "-H", "X-Anoman-Simulate: ttft=0.02,rate=40,tokens=40"],
                    env={**os.environ, "ANOMAN_API_KEY": ui_gateway.api_key})
    assert done.returncode in (0, 1), done.stderr  # (zebra fails; the judge may pass it)
    (loop,) = app_loop
    assert {kind for kind, *_ in calls} == {"list", "stream"}
    assert "anoman-judge" in {model for _, model, *_ in calls}
    assert {(client, thread, used) for _, _, client, thread, used in calls} == {
        (made[0], threading.get_ident(), loop)}
    assert len(made) == 1, "one pool: the models' lists, the cells and the judge"
    # Generous (a busy machine): a key is handled within a few frames, not after the run.
    assert all(streaming) and max(key_waits) < 1.0, (streaming, key_waits)
