"""`anoman-tui compare` end to end: `anoman_tui.cli.main` in this process, and once the
command in a subprocess of its own (its exit status and output through real pipes)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.frames import ANOMAN_BLOCK, OPENAI_ERROR_FRAME, OPENAI_EXAMPLE_STREAM
from tests.helpers import main_in_thread
from tests.replay_server import ReplayServer, Script

KEY = "anm-sk-cli-test-key-9f8e7d6c"
_scratch = tempfile.TemporaryDirectory(prefix="anoman-compare-cli-")


async def run_cli(*args: str, env_key: str | None = KEY, columns: int = 160,
                  data_home: str | None = None, subprocess: bool = False
                  ) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANOMAN_")}
    # The local gateway's usage ledger and the history: never the developer's own.
    env["XDG_DATA_HOME"] = data_home or _scratch.name
    # compare reads the config file too: an empty one, never the developer's own.
    env["ANOMAN_CONFIG"] = os.devnull
    if env_key is not None:
        env["ANOMAN_API_KEY"] = env_key
    env["COLUMNS"] = str(columns)
    if not subprocess:
        done = await main_in_thread(args, env=env)
        return done.returncode, done.stdout, done.stderr
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "anoman_tui.cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def scripts(replay: ReplayServer) -> None:
    replay.scripts["good"] = Script(body=list(OPENAI_EXAMPLE_STREAM))
    replay.scripts["broken"] = Script(
        body=[*OPENAI_EXAMPLE_STREAM[:3], OPENAI_ERROR_FRAME, b"data: [DONE]\n\n"]
    )
    replay.scripts["blocked"] = Script(
        status=429, content_type="application/json", headers=[("Retry-After", "7")],
        body=[b'{"error":{"type":"rate_limit_error","message":"slow down"}}'],
    )


async def test_json_output_is_one_document_with_every_pane(replay: ReplayServer) -> None:
    scripts(replay)
    code, out, err = await run_cli(
        "compare", "Tell me a short story", "--base-url", replay.base_url + "/v1",
        "-m", "good", "-m", "broken", "-m", "blocked", "--json", "--endpoint", "playground",
    )
    assert code == 1, err
    doc = json.loads(out)
    assert doc["prompt"] == "Tell me a short story" and doc["endpoint"] == "playground"
    good, broken, blocked = doc["panels"]
    assert good == {
        "panel": 1, "model": "good", "target": "gateway", "endpoint": "playground",
        # A server that does not say its model is simulated: it is not said to be.
        "simulated": False, "status": "completed",
        "text": "Once upon a time...",
        "committed": True, "finish_reason": "stop", "failure": None,
        "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11},
        "anoman": ANOMAN_BLOCK, "provider_cost_usd": None, "metrics": good["metrics"],
        "conversation": [],  # a first turn: no earlier turns of its own
    }
    assert set(good["metrics"]) == {"ttft_s", "e2e_s", "output_tokens_per_s", "chunks"}
    assert good["metrics"]["chunks"] == 3
    assert broken["status"] == "failed" and broken["committed"] is False
    assert broken["failure"]["kind"] == "stream_error"
    assert broken["failure"]["failure_class"] == "upstream_error"
    assert broken["failure"]["completion_tokens"] == 42
    assert blocked["failure"]["kind"] == "http_error"
    assert blocked["failure"]["status"] == 429 and blocked["failure"]["retry_after_s"] == 7
    # one request per pane, all to the playground endpoint with the pane number as "panel"
    streams = [r for r in replay.requests if r.method == "POST"]  # not GET /v1/models
    numbers = sorted(r.body["panel"] for r in streams)
    assert numbers == [1, 2, 3]
    assert len({r.body["compare_id"] for r in streams}) == 1
    assert KEY not in out and KEY not in err


async def test_all_completed_exits_zero_and_prints_table(replay: ReplayServer) -> None:
    scripts(replay)
    code, out, err = await run_cli(
        "compare", "story", "--base-url", replay.base_url, "-m", "good", "-m", "good",
        "--header", "Cache-Control: no-cache", "--system", "Be brief.", subprocess=True,
    )
    assert code == 0, err
    assert "Summary" in out and "completed" in out and "Once upon a time..." in out
    assert "0.000041" in out
    assert all(r.headers["cache-control"] == "no-cache" for r in replay.requests)
    streams = [r for r in replay.requests if r.method == "POST"]  # not GET /v1/models
    assert len(streams) == 2
    assert all(r.body["messages"][0]["role"] == "system" for r in streams)


async def test_bad_usage_exits_two() -> None:
    code, _, err = await run_cli("compare", "x", "-m", "a", "--base-url", "http://x",
                                 "--header", "no-colon")
    assert code == 2 and "Name: value" in err
    code, _, _ = await run_cli("compare", "x", "-m", "a", "--base-url", "http://x",
                               "--idle-timeout", "0")
    assert code == 2


async def test_unreachable_gateway_fails_cleanly() -> None:
    code, out, err = await run_cli(
        "compare", "x", "-m", "a", "--base-url", "http://127.0.0.1:9", "--json"
    )
    assert code == 1
    entry = json.loads(out)["panels"][0]
    assert entry["failure"]["kind"] == "transport_error"
    assert "Traceback" not in err


def _chunk(delta: dict[str, str]) -> bytes:
    payload = {"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return f"data: {json.dumps(payload)}\n\n".encode()


LONG_LINE = ("TCP slow start doubles the congestion window every round trip until it "
             "reaches the threshold, then grows it linearly to avoid congestion.")
THINKING = "The user wants a short explanation of slow start; mention the threshold too."


async def test_piped_output_is_the_text_as_it_came_labelled_and_summed_up_readably(
    replay: ReplayServer,
) -> None:
    replay.scripts["thinker-with-a-rather-long-model-name"] = Script(body=[
        _chunk({"role": "assistant", "reasoning_content": THINKING[:40]}),
        _chunk({"reasoning_content": THINKING[40:]}),
        _chunk({"content": "## Slow start\n\n"}), _chunk({"content": LONG_LINE}),
        *OPENAI_EXAMPLE_STREAM[-3:],
    ])
    replay.scripts["broken"] = Script(
        body=[*OPENAI_EXAMPLE_STREAM[:3], OPENAI_ERROR_FRAME, b"data: [DONE]\n\n"]
    )
    code, out, err = await run_cli(
        "compare", "Explain TCP slow start", "--base-url", replay.base_url,
        "-m", "thinker-with-a-rather-long-model-name", "-m", "broken", columns=80,
    )
    assert code == 1, err
    lines = out.splitlines()
    assert lines[0].startswith("Comparing 2 models via ")
    # each text as it came: a line longer than the 80 columns is not wrapped
    assert LONG_LINE in lines and THINKING in lines
    # reasoning, then the answer, each under its heading
    heading = lines.index("Reasoning:")
    assert lines[heading + 1] == THINKING and lines[heading + 2] == "Answer:"
    assert lines[heading + 3] == "## Slow start"
    # the summary: whole model names, one row each, the failure below the table
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == 2
    assert "thinker-with-a-rather-long-model-name" in rows[0] and "completed" in rows[0]
    assert "failed" in rows[1]
    table = out[out.index("Summary"):out.index("failures:")]
    assert "STREAM INTERRUPTED" not in table and "failure" not in table
    failures = lines[lines.index("failures:") + 1:]
    assert len(failures) == 1 and failures[0].startswith("  2 broken: ✗ STREAM INTERRUPTED")
    # one model: no plural
    replay.scripts["good"] = Script(body=list(OPENAI_EXAMPLE_STREAM))
    code, out, err = await run_cli("compare", "story", "--base-url", replay.base_url,
                                   "-m", "good", columns=80)
    assert code == 0, err
    assert out.startswith("Comparing 1 model via ") and "failures:" not in out


@pytest.mark.parametrize("endpoint", ["openai", "anthropic"])
async def test_an_answer_cut_by_max_tokens_says_so(endpoint: str, tmp_path: Path) -> None:
    # The local gateway stops at max_tokens: OpenAI says "length", Anthropic "max_tokens".
    reason = "length" if endpoint == "openai" else "max_tokens"
    code, out, err = await run_cli(
        "compare", "Explain TCP slow start", "-m", "anoman-lite", "--max-tokens", "5",
        "--endpoint", endpoint, "--json", env_key=None, data_home=str(tmp_path),
    )
    assert code == 0, err
    entry = json.loads(out)["panels"][0]
    assert entry["status"] == "completed" and entry["committed"] is True
    assert entry["finish_reason"] == reason
    assert entry["usage"]["completion_tokens"] == 5
    code, out, err = await run_cli(
        "compare", "Explain TCP slow start", "-m", "anoman-lite", "-m", "qwen3-coder",
        "--max-tokens", "5", "--endpoint", endpoint, env_key=None, data_home=str(tmp_path),
    )
    assert code == 0, err
    assert out.count("completed (cut: max tokens)") == 2, out
    code, out, err = await run_cli(
        "compare", "Hi", "-m", "anoman-lite", "--json", env_key=None, data_home=str(tmp_path),
    )
    assert json.loads(out)["panels"][0]["finish_reason"] == "stop"
