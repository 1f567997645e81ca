"""`history/transfer.py`: a local SQLite history copied into another store (PostgreSQL,
or another file) whole, and idempotently: copied twice, nothing doubles."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path

from anoman_tui.history import ComparisonRecord, GroupInfo, HistoryStore, PaneRecord
from anoman_tui.history.transfer import copy_history
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording


def _pane(n: int, model: str, *, recorded: bool = False, label: str = "") -> PaneRecord:
    body = f"data: {n}\n\n".encode() * 20
    recording = StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model=model, status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.05,
        reads=((0.1, body[:40]), (0.2, body[40:])), ending="completed", ended_at=0.25,
        pane=n) if recorded else None
    return PaneRecord(pane=n, model=model, base_url="http://x", endpoint="openai",
                      text=f"answer {n} é", metrics={"ttft_s": 0.1 * n, "chunks": 3},
                      cost=Cost(Decimal("0.0012"), "gateway"), recording=recording,
                      label=label, rate_series=(1.0, 2.0))


def _comparable(record: ComparisonRecord | None) -> ComparisonRecord:
    """What must survive a copy: everything but the ids the target gives."""
    assert record is not None
    return dataclasses.replace(record, id=None, rerun_of=None)


def _source(path: Path) -> dict[str, int]:
    with HistoryStore.open(path) as store:
        store.user = "ann"
        ids = {
            "plain": store.save(ComparisonRecord(
                prompt="Why is the sky blue", panes=(_pane(1, "m1", recorded=True),
                                                     _pane(2, "m2")),
                conversation=(("user", "hi"), ("assistant", "hello")), created_at=100.0)),
            "voted": store.save(ComparisonRecord(
                prompt="blind voted", blind=True, created_at=101.0,
                panes=(_pane(1, "m1", label="A"), _pane(2, "m2", label="B")))),
            "unvoted": store.save(ComparisonRecord(
                prompt="blind unvoted", blind=True, created_at=102.0,
                panes=(_pane(1, "m1", label="A"), _pane(2, "m2", label="B")))),
        }
        ids["rerun"] = store.save(ComparisonRecord(prompt="Why is the sky blue",
                                                   panes=(_pane(1, "m1"),), created_at=103.0,
                                                   rerun_of=ids["plain"]))
        store.cast_vote(ids["voted"], "win", 2, blind=True, user="bob")
        store.save_round_judgement(ids["voted"], "judge-model", "win", "m2", {"why": "x"})
        store.create_run("run-1", name="suite", suite={"name": "suite"}, settings={"x": 1},
                         models=["m1", "m2"], cells=2)
        for n, model in enumerate(("m1", "m2"), start=1):
            store.save_cell("run-1", {"case": "c1", "model": model, "repeat": 1},
                            case_id="c1", model=model, repeat=1, status="completed",
                            passed=n == 1, pane=_pane(n, model), group=GroupInfo("suite q"))
        store.save_pair("run-1", {"case": "c1", "repeat": 1, "a": "m1", "b": "m2",
                                  "winner": "m1"})
    return ids


def test_a_sqlite_history_is_copied_whole_and_only_once(
        tmp_path: Path, history_location: Path | str) -> None:
    source_path = tmp_path / "local.sqlite3"
    ids = _source(source_path)
    if isinstance(history_location, Path):
        history_location = tmp_path / "target.sqlite3"
    seen: list[tuple[int, int]] = []
    with HistoryStore.open(source_path) as source, HistoryStore.open(history_location) as target:
        counts = copy_history(source, target, lambda done, total: seen.append((done, total)))
        assert (counts.comparisons, counts.already, counts.votes, counts.runs) == (5, 0, 1, 1)
        assert seen[-1] == (5, 5)
        copies = target.recent(100)
        by_prompt = {r.prompt: r for r in copies if r.rerun_of is None}
        rerun = next(r for r in copies if r.rerun_of is not None)
        for key, source_id in ids.items():
            original = source.get(source_id)
            assert original is not None
            copy = by_prompt[original.prompt] if key != "rerun" else rerun
            assert _comparable(target.get(copy.id or 0)) == _comparable(original)
            assert target.recordings(copy.id or 0) == source.recordings(source_id)
        assert rerun.rerun_of == by_prompt["Why is the sky blue"].id != rerun.id
        voted = by_prompt["blind voted"]
        assert voted.vote is not None and voted.vote.user == "bob"
        judged = target.round_judgement(voted.id or 0)
        assert judged is not None and judged.best == "m2"
        assert by_prompt["blind unvoted"].vote is None
        # A blind round not voted on is still found by its labels only.
        assert [r.prompt for r in target.recent(search="m1 blind")] == ["blind voted"]
        run = target.run("run-1")
        original_run = source.run("run-1")
        assert run is not None and original_run is not None
        assert [(c["case"], c["model"], c["pass"]) for c in run.results] == [
            (c["case"], c["model"], c["pass"]) for c in original_run.results]
        assert run.pairs == original_run.pairs
        suite_comparison = target.get(run.results[0]["comparison_id"])
        assert suite_comparison is not None and suite_comparison.prompt == "suite q"
        assert len(suite_comparison.panes) == 2

        # Again: nothing doubles.
        again = copy_history(source, target)
        assert (again.comparisons, again.already, again.votes, again.runs,
                again.runs_already) == (0, 5, 0, 0, 1)
        assert len(target.recent(100)) == 5
        assert sum(r.count for r in target.voted_rounds()) == 1
        # A vote cast locally after the first copy is carried over by the next.
        source.cast_vote(ids["unvoted"], "tie", None, blind=True)
        third = copy_history(source, target)
        assert (third.comparisons, third.votes) == (0, 1)
        assert sum(r.count for r in target.voted_rounds()) == 2
        assert [r.prompt for r in target.recent(search="m1 blind")] == [
            "blind unvoted", "blind voted"]
