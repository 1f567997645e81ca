"""Suite runs in the history (schema 9) against real SQLite files: the migration from 8,
saving cells as they finish into their (case, repeat)'s comparison, replacing and
forgetting cells (resume, --retry-errors), the listing's counts, prefix ids, hand-edited
rows, comparisons of more than three panes, and two writers or a kill mid-run."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.history import (
    AmbiguousRunId,
    ComparisonRecord,
    GroupInfo,
    HistoryStore,
    HistoryUnavailable,
    PaneRecord,
    RunExists,
    UnknownRun,
    UnreadableRun,
)
from anoman_tui.history.schema.sqlite import MIGRATIONS, SCHEMA_VERSION
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording
from anoman_tui.suites.model import CellResult, Suite

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["claude-sonnet-4-6", "anoman-lite", "litellm:gpt-4o-mini"]
SUITE = {"name": "support answers", "models": MODELS, "repeat": 2,
         "cases": [{"id": "refund", "prompt": "How do I get a refund?", "vars": {},
                    "assert": [{"type": "icontains", "value": "refund", "threshold": None,
                                "weight": 1.0}], "threshold": None}]}
SETTINGS = {"concurrency": 8, "retries": 2, "min_pass_rate": None, "max_cost": "0.50"}


def recording(model: str, pane: int, body: bytes) -> StreamRecording:
    half = len(body) // 2
    return StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model=model, status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.05,
        reads=((0.1, body[:half]), (0.2, body[half:])), ending="completed", ended_at=0.25,
        pane=pane)


def pane(number: int, model: str, text: str = "You can get a refund.", *,
         status: str = "completed", recorded: bytes | None = None) -> PaneRecord:
    return PaneRecord(
        pane=number, model=model, base_url="http://127.0.0.1:8080", endpoint="openai",
        status=status, committed=status == "completed", text=text, finish_reason="stop",
        failure={"kind": "stream_error"} if status == "failed" else None,
        metrics={"ttft_s": 0.1 * number, "e2e_s": 1.0, "output_tokens_per_s": 40.0,
                 "chunks": 3},
        cost=Cost(Decimal("0.0012"), "gateway"),
        recording=None if recorded is None else recording(model, number, recorded))


def cell(case: str, model: str, repeat: int, status: str = "completed",
         passed: bool | None = True) -> dict[str, Any]:
    return CellResult(case=case, model=model, repeat=repeat, status=status, passed=passed,
                      ttft_s=0.1, e2e_s=1.0, cost=Cost(Decimal("0.0012"), "gateway"),
                      failure=None if status in ("completed", "not_run") else "it broke"
                      ).to_json()


def save(store: HistoryStore, run_id: str, case: str, model: str, repeat: int, *,
         status: str = "completed", passed: bool | None = True, number: int | None = None,
         text: str = "You can get a refund.", recorded: bytes | None = None) -> int | None:
    answer = None if status == "not_run" else pane(
        number or MODELS.index(model) + 1, model, text,
        status="completed" if status == "completed" else "failed", recorded=recorded)
    return store.save_cell(
        run_id, cell(case, model, repeat, status, passed), case_id=case, model=model,
        repeat=repeat, status=status, passed=passed, pane=answer,
        group=GroupInfo(prompt=f"How do I get a refund? ({case})", system_prompt="Be kind.",
                        created_at=1_765_000_000.0))


def new_run(store: HistoryStore, run_id: str = "run-20261203-0712-ab12", *,
            created_at: float | None = 1_765_000_000.0, cells: int = 6) -> str:
    store.create_run(run_id, name="support answers", suite=SUITE, settings=SETTINGS,
                     models=MODELS, cells=cells, created_at=created_at)
    return run_id


# -- the migration ----------------------------------------------------------------


def _schema_8_file(path: Path) -> None:
    """A history as schema 8 left it: one recorded comparison, searchable, voted on."""
    assert len(MIGRATIONS) >= 9  # (this builds the file with the steps before the 9th)
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:8]:
        step(conn)
    conn.execute("INSERT INTO comparisons (id, created_at, source, prompt, system_prompt, "
                 "conversation) VALUES (1, 1700000000.5, 'compare', 'Explain WAL mode', "
                 "'be brief', '[]')")
    for n, model in enumerate(("gpt-4o-mini", "claude-3-5-haiku"), start=1):
        conn.execute(
            "INSERT INTO panes (comparison_id, pane, model, base_url, endpoint, scenario, "
            "status, committed, text, reasoning, metrics, target, ttft_s, cost_decimal, "
            "cost_source, cost_usd) VALUES (1, ?, ?, 'http://x', 'openai', 'none', "
            "'completed', 1, ?, '', ?, 'openai', 0.1, '0.001', 'gateway', 0.001)",
            (n, model, f"answer {n}", json.dumps({"ttft_s": 0.1, "e2e_s": 1.0})))
    blob = zlib.compress(json.dumps(recording("gpt-4o-mini", 1, b"data: {}\n\n" * 9)
                                    .to_json()).encode())
    conn.execute("INSERT INTO recordings VALUES (1, 1, 90, ?)", (blob,))
    conn.execute("INSERT INTO votes VALUES (1, 0, 'win', 2, 1700000100.0)")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'comparisons_fts'").fetchone():
        conn.execute("INSERT INTO comparisons_fts (rowid, prompt, models) VALUES "
                     "(1, 'Explain WAL mode', 'gpt-4o-mini claude-3-5-haiku')")
    conn.execute("PRAGMA user_version = 8")
    conn.close()


def test_a_schema_8_history_keeps_its_comparisons_and_gains_suite_runs(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    _schema_8_file(path)
    with HistoryStore.open(path) as store:
        got = store.get(1)
        assert got is not None
        assert (got.prompt, got.system_prompt, got.source) == (
            "Explain WAL mode", "be brief", "compare")
        assert [(p.pane, p.model, p.text) for p in got.panes] == [
            (1, "gpt-4o-mini", "answer 1"), (2, "claude-3-5-haiku", "answer 2")]
        assert got.vote is not None and got.vote.winner_pane == 2 and got.recorded
        assert got.suite_run is None and got.suite_case is None and got.suite_repeat is None
        assert store.recordings(1)[1].body == b"data: {}\n\n" * 9
        assert [c.id for c in store.recent(10, "haiku")] == [1]
        run_id = new_run(store)
        comparison = save(store, run_id, "refund", "anoman-lite", 1)
        assert comparison == 2  # after the comparison already there
        stored = store.run(run_id)
        assert stored is not None and [r["comparison_id"] for r in stored.results] == [2]
        assert [c.id for c in store.listing(10)] == [2, 1]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


# -- saving a run -----------------------------------------------------------------


def test_cells_saved_as_they_finish_make_one_comparison_per_case_and_repeat(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        run_id = new_run(store, cells=7)
        ids = {}
        for repeat in (1, 2):
            for model in MODELS:
                ids[(model, repeat)] = save(store, run_id, "refund", model, repeat,
                                            recorded=f"data: {model}\n\n".encode() * 20)
        assert ids[(MODELS[0], 1)] == ids[(MODELS[2], 1)] != ids[(MODELS[0], 2)]
        assert save(store, run_id, "late", MODELS[0], 1, status="not_run",
                    passed=None) is None

        stored = store.run(run_id)
        assert stored is not None
        assert (stored.name, stored.suite, stored.settings, stored.models, stored.cells) == (
            "support answers", SUITE, SETTINGS, MODELS, 7)
        assert Suite.from_json(stored.suite).models == tuple(MODELS)
        assert (stored.finished, stored.stopped, stored.unreadable) == (False, None, ())
        assert [(r["case"], r["model"], r["repeat"]) for r in stored.results] == [
            *(("refund", m, 1) for m in MODELS), *(("refund", m, 2) for m in MODELS),
            ("late", MODELS[0], 1)]
        back = [CellResult.from_json(r) for r in stored.results]
        assert [c.comparison_id for c in back] == [
            *(ids[(m, 1)] for m in MODELS), *(ids[(m, 2)] for m in MODELS), None]
        assert back[0] == dataclasses.replace(
            CellResult.from_json(cell("refund", MODELS[0], 1)), comparison_id=ids[(MODELS[0], 1)])

        first = ids[(MODELS[0], 1)]
        assert first is not None and store.run_comparison(run_id, "refund", 1) == first
        assert store.run_comparison(run_id, "refund", 3) is None
        assert store.run_comparison("run-other", "refund", 1) is None
        group = store.get(first)
        assert group is not None
        assert (group.source, group.prompt, group.system_prompt, group.created_at) == (
            "eval", "How do I get a refund? (refund)", "Be kind.", 1_765_000_000.0)
        assert (group.suite_run, group.suite_case, group.suite_repeat) == (run_id, "refund", 1)
        assert [p.model for p in group.panes] == MODELS and group.recorded
        assert store.recordings(first)[2].body == b"data: anoman-lite\n\n" * 20
        listed = {c.id: c for c in store.listing(10)}
        assert (listed[first].suite_run, listed[first].suite_case,
                listed[first].suite_repeat) == (run_id, "refund", 1)
        assert len(listed[first].panes) == 3
        # Found by a model whose pane came after the comparison was made.
        assert {c.id for c in store.listing(10, "gpt-4o-mini")} == {
            ids[(MODELS[0], 1)], ids[(MODELS[0], 2)]}


def test_a_comparison_saved_with_a_suite_mark_reads_it_back(history_location: Path | str) -> None:
    record = ComparisonRecord(prompt="p", panes=(pane(1, "m"),), created_at=5.0,
                              source="eval", suite_run="run-x", suite_case="c",
                              suite_repeat=3)
    with HistoryStore.open(history_location) as store:
        saved = store.save(record)
        assert store.get(saved) == dataclasses.replace(record, id=saved)
        assert store.run_comparison("run-x", "c", 3) == saved


def test_a_cell_saved_again_replaces_its_pane_and_recording_in_place(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        run_id = new_run(store)
        first = save(store, run_id, "refund", MODELS[0], 1, text="old", recorded=b"x" * 300)
        save(store, run_id, "refund", MODELS[1], 1)
        again = save(store, run_id, "refund", MODELS[0], 1, status="stream_error",
                     passed=False, text="new", recorded=b"y" * 40)
        assert again == first and first is not None
        group = store.get(first)
        assert group is not None
        assert [(p.pane, p.text, p.status) for p in group.panes] == [
            (1, "new", "failed"), (2, "You can get a refund.", "completed")]
        assert store.recordings(first)[1].body == b"y" * 40
        assert store.recording_sizes(first) == {1: 40}
        stored = store.run(run_id)
        assert stored is not None
        # Replaced, it keeps its place in the run's order.
        assert [(r["model"], r["status"], r["pass"]) for r in stored.results] == [
            (MODELS[0], "stream_error", False), (MODELS[1], "completed", True)]
        # Saved again with no answer (not run): its pane goes, the other stays.
        assert save(store, run_id, "refund", MODELS[0], 1, status="not_run",
                    passed=None) is None
        group = store.get(first)
        assert group is not None and [p.pane for p in group.panes] == [2]
        assert store.recordings(first) == {}
        # ...and the last pane's going takes the comparison with it.
        save(store, run_id, "refund", MODELS[1], 1, status="not_run", passed=None)
        assert store.get(first) is None and store.listing(10) == []
        assert store.recent(10, "refund") == []


def test_retry_errors_forgets_failed_cells_and_their_panes(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        run_id = new_run(store)
        one = save(store, run_id, "refund", MODELS[0], 1)
        save(store, run_id, "refund", MODELS[1], 1, status="stream_error", passed=False,
             recorded=b"z" * 99)
        two = save(store, run_id, "refund", MODELS[1], 2, status="rate_limited", passed=False)
        store.delete_cells(run_id, [("refund", MODELS[1], 1), ("refund", MODELS[1], 2),
                                    ("refund", MODELS[2], 9), ("refund", MODELS[1], 1)])
        stored = store.run(run_id)
        assert stored is not None
        assert [(r["model"], r["repeat"]) for r in stored.results] == [(MODELS[0], 1)]
        assert one is not None and two is not None
        group = store.get(one)
        assert group is not None and [p.model for p in group.panes] == [MODELS[0]]
        assert store.recordings(one) == {}
        assert store.get(two) is None  # its only pane was forgotten
        assert [c.id for c in store.listing(10, "anoman-lite")] == []
        # The retry saves them again into the comparisons of their (case, repeat).
        assert save(store, run_id, "refund", MODELS[1], 1) == one
        retried = save(store, run_id, "refund", MODELS[1], 2)
        assert retried is not None and retried != one
        assert [c.id for c in store.listing(10, "anoman-lite")] == [retried, one]
        listing = store.runs()[0]
        assert (listing.results, listing.failed, listing.passed) == (3, 0, 3)


def test_runs_are_listed_newest_first_with_their_cells_counted(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        old = new_run(store, "run-20261201-0900-aaaa", created_at=100.0)
        new = new_run(store, "run-20261203-0712-ab12", created_at=200.0, cells=12)
        empty = new_run(store, "run-20261202-0900-bbbb", created_at=150.0)
        save(store, old, "a", MODELS[0], 1)
        for n, (status, passed) in enumerate([
                ("completed", True), ("completed", True), ("completed", False),
                ("stream_error", False), ("truncated", False), ("not_run", None),
                ("completed", None)]):
            save(store, new, f"case-{n}", MODELS[n % 3], 1, status=status, passed=passed)
        store.finish_run(old, finished=True, stopped=None)
        store.finish_run(new, finished=False, stopped="cost_limit")
        listed = store.runs()
        assert [r.run_id for r in listed] == [new, empty, old]
        top = listed[0]
        assert (top.name, top.created_at, top.models, top.cells) == (
            "support answers", 200.0, MODELS, 12)
        assert (top.results, top.passed, top.failed, top.judged) == (7, 2, 2, 5)
        assert (top.finished, top.stopped) == (False, "cost_limit")
        assert (listed[1].results, listed[1].passed, listed[1].judged) == (0, 0, 0)
        assert (listed[2].results, listed[2].finished, listed[2].stopped) == (1, True, None)
        assert [r.run_id for r in store.runs(limit=2)] == [new, empty]
        stored = store.run(new)
        assert stored is not None and stored.stopped == "cost_limit" and not stored.finished
        assert stored.updated_at >= stored.created_at


def test_writes_to_a_run_are_checked(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        run_id = new_run(store)
        with pytest.raises(RunExists, match="already holds a suite run run-20261203"):
            store.create_run(run_id, name="other", suite={}, settings={}, models=[], cells=1)
        stored = store.run(run_id)
        assert stored is not None and stored.name == "support answers"  # not overwritten
        with pytest.raises(UnknownRun, match="holds no suite run run-missing"):
            save(store, "run-missing", "refund", MODELS[0], 1)
        with pytest.raises(UnknownRun):
            store.finish_run("run-missing", finished=True, stopped=None)
        with pytest.raises(UnknownRun):
            store.delete_cells("run-missing", [])
        with pytest.raises(ValueError, match="interrupted, cost_limit"):
            store.finish_run(run_id, finished=False, stopped="bored")
        with pytest.raises(ValueError, match="group"):
            store.save_cell(run_id, cell("refund", MODELS[0], 1), case_id="refund",
                            model=MODELS[0], repeat=1, status="completed", passed=True,
                            pane=pane(1, MODELS[0]))
        # A cell that cannot be stored leaves nothing behind: not even the comparison
        # its pane went into first (one transaction).
        with pytest.raises(ValueError, match="not JSON"):
            store.save_cell(run_id, {"case": "refund", "odd": {1, 2}}, case_id="refund",
                            model=MODELS[0], repeat=1, status="completed", passed=True,
                            pane=pane(1, MODELS[0]), group=GroupInfo("p"))
        assert store.listing(10) == [] and store.run_comparison(run_id, "refund", 1) is None
        with pytest.raises(ValueError, match="not JSON"):
            store.create_run("run-nan", name="n", suite={"x": float("nan")}, settings={},
                             models=[], cells=1)
        assert [r.run_id for r in store.runs()] == [run_id]


def test_a_run_is_found_by_a_unique_prefix_of_its_id(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        for run_id in ("run-20261203-0712-ab12", "run-20261203-0940-cd34",
                       "run-20261204-1100-ef56", "run-2026120"):
            new_run(store, run_id)
        found = store.run("run-20261204")
        assert found is not None and found.run_id == "run-20261204-1100-ef56"
        found = store.run("run-20261203-07")
        assert found is not None and found.run_id == "run-20261203-0712-ab12"
        # An exact id wins over the longer ids it begins.
        found = store.run("run-2026120")
        assert found is not None and found.run_id == "run-2026120"
        with pytest.raises(AmbiguousRunId, match=r"run-20261203 starts the ids of several "
                                                 r"suite runs \(run-20261203-0712-ab12, "
                                                 r"run-20261203-0940-cd34\)") as refused:
            store.run("run-20261203")
        assert isinstance(refused.value, ValueError) and refused.value.reason.endswith("id")
        assert store.run("run-2027") is None and store.run("") is None
        assert store.run("run-2026_") is None and store.run("run-2026%") is None


def test_a_hand_edited_cell_is_left_out_and_named(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        run_id = new_run(store)
        for n, model in enumerate(MODELS):
            save(store, run_id, "refund", model, 1, passed=n != 1)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("UPDATE suite_results SET data = '{not json' WHERE model = ?", (MODELS[0],))
        conn.execute("UPDATE suite_results SET data = '[1, 2]' WHERE model = ?", (MODELS[2],))
        # The row's columns win over what the JSON says (the listing counts them).
        conn.execute("UPDATE suite_results SET data = json_set(data, '$.pass', json('true'), "
                     "'$.case', 'edited') WHERE model = ?", (MODELS[1],))
    with HistoryStore.open(path) as store:
        stored = store.run(run_id)
        assert stored is not None
        assert stored.unreadable == (("refund", MODELS[0], 1), ("refund", MODELS[2], 1))
        assert [(r["case"], r["model"], r["pass"]) for r in stored.results] == [
            ("refund", MODELS[1], False)]
        assert store.runs()[0].results == 3
        # A resume runs an unreadable cell again: its save replaces the row.
        save(store, run_id, "refund", MODELS[0], 1)
        stored = store.run(run_id)
        assert stored is not None and stored.unreadable == (("refund", MODELS[2], 1),)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE suite_runs SET suite = 'oops', models = '{'")
    with HistoryStore.open(path) as store:
        assert store.runs()[0].models == []
        with pytest.raises(UnreadableRun, match="stored suite is not readable"):
            store.run(run_id)


def test_a_deleted_comparison_leaves_its_cells_without_a_stale_id(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        run_id = new_run(store)
        comparison = save(store, run_id, "refund", MODELS[0], 1)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM comparisons WHERE id = ?", (comparison,))
    with HistoryStore.open(path) as store:
        stored = store.run(run_id)
        assert stored is not None and stored.results[0]["comparison_id"] is None
        assert save(store, run_id, "refund", MODELS[0], 1) not in (None, comparison)


# -- more than three panes ----------------------------------------------------------


def test_comparisons_of_five_panes_list_search_and_count(history_location: Path | str) -> None:
    five = [f"model-{n}" for n in range(1, 6)]
    with HistoryStore.open(history_location) as store:
        store.create_run("run-five", name="five", suite={"name": "five"}, settings={},
                         models=five, cells=5)
        for n, model in enumerate(five, start=1):
            comparison = store.save_cell(
                "run-five", cell("c", model, 1), case_id="c", model=model, repeat=1,
                status="completed", passed=True,
                pane=pane(n, model, status="failed" if n == 5 else "completed"),
                group=GroupInfo("five models"))
        plain = store.save(ComparisonRecord(
            prompt="six panes", panes=tuple(pane(n, f"model-{n}") for n in range(1, 7))))
        listed = {c.id: c for c in store.listing(10)}
        assert [p.model for p in listed[comparison or 0].panes] == five
        assert [p.pane for p in listed[plain].panes] == [1, 2, 3, 4, 5, 6]
        assert [len(r.panes) for r in store.recent(10)] == [6, 5]
        assert [c.id for c in store.listing(10, "model-5")] == [plain, comparison]
        assert [c.id for c in store.recent(10, "model-6")] == [plain]
        numbers = store.model_numbers()
        assert sorted(numbers) == [f"model-{n}" for n in range(1, 7)]
        assert numbers["model-5"].answers == 2 and numbers["model-5"].failures == {
            "stream_error": 1}
        assert numbers["model-4"].percentiles[("ttft_s", 50.0)] == pytest.approx(0.4)


# -- several writers, a kill ---------------------------------------------------------


def test_threads_saving_cells_of_one_run_share_its_comparisons(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        run_id = new_run(store, cells=3 * 40)
        errors: list[BaseException] = []

        def worker(model: str) -> None:
            try:
                for n in range(40):
                    save(store, run_id, f"case-{n}", model, 1)
            except BaseException as exc:  # (reported by the assertion below)
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(m,)) for m in MODELS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        _assert_whole(store, run_id, cases=40, models=MODELS)


_CELL_SAVER = textwrap.dedent(
    """
    import sys
    from anoman_tui.history import GroupInfo, HistoryStore, PaneRecord
    path, run_id, model, pane, count = sys.argv[1:6]
    store = HistoryStore.open(path)
    print("ready", flush=True)
    for n in range(int(count)):
        answer = PaneRecord(pane=int(pane), model=model, base_url="http://x",
                            endpoint="openai", text="word " * 400)
        store.save_cell(run_id, {"case": f"case-{n}", "model": model, "repeat": 1},
                        case_id=f"case-{n}", model=model, repeat=1, status="completed",
                        passed=True, pane=answer, group=GroupInfo(f"prompt {n}"))
        print(n, flush=True)
    store.close()
    """
)


def _cell_saver(path: Path | str, run_id: str, model: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", _CELL_SAVER, str(path), run_id, model,
         str(MODELS.index(model) + 1), str(count)],
        stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def _assert_whole(store: HistoryStore, run_id: str, *, cases: int, models: list[str]) -> None:
    """Every cell saved has its pane in its (case, repeat)'s one comparison, and every
    pane of the run's comparisons belongs to a saved cell."""
    stored = store.run(run_id)
    assert stored is not None
    by_case: dict[str, set[int]] = {}
    for result in stored.results:
        by_case.setdefault(result["case"], set()).add(result["comparison_id"])
    assert all(len(ids) == 1 and None not in ids for ids in by_case.values())
    assert len(by_case) == cases
    saved = {(r["case"], r["model"]) for r in stored.results}
    assert len(saved) == len(stored.results) == cases * len(models)
    for case, (comparison,) in by_case.items():
        group = store.get(comparison)
        assert group is not None and group.suite_case == case
        assert {(case, p.model) for p in group.panes} <= saved
        assert len(group.panes) == len(models)


def test_two_processes_save_cells_of_one_run_at_once(history_location: Path | str) -> None:
    path = history_location
    with HistoryStore.open(path) as store:
        run_id = new_run(store, cells=2 * 60)
    procs = [_cell_saver(path, run_id, model, 60) for model in MODELS[:2]]
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    with HistoryStore.open(path) as store:
        _assert_whole(store, run_id, cases=60, models=MODELS[:2])


def test_a_kill_between_saves_leaves_every_saved_cell_whole(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        run_id = new_run(store, cells=100_000)
    proc = _cell_saver(path, run_id, MODELS[0], 100_000)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    last = -1
    deadline = time.monotonic() + 60
    while last < 40 and time.monotonic() < deadline:
        last = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # No pane without its cell's row, no row pointing at a pane that is not there.
        assert conn.execute(
            "SELECT COUNT(*) FROM panes p JOIN comparisons c ON c.id = p.comparison_id "
            "WHERE NOT EXISTS (SELECT 1 FROM suite_results s WHERE s.comparison_id = c.id "
            "AND s.pane = p.pane)").fetchone()[0] == 0
        assert conn.execute(
            "SELECT COUNT(*) FROM suite_results s WHERE NOT EXISTS (SELECT 1 FROM panes p "
            "WHERE p.comparison_id = s.comparison_id AND p.pane = s.pane)").fetchone()[0] == 0
    with HistoryStore.open(path) as store:
        stored = store.run(run_id)
        assert stored is not None
        # Every save the child reported had committed; at most one more may have.
        assert len(stored.results) >= last + 1
        _assert_whole(store, run_id, cases=len(stored.results), models=MODELS[:1])
        save(store, run_id, "after", MODELS[1], 1)


def test_a_locked_history_refuses_a_cell_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        run_id = new_run(store)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        with HistoryStore.open(path, timeout=0.2) as store:
            holder.execute("BEGIN IMMEDIATE")
            with pytest.raises(HistoryUnavailable, match="is locked by another program"):
                save(store, run_id, "refund", MODELS[0], 1)
            holder.execute("ROLLBACK")
            assert save(store, run_id, "refund", MODELS[0], 1) is not None
    finally:
        holder.close()


# -- size ---------------------------------------------------------------------------


def test_a_run_of_ten_thousand_results_reads_back_quickly(tmp_path: Path) -> None:
    # The target is 1 s for `runs show` of such a run; this bound is generous
    # (shared machines); benchmarks/ measure the figure.
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        run_id = new_run(store, cells=10_000)
    data = [(run_id, f"case-{n // 3}", MODELS[n % 3], 1, "completed", n % 2,
             json.dumps({**cell(f"case-{n // 3}", MODELS[n % 3], 1), "comparison_id": None}),
             None, None, 1.0) for n in range(10_000)]
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO suite_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         data)
    with HistoryStore.open(path) as store:
        started = time.perf_counter()
        stored = store.run(run_id[:12])
        took = time.perf_counter() - started
        assert stored is not None and len(stored.results) == 10_000
        assert took < 5.0
        started = time.perf_counter()
        listed = store.runs()
        assert time.perf_counter() - started < 1.0
        assert (listed[0].results, listed[0].passed, listed[0].judged) == (10_000, 5_000,
                                                                          10_000)
        plan = " ".join(str(row[3]) for row in store._conn.execute(
            "EXPLAIN QUERY PLAN SELECT COUNT(*), SUM(pass = 1), COUNT(pass) "
            "FROM suite_results WHERE run_id = ? AND status NOT IN ('a', 'b')", (run_id,)))
        assert "COVERING INDEX suite_results_tally" in plan


def test_pairwise_verdicts_are_kept_per_pair_and_forgotten_with_a_retried_cell(
        history_location: Path | str) -> None:
    def verdict(case: str, a: str, b: str, ab: str, ba: str) -> dict[str, Any]:
        return {"case": case, "repeat": 1, "a": a, "b": b, "ab": ab, "ba": ba,
                "winner": None, "len_a": 10, "len_b": 12, "errors": []}

    with HistoryStore.open(history_location) as store:
        run_id = new_run(store)
        store.save_pair(run_id, verdict("refund", MODELS[0], MODELS[1], "A", "B"))
        store.save_pair(run_id, verdict("refund", MODELS[0], MODELS[2], "C", "C"))
        store.save_pair(run_id, verdict("kettle", MODELS[1], MODELS[2], "B", "A"))
        # The same pair saved again replaces the first verdict, as a resume would.
        store.save_pair(run_id, verdict("refund", MODELS[0], MODELS[1], "A", "A"))
        stored = store.run(run_id)
        assert stored is not None
        assert sorted((p["case"], p["a"], p["b"], p["ab"], p["ba"]) for p in stored.pairs) == [
            ("kettle", MODELS[1], MODELS[2], "B", "A"),
            ("refund", MODELS[0], MODELS[1], "A", "A"),
            ("refund", MODELS[0], MODELS[2], "C", "C")]
        # A cell run again (--retry-errors) takes the verdicts it was part of with it.
        store.delete_cells(run_id, [("refund", MODELS[1], 1)])
        stored = store.run(run_id)
        assert stored is not None
        assert sorted((p["case"], p["a"], p["b"]) for p in stored.pairs) == [
            ("kettle", MODELS[1], MODELS[2]), ("refund", MODELS[0], MODELS[2])]
        with pytest.raises(UnknownRun):
            store.save_pair("run-none", verdict("refund", MODELS[0], MODELS[1], "A", "B"))


def test_a_schema_9_history_gains_the_pairwise_table(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:9]:
        step(conn)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    with HistoryStore.open(path) as store:
        run_id = new_run(store)
        store.save_pair(run_id, {"case": "c", "repeat": 1, "a": "x", "b": "y", "ab": "A",
                                 "ba": "B", "errors": []})
        stored = store.run(run_id)
        assert stored is not None and len(stored.pairs) == 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 10


def test_each_run_names_who_started_it_and_lists_filter_by_person(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        store.user = "ann"
        anns = new_run(store, "run-ann", created_at=1_765_000_000.0)
        save(store, anns, "refund", MODELS[0], 1)
        bobs = "run-bob"
        store.create_run(bobs, name="support answers", suite=SUITE, settings=SETTINGS,
                         models=MODELS, cells=6, created_at=1_765_000_100.0, user="bob")
        # A resume by someone else: the run stays its starter's, and so do its cells.
        store.user = "bob"
        save(store, anns, "refund", MODELS[1], 1)
        everyone = store.runs()
        assert [(r.run_id, r.user, r.results) for r in everyone] == [
            (bobs, "bob", 0), (anns, "ann", 2)]
        assert [r.run_id for r in store.runs(user="ann")] == [anns]
        assert [r.run_id for r in store.runs(user="bob")] == [bobs]
        assert store.runs(user="carol") == []
        assert [r.run_id for r in store.runs(1, user="ann")] == [anns]  # limit after filter
        stored = store.run(anns)
        assert stored is not None and stored.user == "ann"
        assert {r.user for r in store.recent(user="ann")} == {"ann"}
