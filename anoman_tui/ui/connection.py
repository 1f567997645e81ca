"""Where the app's requests go: the targets, their connections and model lists, the
local gateway, and connecting (again) with retries.

`AnomanApp` owns one `Connector`; screens reach it as `app_services(app).connector`.
`reconnect()` runs, in an app worker, the start of the local gateway when a pane needs
it (in a thread: uvicorn stays off the path to the first paint), then reads the default
target's model list, waiting `RETRY_DELAYS_S` between attempts while the gateway is
down, then the other panes' targets' lists. How it went reaches the compare screen as
`GatewayConnecting`, `GatewayReady` and `GatewayUnavailable` (`ui/messages.py`); a
target other than the default that does not answer is a notification, since it costs
only its own panes.

May import: Textual's `App` and `MessagePump` (workers, notifications, messages), the
stream core, the targets, the config and `ui.messages`, `ui.network`, `ui.render`.
Never a screen or a widget: the screens use this module, not the reverse.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump

from anoman_tui.config import Settings
from anoman_tui.streaming import (
    GatewayRequestError,
    ModelInfo,
    mask_key,
    normalize_base_url,
)
from anoman_tui.targets import Connection, Target, connect
from anoman_tui.ui.messages import GatewayConnecting, GatewayReady, GatewayUnavailable
from anoman_tui.ui.network import NetworkThread
from anoman_tui.ui.render.pane_state import PaneState

if TYPE_CHECKING:
    # Made in a thread after the first paint, and imported there: the HTTP stack below
    # httpx (httpcore, h11, anyio) stays off the path to it.
    from anoman_tui.streaming import StreamClient

log = logging.getLogger(__name__)
# Waits between attempts to reach a gateway that is down: soon at first (it may be
# starting), then every half minute at most.
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


class LocalGateway(Protocol):
    """The local gateway as the app uses it (`anoman_tui.gateway.embedded.EmbeddedGateway`,
    or one a test or benchmark already runs)."""

    base_url: str
    api_key: str

    def start(self) -> object: ...

    def stop(self) -> None: ...


def _start_embedded_gateway() -> LocalGateway:
    """(a thread) The local gateway, imported and started here: uvicorn, Starlette and
    the gateway's app (~0.3 s of imports) stay off the UI's thread."""
    from anoman_tui.gateway.embedded import EmbeddedGateway

    gateway = EmbeddedGateway()
    gateway.start()
    return gateway


class Connector:
    """The targets by name, where each one's requests go, what each lists, and the
    transport (the network thread for streams, a `StreamClient` for JSON endpoints)."""

    def __init__(self, app: App[Any], settings: Settings, panes: list[PaneState], *,
                 gateway_factory: Callable[[], LocalGateway] | None = None) -> None:
        """`panes`: the compare screen's pane states (the targets they use are connected
        too). `gateway_factory`: a local gateway already running, instead of starting
        one."""
        self._app = app
        self.settings = settings
        self.panes = panes
        # JSON endpoints (models, usage), on the UI loop. Made in a thread after the first
        # paint: an httpx client builds an SSL context (~85 ms measured).
        self._stream_client: StreamClient | None = None
        self.network = NetworkThread()  # the streams: read and timed off the UI's thread
        self.api_key = settings.api_key.get_secret_value() if settings.api_key else ""
        """The key requests carry (the local gateway's own when it runs)."""
        self.targets = settings.all_targets()
        """Every target by name (`anoman_tui.targets`): built in, and the config file's."""
        self.connections: dict[str, Connection] = {}
        """The targets resolved so far (the local gateway's once it runs)."""
        self.target_models: dict[str, list[ModelInfo]] = {}
        """What each target's models endpoint listed."""
        self.local: tuple[str, str] | None = None
        """The local gateway's (URL, key) once it runs."""
        self.is_local_gateway = self.default_target.is_local
        self.ready_url: str | None = None
        """The default target's URL once its model list was read; None before, while
        (re)connecting, and while it does not answer."""
        self.listener: MessagePump | None = None
        """Who hears how connecting goes (the compare screen, once the app mounts it)."""
        self._gateway_factory = gateway_factory
        self._gateway: LocalGateway | None = None

    @property
    def default_target(self) -> Target:
        """Where a plain MODEL goes (the status line's target)."""
        return self.targets[self.settings.default_target]

    @property
    def stream_client(self) -> StreamClient:
        if self._stream_client is None:
            from anoman_tui.streaming import StreamClient

            self._stream_client = StreamClient()
        return self._stream_client

    def connection(self, target: Target) -> Connection | None:
        """Where `target`'s requests go now; None for the local gateway before it runs."""
        known = self.connections.get(target.name)
        if known is not None and known.target == target:
            return known
        if target.is_local and self.local is None:
            return None
        known = connect(target, local=self.local)
        self.connections[target.name] = known
        return known

    async def models_of(self, target: Target) -> list[ModelInfo]:
        """`target`'s model list (read once, then kept); starts the local gateway if it
        is the one asked and not running. Raises `GatewayRequestError`."""
        if target.name in self.target_models:
            return self.target_models[target.name]
        if target.is_local and self.local is None:
            await self._start_local_gateway()
        connection = self.connection(target)
        assert connection is not None
        client = await asyncio.to_thread(lambda: self.stream_client)
        models = await client.list_models(*connection.list_models_args())
        self.target_models[target.name] = models
        return models

    # -- connecting -----------------------------------------------------------

    def reconnect(self, *, announce: bool = True) -> None:
        """Connect (again) now: any attempt or wait in progress is cancelled."""
        self.ready_url = None
        if announce:
            self._tell(GatewayConnecting(self._target_description()))
        self._app.run_worker(self._connect(), name="connect", group="connect",
                             exclusive=True, exit_on_error=False)

    def _tell(self, message: Message) -> None:
        if self.listener is not None:
            self.listener.post_message(message)

    def _target_description(self) -> str:
        if self.is_local_gateway:
            return "starting the local gateway…"
        return f"connecting to {normalize_base_url(self.settings.base_url or '')}…"

    def target_now(self) -> str:
        """The default target in a few words: "the local gateway" or its URL."""
        if self.is_local_gateway:
            return "the local gateway"
        return normalize_base_url(self.settings.base_url or "")

    def masked_key(self) -> str:
        """The configured API key as it may be shown (`anm-sk-…last4`)."""
        key = self.settings.api_key
        return mask_key(key.get_secret_value() if key else None)

    async def _connect(self) -> None:
        # After the first paint, so the thread's start never delays it.
        await asyncio.to_thread(self.network.start)
        client = await asyncio.to_thread(lambda: self.stream_client)
        attempt = 0
        while True:
            default = self.default_target
            try:
                if default.is_local or any(p.target.is_local for p in self.panes):
                    await self._start_local_gateway()
                connection = self.connection(default)
                assert connection is not None
                self.api_key = connection.api_key.get_secret_value()
                models = await client.list_models(*connection.list_models_args())
            except GatewayRequestError as exc:
                retry_in = RETRY_DELAYS_S[min(attempt, len(RETRY_DELAYS_S) - 1)]
                if not exc.retryable:
                    self._tell(GatewayUnavailable(str(exc)))
                    return
                self._tell(GatewayUnavailable(str(exc), retry_in))
                attempt += 1
                await asyncio.sleep(retry_in)  # cancelled by `reconnect`
                continue
            except Exception as exc:  # a broken gateway start must be a message, not a crash
                log.exception("could not start or reach the gateway")
                self._tell(GatewayUnavailable(f"{type(exc).__name__}: {exc}"))
                return
            self.target_models[default.name] = models
            self.ready_url = connection.base_url
            self._tell(GatewayReady(connection.base_url, connection.label(), models))
            break
        # The other panes' targets: their model lists give the picker and the prices.
        # A target that does not answer costs its own panes only; they say why when used.
        others = {p.target.name: p.target for p in self.panes if p.target.name != default.name}
        for target in others.values():
            try:
                await self.models_of(target)
            except GatewayRequestError as exc:
                self._app.notify(f"{target.name}: {exc}", title="Target not answering",
                                 severity="warning", timeout=8)

    async def _start_local_gateway(self) -> tuple[str, str]:
        if self._gateway is not None:
            gateway = self._gateway  # started before a switch to another address and back
        elif self._gateway_factory is not None:
            gateway = self._gateway_factory()  # already running (tests share one)
        else:
            gateway = await asyncio.to_thread(_start_embedded_gateway)
        self._gateway = gateway
        self.local = (gateway.base_url, gateway.api_key)
        host = gateway.base_url.removeprefix("http://")
        return gateway.base_url, f"local gateway ({host})"

    def targets_changed(self) -> None:
        """The gateway URL or key changed: the default target with it, and the panes that
        were on the old default move to the new one."""
        old = self.default_target
        self.targets = self.settings.all_targets()
        new = self.default_target
        for name in {old.name, new.name}:
            self.connections.pop(name, None)
            self.target_models.pop(name, None)
        for state in self.panes:
            if state.target.name == old.name:
                state.target = new
                state.endpoint = new.default_endpoint(state.endpoint)
        self.is_local_gateway = new.is_local

    # -- the gateway's JSON endpoints -----------------------------------------

    async def fetch_usage(self, limit: int = 200) -> list[dict[str, Any]]:
        if self.ready_url is None:
            raise GatewayRequestError("the gateway is not ready yet")
        return await self.stream_client.fetch_usage(self.ready_url, self.api_key, limit)

    async def close(self) -> None:
        """Close the JSON client, stop the network thread and the local gateway this
        connector started (not one it was handed)."""
        if self._stream_client is not None:
            await self._stream_client.aclose()
        await asyncio.to_thread(self.network.stop)
        if self._gateway is not None and self._gateway_factory is None:
            await asyncio.to_thread(self._gateway.stop)
