"""Gateway load and restart.

Load: N concurrent streams, a random third of them closed by the client mid-stream →
exactly one complete ledger row per request, `completed` or `cancelled` as happened
(cancelled ones with partial usage and `streaming_cancelled` routing), and no error in the
log. N = 1,000, by default (about 5 s here).

Restart: SIGTERM to `anoman-tui serve` with streams in flight → they are recorded as
cancelled with their partial usage, the process exits cleanly, and the SQLite (WAL)
ledger passes an integrity check and reopens under a new `serve`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.gateway.ledger import UsageLedger
from tests.helpers import LocalGateways, loopback_async_client
from tests.reliability.helpers import fast_config

TOKENS = 24
# 24 tokens at 12/s (time_scale 1): each stream lasts about two seconds, so a client that
# closes after its fifth frame nearly always leaves while the gateway is still generating.
# Under heavy load a client may read late; then the gateway may have finished first, and
# `completed` is what happened: the row's end time tells which.
SIMULATE = f"tokens={TOKENS},rate=12,ttft=0.05"
REQUIRED = ("request_id", "key_hint", "endpoint", "model", "status", "routing_mode",
            "http_status", "prompt_tokens", "completion_tokens", "weighted_tokens",
            "cost_usd", "started_at", "ended_at")


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture
def errors() -> Iterator[_Errors]:
    handler = _Errors()
    logging.getLogger().addHandler(handler)
    yield handler
    logging.getLogger().removeHandler(handler)


def _unique_words() -> str:
    # Letters only: a hex id can hold a digit run that passes the PII guardrail's Luhn
    # check (a "card number"), which blocks the request (seen in CI).
    return uuid.uuid4().hex.translate(str.maketrans("0123456789", "ghijklmnop"))


async def _one(client: httpx.AsyncClient, gw: EmbeddedGateway, path: str, disconnect: bool
               ) -> tuple[str, float | None]:
    """(request id, wall-clock instant the client hung up, or None if it read to the end)."""
    body = {"model": "anoman-lite", "stream": True, "max_tokens": 64,
            "messages": [{"role": "user", "content": f"load {_unique_words()}"}]}
    headers = {"Authorization": f"Bearer {gw.api_key}", "X-Anoman-Simulate": SIMULATE}
    async with client.stream("POST", path, json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        request_id = response.headers["x-request-id"]
        frames = 0
        async for chunk in response.aiter_bytes():
            frames += chunk.count(b"\n\n")
            if disconnect and frames >= 5:  # past the preamble frames: some tokens sent
                left_at = time.time()
                return request_id, left_at  # leaving the block closes the connection
    return request_id, None


async def _load(gw: EmbeddedGateway, n: int, seed: int) -> dict[str, float | None]:
    rng = random.Random(seed)
    paths = ["/v1/chat/completions", "/anthropic/v1/messages", "/anoman/v1/playground/run"]
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    async with loopback_async_client(gw.base_url, limits=limits, timeout=60) as client:
        results = await asyncio.gather(*(
            _one(client, gw, paths[i % 3], rng.random() < 0.33) for i in range(n)))
    assert len({rid for rid, _ in results}) == n
    return dict(results)


def _check_rows(gw: EmbeddedGateway, outcome: dict[str, float | None]) -> None:
    ledger = gw.state.ledger
    deadline = time.monotonic() + 30
    rows: dict[str, dict[str, object]] = {}
    while time.monotonic() < deadline:
        rows = {rid: row for rid in outcome if (row := ledger.get(rid)) is not None}
        if len(rows) == len(outcome):
            break
        time.sleep(0.1)
    assert len(rows) == len(outcome), f"{len(outcome) - len(rows)} request(s) without a row"
    with sqlite3.connect(gw.db_path) as conn:
        per_id = conn.execute("SELECT request_id, COUNT(*) FROM usage GROUP BY request_id "
                              "HAVING COUNT(*) > 1").fetchall()
    assert per_id == []
    for rid, left_at in outcome.items():
        row = rows[rid]
        assert all(row[c] is not None for c in REQUIRED), row  # nothing half-written
        ended = float(row["ended_at"])  # type: ignore[arg-type]
        assert ended >= float(row["started_at"])  # type: ignore[arg-type]
        if left_at is not None and row["status"] == "completed":
            # The gateway wrote every token before it processed the client's close. With
            # 1,000 streams on 2 busy cores that can lag the hang-up by over a second
            # (seen in CI: 1.47 s, and 5.06 s with other work beside the suite), so bound it
            # loosely; the row still says what the
            # gateway did, and prompt cancellation is tested without load elsewhere.
            assert ended <= left_at + 15.0, row
            assert row["completion_tokens"] == TOKENS
        elif left_at is not None:
            assert ended >= left_at - 0.05, row
            assert row["status"] == "cancelled", row
            assert row["routing_mode"] == "streaming_cancelled"
            assert row["failure_class"] == "client_disconnect"
            assert 0 < int(row["completion_tokens"]) < TOKENS  # type: ignore[call-overload]
        else:
            assert row["status"] == "completed", row
            assert row["completion_tokens"] == TOKENS


def _run_load(start_gateway: LocalGateways, n: int, errors: _Errors) -> None:
    gw = start_gateway(fast_config(time_scale=1.0))
    try:
        started = time.monotonic()
        outcome = asyncio.run(_load(gw, n, seed=n))
        elapsed = time.monotonic() - started
        _check_rows(gw, outcome)
        assert not gw.state.active  # no run left behind
    finally:
        gw.stop()  # before the check: an error logged while stopping counts too
    assert not errors.messages, errors.messages[:5]
    cancelled = sum(v is not None for v in outcome.values())
    print(f"\nload: {n} concurrent streams ({cancelled} disconnected by the client) in "
          f"{elapsed:.1f} s: {n} ledger rows, none lost, no error logged")


@pytest.mark.long(8)
def test_load_1000(make_local_gateway: LocalGateways, errors: _Errors) -> None:
    # Measured ~5 s here, so the full 1,000 runs by default.
    _run_load(make_local_gateway, 1000, errors)



# -- restart -------------------------------------------------------------------------

KEY = "anm-sk-local-restart-test-0123456789abcd"


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)  # clean_env (tests/reliability/conftest.py): no ANOMAN_* of ours
    proc = subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "serve", "--port", "0", "--db", str(db),
         "--api-key", KEY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "listening on" in line:
            return proc, line.rsplit(" ", 1)[1].strip()
    proc.kill()
    raise AssertionError("anoman-tui serve did not start")


async def _in_flight(url: str, n: int, stop_after: int) -> list[str]:
    """Open `n` streams that stall after `stop_after` tokens; return once all are stalled."""
    client = loopback_async_client(url, timeout=30)
    ids: list[str] = []
    ready = asyncio.Event()

    async def one(i: int) -> None:
        body = {"model": "anoman-lite", "stream": True,
                "messages": [{"role": "user", "content": f"restart {i} {_unique_words()}"}]}
        headers = {"Authorization": f"Bearer {KEY}",
                   "X-Anoman-Simulate": f"stall-after={stop_after},ttft=0,rate=200"}
        try:
            async with client.stream("POST", "/v1/chat/completions", json=body,
                                     headers=headers) as response:
                ids.append(response.headers["x-request-id"])
                if len(ids) == n:
                    ready.set()
                async for _ in response.aiter_bytes():
                    pass
        except httpx.HTTPError:
            pass  # the gateway going away mid-stream is the point

    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    await asyncio.wait_for(ready.wait(), 20)
    await asyncio.sleep(0.5)  # all have produced their tokens and stalled
    streams = asyncio.gather(*tasks)
    return_ids = list(ids)
    _in_flight.pending = (client, streams)  # type: ignore[attr-defined]
    return return_ids


def test_sigterm_with_streams_in_flight_records_them_cancelled(tmp_path: Path) -> None:
    db = tmp_path / "ledger.sqlite3"
    proc, url = _serve(db)

    async def scenario() -> list[str]:
        ids = await _in_flight(url, 5, stop_after=7)
        client, streams = _in_flight.pending  # type: ignore[attr-defined]
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(streams, 20)  # every client stream ends, none hangs
        await client.aclose()
        return ids

    try:
        ids = asyncio.run(scenario())
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    ledger = UsageLedger(db)
    try:
        for rid in ids:
            row = ledger.get(rid)
            assert row is not None, rid
            assert row["status"] == "cancelled" and row["failure_class"] == "gateway_shutdown"
            assert row["routing_mode"] == "streaming_cancelled"
            assert row["completion_tokens"] == 7  # partial usage, billed
            assert row["key_hint"] == KEY[-4:]
        count = ledger.count()
    finally:
        ledger.close()

    # The ledger reopens under a new gateway, and keeps growing.
    proc2, url2 = _serve(db)
    try:
        r = httpx.post(f"{url2}/v1/chat/completions", timeout=30, headers={
            "Authorization": f"Bearer {KEY}"}, json={
            "model": "anoman-lite", "messages": [{"role": "user", "content": "after restart"}]})
        assert r.status_code == 200
        usage = httpx.get(f"{url2}/anoman/v1/usage?limit=100", timeout=10,
                          headers={"Authorization": f"Bearer {KEY}"}).json()["data"]
        assert len(usage) == count + 1
        assert {row["request_id"] for row in usage} >= set(ids)
    finally:
        proc2.send_signal(signal.SIGTERM)
        _, err2 = proc2.communicate(timeout=20)
    assert proc2.returncode == 0, err2
