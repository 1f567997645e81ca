"""The history store against real SQLite files: schema, refusals, concurrency, kills, search."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.history import ComparisonRecord, HistoryStore, HistoryUnavailable, PaneRecord
from anoman_tui.history.schema.sqlite import SCHEMA_VERSION
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import RecordingError, StreamRecording

ROOT = Path(__file__).resolve().parents[1]


def record(prompt: str = "Explain WAL mode", models: tuple[str, ...] = ("gpt-4o-mini",
           "claude-3-5-haiku", "llama-3.1-8b")) -> ComparisonRecord:
    panes = tuple(
        PaneRecord(
            pane=i, model=m, base_url="http://127.0.0.1:8080", endpoint="openai",
            temperature=0.2, max_tokens=256, scenario="none",
            status="failed" if i == 3 else "completed", committed=i != 3,
            text=f"answer {i} é ✓", reasoning="thinking" if i == 2 else "",
            finish_reason="stop", failure={"kind": "http", "status": 500} if i == 3 else None,
            usage={"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            anoman={"cost_usd": 0.0012, "routing": {"provider": "x"}},
            metrics={"ttft_s": 0.1, "e2e_s": 1.0, "output_tokens_per_s": 40.0, "chunks": 9},
            rate_series=(1.0, 2.5, 0.0), cost=Cost(Decimal("0.0012"), "gateway"),
            conversation=(("user", "hi"), ("assistant", f"hello from {m}")) if i != 2 else None,
        )
        for i, m in enumerate(models, start=1)
    )
    return ComparisonRecord(prompt=prompt, panes=panes, system_prompt="be brief",
                            conversation=(("user", "hi"), ("assistant", "hello")),
                            created_at=1_700_000_000.5, source="compare")


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        rec = record()
        new_id = store.save(rec)
        got = store.get(new_id)
    assert got is not None
    assert got.id == new_id
    from dataclasses import replace
    assert replace(got, id=None) == rec
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_pages_go_on_from_the_last_id_shown(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        ids = [store.save(record(f"prompt {i}" + (" wal" if i % 2 else ""))) for i in range(7)]
        first = store.recent(limit=3)
        second = store.recent(limit=3, before=first[-1].id)
        third = store.recent(limit=3, before=second[-1].id)
        assert [r.id for r in first + second + third] == ids[::-1]
        matching = store.recent(limit=2, search="wal")
        rest = store.recent(limit=2, search="wal", before=matching[-1].id)
        assert [r.id for r in matching + rest] == [ids[5], ids[3], ids[1]]


def test_the_listing_is_what_recent_gives_without_the_answers(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        store.save(dataclasses.replace(record("first"), conversation=()))
        for i in range(4):
            store.save(record(f"prompt {i} wal"))
        for search, before in ((None, None), ("wal", None), ("claude", 4), ("nothing", None)):
            full = store.recent(3, search, before=before)
            listed = store.listing(3, search, before=before)
            assert [(c.id, c.created_at, c.prompt, bool(c.conversation)) for c in full] == [
                (c.id, c.created_at, c.prompt, c.follow_up) for c in listed]
            assert [[(p.pane, p.model, p.status, p.cost_text) for p in c.panes]
                    for c in full] == [[(p.pane, p.model, p.status, p.cost_text)
                                        for p in c.panes] for c in listed]
        assert not store.listing(5, "first")[0].follow_up


def test_a_saved_pane_reads_back_as_the_result_it_ended_with(history_location: Path | str) -> None:
    from anoman_tui.history import pane_record, result_from_record
    from anoman_tui.streaming import StreamFailure, StreamMetrics, StreamResult
    from anoman_tui.wire import GuardrailVerdict, Usage

    failure = StreamFailure(kind="http_error", detail="blocked by policy", status=403,
                            type="guardrail_block", code="blocked", retry_after_s=2.5,
                            guardrails={"pii": GuardrailVerdict(status="block", score=0.9)})
    result = StreamResult(
        status="failed", text="partial", reasoning="why", failure=failure,
        usage=Usage(prompt_tokens=3, completion_tokens=4, total_tokens=7), anoman=None,
        anoman_raw=None, metrics=StreamMetrics(ttft_s=0.25, e2e_s=1.5,
                                               output_tokens_per_s=1428.1549, chunks=40),
        finish_reason=None)
    pane = pane_record(1, "m", base_url="http://x", endpoint="openai", result=result)
    with HistoryStore.open(history_location) as store:
        saved = store.get(store.save(ComparisonRecord(prompt="p", panes=(pane,))))
    assert saved is not None
    back = result_from_record(saved.panes[0])
    assert back.failure == failure and back.failure.message == failure.message
    assert (back.status, back.text, back.reasoning, back.usage) == (
        "failed", "partial", "why", result.usage)
    assert f"{back.metrics.output_tokens_per_s:.1f}" == "1428.2"  # as the live footer showed
    assert (back.metrics.ttft_s, back.metrics.chunks) == (0.25, 40)
    # An edited file: shapes the models refuse read as absent, never as an error.
    odd = dataclasses.replace(saved.panes[0], usage={"prompt_tokens": "many"},
                              anoman={"cost_usd": {"no": 1}}, failure={"kind": "nonsense"},
                              metrics={"ttft_s": "soon", "chunks": True}, status="odd")
    back = result_from_record(odd)
    assert (back.usage, back.anoman, back.failure, back.metrics.ttft_s, back.metrics.chunks,
            back.status) == (None, None, None, None, 0, "failed")


def test_recent_is_newest_first_and_limited(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        ids = [store.save(record(f"prompt {i}")) for i in range(5)]
        assert [r.id for r in store.recent(limit=3)] == ids[::-1][:3]
        assert store.get(9999) is None


def test_search_by_prompt_words_and_model(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        assert store.fts
        a = store.save(record("Why is the sky blue", ("gpt-4o-mini",)))
        b = store.save(record("Write a haiku about rain", ("claude-3-5-haiku",)))
        assert [r.id for r in store.recent(search="sky")] == [a]
        assert [r.id for r in store.recent(search="haiku")] == [b]  # prompt and model
        assert [r.id for r in store.recent(search="claude")] == [b]
        assert [r.id for r in store.recent(search="gpt-4o")] == [a]
        assert [r.id for r in store.recent(search="blu")] == [a]  # a prefix, as typed
        assert store.recent(search="sky rain") == []  # every word must match
        assert [r.id for r in store.recent(search='"')] in ([], [a], [b], [b, a])


def test_search_falls_back_to_like_without_the_index(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        a = store.save(record("Why is the sky blue", ("gpt-4o-mini",)))
        store.save(record("Write about 100% rain", ("claude-3-5-haiku",)))
        store.fts = False
        assert [r.id for r in store.recent(search="SKY gpt-4o")] == [a]
        assert len(store.recent(search="100%")) == 1


def _v1_database(path: Path) -> None:
    """A history as the first schema left it: tables, no rate series, no search index."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE comparisons (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at REAL NOT NULL,
            source TEXT NOT NULL, prompt TEXT NOT NULL, system_prompt TEXT NOT NULL DEFAULT '',
            conversation TEXT NOT NULL DEFAULT '[]');
        CREATE TABLE panes (comparison_id INTEGER NOT NULL REFERENCES comparisons(id)
            ON DELETE CASCADE, pane INTEGER NOT NULL, model TEXT NOT NULL,
            base_url TEXT NOT NULL, endpoint TEXT NOT NULL, temperature REAL,
            max_tokens INTEGER, scenario TEXT NOT NULL, status TEXT NOT NULL,
            committed INTEGER NOT NULL, text TEXT NOT NULL, reasoning TEXT NOT NULL,
            finish_reason TEXT, failure TEXT, usage TEXT, anoman TEXT, metrics TEXT NOT NULL,
            cost_text TEXT NOT NULL, PRIMARY KEY (comparison_id, pane));
        INSERT INTO comparisons VALUES (1, 1.0, 'app', 'an old question about tides', '', '[]');
        INSERT INTO panes VALUES (1, 1, 'old-model', 'http://x', 'openai', NULL, NULL, 'none',
            'completed', 1, 'the moon', '', 'stop', NULL, NULL, NULL, '{}', '—');
        PRAGMA user_version = 1;
        """
    )
    conn.close()


def test_an_older_schema_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    _v1_database(path)
    with HistoryStore.open(path) as store:
        old = store.get(1)
        assert old is not None and old.panes[0].rate_series == ()
        assert [r.id for r in store.recent(search="tides")] == [1]  # indexed on migration
        assert [r.id for r in store.recent(search="old-model")] == [1]
        new_id = store.save(record())
        got = store.get(new_id)
        assert got is not None and got.panes[0].rate_series == (1.0, 2.5, 0.0)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def _refused(path: Path, *words: str, timeout: float = 5.0) -> str:
    before = path.read_bytes()
    with pytest.raises(HistoryUnavailable) as caught:
        HistoryStore.open(path, timeout=timeout)
    reason = caught.value.reason
    assert str(path) in reason and reason.count("\n") == 0
    assert all(w in reason for w in words), reason
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()
    return reason


def test_a_corrupt_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"this is not a database, just some text\n" * 200)
    _refused(path, "corrupt")


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    HistoryStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    _refused(path, "newer", f"schema {SCHEMA_VERSION + 1}")


def test_a_read_only_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    _v1_database(path)
    path.chmod(0o444)
    _refused(path, "read-only")


def test_a_locked_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    _v1_database(path)  # rollback-journal mode: an exclusive lock keeps readers out
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        _refused(path, "locked", timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    HistoryStore.open(path).close()  # fine once released


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    _refused(path, "other data")


_SAVER = textwrap.dedent(
    """
    import sys
    from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord
    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = HistoryStore.open(path)
    print("ready", flush=True)
    for i in range(count):
        panes = tuple(PaneRecord(pane=p, model=f"m{p}", base_url="http://x",
                                 endpoint="openai", text="word " * 300) for p in (1, 2, 3))
        store.save(ComparisonRecord(prompt=f"{tag} {i}", panes=panes))
        print(i, flush=True)
    store.close()
    """
)


def _saver(path: Path | str, tag: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _SAVER, str(path), tag, str(count)],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def test_two_processes_save_at_once(history_location: Path | str) -> None:
    path = history_location
    HistoryStore.open(path).close()
    procs = [_saver(path, tag, 60) for tag in ("alpha", "beta")]
    for proc in procs:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    with HistoryStore.open(path) as store:
        prompts = {r.prompt for r in store.recent(limit=1000)}
        assert prompts == {f"{t} {i}" for t in ("alpha", "beta") for i in range(60)}
        assert all(len(r.panes) == 3 for r in store.recent(limit=1000))


def test_sigkill_mid_save_loop_keeps_committed_rows(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    proc = _saver(path, "kill", 100_000)
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
    with HistoryStore.open(path) as store:
        saved = store.recent(limit=100_000)
        # Every save the child reported had committed; at most one more may have.
        assert len(saved) >= last + 1
        assert {r.prompt for r in saved} >= {f"kill {i}" for i in range(last + 1)}
        assert all(len(r.panes) == 3 for r in saved)
        store.save(record())


def test_a_write_lock_held_on_a_wal_history_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    HistoryStore.open(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # in WAL mode: readers pass, no other writer does
    try:
        with pytest.raises(HistoryUnavailable, match="is locked by another program"):
            HistoryStore.open(path, timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_full_disk_is_named_and_the_history_stays_readable(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore.open(path) as store:
        kept = store.save(record())
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # what a full disk does
        big = record("x " * 100_000)
        with pytest.raises(HistoryUnavailable, match="is full"):
            store.save(big)
        assert [r.id for r in store.recent()] == [kept]  # the failed save left nothing


def test_votes_are_one_per_comparison_and_blind_rounds_hide_their_models(
        history_location: Path | str) -> None:
    from anoman_tui.history import VoteRefused

    with HistoryStore.open(history_location) as store:
        labels = ("A", "B", "C")
        blind = dataclasses.replace(
            record("blind round wal"), blind=True,
            panes=tuple(dataclasses.replace(p, label=labels[p.pane - 1])
                        for p in record().panes))
        round_id = store.save(blind)
        plain_id = store.save(record("plain wal"))
        got = store.get(round_id)
        assert got is not None and got.hidden and got.vote is None
        masked = got.masked()
        assert [p.model for p in masked.panes] == ["A", "B", "C"]
        assert all(p.anoman is None and not p.base_url for p in masked.panes)
        assert store.get(plain_id).masked() == store.get(plain_id)  # type: ignore[union-attr]
        # Neither the index nor the listing tells which rounds hold a model.
        assert [r.id for r in store.recent(10, "claude")] == [plain_id]
        listed = {c.id: c for c in store.listing(10)}
        assert listed[round_id].hidden and [p.model for p in listed[round_id].panes] == [
            "A", "B", "C"]
        store.cast_vote(round_id, "win", 2, blind=True, voted_at=5.0)
        with pytest.raises(VoteRefused, match="already voted"):
            store.cast_vote(round_id, "tie", None, blind=True)
        with pytest.raises(VoteRefused, match="no comparison 999"):
            store.cast_vote(999, "bad", None, blind=True)
        with pytest.raises(ValueError):
            store.cast_vote(plain_id, "win", None, blind=False)
        voted = store.get(round_id)
        assert voted is not None and not voted.hidden
        assert voted.vote is not None and (voted.vote.outcome, voted.vote.winner_pane) == (
            "win", 2)
        assert sorted(r.id for r in store.recent(10, "claude")) == [round_id, plain_id]
        assert not store.listing(10)[-1].hidden


def _recording(model: str, pane: int, body: bytes = b"data: {}\n\n") -> StreamRecording:
    half = len(body) // 2
    return StreamRecording(
        endpoint="openai", path="/v1/chat/completions", model=model, status=200,
        headers=(("content-type", "text/event-stream"),), headers_at=0.05,
        reads=((0.1, body[:half]), (0.2, body[half:])), ending="completed", ended_at=0.25,
        pane=pane)


def _recorded(rec: ComparisonRecord) -> ComparisonRecord:
    return dataclasses.replace(rec, panes=tuple(
        dataclasses.replace(p, recording=_recording(p.model, p.pane, f"data: {p.pane}\n\n"
                                                    .encode() * 50))
        for p in rec.panes if p.pane != 2) + tuple(p for p in rec.panes if p.pane == 2))


def test_recordings_are_kept_apart_and_read_back_byte_exact(tmp_path: Path) -> None:
    rec = _recorded(record())
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        new_id = store.save(rec)
        plain = store.save(record("not recorded"))
        got = store.get(new_id)
        assert got is not None and got.recorded and all(p.recording is None for p in got.panes)
        back = store.recordings(new_id)
        assert sorted(back) == [1, 3]
        for p in rec.panes:
            if p.recording is not None:
                assert back[p.pane] == p.recording
        assert store.recording_sizes(new_id) == {1: 450, 3: 450}
        assert store.recordings(plain) == {}
        listed = {c.id: c.recorded for c in store.listing()}
        assert listed == {new_id: True, plain: False}
        # SSE compresses: the stored blob is far smaller than the stream.
        size = store._conn.execute("SELECT SUM(length(data)) FROM recordings").fetchone()[0]
        assert size < 1000


def test_a_damaged_recording_is_refused_in_one_sentence(tmp_path: Path) -> None:
    with HistoryStore.open(tmp_path / "h.sqlite3") as store:
        new_id = store.save(_recorded(record()))
        store._conn.execute("UPDATE recordings SET data = ? WHERE pane = 3", (b"\x78junk",))
        with pytest.raises(RecordingError) as caught:
            store.recordings(new_id)
    assert caught.value.reason.startswith("pane 3: ") and "\n" not in caught.value.reason


def test_the_recording_limit_drops_recordings_not_the_comparison() -> None:
    rec = _recorded(record())
    assert rec.recording_bytes == 900
    assert rec.within_recording_limit(900) == (rec, False)
    kept, dropped = rec.within_recording_limit(899)
    assert dropped and all(p.recording is None for p in kept.panes)
    assert [p.text for p in kept.panes] == [p.text for p in rec.panes]
    off, dropped = rec.within_recording_limit(None)
    assert not dropped and all(p.recording is None for p in off.panes)
    # A blind round's mask drops the recording too: its bytes name the model.
    blind = dataclasses.replace(rec, blind=True)
    assert all(p.recording is None for p in blind.masked().panes)


def test_a_rerun_remembers_what_it_repeats(history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        first = store.save(record())
        again = store.save(dataclasses.replace(record(), rerun_of=first))
        assert store.get(again).rerun_of == first  # type: ignore[union-attr]
        assert store.get(first).rerun_of is None  # type: ignore[union-attr]


def test_times_are_kept_finely_enough_to_round_as_the_live_footer_did() -> None:
    from anoman_tui.history import pane_record
    from anoman_tui.streaming import StreamMetrics, StreamResult

    result = StreamResult(status="completed", text="x", reasoning="", failure=None, usage=None,
                          anoman=None, anoman_raw=None, metrics=StreamMetrics(
        ttft_s=0.0150341, e2e_s=1.2049991, output_tokens_per_s=1428.15491, chunks=3))
    saved = pane_record(1, "m", base_url="", endpoint="openai", result=result).metrics
    # The footer shows 2 places: 0.02 s live, so 0.02 s reopened (0.015 would show 0.01).
    assert f"{saved['ttft_s']:.2f}" == f"{0.0150341:.2f}" == "0.02"
    assert f"{saved['e2e_s']:.2f}" == "1.20" and f"{saved['output_tokens_per_s']:.1f}" == "1428.2"


def test_a_schema_7_file_gets_its_shown_costs_as_values(tmp_path: Path) -> None:
    # Schema 7 kept a cost only as the text a view showed; the next keeps its amount and
    # source (and whether the model was simulated: the local gateway's panes).
    from anoman_tui.history.schema.sqlite import MIGRATIONS

    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    for step in MIGRATIONS[:7]:
        step(conn)
    conn.execute("INSERT INTO comparisons (id, created_at, source, prompt) "
                 "VALUES (1, 1.0, 'app', 'costs')")
    shown = ["$0.000041", "$0.000060 (provider)", "~$0.000038 (est.)", "—", "$1e-7"]
    for n, text in enumerate(shown, start=1):
        conn.execute(
            "INSERT INTO panes (comparison_id, pane, model, base_url, endpoint, scenario, "
            "status, committed, text, reasoning, metrics, cost_text, target) VALUES "
            "(1, ?, 'm', 'http://x', 'openai', 'none', 'completed', 1, '', '', '{}', ?, ?)",
            (n, text, "local" if n == 1 else "openai"))
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    with HistoryStore.open(path) as store:
        got = store.get(1)
        assert got is not None
        assert [p.cost for p in got.panes] == [
            Cost(Decimal("0.000041"), "gateway"), Cost(Decimal("0.000060"), "provider"),
            Cost(Decimal("0.000038"), "estimate"), Cost(), Cost(Decimal("1e-7"), "gateway")]
        assert [p.cost_text for p in got.panes[:4]] == shown[:4]
        assert got.panes[1].provider_cost == Decimal("0.000060")
        assert [p.simulated for p in got.panes] == [True, False, False, False, False]
        assert store.simulated_models() == frozenset({"m"})
        assert store.model_numbers()["m"].mean_cost == pytest.approx(
            (0.000041 + 0.000060 + 0.000038 + 1e-7) / 4)
    with sqlite3.connect(path) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(panes)")}
    assert "cost_text" not in columns and {"cost_decimal", "cost_source"} <= columns


def test_a_cost_and_the_simulated_mark_round_trip(history_location: Path | str) -> None:
    pane = dataclasses.replace(record().panes[0], cost=Cost(Decimal("0.0000415"), "estimate"),
                               provider_cost=Decimal("0.00005"), simulated=True)
    with HistoryStore.open(history_location) as store:
        saved = store.save(dataclasses.replace(record(), panes=(pane,)))
        got = store.get(saved)
        assert got is not None and got.panes[0].cost == pane.cost
        assert got.panes[0].provider_cost == Decimal("0.00005") and got.panes[0].simulated
        listed = store.listing(5)[0].panes[0]
        assert listed.cost == pane.cost and listed.simulated


def test_who_ran_and_who_voted_are_kept_and_filter_on_both_engines(
        history_location: Path | str) -> None:
    from anoman_tui.history import GroupInfo, VoteRefused

    with HistoryStore.open(history_location) as store:
        store.user = "ann"
        ann = store.save(dataclasses.replace(record("Explain WAL mode"), blind=True))
        bob = store.save(dataclasses.replace(record("Explain WAL again"), user="bob"))
        store.cast_vote(ann, "win", 1, blind=True, user="bob")
        with pytest.raises(VoteRefused) as refused:
            store.cast_vote(ann, "tie", None, blind=True)
        assert refused.value.reason == f"comparison {ann} was already voted on by bob"
        store.cast_vote(bob, "tie", None, blind=True)  # the store's user: ann

        got = store.get(ann)
        assert got is not None and got.user == "ann"
        assert got.vote is not None and got.vote.user == "bob"
        assert [r.id for r in store.recent(user="bob")] == [bob]
        assert [r.id for r in store.recent(search="wal", user="ann")] == [ann]
        assert [c.user for c in store.listing()] == ["bob", "ann"]
        assert [c.id for c in store.listing(search="again", user="ann")] == []
        assert store.recent(user="nobody") == []
        store.fts = False  # the LIKE search filters the same way
        assert [r.id for r in store.recent(search="wal", user="bob")] == [bob]

        assert store.votes_by_user() == {"ann": 1, "bob": 1}
        assert sum(r.count for r in store.voted_rounds(user="bob")) == 1
        assert store.voted_rounds(user="carol") == []

        # A suite run's comparisons are its starter's, whoever saves a cell.
        store.create_run("run-1", name="s", suite={}, settings={}, models=["m"], cells=1,
                         user="carol")
        cell = store.save_cell("run-1", {"case": "c"}, case_id="c", model="m", repeat=1,
                               status="completed", passed=True,
                               pane=record().panes[0], group=GroupInfo("suite prompt"))
        saved = store.get(cell or 0)
        assert saved is not None and saved.user == "carol"


# -- the scoreboard's reads: each vote's stored pattern ----------------------------------

def _rounds_from_records(store: HistoryStore, *, include_sighted: bool = False) -> list[Any]:
    """The voted rounds computed here from every comparison's panes and vote (`get`),
    not from the pattern the store keeps with each vote."""
    from collections import Counter

    from anoman_tui.history import VotedRound

    counts: Counter[Any] = Counter()
    for listed in store.listing(10_000):
        got = store.get(listed.id)
        assert got is not None
        if got.vote is None or not got.panes or not (include_sighted or got.vote.blind):
            continue
        panes = sorted(got.panes, key=lambda p: p.pane)
        winner = next((p.model for p in panes if p.pane == got.vote.winner_pane), None)
        counts[VotedRound(tuple(p.model for p in panes),
                          frozenset(p.model for p in panes if p.status != "completed"),
                          got.vote.outcome, winner, got.vote.blind)] += 1
    return [dataclasses.replace(key, count=n) for key, n in counts.items()]


def _voted_history(store: HistoryStore, rounds: int = 80) -> None:
    import random

    rng = random.Random(7)
    models = ["m-a", "m-b", "m-c", "m-d", "m-e"]
    for n in range(rounds):
        drawn = rng.sample(models, rng.choice((2, 3, 4)))
        failed = {m for m in drawn if rng.random() < 0.15}
        base = record(f"round {n}", tuple(drawn))
        panes = tuple(dataclasses.replace(
            p, status="failed" if p.model in failed else "completed",
            committed=p.model not in failed, simulated=p.model == "m-e",
            metrics={**p.metrics, "ttft_s": rng.uniform(0.05, 2.0),
                     "output_tokens_per_s": rng.uniform(10, 200)})
            for p in base.panes)
        cid = store.save(dataclasses.replace(base, panes=panes, blind=n % 7 != 0))
        if n % 9 == 0:
            continue  # not voted on
        standing = [p.pane for p in panes if p.status == "completed"]
        draw = rng.random()
        if draw < 0.15 or not standing:
            store.cast_vote(cid, "tie" if draw < 0.1 else "bad", None, blind=n % 7 != 0)
        else:
            store.cast_vote(cid, "win", rng.choice(standing), blind=n % 7 != 0)


def test_the_scoreboard_counts_each_round_as_its_panes_say_on_both_engines(
        history_location: Path | str) -> None:
    from anoman_tui.report.scoreboard import build

    with HistoryStore.open(history_location) as store:
        _voted_history(store)
        for sighted in (False, True):
            stored = store.voted_rounds(include_sighted=sighted)
            computed = _rounds_from_records(store, include_sighted=sighted)
            assert sorted(map(repr, stored)) == sorted(map(repr, computed))
            numbers = store.model_numbers()
            assert build(stored, numbers, seed=3) == build(computed, numbers, seed=3)
        assert numbers["m-e"].simulated_answers == numbers["m-e"].answers > 0
        # Each model's percentiles, computed here from every answer's metrics.
        metrics: dict[str, dict[str, list[float]]] = {}
        for listed in store.listing(10_000):
            got = store.get(listed.id)
            assert got is not None
            for p in got.panes:
                for column, key in (("ttft_s", "ttft_s"),
                                    ("tokens_per_s", "output_tokens_per_s")):
                    metrics.setdefault(p.model, {}).setdefault(column, []).append(
                        p.metrics[key])
        for model, series in metrics.items():
            for column, values in series.items():
                ordered = sorted(values)
                for q in (50.0, 95.0):
                    rank = q / 100 * (len(ordered) - 1)
                    low, high = ordered[int(rank)], ordered[min(int(rank) + 1,
                                                                len(ordered) - 1)]
                    assert numbers[model].percentiles[(column, q)] == pytest.approx(
                        low + (high - low) * (rank - int(rank)), rel=1e-12, abs=0)
        assert all(numbers[m].simulated_answers == 0 for m in ("m-a", "m-b", "m-c", "m-d"))


def test_a_voted_suite_comparison_whose_panes_change_counts_its_panes_as_they_are(
        history_location: Path | str) -> None:
    from anoman_tui.history import GroupInfo

    def cell_pane(number: int, model: str, status: str = "completed") -> PaneRecord:
        return dataclasses.replace(record().panes[0], pane=number, model=model, status=status,
                                   committed=status == "completed")

    def save_cell(store: HistoryStore, model: str, number: int,
                  status: str = "completed") -> int | None:
        return store.save_cell("run-1", {"case": "c"}, case_id="c", model=model, repeat=1,
                               status=status, passed=True, pane=cell_pane(number, model, status),
                               group=GroupInfo(prompt="a question"))

    with HistoryStore.open(history_location) as store:
        store.create_run("run-1", name="s", suite={}, settings={}, models=["x", "y", "z"],
                         cells=3)
        cid = save_cell(store, "x", 1)
        save_cell(store, "y", 2)
        assert cid is not None
        store.cast_vote(cid, "win", 2, blind=False)
        assert store.voted_rounds(include_sighted=True) == _rounds_from_records(
            store, include_sighted=True)
        save_cell(store, "z", 3)  # a pane added after the vote
        save_cell(store, "x", 1, status="failed")  # a pane saved again, failed
        rounds = store.voted_rounds(include_sighted=True)
        assert rounds == _rounds_from_records(store, include_sighted=True)
        assert rounds[0].models == ("x", "y", "z") and rounds[0].failed == {"x"}
        store.delete_cells("run-1", [("c", "z", 1)])
        assert store.voted_rounds(include_sighted=True)[0].models == ("x", "y")


def test_votes_of_a_schema_13_history_get_their_patterns_on_both_engines(
        history_location: Path | str) -> None:
    with HistoryStore.open(history_location) as store:
        _voted_history(store, rounds=40)
        before = sorted(map(repr, store.voted_rounds(include_sighted=True)))
        numbers = store.model_numbers()
    # Back to schema 13: no pattern kept with the votes, no index of simulated panes, no
    # panes left out (schema 16).
    undo = ["DROP INDEX panes_left_out", "DROP INDEX panes_by_model",
            "ALTER TABLE votes DROP COLUMN pattern", "DROP INDEX panes_simulated",
            "DROP INDEX panes_by_ttft", "DROP INDEX panes_by_rate",
            "ALTER TABLE panes DROP COLUMN left_out",
            "CREATE INDEX panes_by_model ON panes (model, status, failure_kind, ttft_s, "
            "tokens_per_s, cost_usd)"]
    if isinstance(history_location, Path):
        with sqlite3.connect(history_location) as conn:
            for statement in undo:
                conn.execute(statement)
            conn.execute("PRAGMA user_version = 13")
    else:
        import psycopg

        with psycopg.connect(history_location, autocommit=True) as pg:
            for statement in undo:
                pg.execute(statement)
            pg.execute("UPDATE anoman_meta SET value = '13' WHERE key = 'schema_version'")
    with HistoryStore.open(history_location) as store:
        assert sorted(map(repr, store.voted_rounds(include_sighted=True))) == before
        assert before == sorted(map(repr, _rounds_from_records(store, include_sighted=True)))
        assert store.model_numbers() == numbers


def test_a_refused_save_leaves_nothing_and_the_next_save_goes_through_on_both_engines(
        history_location: Path | str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # On PostgreSQL a save's statements are pipelined: an error must still roll the whole
    # transaction back and leave the connection ready for the next one, with nothing
    # logged beside the one-line refusal (psycopg warns of a pipeline left aborted).
    import logging

    import anoman_tui.history.store as store_module

    caplog.set_level(logging.WARNING)

    with HistoryStore.open(history_location) as store:
        first = store.save(record("first"), uid="a" * 32)
        with pytest.raises(HistoryUnavailable) as refused:
            store.save(record("the same uid"), uid="a" * 32)
        assert refused.value.reason.count("\n") == 0
        with monkeypatch.context() as patched:
            def fail(*_args: Any) -> None:
                raise RuntimeError("a fault half way through the save")

            patched.setattr(store_module, "put_panes", fail)
            with pytest.raises(RuntimeError):
                store.save(record("half saved"), uid="b" * 32)
        assert store.find_uid("b" * 32) is None
        second = store.save(record("second"), uid="c" * 32)
        assert [c.id for c in store.listing(10)] == [second, first]
        got = store.get(second)
        assert got is not None and len(got.panes) == 3
        assert store.recent(10, "same") == [] and store.recent(10, "half") == []
    assert [r.getMessage() for r in caplog.records] == []
