"""Every Python example in the README runs as printed, against the real local gateway.

Each ```python block is written to a file and run in its own interpreter, with
`ANOMAN_BASE_URL` and `ANOMAN_API_KEY` pointing at a gateway on loopback (the
examples read them, defaulting to the hosted gateway); each must exit 0 and print
the answer it streamed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, re.M | re.S)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedGateway]:
    config = GatewayConfig(time_scale=0.05)
    gw = EmbeddedGateway(config, db_path=tmp_path_factory.mktemp("readme") / "u.sqlite3")
    gw.start()
    yield gw
    gw.stop()


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 3  # the stream core, and the two SDKs with no-cache


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_python_example_runs_as_printed(gateway: EmbeddedGateway, tmp_path: Path,
                                            index: int) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANOMAN_")}
    env.update(ANOMAN_BASE_URL=gateway.base_url, ANOMAN_API_KEY=gateway.api_key,
               ANOMAN_CONFIG=os.devnull, XDG_DATA_HOME=str(tmp_path / "data"),
               # `anoman-tui` as installed beside this interpreter
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, f"{BLOCKS[index]}\n{done.stderr}"
    assert len(done.stdout.strip()) > 20, done.stdout  # the streamed answer
    assert "Traceback" not in done.stderr
    # Twice: the no-cache header keeps the second run a stream, not an empty cache hit.
    again = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60)
    assert again.returncode == 0 and len(again.stdout.strip()) > 20, again.stdout
