"""The one retry policy (`anoman_tui.streaming.retry`): what is sent again and after how
long, the limit in flight lowered on a 429 and raised again, a judge's calls waiting for
that limit; and no other module keeping a retry rule of its own. Pure and in-process:
a fake clock and a fixed jitter, no server."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from anoman_tui.streaming.retry import MAX_RETRY_AFTER_S, ConcurrencyLimit, RetryPolicy
from anoman_tui.streaming.vocabulary import StreamFailure

PACKAGE = Path(__file__).resolve().parents[1] / "anoman_tui"


def failure(kind: str, status: int | None = None,
            retry_after_s: float | None = None) -> StreamFailure:
    return StreamFailure(kind=kind, status=status,  # type: ignore[arg-type]
                         retry_after_s=retry_after_s)


def test_a_429_is_waited_out_five_times_and_a_transport_error_sent_again_twice() -> None:
    policy = RetryPolicy()
    limited = failure("http_error", 429)
    assert [policy.decide(limited, retries=0, waits=n) for n in range(6)] == \
        ["rate_limited"] * 5 + ["final"]
    down = failure("transport_error")
    assert [policy.decide(down, retries=n, waits=0) for n in range(3)] == \
        ["retry", "retry", "final"]
    # Any other failure is the result, and so is success.
    assert policy.decide(failure("http_error", 500), retries=0, waits=0) == "final"
    assert policy.decide(failure("stalled"), retries=0, waits=0) == "final"
    assert policy.decide(None, retries=0, waits=0) == "final"
    assert RetryPolicy(retries=0).decide(down, retries=0, waits=0) == "final"


def test_a_retry_after_is_capped_and_without_one_the_back_off_doubles() -> None:
    policy = RetryPolicy()
    assert policy.rate_limit_wait(100_000.0, 1) == MAX_RETRY_AFTER_S == 60.0
    assert RetryPolicy(max_retry_after=2.5).rate_limit_wait(100_000.0, 1) == 2.5
    assert RetryPolicy(max_retry_after=2.5).rate_limit_wait(1.0, 1) == 1.0
    assert RetryPolicy(max_retry_after=0).rate_limit_wait(5.0, 1) == 0.0
    steady = lambda low, high: 1.0  # noqa: E731 (the jitter's middle)
    assert [policy.rate_limit_wait(None, n, steady) for n in (1, 2, 3, 6, 7)] == \
        [1.0, 2.0, 4.0, 30.0, 30.0]
    assert policy.rate_limit_wait(-1.0, 1, steady) == 1.0  # a negative one is no answer
    assert [policy.retry_wait(n) for n in (1, 2, 3, 6)] == [0.25, 0.5, 1.0, 5.0]


def test_a_limit_halves_on_a_429_and_grows_back_after_successes() -> None:
    limit = ConcurrencyLimit(8)
    limit.running = 8
    wait = limit.rate_limited(2.0, now=100.0)
    assert wait == 2.0 and limit.limit == 4
    assert not limit.can_start(101.0) and limit.resume_at == 102.0
    limit.running = 3
    assert limit.can_start(102.0)
    limit.running = 4
    assert not limit.can_start(102.0)  # at its lowered limit
    # Never below one; without Retry-After, an exponential back-off with jitter (the
    # count of 429s in a row starts again after a success).
    limit.succeeded()
    limit.rate_limited(None, now=200.0)
    limit.rate_limited(None, now=200.0)
    limit.rate_limited(None, now=200.0)
    assert limit.limit == 1
    assert 3.2 <= limit.resume_at - 200.0 <= 4.8  # the third in a row: 4 s ± 20%
    # A window of successes raises it by one, up to the ceiling.
    for _ in range(ConcurrencyLimit.WINDOW * 20):
        limit.succeeded()
    assert limit.limit == 8
    capped = ConcurrencyLimit(4, RetryPolicy(max_retry_after=2.5))
    assert capped.rate_limited(100_000.0, now=0.0) == 2.5


def test_held_waits_for_a_free_place_and_the_rate_limit_and_ends_on_a_stop() -> None:
    now = [0.0]

    async def go() -> list[str]:
        limit = ConcurrencyLimit(1, clock=lambda: now[0])
        stopped = asyncio.Event()
        said: list[str] = []

        async def call(name: str, hold: asyncio.Event) -> None:
            async with limit.held(stopped) as held:
                said.append(f"{name} {'in' if held else 'stopped'}")
                if held:
                    await hold.wait()

        first_done, second_done = asyncio.Event(), asyncio.Event()
        first = asyncio.create_task(call("first", first_done))
        await asyncio.sleep(0)
        second = asyncio.create_task(call("second", second_done))
        for _ in range(5):
            await asyncio.sleep(0)
        assert said == ["first in"]  # one place: the second waits
        limit.rate_limited(30.0, now[0])  # and the server asks for 30 s
        first_done.set()
        await first
        for _ in range(5):
            await asyncio.sleep(0)
        assert said == ["first in"]  # a free place, but the wait is not over
        third = asyncio.create_task(call("third", asyncio.Event()))
        stopped.set()  # a stop ends every wait at once
        await asyncio.wait_for(asyncio.gather(second, third), 5)
        return said

    assert sorted(asyncio.run(go())) == ["first in", "second stopped", "third stopped"]


def test_no_module_keeps_a_retry_rule_of_its_own() -> None:
    """A 429's wait and a transport error's retry are decided in `streaming/retry.py`
    only: elsewhere, no `random.uniform` back-off and no reading of a failure's
    `retry_after_s` but to hand it to the policy."""
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "retry.py" and path.parent.name == "streaming":
            continue
        source = path.read_text(encoding="utf-8")
        if "uniform" not in source and "429" not in source:
            continue  # (parsing only the files that could hold one: a tenth of the time)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "uniform":
                offences.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: random.uniform")
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value == 429 for c in node.comparators):
                offences.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: == 429")
    allowed = {p for p in offences if p.startswith(("gateway/", "ui/", "report/", "streaming/"))}
    assert sorted(set(offences) - allowed) == [], offences
