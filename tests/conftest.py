"""Fixtures every test directory may use.

- ``clean_env``: no `ANOMAN_*` variable from the developer's shell, and the config file,
  data and config directories under the test's tmp dir (so nothing reads or writes the
  developer's own config, history or logs).
- ``make_local_gateway`` / ``make_module_gateway`` / ``make_session_gateway``: one
  factory (`tests.helpers.LocalGateways`) for the local gateway on loopback, whose
  gateways stop at the end of the test, the module or the session.
- ``replay``: the scripted loopback server of `tests/replay_server.py`.
- ``postgres_server``: a real PostgreSQL server for the session (`tests/postgres.py`);
  skipped with how to install it when its binaries are missing, failed under `CI=true`.
- ``history_location``: where a store test keeps its history, once per engine: a
  SQLite file under the test's tmp dir, then a fresh database on ``postgres_server``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.helpers import LocalGateways
from tests.postgres import INSTALL_HINT, PostgresServer, find_bindir, sweep_orphans
from tests.replay_server import ReplayServer

# Bytecode caches on, for this run and every interpreter it starts: a machine or CI that
# sets PYTHONDONTWRITEBYTECODE would otherwise have each worker rewrite every test
# module's asserts afresh and each `anoman-tui` child process compile the package again
# (~0.4 s of CPU a process from a fresh clone). The caches are __pycache__ folders,
# ignored by git, as an installed package has its own.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the long soak and load tests (marked slow)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The tests marked `long(SECONDS)` first, longest first (xdist hands tests out in
    # this order, after its xdist_group groups): one that started last on a worker would
    # keep the whole run waiting for it alone.
    def seconds(item: pytest.Item) -> float:
        mark = item.get_closest_marker("long")
        return mark.args[0] if mark else 0.0

    items.sort(key=seconds, reverse=True)
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with `pytest --run-slow`")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    server = ReplayServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Only what the test sets: every `ANOMAN_*` variable removed, ``ANOMAN_CONFIG`` at
    ``tmp_path/config.toml`` (not created), ``XDG_DATA_HOME`` at ``tmp_path/data`` (the
    history and logs go there) and ``XDG_CONFIG_HOME`` at ``tmp_path/config``.

    Returns the config file's path. A subprocess started with ``dict(os.environ)`` gets
    the same clean environment.
    """
    for name in list(os.environ):
        if name.upper().startswith("ANOMAN_"):
            monkeypatch.delenv(name)
    # The built-in openai target follows it (as the OpenAI SDK does): a developer's own
    # would send the tests' `openai:` models elsewhere.
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    path = tmp_path / "config.toml"
    monkeypatch.setenv("ANOMAN_CONFIG", str(path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return path


def _gateways(scratch: Path) -> Iterator[LocalGateways]:
    gateways = LocalGateways(scratch)
    try:
        yield gateways
    finally:
        gateways.stop_all()


@pytest.fixture
def make_local_gateway(tmp_path: Path) -> Iterator[LocalGateways]:
    """Start local gateways for one test: ``make_local_gateway(config=None, *,
    time_scale=0.02, faults=None, api_key=None, db_path=None, **config_overrides)``
    returns a started `EmbeddedGateway`; all are stopped after the test."""
    yield from _gateways(tmp_path)


@pytest.fixture(scope="module")
def make_module_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalGateways]:
    """``make_local_gateway`` for a module-scoped fixture: stopped after the module."""
    yield from _gateways(tmp_path_factory.mktemp("gateways"))


@pytest.fixture(scope="session")
def make_session_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalGateways]:
    """``make_local_gateway`` for a session-scoped fixture: stopped after the session."""
    yield from _gateways(tmp_path_factory.mktemp("gateways"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server per session (per xdist worker), stopped at its end."""
    bindir = find_bindir()
    if bindir is None:
        reason = f"PostgreSQL's server binaries (initdb, pg_ctl) were not found: {INSTALL_HINT}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI must run the PostgreSQL tests; .ci/run installs it)")
        pytest.skip(reason)
    sweep_orphans(bindir)  # servers an earlier, killed session left running
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture(params=["sqlite", "postgresql"])
def history_location(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where to open a `HistoryStore`, once per engine: a SQLite file (a `Path`) or the
    URL of a fresh PostgreSQL database (a `str`)."""
    if request.param == "sqlite":
        return tmp_path / "h.sqlite3"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()
