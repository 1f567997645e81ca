"""Running the gateway: a uvicorn server that cancels in-flight runs on
shutdown, and ``EmbeddedGateway``, the in-process gateway on a free
loopback port that `anoman-tui` starts when no `--base-url` is given (and
that the functional tests use).

Imports uvicorn, the gateway's own modules and the standard library.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import uvicorn

from anoman_tui.gateway.app import create_app
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.state import GatewayState

log = logging.getLogger("anoman_tui.gateway")

KEY_PREFIX = "anm-sk-local-"


def new_api_key() -> str:
    """A fresh random local key, `anm-sk-local-` + 32 url-safe characters."""
    return KEY_PREFIX + secrets.token_urlsafe(24)


class GatewayServer(uvicorn.Server):
    """uvicorn, plus: close in-flight streams (recorded cancelled) before shutting down.

    Without this, uvicorn waits for every open response to finish, and a stalled
    stream never does.
    """

    def __init__(self, config: uvicorn.Config, state: GatewayState,
                 on_started: Callable[[GatewayServer], None] | None = None) -> None:
        super().__init__(config)
        self.gateway_state = state
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_started is not None:
            self._on_started(self)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        cancelled = self.gateway_state.cancel_all("gateway_shutdown")
        if cancelled:
            log.info("closed %d in-flight request(s) for shutdown", cancelled)
            await asyncio.sleep(0.01)  # let the cancelled runs write their ledger rows
        await super().shutdown(sockets)

    @property
    def bound_port(self) -> int:
        for server in getattr(self, "servers", []):
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("the server is not listening")


def uvicorn_config(app: object, host: str, port: int, *, log_level: str = "warning"
                   ) -> uvicorn.Config:
    # Explicit loop/http choices skip uvicorn's auto-detection imports at start-up.
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        loop="asyncio",
        http="h11",
        ws="none",
        lifespan="on",
        log_config=None,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=3,
        timeout_keep_alive=30,
    )


class EmbeddedGateway:
    """The gateway in a background thread on 127.0.0.1 and a free port.

    ``start()`` returns once the port accepts connections; then ``base_url`` and
    ``api_key`` are set. ``stop()`` closes in-flight streams (recorded as
    cancelled) and joins the thread. Usable as a context manager.
    """

    def __init__(self, config: GatewayConfig | None = None, db_path: Path | str | None = None,
                 api_key: str | None = None) -> None:
        base = config if config is not None else GatewayConfig()
        self.api_key = api_key or new_api_key()
        update: dict[str, object] = {"api_keys": [*base.api_keys, self.api_key]}
        if db_path is not None:
            update["db_path"] = Path(db_path)
        self.config = base.model_copy(update=update)
        self.host = "127.0.0.1"
        self.port = 0
        self.base_url = ""
        self._server: GatewayServer | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def db_path(self) -> Path:
        return self.config.resolved_db_path()

    @property
    def state(self) -> GatewayState:
        if self._server is None:
            raise RuntimeError("the gateway is not started")
        return self._server.gateway_state

    def start(self, timeout: float = 10.0) -> EmbeddedGateway:
        if self._thread is not None:
            return self
        uvicorn_log = logging.getLogger("uvicorn")
        if not uvicorn_log.handlers:
            # Embedded in a terminal UI: uvicorn's records go to the host's log, not stderr.
            uvicorn_log.addHandler(logging.NullHandler())
        app = create_app(self.config)
        ready = threading.Event()
        server = GatewayServer(uvicorn_config(app, self.host, 0), app.state.gateway,
                               on_started=lambda _s: ready.set())
        self._server = server

        def run() -> None:
            try:
                asyncio.run(server.serve())
            except BaseException as exc:  # surfaced to start() and logged
                self._error = exc
                log.exception("embedded gateway stopped with an error")
            finally:
                ready.set()

        self._thread = threading.Thread(target=run, name="anoman-gateway", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.002):
            if time.monotonic() > deadline:
                raise TimeoutError("the embedded gateway did not start in time")
        if not server.started:
            raise RuntimeError("the embedded gateway failed to start") from self._error
        self.port = server.bound_port
        self.base_url = f"http://{self.host}:{self.port}"
        return self

    def stop(self, timeout: float = 10.0) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout)
        self._thread = None

    def __enter__(self) -> EmbeddedGateway:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
