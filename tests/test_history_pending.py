"""The writes that wait for a shared history's server (`history/pending.py`) and the
spool that keeps them across a close (`history/spool.py`): every kind of write (a
comparison, a vote, the arena judge's verdict, suite cells and pairs, a run's end) is
written once, in order, after the real PostgreSQL server comes back; a write tried
again after an ambiguous failure doubles nothing; the spool names its server and
database, never a password, and a file it cannot read is reported and kept."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.history import (
    ComparisonRecord,
    GroupInfo,
    HistoryStore,
    HistoryUnavailable,
    PaneRecord,
    VoteRefused,
)
from anoman_tui.history.pending import (
    PendingSaves,
    Write,
    apply,
    cell_write,
    comparison_write,
    finish_write,
    pair_write,
    record_from_json,
    record_to_json,
    verdict_write,
    vote_write,
    with_uid,
)
from anoman_tui.history.spool import FILE_NAME, read_spool, replay, spool, spool_path
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording
from tests.postgres import PASSWORD, PostgresServer


def _record(prompt: str, *, blind: bool = False, recorded: bool = False) -> ComparisonRecord:
    panes = tuple(PaneRecord(
        pane=p, model=f"m{p}", base_url="http://x", endpoint="openai", text=f"answer {p}",
        label="AB"[p - 1] if blind else "", cost=Cost(None, "unknown"),
        metrics={"ttft_s": 0.25, "output_tokens_per_s": 40.0}, rate_series=(1.0, 2.5),
        usage={"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        conversation=(("user", "hi"), ("assistant", "hello")),
        recording=StreamRecording(
            endpoint="openai", path="/v1/chat/completions", model=f"m{p}", status=200,
            headers=(("content-type", "text/event-stream"),), headers_at=0.05,
            reads=((0.1, b"data: {}\n\n"), (0.2, b"data: [DONE]\n\n")),
            ending="completed", ended_at=0.25, pane=p) if recorded else None)
        for p in (1, 2))
    return ComparisonRecord(prompt=prompt, panes=panes, blind=blind, user="ann",
                            created_at=1_700_000_000.5, recorded=recorded)


def _cell(run_id: str, case: str, n: int) -> Write:
    return cell_write(run_id, {"case": case, "model": "m1", "repeat": 1, "status": "completed",
                               "n": n},
                      case_id=case, model="m1", repeat=1, status="completed", passed=True,
                      pane=dataclasses.replace(_record(case).panes[0], pane=1),
                      group=GroupInfo(prompt=f"prompt {case}", created_at=1.0))


def test_a_write_survives_json_whole() -> None:
    record = with_uid(_record("round trip", blind=True, recorded=True))
    back = record_from_json(json.loads(json.dumps(record_to_json(record))))
    assert back == record and back.uid == record.uid
    assert [p.recording for p in back.panes] == [p.recording for p in record.panes]
    w = comparison_write(record)
    assert w.record == record  # kept as it is; JSON only when spooled
    again = Write.from_json(json.loads(json.dumps(w.to_json())))
    assert (again.kind, again.key, again.data["uid"]) == (w.kind, w.key, record.uid)
    assert record_from_json(again.data["record"]) == record
    with pytest.raises(ValueError, match="known kind"):
        Write.from_json({"kind": "drop table", "key": "x", "data": {}})


def test_each_write_tried_twice_is_written_once(history_location: str | Path) -> None:
    # An ambiguous failure (committed, but the answer lost) is tried again: the second
    # try of every kind finds the first's work and adds nothing.
    with HistoryStore.open(history_location) as store:
        store.user = "ann"
        record = with_uid(_record("twice", blind=True))
        first = apply(store, comparison_write(record))
        assert apply(store, comparison_write(record)) == first
        assert [r.id for r in store.recent()] == [first]
        vote = vote_write(None, record.uid, "win", 2, blind=True, user="ann", voted_at=5.0)
        assert apply(store, vote) == first and apply(store, vote) == first
        other = vote_write(first, None, "tie", None, blind=True, user="bob", voted_at=6.0)
        with pytest.raises(VoteRefused, match="already voted on by ann"):
            apply(store, other)
        verdict = verdict_write(None, record.uid, "judge-1", "win", "m2", {"calls": 2},
                                judged_at=7.0)
        apply(store, verdict)
        apply(store, verdict)
        saved = store.get(first)
        assert saved is not None and saved.vote is not None
        assert (saved.vote.outcome, saved.vote.winner_pane, saved.vote.user) == ("win", 2, "ann")
        judgement = store.round_judgement(first)
        assert judgement is not None and judgement.best == "m2"
        store.create_run("run1", name="s", suite={}, settings={}, models=["m1"], cells=1)
        for _ in range(2):
            apply(store, _cell("run1", "c1", 1))
            apply(store, pair_write("run1", {"case": "c1", "repeat": 1, "a": "m1",
                                             "b": "m2", "ab": "a", "ba": "b"}))
            apply(store, finish_write("run1", finished=True, stopped=None))
        run = store.run("run1")
        assert run is not None and len(run.results) == 1 and len(run.pairs) == 1
        assert len(store.recent()) == 2  # the round, and the cell's comparison


def test_every_kind_waits_for_the_server_and_is_written_once_in_order(
        postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    written: list[tuple[str, Any]] = []
    failed: list[str] = []
    store = HistoryStore.open(url)
    store.user = "ann"
    store.create_run("run1", name="s", suite={}, settings={}, models=["m1"], cells=3)
    pending = PendingSaves(store, on_written=lambda t, r: written.append((t, r)),
                           on_failed=lambda t, r: failed.append(r), retry_s=0.2,
                           max_retry_s=0.5)
    try:
        postgres_server.stop()
        round_ = with_uid(_record("the round", blind=True))
        queued = object()
        writes = [
            ("round", comparison_write(round_)),
            ("vote", vote_write(None, round_.uid, "win", 1, blind=True, user="ann")),
            ("verdict", verdict_write(None, round_.uid, "judge", "win", "m1", {"calls": 2})),
            ("cell 1", _cell("run1", "c1", 1)),
            ("cell 2", _cell("run1", "c2", 2)),
            ("pair", pair_write("run1", {"case": "c1", "repeat": 1, "a": "m1", "b": "m2",
                                         "ab": "a", "ba": "a"})),
            ("cell 1 again", _cell("run1", "c1", 3)),  # a later result of the same cell
            ("end", finish_write("run1", finished=True, stopped=None)),
        ]
        for token, w in writes:
            assert pending.write(w, token, queued=queued) is queued
        assert pending.waiting == len(writes)
        assert "cannot be reached" in pending.last_problem
        assert PASSWORD not in pending.last_problem
        postgres_server.start()
        assert pending.wait_written(60), "the waiting writes were not written"
        assert [token for token, _ in written] == [token for token, _ in writes]
        assert failed == []
        [round_id] = [r.id for r in store.recent() if r.prompt == "the round"]
        assert written[0][1] == round_id
        saved = store.get(round_id)
        assert saved is not None and saved.vote is not None and saved.vote.winner_pane == 1
        judgement = store.round_judgement(round_id)
        assert judgement is not None and judgement.best == "m1"
        run = store.run("run1")
        assert run is not None and run.finished
        assert sorted((r["case"], r["n"]) for r in run.results) == [("c1", 3), ("c2", 2)]
        assert len(run.pairs) == 1
        assert sorted(r.prompt for r in store.recent()) == ["prompt c1", "prompt c2",
                                                           "the round"]
    finally:
        if not postgres_server.running():
            postgres_server.start()
        assert pending.close() == 0
        store.close()


def test_a_refused_write_that_waited_is_reported_and_the_rest_go_on(
        postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    failed: list[tuple[str, str]] = []
    store = HistoryStore.open(url)
    # (no retry of its own before `wait_written` asks: ann's vote comes first)
    pending = PendingSaves(store, on_failed=lambda t, r: failed.append((t, r)),
                           retry_s=600, max_retry_s=600)
    try:
        round_id = store.save(_record("voted twice", blind=True))
        postgres_server.stop()
        pending.write(vote_write(round_id, None, "tie", None, blind=True, user="bob"), "bob's")
        postgres_server.start()
        with HistoryStore.open(url) as other:  # someone else votes first
            other.cast_vote(round_id, "win", 1, blind=True, user="ann")
        later = with_uid(_record("after it"))
        pending.write(comparison_write(later), "later")
        assert pending.wait_written(60)
        assert failed == [("bob's", f"comparison {round_id} was already voted on by ann")]
        assert store.find_uid(later.uid or "") is not None
    finally:
        if not postgres_server.running():
            postgres_server.start()
        pending.close()
        store.close()


def test_write_and_wait_gives_up_after_its_time_and_keeps_the_write(
        postgres_server: PostgresServer) -> None:
    store = HistoryStore.open(postgres_server.new_database())
    pending = PendingSaves(store, retry_s=0.1, max_retry_s=0.2)
    try:
        postgres_server.stop()
        assert pending.write_and_wait(comparison_write(_record("kept")), "it", 0.5) == (
            False, None)
        assert pending.timed_out and pending.waiting == 1
        postgres_server.start()
        written, new_id = pending.write_and_wait(comparison_write(_record("next")), "n", 60)
        assert written and store.recent()[0].id == new_id
        assert [r.prompt for r in store.recent()] == ["next", "kept"]
    finally:
        if not postgres_server.running():
            postgres_server.start()
        pending.close()
        store.close()


def test_the_spool_keeps_writes_per_server_without_a_password_and_replays_its_own(
        clean_env: Path, postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    store = HistoryStore.open(url)
    try:
        assert store.address == f"127.0.0.1:{postgres_server.port}/{url.rsplit('/', 1)[1]}"
        path = spool_path()
        assert path.name == FILE_NAME and path.parent == clean_env.parent / "data/anoman-tui"
        first, second = with_uid(_record("one")), with_uid(_record("two"))
        spool(path, "db.example:5432/other", [comparison_write(_record("someone else's"))])
        spool(path, store.address, [comparison_write(first)])
        spool(path, store.address, [comparison_write(second),
                                    vote_write(None, second.uid, "win", 2, blind=False,
                                               user="ann")])
        text = path.read_text()
        assert PASSWORD not in text and "ann:" not in text
        assert [where for where, _ in read_spool(path)] == [
            "db.example:5432/other", store.address, store.address, store.address]
        done = replay(store)
        assert (done.written, done.left, done.problems) == (3, 0, ())
        assert [r.prompt for r in store.recent()] == ["two", "one"]
        voted = store.get(store.recent()[0].id or 0)
        assert voted is not None and voted.vote is not None
        # The other server's line stays; a second start writes nothing twice.
        assert [where for where, _ in read_spool(path)] == ["db.example:5432/other"]
        assert replay(store).written == 0 and len(store.recent()) == 2
    finally:
        store.close()


def test_a_corrupt_or_foreign_spool_is_reported_and_left_in_place(
        clean_env: Path, postgres_server: PostgresServer) -> None:
    store = HistoryStore.open(postgres_server.new_database())
    try:
        path = spool_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        for content in ('{"format": "something else"}\n', "not json at all\n",
                        '{"format": "anoman-pending-save", "version": 1, "store": "x", '
                        '"kind": "comparison", "key": "k", "data": {"uid": "u"}}\n{'):
            path.write_text(content)
            done = replay(store)
            assert done.written == 0 and len(done.problems) == 1
            assert str(path) in done.problems[0] and "left as it is" in done.problems[0]
            assert path.read_text() == content  # not deleted, not rewritten
        # Writes kept meanwhile go beside it, never over it.
        where = spool(path, store.address or "", [comparison_write(_record("beside"))])
        assert where != path and path.read_text() == content
        assert len(read_spool(where)) == 1
    finally:
        store.close()


def test_take_left_hands_the_waiting_writes_over_once(postgres_server: PostgresServer) -> None:
    store = HistoryStore.open(postgres_server.new_database())
    pending = PendingSaves(store, retry_s=0.1, max_retry_s=0.2)
    try:
        postgres_server.stop()
        pending.write(comparison_write(_record("a")))
        pending.write(comparison_write(_record("b")))
        assert pending.close() == 2
        left = pending.take_left()
        assert [record_from_json(w.to_json()["data"]["record"]).prompt
                for w in left] == ["a", "b"]
        assert pending.waiting == 0 and pending.take_left() == []
    finally:
        if not postgres_server.running():
            postgres_server.start()
        store.close()


# -- the spool across processes ---------------------------------------------------------

_SPOOLER = r"""
import os, sys, time
from pathlib import Path
from anoman_tui.history.model import ComparisonRecord, PaneRecord
from anoman_tui.history.pending import comparison_write
from anoman_tui.history.spool import spool
from anoman_tui.streaming.cost import Cost

path, store, tag, count, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
while not os.path.exists(go):  # every process starts spooling at once
    time.sleep(0.001)
for i in range(count):
    uid = f"{tag}-{i}"
    pane = PaneRecord(pane=1, model="m1", base_url="http://x", endpoint="openai",
                      text="answer", cost=Cost(None, "unknown"))
    record = ComparisonRecord(prompt=uid, panes=(pane,), uid=uid, created_at=1.0)
    spool(Path(path), store, [comparison_write(record)])
    print("kept", uid, flush=True)
"""

_REPLAYER = r"""
import os, sys, time
from pathlib import Path
from anoman_tui.history import HistoryStore
from anoman_tui.history.spool import replay

path, url, rounds, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.001)
store = HistoryStore.open(url)
for _ in range(rounds):
    done = replay(store, Path(path))
    assert not done.problems, done.problems
store.close()
print("replayed", flush=True)
"""


def _processes(tmp_path: Path, jobs: list[list[str]]) -> list[str]:
    """Run the scripts at once (they wait for a shared start); their stdout, in order."""
    import os
    import subprocess
    import sys

    go = tmp_path / "go"
    started = [subprocess.Popen([sys.executable, "-c", *job, str(go)], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ)) for job in jobs]
    go.touch()
    outputs = []
    for process in started:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        outputs.append(out)
    return outputs


def test_processes_spooling_at_once_each_keep_every_line_once(tmp_path: Path) -> None:
    """Twelve processes keep three writes each into one spool at the same moment: every
    one is told "kept", and the file holds every line exactly once (one shared temporary
    name, no lock: 32 processes said "kept" and the file held 28)."""
    path = tmp_path / FILE_NAME
    outputs = _processes(tmp_path, [[_SPOOLER, str(path), "db:5432/h", f"p{n}", "3"]
                                    for n in range(12)])
    told = sorted(line.split()[1] for out in outputs for line in out.splitlines())
    uids = [w.data["uid"] for _, w in read_spool(path)]
    assert len(told) == 36
    assert sorted(uids) == told  # every write kept, none twice
    assert not list(tmp_path.glob("*.tmp"))  # no temporary left behind


def test_a_replay_while_others_spool_removes_only_the_lines_it_wrote(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    """Processes spool writes for this server and another while two others replay the
    spool into this server: each write ends in the history or still in the file, none
    is lost, no line is in the file twice, and the other server's lines are all there."""
    url = postgres_server.new_database()
    store = HistoryStore.open(url)
    try:
        address = store.address
        assert address is not None
        path = tmp_path / FILE_NAME
        for i in range(10):  # what an earlier session left
            record = dataclasses.replace(_record(f"early-{i}"), uid=f"early-{i}")
            spool(path, address, [comparison_write(record)])
        jobs = [[_SPOOLER, str(path), address if n % 2 else "db.example:5432/other",
                 f"p{n}", "4"] for n in range(8)]
        jobs += [[_REPLAYER, str(path), url, "3"] for _ in range(2)]
        outputs = _processes(tmp_path, jobs)
        assert all(out.strip() == "replayed" for out in outputs[8:])
        lines = [(where, w.data["uid"]) for where, w in read_spool(path)]
        assert len(lines) == len(set(lines))  # nothing doubled
        others = sorted(uid for where, uid in lines if where != address)
        assert others == sorted(f"p{n}-{i}" for n in range(0, 8, 2) for i in range(4))
        held = {uid for where, uid in lines if where == address}
        mine = [f"early-{i}" for i in range(10)] + [
            f"p{n}-{i}" for n in range(1, 8, 2) for i in range(4)]
        # (A line a replay removed was written: the history has it, once.)
        lost = [uid for uid in mine if uid not in held and store.find_uid(uid) is None]
        assert lost == []
        written = [uid for uid in mine if store.find_uid(uid) is not None]
        assert len(store.recent(limit=100)) == len(written)  # each written once
    finally:
        store.close()


def test_a_save_refused_for_its_uid_leaves_the_next_saves_working(
        postgres_server: PostgresServer) -> None:
    """Two processes writing one comparison: the second save is refused (the uid is
    held) inside an aborted pipeline; the saves after it still work. (psycopg counted a
    statement it began preparing in that pipeline as prepared, and a later save failed
    with 'prepared statement "_pg3_N" does not exist': a replay then dropped it.)"""
    store = HistoryStore.open(postgres_server.new_database())
    try:
        one = dataclasses.replace(_record("one"), uid="held-uid")
        store.save(one, uid="held-uid")
        for n in range(8):  # (psycopg prepares a statement on its 6th use)
            for _ in range(2):
                with pytest.raises(HistoryUnavailable):
                    store.save(dataclasses.replace(_record(f"again {n}"), uid="held-uid"),
                               uid="held-uid")
            store.save(_record(f"fresh {n}"))  # never 'prepared statement ... not exist'
        assert store.find_uid("held-uid") is not None
        assert len(store.recent(limit=100)) == 9
    finally:
        store.close()
