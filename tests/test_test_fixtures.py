"""The shared fixtures of ``tests/conftest.py`` and the runner of ``tests/helpers.py`` do
what they promise."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

from anoman_tui.gateway.config import GatewayConfig
from tests.helpers import LocalGateways, run_main


@pytest.fixture
def dirty_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a developer's shell might hold before ``clean_env`` runs."""
    monkeypatch.setenv("ANOMAN_API_KEY", "anm-sk-developer-own")
    monkeypatch.setenv("anoman_models", "mine")
    monkeypatch.setenv("ANOMAN_GATEWAY_TIME_SCALE", "7")


def test_clean_env_removes_every_anoman_variable_and_moves_the_files(
        dirty_env: None, clean_env: Path, tmp_path: Path) -> None:
    left = sorted(name for name in os.environ if name.upper().startswith("ANOMAN_"))
    assert left == ["ANOMAN_CONFIG"]
    assert clean_env == tmp_path / "config.toml" and not clean_env.exists()
    assert os.environ["ANOMAN_CONFIG"] == str(clean_env)
    assert os.environ["XDG_DATA_HOME"] == str(tmp_path / "data")
    assert os.environ["XDG_CONFIG_HOME"] == str(tmp_path / "config")


def test_the_gateway_factory_serves_at_once_and_stops_at_teardown(tmp_path: Path) -> None:
    gateways = LocalGateways(tmp_path)
    fast = gateways(faults={"anoman-lite": "ttft=0"}, cache_enabled=False)
    given = gateways(GatewayConfig(time_scale=0.5), api_key="anm-sk-local-given-0001")
    assert fast.config.time_scale == 0.02 and not fast.config.cache_enabled
    assert fast.config.models["anoman-lite"].simulate == "ttft=0"
    assert given.api_key == "anm-sk-local-given-0001" and given.config.time_scale == 0.5
    assert fast.db_path.parent == tmp_path and fast.db_path != given.db_path
    for gw in (fast, given):
        models = httpx.get(gw.base_url + "/v1/models", timeout=10,
                           headers={"Authorization": f"Bearer {gw.api_key}"})
        assert models.status_code == 200, models.text
        assert gw.state.config.time_scale == gw.config.time_scale
    with pytest.raises(TypeError):
        gateways(GatewayConfig(), cache_enabled=False)
    gateways.stop_all()
    for gw in (fast, given):
        with pytest.raises(httpx.ConnectError):
            httpx.get(gw.base_url + "/v1/models", timeout=2)


def test_make_local_gateway_is_the_factory(make_local_gateway: LocalGateways,
                                           tmp_path: Path) -> None:
    gw = make_local_gateway(time_scale=0.1)
    assert gw.db_path.parent == tmp_path and gw.base_url.startswith("http://127.0.0.1:")


def test_the_postgres_server_serves_fresh_databases_and_restarts(postgres_server) -> None:  # type: ignore[no-untyped-def]
    first, second = postgres_server.new_database(), postgres_server.new_database()
    assert first != second
    name = first.rsplit("/", 1)[1]
    postgres_server.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (1)", name)
    assert postgres_server.psql("SELECT count(*) FROM t", name) == "1"
    assert postgres_server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                                second.rsplit("/", 1)[1]) == "0"
    # What the fault tests do: stopped, it refuses; started again, on the same port.
    port = postgres_server.port
    postgres_server.stop()
    assert not postgres_server.running()
    with pytest.raises(RuntimeError):
        postgres_server.psql("SELECT 1")
    postgres_server.start()
    assert postgres_server.port == port and postgres_server.psql("SELECT 1") == "1"


def test_a_server_whose_session_died_is_swept_and_a_live_ones_is_not(
        postgres_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    from tests.postgres import PostgresServer, sweep_orphans

    orphan = PostgresServer(postgres_server.bindir)
    orphan.start()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (orphan.root / "owner.pid").write_text(gone.stdout.strip())  # an owner that exited
    assert orphan.running()
    swept = sweep_orphans(postgres_server.bindir)
    assert orphan.root in swept and not orphan.root.exists()
    assert postgres_server.root not in swept and postgres_server.running()


def test_run_main_runs_the_command_as_a_child_would_and_puts_everything_back(
        clean_env: Path, tmp_path: Path) -> None:
    """`tests.helpers.run_main`: the command sees the environment, working directory and
    stdin it was given, its output and status come back, and this process's own are as
    they were (a later test must not see the command's environment or streams)."""
    before = dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin
    done = run_main(["--version"], env={"ONLY": "this"}, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("anoman-tui ") and done.stderr == ""
    refused = run_main(["compare", "x", "--idle-timeout", "0"])
    assert refused.returncode == 2 and "idle-timeout" in refused.stderr and refused.stdout == ""
    assert (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin) == before


# Each `python -m anoman_tui.cli` costs a second of CPU (an interpreter, its imports): the
# CLI tests call `run_main` instead, and start a process only for what only a real one
# shows (a signal, a kill, the interpreter's argv, the exit status through real pipes).
MOST_CLI_PROCESSES = 8


def test_the_cli_tests_start_few_processes_of_their_own() -> None:
    folder = Path(__file__).parent / "cli"
    starts = {path.name: path.read_text(encoding="utf-8").count('"anoman_tui.cli"')
              for path in sorted(folder.glob("*.py"))}
    assert sum(starts.values()) <= MOST_CLI_PROCESSES, starts
