"""Writes that wait for the history's server: a shared (PostgreSQL) history whose server
goes away mid-session loses nothing the app or a command writes meanwhile.

Every write the app makes is a `Write`: a kind (a comparison, a vote, the arena judge's
verdict, a suite cell, a pairwise verdict, a run's end), its data as JSON and an
idempotency key. `PendingSaves.write(w)` writes at once when it can. When the store
refuses with a transient failure (`HistoryUnavailable.transient`: the server cannot be
reached), the write is kept in memory, in order, and a background thread tries again,
oldest first, every `retry_s` seconds (doubling to `max_retry_s`) until the server is
back; each write that waited calls `on_written(token, result)` once written, from that
thread. Later writes queue behind the waiting ones, so the history keeps their order. A
refusal that waiting will not cure (a full file, a vote on a round someone else voted on)
is raised at once, or, for one that had waited, reported through `on_failed(token,
reason)`.

Retrying never doubles anything, even after an ambiguous failure (the server committed
but the answer was lost): a comparison carries its uid, and is not saved again when the
history holds that uid; a vote found already cast with the same outcome, by the same
person at the same time, is taken as written; cells, pairs, verdicts and a run's end
replace what they write.

What still waits when the app closes or a command gives up goes to the spool
(`spool.py`), and is written first at the next start.

May import: the standard library, the rest of `anoman_tui.history`. No Textual: the app
turns the callbacks into notifications and its status line.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from anoman_tui.history.model import ComparisonRecord, PaneRecord
from anoman_tui.history.pane_json import pane_json, provider_cost_raw
from anoman_tui.history.runs import GroupInfo, RunRefused
from anoman_tui.history.store import HistoryStore, HistoryUnavailable, VoteRefused, new_uid
from anoman_tui.streaming.cost import Cost, decimal_or_none
from anoman_tui.streaming.recording import RecordingError, StreamRecording

KINDS = ("comparison", "vote", "verdict", "cell", "pair", "finish")


@dataclass(frozen=True, slots=True)
class Write:
    """One write to the history, as data (JSON: it can be spooled to a file)."""

    kind: str
    key: str
    """What makes it the same write when tried again (its idempotency key)."""
    data: dict[str, Any] = field(repr=False)
    record: ComparisonRecord | None = field(default=None, repr=False, compare=False)
    """A comparison's record as it is: turned into JSON (`data["record"]`) only when
    the write is spooled, not for each save (with its recordings, ~10 ms of a save's
    time on the saving thread, measured beside three streaming panes)."""

    def to_json(self) -> dict[str, Any]:
        data = self.data
        if self.record is not None and "record" not in data:
            data = {**data, "record": record_to_json(self.record)}
        return {"kind": self.kind, "key": self.key, "data": data}

    @classmethod
    def from_json(cls, value: Any) -> Write:
        """ValueError (one sentence) for anything that is not a write."""
        if not isinstance(value, dict):
            raise ValueError("a pending write is a JSON object")
        kind, key, data = value.get("kind"), value.get("key"), value.get("data")
        if kind not in KINDS or not isinstance(key, str) or not isinstance(data, dict):
            raise ValueError("a pending write has a known kind, a key and its data")
        return cls(kind, key, data)

    def describe(self) -> str:
        """What it is, in a few words (for messages)."""
        return {"comparison": "a comparison", "vote": "a vote",
                "verdict": "the arena judge's verdict", "cell": "a suite cell",
                "pair": "a pairwise verdict", "finish": "a suite run's end"}[self.kind]


# -- making writes ------------------------------------------------------------------------


def with_uid(record: ComparisonRecord) -> ComparisonRecord:
    """The record with the uid it will be saved under (a fresh one if it has none): a
    vote cast before its round is written can name it."""
    return record if record.uid else replace(record, uid=new_uid())


def comparison_write(record: ComparisonRecord) -> Write:
    record = with_uid(record)
    assert record.uid is not None
    return Write("comparison", f"comparison {record.uid}", {"uid": record.uid},
                 record=record)


def _ref(comparison_id: int | None, uid: str | None) -> dict[str, Any]:
    if comparison_id is None and not uid:
        raise ValueError("a vote or verdict names its comparison by id or uid")
    return {"comparison_id": comparison_id, "comparison_uid": uid}


def vote_write(comparison_id: int | None, uid: str | None, outcome: str,
               winner_pane: int | None, *, blind: bool, user: str,
               voted_at: float | None = None) -> Write:
    where = uid or str(comparison_id)
    return Write("vote", f"vote {where}", {
        **_ref(comparison_id, uid), "outcome": outcome, "winner_pane": winner_pane,
        "blind": blind, "user": user,
        "voted_at": voted_at if voted_at is not None else time.time()})


def verdict_write(comparison_id: int | None, uid: str | None, judge: str, outcome: str,
                  best: str | None, data: dict[str, Any],
                  judged_at: float | None = None) -> Write:
    where = uid or str(comparison_id)
    return Write("verdict", f"verdict {where}", {
        **_ref(comparison_id, uid), "judge": judge, "outcome": outcome, "best": best,
        "verdict": data, "judged_at": judged_at if judged_at is not None else time.time()})


def cell_write(run_id: str, cell: dict[str, Any], *, case_id: str, model: str, repeat: int,
               status: str, passed: bool | None, pane: PaneRecord | None,
               group: GroupInfo | None) -> Write:
    return Write("cell", f"cell {run_id} {case_id} {model} {repeat}", {
        "run_id": run_id, "cell": cell, "case_id": case_id, "model": model,
        "repeat": repeat, "status": status, "passed": passed,
        "pane": None if pane is None else pane_json(pane, recording=pane.recording),
        "group": None if group is None else {
            "prompt": group.prompt, "system_prompt": group.system_prompt,
            "created_at": group.created_at}})


def pair_write(run_id: str, pair: dict[str, Any]) -> Write:
    key = " ".join(str(pair.get(k)) for k in ("case", "repeat", "a", "b"))
    return Write("pair", f"pair {run_id} {key}", {"run_id": run_id, "pair": pair})


def finish_write(run_id: str, *, finished: bool, stopped: str | None) -> Write:
    return Write("finish", f"finish {run_id}",
                 {"run_id": run_id, "finished": finished, "stopped": stopped})


# -- records as JSON (the spool keeps them whole, recordings included) -------------------


def _turns(value: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(role), str(content)) for role, content in value)


def pane_from_json(d: dict[str, Any]) -> PaneRecord:
    """ValueError for what `pane_json` did not write."""
    try:
        provider_cost: Decimal | None = decimal_or_none(provider_cost_raw(d))
        recording = d["recording"]
        return PaneRecord(
            pane=int(d["pane"]), model=str(d["model"]), base_url=str(d["base_url"]),
            endpoint=str(d["endpoint"]), temperature=d["temperature"],
            max_tokens=d["max_tokens"], scenario=str(d["scenario"]), status=str(d["status"]),
            committed=bool(d["committed"]), text=str(d["text"]),
            reasoning=str(d["reasoning"]), finish_reason=d["finish_reason"],
            failure=d["failure"], usage=d["usage"], anoman=d["anoman"],
            metrics=dict(d["metrics"]),
            rate_series=tuple(float(x) for x in d["rate_series"]),
            cost=Cost.from_json(d["cost"]), provider_cost=provider_cost,
            simulated=bool(d["simulated"]),
            conversation=None if d["conversation"] is None else _turns(d["conversation"]),
            target=str(d["target"]), label=str(d["label"]),
            recording=None if recording is None else StreamRecording.from_json(recording),
        )
    except (KeyError, TypeError, RecordingError) as exc:
        raise ValueError(f"a pending pane is not readable ({exc})") from None


def record_to_json(r: ComparisonRecord) -> dict[str, Any]:
    return {
        "prompt": r.prompt, "panes": [pane_json(p, recording=p.recording) for p in r.panes],
        "system_prompt": r.system_prompt, "conversation": [list(t) for t in r.conversation],
        "created_at": r.created_at, "source": r.source, "blind": r.blind,
        "rerun_of": r.rerun_of, "recorded": r.recorded, "suite_run": r.suite_run,
        "suite_case": r.suite_case, "suite_repeat": r.suite_repeat, "user": r.user,
        "uid": r.uid,
    }


def record_from_json(d: dict[str, Any]) -> ComparisonRecord:
    try:
        return ComparisonRecord(
            prompt=str(d["prompt"]), panes=tuple(pane_from_json(p) for p in d["panes"]),
            system_prompt=str(d["system_prompt"]), conversation=_turns(d["conversation"]),
            created_at=float(d["created_at"]), source=str(d["source"]),
            blind=bool(d["blind"]), rerun_of=d["rerun_of"], recorded=bool(d["recorded"]),
            suite_run=d["suite_run"], suite_case=d["suite_case"],
            suite_repeat=d["suite_repeat"], user=str(d["user"]), uid=d["uid"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a pending comparison is not readable ({exc})") from None


# -- writing one ---------------------------------------------------------------------------


def _comparison_id(store: HistoryStore, data: dict[str, Any]) -> int:
    if data.get("comparison_id") is not None:
        return int(data["comparison_id"])
    found = store.find_uid(str(data["comparison_uid"]))
    if found is None:
        raise VoteRefused("its comparison is not in the history")
    return found


def apply(store: HistoryStore, w: Write, *, first_try: bool = False) -> Any:
    """Write `w` through `store` (what the store's call returns: a comparison's id, a
    cell's comparison id, None). Raises what the store raises, and ValueError for data
    that is not a write of its kind. `first_try`: no earlier try of it can have been
    written unseen, so a comparison is not looked up by its uid before it is saved."""
    d = w.data
    try:
        if w.kind == "comparison":
            uid = str(d["uid"])
            if not first_try:
                found = store.find_uid(uid)  # an earlier try that committed unseen
                if found is not None:
                    return found
            record = w.record if w.record is not None else record_from_json(d["record"])
            try:
                return store.save(record, uid=uid)
            except HistoryUnavailable as exc:
                # A uid held already (refused for good): the same comparison, saved
                # before by another way; looked up only then, not before every save.
                found = None if exc.transient else store.find_uid(uid)
                if found is None:
                    raise
                return found
        if w.kind == "vote":
            comparison_id = _comparison_id(store, d)
            try:
                store.cast_vote(comparison_id, d["outcome"], d["winner_pane"],
                                blind=bool(d["blind"]), voted_at=float(d["voted_at"]),
                                user=str(d["user"]))
            except VoteRefused:
                held = store.get(comparison_id)
                vote = held.vote if held is not None else None
                if vote is None or (vote.outcome, vote.winner_pane, vote.user) != (
                        d["outcome"], d["winner_pane"], d["user"]) \
                        or abs(vote.voted_at - float(d["voted_at"])) > 1e-3:
                    raise
            return comparison_id  # (this very vote, written by an earlier try)
        if w.kind == "verdict":
            comparison_id = _comparison_id(store, d)
            store.save_round_judgement(comparison_id, d["judge"], d["outcome"], d["best"],
                                       d["verdict"], judged_at=float(d["judged_at"]))
            return comparison_id
        if w.kind == "cell":
            group = d["group"]
            return store.save_cell(
                d["run_id"], d["cell"], case_id=d["case_id"], model=d["model"],
                repeat=int(d["repeat"]), status=d["status"], passed=d["passed"],
                pane=None if d["pane"] is None else pane_from_json(d["pane"]),
                group=None if group is None else GroupInfo(
                    str(group["prompt"]), str(group["system_prompt"]), group["created_at"]))
        if w.kind == "pair":
            store.save_pair(d["run_id"], d["pair"])
            return None
        if w.kind == "finish":
            store.finish_run(d["run_id"], finished=bool(d["finished"]), stopped=d["stopped"])
            return None
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{w.describe()} waiting to be written is not readable "
                         f"({exc})") from None
    raise ValueError(f"not a kind of write: {w.kind}")


def refusal(exc: BaseException) -> str:
    """The one sentence of a lasting refusal."""
    return str(getattr(exc, "reason", None) or exc)


LASTING = (HistoryUnavailable, VoteRefused, RunRefused, ValueError)
"""What a write may raise that waiting will not cure (a transient `HistoryUnavailable`
aside)."""


class Ticket:
    """A write's token that a caller can wait on (`PendingSaves.write_and_wait`)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def __str__(self) -> str:
        return self.label


class PendingSaves:
    """The writes of one session through one store, waiting for its server when needed."""

    def __init__(self, store: HistoryStore, *,
                 on_written: Callable[[Any, Any], None] | None = None,
                 on_failed: Callable[[Any, str], None] | None = None,
                 retry_s: float = 1.0, max_retry_s: float = 15.0) -> None:
        self.store = store
        self.on_written = on_written
        self.on_failed = on_failed
        self._retry_s = retry_s
        self._max_retry_s = max_retry_s
        self._queue: deque[tuple[Write, Any]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._flushing = threading.Lock()
        """One flush at a time (the thread's, or `close`'s last one): none written twice."""
        self._closed = False
        self._thread: threading.Thread | None = None
        self.last_problem = ""
        """Why the oldest waiting write is waiting ("" when none is)."""
        self.patience = 0.0
        """How long a command waits for its server before giving up (`--save-wait`)."""
        self.timed_out = False
        """A `write_and_wait` gave up: the command's server has had its chance."""
        self.written_after_wait = 0
        """How many writes that had waited were written (the status line's notice)."""

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._queue)

    def left(self) -> list[Write]:
        """The writes still waiting, oldest first."""
        with self._lock:
            return [w for w, _ in self._queue]

    def take_left(self) -> list[Write]:
        """The writes still waiting, oldest first, taken out of the queue (they are the
        spool's now: never written from here, nor spooled twice)."""
        with self._lock:
            left = [w for w, _ in self._queue]
            self._queue.clear()
            self._idle.set()
            return left

    def save(self, record: ComparisonRecord, token: Any = None) -> int | None:
        """Save a comparison now (its new id), or keep it until the server is back
        (None; the id goes to `on_written(token, id)`). Raises `HistoryUnavailable` for
        a lasting refusal. Give the record its uid first (`with_uid`) to name it later."""
        result: int | None = self.write(comparison_write(record), token)
        return result

    def write(self, w: Write, token: Any = None, *, queued: Any = None) -> Any:
        """Write now (what the store returned), or keep it until the server is back
        (`queued`; the result goes to `on_written`). Raises a lasting refusal."""
        with self._lock:
            if self._queue or self._closed:  # behind the waiting ones, in order
                self._queue.append((w, token))
                self._idle.clear()
                self._start()
                return queued
        try:
            return apply(self.store, w, first_try=True)
        except HistoryUnavailable as exc:
            if not exc.transient:
                raise
            with self._lock:
                self._queue.append((w, token))
                self._idle.clear()
                self.last_problem = exc.reason
                self._start()
            return queued

    def _start(self) -> None:
        if self._closed:
            return
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._retry, name="history-pending",
                                            daemon=True)
            self._thread.start()

    def _retry(self) -> None:
        delay = self._retry_s
        while True:
            # The server's own pace: not a test's sleep, the backoff between attempts.
            self._wake.wait(delay)
            self._wake.clear()
            if self._flush_one_by_one():
                return  # the queue is empty
            if self._closed:
                return
            delay = min(delay * 2, self._max_retry_s)

    def _flush_one_by_one(self) -> bool:
        """Write the waiting writes, oldest first; whether none is left."""
        with self._flushing:
            return self._flush()

    def _flush(self) -> bool:
        while True:
            with self._lock:
                if not self._queue:
                    self.last_problem = ""
                    self._idle.set()
                    return True
                w, token = self._queue[0]
            try:
                result = apply(self.store, w)
            except HistoryUnavailable as exc:
                if exc.transient:
                    self.last_problem = exc.reason
                    return False
                self._drop(token, exc)
                continue
            except LASTING as exc:
                self._drop(token, exc)
                continue
            with self._lock:
                self._queue.popleft()
                self.written_after_wait += 1
            if isinstance(token, Ticket):
                token.result = result
                token.done.set()
            if self.on_written is not None:
                self.on_written(token, result)

    def _drop(self, token: Any, exc: BaseException) -> None:
        with self._lock:
            self._queue.popleft()
        if isinstance(token, Ticket):
            token.error = exc
            token.done.set()
        if self.on_failed is not None:
            self.on_failed(token, refusal(exc))

    def write_and_wait(self, w: Write, label: str, timeout: float) -> tuple[bool, Any]:
        """Write `w`, waiting for the server at most `timeout` seconds when it cannot be
        reached: (True, what the store returned), or (False, None) when it still waits.
        Raises what refused it for good, even after waiting."""
        ticket = Ticket(label)
        marker = object()
        result = self.write(w, ticket, queued=marker)
        if result is not marker:
            return True, result
        deadline = time.monotonic() + timeout
        while not ticket.done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return False, None
            self.retry_now()
            ticket.done.wait(min(1.0, left))
        if ticket.error is not None:
            raise ticket.error
        return True, ticket.result

    def retry_now(self) -> None:
        """Try the waiting writes at once (the user asked, or the server is known back)."""
        self._wake.set()

    def wait_written(self, timeout: float) -> bool:
        """Block until nothing waits (trying again meanwhile), at most `timeout` seconds;
        whether nothing does."""
        deadline = time.monotonic() + timeout
        while self.waiting:
            self.retry_now()
            if self._idle.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
                continue
            if time.monotonic() >= deadline:
                break
        return self.waiting == 0

    def close(self) -> int:
        """Stop retrying after one last attempt; how many writes were left unwritten
        (`left()` has them, for the spool)."""
        if self.waiting:
            self._flush_one_by_one()
        self._closed = True
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=30)
        return self.waiting
