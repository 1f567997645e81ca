"""The pytest plugin `suite_cost.py` loads in every worker: one JSON line per test in
`$ANOMAN_SUITE_COST_DIR/<pid>.jsonl` with its wall time, the worker's CPU over it (all
threads) and the CPU of the child processes that ended meanwhile.

May import: the standard library and pytest.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    folder = os.environ.get("ANOMAN_SUITE_COST_DIR")
    cpu, child, wall = time.process_time(), _children(), time.perf_counter()
    yield
    if not folder:
        return
    line = {"id": item.nodeid, "wall": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu, "child": _children() - child}
    with (Path(folder) / f"{os.getpid()}.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
