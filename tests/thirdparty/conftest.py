"""A real LiteLLM proxy on loopback, for the tests marked `thirdparty`.

LiteLLM is installed from the package index into a virtual environment of its own
(its dependencies would clash with this project's pins); `ANOMAN_LITELLM` names its
`litellm` executable. `.ci/run` creates that environment and sets the variable, so in
CI (`CI=true`) a missing variable fails the tests instead of skipping them.

The proxy serves mock models only and runs with no network: LiteLLM's remote lookups
(price map, Anthropic beta headers, blog, templates) read its bundled copies, there is
no database, and the one model that is not a mock answers from the local gateway.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.helpers import LocalGateways
from tests.thirdparty.helpers import ANTHROPIC_MOCK_TEXT, OPENAI_MOCK_TEXT, LiteLLMProxy

MASTER_KEY = "sk-litellm-master-anoman-test-0042"
# The local gateway's model that LiteLLM reaches through its Anthropic provider.
UPSTREAM_MODEL = "claude-sonnet-4-6"
UPSTREAM_OPENAI_MODEL = "anoman-lite"
STARTUP_TIMEOUT_S = 90.0

# Every remote file LiteLLM fetches at startup has a bundled copy behind one of these.
_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
    "LITELLM_LOG": "ERROR",
}
# Settings from the developer's shell that would give the proxy a database, a cache,
# real provider keys or another config.
_DROPPED_ENV_PREFIXES = (
    "LITELLM_", "DATABASE_URL", "DIRECT_URL", "REDIS_", "OPENAI_", "ANTHROPIC_",
    "CONFIG_FILE_PATH", "STORE_MODEL_IN_DB", "PORT", "HOST",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _config(upstream: EmbeddedGateway) -> str:
    def mock(name: str, model: str, key: str, answer: str) -> dict[str, object]:
        return {"model_name": name, "litellm_params": {
            "model": model, "api_key": key, "mock_response": answer}}

    config = {
        "model_list": [
            mock("mock-gpt", "openai/gpt-4o-mini", "sk-fake-openai-0000", OPENAI_MOCK_TEXT),
            mock("mock-claude", "anthropic/claude-3-5-haiku-20241022", "sk-ant-fake-0000",
                 ANTHROPIC_MOCK_TEXT),
            mock("mock-rate-limited", "openai/gpt-4o-mini", "sk-fake-openai-0000",
                 "litellm.RateLimitError"),
            {"model_name": "gateway-gpt", "litellm_params": {
                "model": f"openai/{UPSTREAM_OPENAI_MODEL}",
                "api_base": upstream.base_url + "/v1",
                "api_key": upstream.api_key,
            }},
            {"model_name": "gateway-claude", "litellm_params": {
                "model": f"anthropic/{UPSTREAM_MODEL}",
                "api_base": upstream.base_url + "/anthropic",
                "api_key": upstream.api_key,
            }},
        ],
        # One attempt per request: a retried mock error only makes the test slower.
        "router_settings": {"num_retries": 0},
        "litellm_settings": {"num_retries": 0, "request_timeout": 30},
        "general_settings": {"master_key": MASTER_KEY},
    }
    # JSON is YAML: no YAML writer needed in the project's environment.
    return json.dumps(config, indent=2)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"litellm exited with {proc.returncode} while starting:\n"
                        f"{_tail(log_path)}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"litellm not ready after {STARTUP_TIMEOUT_S:g} s:\n{_tail(log_path)}")


@pytest.fixture(scope="session")
def litellm_executable() -> str:
    path = os.environ.get("ANOMAN_LITELLM", "")
    if not path:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("ANOMAN_LITELLM is not set: CI must run the third-party tests "
                        "(.ci/run installs LiteLLM and sets it)")
        pytest.skip("ANOMAN_LITELLM is not set (path to a `litellm` executable from "
                    "`pip install 'litellm[proxy]'` in a separate virtual environment)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"ANOMAN_LITELLM={path} is not an executable")
    return path


@pytest.fixture(scope="session")
def litellm_upstream(make_session_gateway: LocalGateways) -> EmbeddedGateway:
    # No cache: the same prompt twice must stream twice, not answer JSON the second time.
    return make_session_gateway(time_scale=0.02, cache_enabled=False)


@pytest.fixture(scope="session")
def litellm_proxy(litellm_executable: str, litellm_upstream: EmbeddedGateway,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteLLMProxy]:
    workdir = tmp_path_factory.mktemp("litellm")
    config_path = workdir / "config.yaml"
    config_path.write_text(_config(litellm_upstream))
    log_path = workdir / "litellm.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_ENV_PREFIXES)}
    env.update(_OFFLINE_ENV)
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [litellm_executable, "--config", str(config_path),
             "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=env, cwd=workdir, start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, base_url + "/health/readiness", log_path)
        startup_s = time.monotonic() - started
        print(f"\nlitellm proxy ready in {startup_s:.1f} s on {base_url}")
        yield LiteLLMProxy(
            base_url=base_url, master_key=MASTER_KEY, openai_model="mock-gpt",
            anthropic_model="mock-claude", messages_model="gateway-claude",
            paced_model="gateway-gpt",
            rate_limited_model="mock-rate-limited", startup_s=startup_s, log_path=log_path,
        )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
