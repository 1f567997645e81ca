"""Helpers for the gateway's functional tests (the fixtures are in ``conftest.py``).

They parse SSE by hand so the tests check the bytes the gateway writes, not a client's
view of them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from anoman_tui.gateway.config import GatewayConfig, KeyPolicy
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.helpers import gateway_config, loopback_client

POLICY_KEY = "anm-sk-local-policy-test-key-0001"


def fast_config(**overrides: Any) -> GatewayConfig:
    """Simulated models 50x faster than life; limits out of the way; a second key
    (``POLICY_KEY``) limited by a key policy."""
    values: dict[str, Any] = {
        "non_stream_timeout_s": 5.0,
        "api_keys": [POLICY_KEY],
        "key_policies": {POLICY_KEY: KeyPolicy(allowed_models=["anoman-lite"], max_tokens=500)},
    }
    values.update(overrides)
    return gateway_config(**values)


def auth(gw: EmbeddedGateway, style: str = "bearer") -> dict[str, str]:
    if style == "bearer":
        return {"Authorization": f"Bearer {gw.api_key}"}
    return {"x-api-key": gw.api_key}


def prompt(text: str = "Explain connection pooling in Postgres") -> str:
    """A prompt no other test sends, so the cache never interferes."""
    return f"{text} (case {uuid.uuid4().hex[:8]})"


def chat_body(model: str = "anoman-lite", text: str | None = None, stream: bool = True,
              **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text or prompt()}],
            "stream": stream, **extra}


@dataclass
class SSEFrame:
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(raw: bytes) -> list[SSEFrame]:
    """Frames of an SSE body; the gateway writes one `data:` line per frame."""
    frames = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        frames.append(SSEFrame(event, "\n".join(data)))
    return frames


def post_stream(gw: EmbeddedGateway, path: str, body: dict[str, Any],
                headers: dict[str, str] | None = None) -> tuple[httpx.Response, list[SSEFrame]]:
    with loopback_client(gw.base_url, timeout=30) as client:
        response = client.post(path, json=body, headers={**auth(gw), **(headers or {})})
    return response, parse_sse(response.content)


def wait_row(gw: EmbeddedGateway, request_id: str, timeout: float = 3.0) -> dict[str, Any]:
    """The ledger row of ``request_id`` (rows land right after the response ends)."""
    deadline = time.monotonic() + timeout
    while True:
        row = gw.state.ledger.get(request_id)
        if row is not None:
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"no ledger row for {request_id}")
        time.sleep(0.005)


SERVE_SCRIPT = (
    "import argparse, sys\n"
    "from anoman_tui.gateway.serve import add_serve_arguments, serve_main\n"
    "parser = argparse.ArgumentParser()\n"
    "add_serve_arguments(parser)\n"
    "sys.exit(serve_main(parser.parse_args(sys.argv[1:])))\n"
)


def start_serve(*args: str, cli: bool = False) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`serve` in a child process; ``cli``: through `anoman-tui serve`'s own parser."""
    command = ([sys.executable, "-m", "anoman_tui.cli", "serve"] if cli
               else [sys.executable, "-c", SERVE_SCRIPT])
    proc = subprocess.Popen([*command, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    url = ""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if "listening on" in line:
            url = line.split("listening on ")[1].strip()
        if url and ((line.startswith("Usage ledger") and "--api-key" in args)
                    or line.startswith("API key")):
            break
    assert url, lines
    return proc, url, lines
