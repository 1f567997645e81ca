"""`anoman-tui serve`: the gateway in the foreground.

``add_serve_arguments`` defines the command's options and ``serve_main`` runs
it: prints the URL it listens on (and a generated key, once, when none was
given), warns when bound beyond loopback, and stops cleanly on SIGINT or
SIGTERM, closing in-flight streams and recording them as cancelled.

Imports uvicorn (through ``embedded``), the gateway's own modules and the
standard library.
"""

from __future__ import annotations

import argparse
import errno
import gc
import ipaddress
import logging
import signal
import socket
import sys
import threading
from pathlib import Path

from anoman_tui.gateway.app import create_app
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import GatewayServer, new_api_key, uvicorn_config

log = logging.getLogger("anoman_tui.gateway")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; anything else is exposed)")
    parser.add_argument("--port", type=int, default=8787, help="port (default 8787; 0 = any)")
    parser.add_argument("--api-key", action="append", dest="api_key", metavar="KEY",
                        help="accepted API key (repeatable); one is generated if none is given. "
                        "A key on the command line can end up in shell history and process "
                        "lists: the config file's api_keys is safer")
    parser.add_argument("--db", type=Path, default=None, metavar="PATH",
                        help="usage ledger file (default: the user data directory)")
    parser.add_argument("--config", type=Path, default=None, metavar="PATH",
                        help="gateway configuration (TOML)")
    parser.add_argument("--no-cache", action="store_true", dest="no_cache",
                        help="turn the answer cache off for the whole server: every request "
                        "runs the model and streams, none is answered from the cache as JSON "
                        "(the config file's cache_enabled = false does the same)")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, as uvicorn would bind it; bound here so that a
    port in use is one clear line rather than uvicorn's log and exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def bind_error(host: str, port: int, exc: OSError) -> str:
    """The one line ``serve`` prints when it cannot bind."""
    shown = f"[{host}]" if ":" in host else host
    if exc.errno == errno.EADDRINUSE:
        return (f"anoman-tui serve: port {port} is already in use on {shown} (is another "
                "gateway running?); choose another with --port, or --port 0 for any free one")
    if exc.errno == errno.EACCES:
        return (f"anoman-tui serve: not allowed to listen on port {port} ({shown}); "
                "choose a port above 1023 with --port")
    reason = exc.strerror or str(exc)
    return f"anoman-tui serve: cannot listen on {shown}:{port}: {reason}"


def _run_until_signalled(server: GatewayServer, sock: socket.socket) -> None:
    """Run ``server``; SIGINT/SIGTERM end it gracefully and the command returns normally.

    uvicorn re-raises the signal it caught once it has shut down, which would kill
    the process (SIGTERM) or raise KeyboardInterrupt (SIGINT); no-op handlers in
    place while it runs absorb that re-raise.
    """
    if threading.current_thread() is not threading.main_thread():
        server.run(sockets=[sock])
        return
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda _sig, _frame: None) for sig in handled}
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve_main(args: argparse.Namespace) -> int:
    """Run the gateway until SIGINT/SIGTERM; returns the process exit code."""
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = GatewayConfig.load(getattr(args, "config", None))
    except (OSError, ValueError) as exc:
        print(f"anoman-tui serve: cannot load the configuration: {exc}", file=sys.stderr)
        return 2
    keys = [*config.api_keys, *(getattr(args, "api_key", None) or [])]
    generated = None
    if not keys:
        generated = new_api_key()
        keys = [generated]
    update: dict[str, object] = {"api_keys": keys}
    if getattr(args, "db", None) is not None:
        update["db_path"] = Path(args.db)
    if getattr(args, "no_cache", False):
        update["cache_enabled"] = False
    config = config.model_copy(update=update)

    host: str = args.host
    if not is_loopback(host):
        print(f"warning: binding to {host}, which is not loopback: the gateway is reachable "
              "from other machines. Anyone with a key can use it.", file=sys.stderr)
    try:
        sock = listen_socket(host, args.port)
    except OSError as exc:
        print(bind_error(host, args.port, exc), file=sys.stderr)
        return 2
    except OverflowError:  # a port beyond 65535
        print(f"anoman-tui serve: --port {args.port} is not a port (0-65535)", file=sys.stderr)
        return 2
    try:
        app = create_app(config)
    except (OSError, ValueError) as exc:
        sock.close()
        print(f"anoman-tui serve: {exc}", file=sys.stderr)
        return 2

    def announce(server: GatewayServer) -> None:
        # What start-up built lives as long as the process: out of the collector's reach,
        # a full collection no longer walks it (24-26 ms each, measured while the
        # gateway served 2 x 2,000 tok/s beside two busy processes).
        gc.freeze()
        shown = f"[{host}]" if ":" in host else host
        print(f"Anoman gateway listening on http://{shown}:{server.bound_port}", flush=True)
        print(f"Usage ledger: {config.resolved_db_path()}", flush=True)
        if generated is not None:
            # Printed once; it is not stored anywhere else.
            print(f"API key (generated for this run): {generated}", flush=True)

    server = GatewayServer(uvicorn_config(app, host, args.port, log_level="info"),
                           app.state.gateway, on_started=announce)
    try:
        _run_until_signalled(server, sock)
    finally:
        sock.close()
    if not server.started:
        print(f"anoman-tui serve: could not listen on {host}:{args.port}", file=sys.stderr)
        return 1
    return 0
