"""Pieces the tests share that are not fixtures: the local gateway's test configuration
and the starter behind the gateway fixtures of ``tests/conftest.py``; a loopback server
that records what each request carried; `anoman-tui` run in this process (`run_main`,
`main_in_thread`) and as a subprocess (`cli`); the tests' own HTTP clients
(`loopback_client`); a stream request to a loopback server.

Test modules import shared code from modules like this one (never from a ``test_*``
module or a ``conftest.py``: ``tests/test_test_layout.py`` checks it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from anoman_tui.gateway.config import GatewayConfig, ModelDefaults
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.streaming import ChatTurn, EndpointFormat, StreamRequest
from anoman_tui.streaming.tls import tls_context
from tests.frames import ANTHROPIC_EXAMPLE_STREAM, OPENAI_EXAMPLE_STREAM
from tests.replay_server import RecordedRequest, ReplayServer, Script

# The simulated models run this much faster than life unless a test says otherwise.
FAST_TIME_SCALE = 0.02


def gateway_config(*, time_scale: float = FAST_TIME_SCALE,
                   faults: Mapping[str, str] | None = None,
                   **overrides: object) -> GatewayConfig:
    """A local gateway's configuration for tests: fast simulated models and limits out of
    the way (rate and concurrency), then ``overrides`` (any `GatewayConfig` field).

    ``faults`` maps a model to its `X-Anoman-Simulate` plan, as `[models.NAME] simulate`
    in the gateway's config file would.
    """
    values: dict[str, object] = {
        "time_scale": time_scale,
        "rate_limit_rpm": 100_000,
        "max_concurrent_streams": 1_000,
    }
    if faults:
        values["models"] = {model: ModelDefaults(simulate=plan) for model, plan in faults.items()}
    values.update(overrides)
    return GatewayConfig.model_validate(values)


class LocalGateways:
    """Starts local gateways (real uvicorn on a free loopback port, each with its own
    ledger under a scratch directory) and stops every one of them in ``stop_all``.

    Calling it returns the started `EmbeddedGateway`: ``base_url``, ``api_key``,
    ``state`` (the running gateway's state: ledger, faults, in-flight runs), ``config``
    and ``db_path``. ``start()`` returns once uvicorn has bound its port and finished
    its start-up, so the gateway answers straight away.
    """

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch
        self._started: list[EmbeddedGateway] = []

    def __call__(self, config: GatewayConfig | None = None, *,
                 time_scale: float = FAST_TIME_SCALE,
                 faults: Mapping[str, str] | None = None,
                 api_key: str | None = None,
                 db_path: Path | None = None,
                 **overrides: object) -> EmbeddedGateway:
        """Start one gateway: ``config`` as given, or else `gateway_config` of
        ``time_scale``, ``faults`` and ``overrides``. ``api_key`` is accepted besides
        the config's keys (default: a fresh random one); ``db_path`` is its ledger."""
        if config is not None and (faults or overrides or time_scale != FAST_TIME_SCALE):
            raise TypeError("give either a whole config or the values to build one, not both")
        if config is None:
            config = gateway_config(time_scale=time_scale, faults=faults, **overrides)
        if db_path is None:
            db_path = self._scratch / f"gateway-{len(self._started)}.sqlite3"
        gateway = EmbeddedGateway(config, db_path=db_path, api_key=api_key)
        self._started.append(gateway)
        return gateway.start()

    def stop_all(self) -> None:
        """Stop every gateway started here (one a test stopped already is left as is)."""
        while self._started:
            self._started.pop().stop()


# -- a loopback server that records requests (tests/test_settings.py and others) -----

LISTED = ["listed-1", "listed-2", "listed-3"]  # the models RecordingGateway lists


class RecordingGateway(ReplayServer):
    """Loopback HTTP: lists three models, records every request and answers any model.

    It answers with the example stream of the request's format, or, with
    `stall`, sends the headers and stays silent until the client gives up.
    """

    def __init__(self) -> None:
        super().__init__()
        self.stall = False
        listing = json.dumps({"data": [{"id": m} for m in LISTED]}).encode()
        self._listing = Script(content_type="application/json", body=[listing], chunked=False)

    @property
    def streams(self) -> list[RecordedRequest]:
        """The generation requests (not the model listing), oldest first."""
        return [r for r in self.requests if r.method == "POST"]

    def script_for(self, request: RecordedRequest) -> Script:
        if request.method != "POST":  # the model list, under whatever base URL path
            return self._listing if request.path.endswith("/v1/models") else super().script_for(
                request)
        if self.stall:
            return Script(body=[], ending="hang")
        frames = (ANTHROPIC_EXAMPLE_STREAM if "/anthropic/" in request.path
                  else OPENAI_EXAMPLE_STREAM)
        return Script(body=list(frames))


# -- `anoman-tui` in this process ---------------------------------------------------

# One command at a time: a command's streams, environment and working directory are
# the process's own while it runs.
_one_command = threading.Lock()


@contextlib.contextmanager
def _as_a_process(env: Mapping[str, str], cwd: Path | None, stdin: bytes
                  ) -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    """This process's environment, working directory and standard streams as a child
    process would have them (``env`` whole, stdin ``stdin``, stdout and stderr into
    memory), put back afterwards. Logging goes as in a fresh process: with no handler on
    the root logger (pytest's are set aside meanwhile), a warning is one line on stderr.
    """
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace",
                           write_through=True)
    try:
        os.environ.clear()
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        root.handlers, root.level = [], logging.WARNING
        yield out, err
    finally:
        root.handlers, root.level = saved_handlers, saved_level
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def _text(stream: io.TextIOWrapper) -> str:
    """What was written, read back as `subprocess.run(text=True)` reads a pipe."""
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def run_main(args: Sequence[str], *, env: Mapping[str, str] | None = None,
             cwd: Path | None = None, stdin: bytes = b""
             ) -> subprocess.CompletedProcess[str]:
    """`anoman-tui ARGS` run by calling `anoman_tui.cli.main` in this process, as a
    subprocess would run it: ``env`` is its whole environment (default: this one),
    ``cwd`` its working directory, ``stdin`` what it reads; returns its exit status and
    what it wrote, as `subprocess.run(..., capture_output=True, text=True)` does.

    A third of the time of a subprocess (no interpreter start, no imports). What only a
    real process shows (the console script, signals, a kill, a terminal) stays with
    `cli` and `subprocess`. From an async test whose loop must keep serving while the
    command runs, await `main_in_thread` instead (here, that loop waits).
    """
    from anoman_tui.cli import main

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:  # the command runs its own loop: not inside this one
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            return thread.submit(run_main, args, env=env, cwd=cwd, stdin=stdin).result()
    with _one_command, _as_a_process(dict(os.environ) if env is None else env, cwd,
                                     stdin) as (out, err):
        try:
            status = main(list(args))
        except SystemExit as stop:  # argparse's errors and --help, --version
            code = stop.code
            if isinstance(code, str):
                print(code, file=sys.stderr)
            status = 1 if isinstance(code, str) else (code or 0)
        stdout, stderr = _text(out), _text(err)
    return subprocess.CompletedProcess(["anoman-tui", *args], status, stdout, stderr)


async def main_in_thread(args: Sequence[str], *, env: Mapping[str, str] | None = None,
                         cwd: Path | None = None, stdin: bytes = b""
                         ) -> subprocess.CompletedProcess[str]:
    """`run_main` from an async test: in a worker thread, so this loop keeps serving the
    test's loopback servers while the command runs its own."""
    return await asyncio.to_thread(run_main, args, env=env, cwd=cwd, stdin=stdin)


async def cli(*args: str, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> tuple[int, str, str]:
    """`anoman-tui ARGS` (in this process, `main_in_thread`) with this environment plus
    ``env``: (exit status, stdout, stderr)."""
    done = await main_in_thread(args, env={**os.environ, **(env or {})}, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


# -- HTTP clients of the tests' own ------------------------------------------------


def loopback_client(base_url: str, **kw: Any) -> httpx.Client:
    """`httpx.Client(base_url=base_url, **kw)` with the process's one TLS context
    (`anoman_tui.streaming.tls`): httpx would build one for each client, loading the
    certificate bundle (~30 ms of CPU), and the tests make hundreds of clients."""
    return httpx.Client(base_url=base_url, verify=tls_context(), **kw)


def loopback_async_client(base_url: str, **kw: Any) -> httpx.AsyncClient:
    """`loopback_client`, async."""
    return httpx.AsyncClient(base_url=base_url, verify=tls_context(), **kw)


# -- a stream request to a loopback server ------------------------------------------

STREAM_KEY = "anm-sk-test-0123456789abcdef"


def make_request(server: ReplayServer, model: str, endpoint: EndpointFormat = "openai",
                 **kw: Any) -> StreamRequest:
    """A short story asked of ``model`` on ``server``, with ``STREAM_KEY``."""
    return StreamRequest(
        base_url=server.base_url,
        api_key=STREAM_KEY,
        endpoint=endpoint,
        model=model,
        messages=(ChatTurn(role="user", content="Tell me a short story"),),
        **kw,
    )
