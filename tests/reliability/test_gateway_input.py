"""Gateway bad input and auth: malformed JSON, wrong types, huge bodies (413),
deep nesting, unknown fields, wrong content types, missing or wrong keys and slow clients
get a clear JSON error (never a 500, never a stack trace) on every generation endpoint;
the gateway binds to loopback by default and its ledger keeps only a key hint."""

from __future__ import annotations

import json
import logging
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.helpers import LocalGateways, loopback_client
from tests.reliability.helpers import fast_config

ENDPOINTS = ("/v1/chat/completions", "/anthropic/v1/messages", "/anoman/v1/playground/run")
BAD_INPUTS_TRIED: list[str] = []


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def error_log() -> Iterator[_Records]:
    """Warnings and errors logged anywhere in the process (the gateway runs in a thread)."""
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)


def messages() -> list[dict[str, str]]:
    return [{"role": "user", "content": f"hello {uuid.uuid4().hex[:8]}"}]


def good(**extra: Any) -> dict[str, Any]:
    return {"model": "anoman-lite", "messages": messages(), "stream": True, "max_tokens": 16,
            **extra}


def deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# name → raw body (bytes) or JSON-able object
BAD_BODIES: dict[str, bytes | dict[str, Any] | list[Any] | str | None] = {
    "empty": b"",
    "not json": b"hello there",
    "truncated json": b'{"model": "anoman-lite", "messages": [',
    "invalid utf-8": b'{"model": "\xff\xfe"}',
    "lone surrogate": b'{"model": "anoman-lite", "messages": [{"role": "user", '
                      b'"content": "\\ud800"}], "stream": true, "temperature": 9}',
    "NaN": b'{"model": "anoman-lite", "messages": [{"role":"user","content":"x"}], '
           b'"temperature": NaN}',
    "Infinity max_tokens": b'{"model": "anoman-lite", "messages": [{"role":"user",'
                           b'"content":"x"}], "max_tokens": Infinity}',
    "huge int": b'{"model": "anoman-lite", "messages": [{"role":"user","content":"x"}], '
                b'"max_tokens": 1' + b"0" * 5000 + b"}",
    "json array": [1, 2, 3],
    "json string": "model",
    "json null": None,
    "deep nesting 100k": deep(100_000),
    "deep nesting in content": b'{"model": "anoman-lite", "messages": [{"role": "user", '
                               b'"content": ' + deep(50_000) + b"}]}",
    "model int": {"model": 5, "messages": messages()},
    "model empty": {"model": "", "messages": messages()},
    "model object": {"model": {"$ne": 1}, "messages": messages()},
    "no messages": {"model": "anoman-lite"},
    "messages string": {"model": "anoman-lite", "messages": "hi"},
    "messages empty": {"model": "anoman-lite", "messages": []},
    "message int": {"model": "anoman-lite", "messages": [5]},
    "role unknown": {"model": "anoman-lite", "messages": [{"role": "root", "content": "x"}]},
    "content int": {"model": "anoman-lite", "messages": [{"role": "user", "content": 5}]},
    "content part image": {"model": "anoman-lite", "messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
    "content part text int": {"model": "anoman-lite", "messages": [
        {"role": "user", "content": [{"type": "text", "text": 5}]}]},
    "stream string": good(stream="yes"),
    "max_tokens string": good(max_tokens="10"),
    "max_tokens negative": good(max_tokens=-1),
    "max_tokens bool": good(max_tokens=True),
    "max_tokens huge": good(max_tokens=10**12),
    "temperature string": good(temperature="hot"),
    "temperature 5": good(temperature=5),
    "top_p list": good(top_p=[]),
    "stop int": good(stop=5),
    "n 2": good(n=2),
    "seed string": good(seed="x"),
    "unknown model": good(model="no-such-model"),
    "model with escapes": good(model="\x1b]52;c;UFdORUQ=\x07<script>"),
}
PLAYGROUND_ONLY = {"panel string": good(panel="x"), "compare_id int": good(compare_id=5)}


def post(gw: EmbeddedGateway, path: str, body: Any, headers: dict[str, str] | None = None,
         auth: bool = True) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if auth:
        all_headers.setdefault("Authorization", f"Bearer {gw.api_key}")
    with loopback_client(gw.base_url, timeout=30) as client:
        return client.post(path, content=raw, headers=all_headers)


def assert_clear_json_error(response: httpx.Response, status: int | tuple[int, ...],
                            name: str) -> dict[str, Any]:
    statuses = (status,) if isinstance(status, int) else status
    assert response.status_code in statuses, (name, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json"), name
    body = response.json()
    error = body["error"]
    assert isinstance(error["message"], str) and error["message"], name
    assert error["type"], name
    text = response.text
    for leak in ("Traceback", 'File "', "Error:", "line ", "site-packages"):
        assert leak not in text, (name, leak, text[:300])
    assert "\x1b" not in error["message"], name
    return body


@pytest.mark.parametrize("path", ENDPOINTS)
def test_bad_bodies_get_clear_json_errors(rel_gateway: EmbeddedGateway, path: str,
                                          error_log: _Records) -> None:
    cases = dict(BAD_BODIES)
    if path.startswith("/anoman"):
        cases.update(PLAYGROUND_ONLY)
    rows_before = rel_gateway.state.ledger.count()
    for name, body in cases.items():
        if path.startswith("/anthropic") and name in ("n 2", "stop int"):
            continue  # not Anthropic parameters (it has stop_sequences): ignored there
        response = post(rel_gateway, path, body)
        expected = 404 if name in ("unknown model", "model with escapes") else 400
        assert_clear_json_error(response, expected, name)
        BAD_INPUTS_TRIED.append(f"{name} {path}")
    # Every refused request that passed authentication is metered once, as failed.
    deadline = time.monotonic() + 5
    while rel_gateway.state.ledger.count() < rows_before + len(BAD_INPUTS_TRIED) and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [r.getMessage() for r in error_log.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_huge_bodies_are_413(rel_gateway: EmbeddedGateway, path: str) -> None:
    limit = rel_gateway.config.max_body_bytes
    big = good()
    big["messages"][0]["content"] = "x" * (limit + 1)
    assert_clear_json_error(post(rel_gateway, path, big), 413, "declared length")

    # Chunked, without a Content-Length: the limit is enforced while reading.
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "anoman-lite", "messages": [{"role": "user", "content": "'
        for _ in range(limit // 65536 + 2):
            yield b"y" * 65536
        yield b'"}]}'

    with loopback_client(rel_gateway.base_url, timeout=30) as client:
        response = client.post(path, content=chunks(), headers={
            "Authorization": f"Bearer {rel_gateway.api_key}",
            "Content-Type": "application/json"})
    assert_clear_json_error(response, 413, "chunked")
    BAD_INPUTS_TRIED.extend([f"413 declared {path}", f"413 chunked {path}"])


@pytest.mark.parametrize("path", ENDPOINTS)
def test_unknown_fields_and_moderate_nesting_are_harmless(rel_gateway: EmbeddedGateway,
                                                          path: str) -> None:
    nested: Any = "leaf"
    for _ in range(500):
        nested = {"a": nested}
    body = good(unknown_field=1, _anoman={"cost_usd": "-1"}, metadata=nested,
                tools=[{"type": "function"}] * 100)
    response = post(rel_gateway, path, body)
    # Accepted and ignored (the SDKs send fields we do not know), or refused clearly.
    if response.status_code != 200:
        assert_clear_json_error(response, 400, "unknown fields")
    else:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert b'"cost_usd":"-1"' not in response.content
    BAD_INPUTS_TRIED.append(f"unknown fields {path}")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", ""])
def test_wrong_content_type(rel_gateway: EmbeddedGateway, content_type: str) -> None:
    for body in (b"model=anoman-lite&messages=hi", json.dumps(good()).encode()):
        response = post(rel_gateway, "/v1/chat/completions", body,
                        headers={"Content-Type": content_type})
        # A JSON body is understood whatever the label; anything else is a clear 400/415.
        if response.status_code != 200:
            assert_clear_json_error(response, (400, 415), f"content type {content_type!r}")
        BAD_INPUTS_TRIED.append(f"content type {content_type!r}")


def test_wrong_method_and_path_are_json(rel_gateway: EmbeddedGateway) -> None:
    with loopback_client(rel_gateway.base_url, timeout=10) as client:
        auth = {"Authorization": f"Bearer {rel_gateway.api_key}"}
        assert_clear_json_error(client.get("/v1/chat/completions", headers=auth), 405, "GET")
        assert_clear_json_error(client.put("/anthropic/v1/messages", headers=auth), 405, "PUT")
        assert_clear_json_error(client.get("/v1/nope", headers=auth), 404, "unknown path")
        assert_clear_json_error(client.get("/anoman/v1/usage?limit=-1", headers=auth), 400,
                                "usage limit")
        assert_clear_json_error(client.get("/anoman/v1/usage?limit=abc", headers=auth), 400,
                                "usage limit abc")
    BAD_INPUTS_TRIED.extend(["GET", "PUT", "unknown path", "usage limit -1", "usage limit abc"])


# -- auth ----------------------------------------------------------------------------

def raw_http(gw: EmbeddedGateway, method: str, target: str, headers: dict[str, str],
             body: bytes) -> httpx.Response:
    """One request written byte for byte; the reply parsed into an `httpx.Response`."""
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close",
             f"Content-Length: {len(body)}", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as s:
        s.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body)
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    head, _, content = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parsed = [tuple(h.split(": ", 1)) for h in header_lines]
    return httpx.Response(int(status_line.split()[1]), headers=parsed, content=content)


def auth_cases(key: str) -> dict[str, dict[str, str]]:
    return {
        "no header": {},
        "empty bearer": {"Authorization": "Bearer "},
        "bearer only": {"Authorization": "Bearer"},
        "unknown key": {"Authorization": "Bearer anm-sk-local-unknown-0000000000000000"},
        "key minus one char": {"Authorization": f"Bearer {key[:-1]}"},
        "key plus one char": {"Authorization": f"Bearer {key}x"},
        "key upper-cased": {"Authorization": f"Bearer {key.upper()}"},
        "basic scheme": {"Authorization": f"Basic {key}"},
        "no scheme": {"Authorization": key},
        "wrong header api-key": {"api-key": key},
        "wrong header x-api-token": {"X-Api-Token": key},
        "key as cookie": {"Cookie": f"api_key={key}"},
        "empty x-api-key": {"x-api-key": ""},
        "unknown x-api-key": {"x-api-key": "anm-sk-nope"},
        "nul in key": {"x-api-key": key[:8] + "\x01" + key[9:]},
    }


@pytest.mark.parametrize("path", [*ENDPOINTS, "/v1/models", "/anoman/v1/usage"])
def test_auth_refusals(rel_gateway: EmbeddedGateway, path: str) -> None:
    key = rel_gateway.api_key
    rows_before = rel_gateway.state.ledger.count()
    method = "GET" if path in ("/v1/models", "/anoman/v1/usage") else "POST"
    for name, headers in auth_cases(key).items():
        # Raw bytes: httpx refuses to send some of these headers at all.
        response = raw_http(rel_gateway, method, f"{path}?api_key={key}", headers,
                            json.dumps(good()).encode() if method == "POST" else b"")
        body = assert_clear_json_error(response, 401, name)
        assert body["error"]["type"] == "authentication_error"
        assert key not in response.text and key[-12:] not in response.text
        BAD_INPUTS_TRIED.append(f"auth {name} {path}")
    # Unauthenticated calls are not metered: nothing to bill.
    assert rel_gateway.state.ledger.count() == rows_before


def test_ledger_keeps_only_a_key_hint(make_local_gateway: LocalGateways, tmp_path: Path) -> None:
    key = "anm-sk-local-ledger-hint-test-0123456789ABCDEFwxyz"
    gw = make_local_gateway(fast_config(), db_path=tmp_path / "u.sqlite3", api_key=key)
    try:
        for style in ({"Authorization": f"Bearer {key}"}, {"x-api-key": key}):
            with loopback_client(gw.base_url, timeout=30) as client:
                r = client.post("/v1/chat/completions", json=good(), headers=style)
                assert r.status_code == 200
                bad = client.post("/v1/chat/completions", json=good(model=5), headers=style)
                assert bad.status_code == 400
                usage = client.get("/anoman/v1/usage", headers=style)
                assert key not in usage.text
        rows = gw.state.ledger.recent(10)
        assert rows and all(r["key_hint"] == key[-4:] for r in rows)
    finally:
        gw.stop()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert key.encode() not in raw and key[:-4].encode() not in raw
    with sqlite3.connect(tmp_path / "u.sqlite3") as conn:
        dump = "\n".join(conn.iterdump())
    assert key[:-4] not in dump


def test_serve_binds_to_loopback_by_default(tmp_path: Path) -> None:
    from anoman_tui.cli import build_parser

    args = build_parser(["serve"]).parse_args(["serve"])
    assert args.host == "127.0.0.1"
    assert EmbeddedGateway().host == "127.0.0.1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "anoman_tui.cli", "serve", "--port", "0", "--db",
         str(tmp_path / "u.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = ""
        deadline = time.monotonic() + 30
        while "listening on" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1])
        # Not reachable on another address of this machine.
        others = _non_loopback_addresses()
        for address in others:
            with socket.socket() as s, pytest.raises(OSError):
                s.settimeout(1)
                s.connect((address, port))
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "not loopback" not in err


def _non_loopback_addresses() -> list[str]:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing address
            address = s.getsockname()[0]
    except OSError:
        return []
    return [] if address.startswith("127.") else [address]


# -- slow clients ----------------------------------------------------------------------

def _raw_request(gw: EmbeddedGateway, body: bytes, declared: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", gw.port))
    s.sendall(
        (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {gw.api_key}"
         f"\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n").encode()
        + body)
    return s


def test_trickling_client_is_served_and_does_not_block_others(
    rel_gateway: EmbeddedGateway
) -> None:
    body = json.dumps(good(stream=False)).encode()
    s = _raw_request(rel_gateway, b"", len(body))
    reply: list[bytes] = []

    def trickle() -> None:
        for i in range(0, len(body), 8):  # ~2 s for the whole body
            s.sendall(body[i : i + 8])
            time.sleep(2 / (len(body) / 8))
        s.settimeout(30)
        reply.append(s.recv(65536))

    thread = threading.Thread(target=trickle)
    thread.start()
    started = time.monotonic()
    # Meanwhile, a normal client is answered at once.
    r = post(rel_gateway, "/v1/chat/completions", good(stream=False))
    assert r.status_code == 200 and time.monotonic() - started < 2
    thread.join(30)
    s.close()
    assert reply and reply[0].startswith(b"HTTP/1.1 200"), reply
    BAD_INPUTS_TRIED.append("trickling client")


def test_client_gone_mid_body_is_quiet_and_metered(rel_gateway: EmbeddedGateway,
                                                   error_log: _Records) -> None:
    before = rel_gateway.state.ledger.count()
    s = _raw_request(rel_gateway, b'{"model": "anoman-lite", "mess', 400)
    time.sleep(0.3)
    s.close()
    time.sleep(0.5)
    BAD_INPUTS_TRIED.append("client gone mid-body")
    errors = [r.getMessage() for r in error_log.records if r.levelno >= logging.ERROR]
    assert not errors, errors
    assert rel_gateway.state.ledger.count() == before + 1


def test_stalled_body_gets_a_json_408(rel_gateway: EmbeddedGateway) -> None:
    s = _raw_request(rel_gateway, b'{"model": "anoman-lite", "mess', 400)
    s.settimeout(12)  # generous: e.g. nginx's client_body_timeout is 60 s, ours may be 10 s
    BAD_INPUTS_TRIED.append("stalled body")
    try:
        head = s.recv(65536)
    except TimeoutError:
        head = b""
    finally:
        s.close()
    assert head.startswith(b"HTTP/1.1 408"), head[:200]
    assert b"application/json" in head


def test_bad_input_figures() -> None:
    print(f"\ngateway bad inputs tried: {len(BAD_INPUTS_TRIED)}")
