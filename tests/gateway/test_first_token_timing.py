"""The first token is sent on the simulated schedule, not up to a millisecond after it.

`_sleep_until` (generation.py) replaces a plain sleep for the first token:
it must never wake early, should wake close to the deadline, and must keep the event
loop serving other tasks while it waits. Bounds are generous (noisy machines); the
real figure comes from benchmarks/gateway_overhead.py.
"""

from __future__ import annotations

import asyncio

import pytest

from anoman_tui.gateway.generation import _sleep_until


async def test_wakes_at_the_deadline_never_before() -> None:
    loop = asyncio.get_running_loop()
    for delay in (0.0, -0.01, 0.0004, 0.003, 0.02):
        due = loop.time() + delay
        await _sleep_until(loop, due)
        now = loop.time()
        assert now >= due
        assert now - due < 0.05


async def test_other_tasks_run_while_it_waits() -> None:
    loop = asyncio.get_running_loop()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    try:
        await _sleep_until(loop, loop.time() + 0.02)
    finally:
        task.cancel()
    assert ticks > 1


async def test_cancellable_while_waiting() -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(_sleep_until(loop, loop.time() + 10))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
