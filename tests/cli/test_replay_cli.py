"""`anoman-tui compare --replay` and `--rerun`: a comparison made against the real local
gateway, saved with its recordings in a real history file, replayed offline by the real
CLI through the stream core, and sent again to compare against."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from anoman_tui.report.rerun import rerun_deltas
from tests.cli.helpers import KEY, cli, history_file

PACED = "X-Anoman-Simulate: ttft=0.15,rate=120,tokens=40"


def live(data_home: Path, gateway: EmbeddedGateway, prompt: str, *extra: str,
         models: tuple[str, ...] = ("anoman-lite", "claude-sonnet-4-6", "deepseek-r1"),
         simulate: str = PACED) -> dict[str, Any]:
    args = [a for m in models for a in ("-m", m)]
    result = cli(data_home, "compare", prompt, "--json", "--base-url", gateway.base_url,
                 *args, "-H", simulate, *extra, env={"ANOMAN_API_KEY": KEY})
    assert "Traceback" not in result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    assert isinstance(document["id"], int), result.stderr
    return document


def replay(data_home: Path, comparison_id: int, *extra: str) -> dict[str, Any]:
    # No key, and a base URL where nothing listens: a replay uses neither.
    result = cli(data_home, "compare", "--replay", str(comparison_id), "--json", *extra,
                 env={"ANOMAN_BASE_URL": "http://127.0.0.1:9"})
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_a_replay_gives_the_recorded_texts_and_timing(gateway: EmbeddedGateway,
                                                        data_home: Path) -> None:
    made = live(data_home, gateway, "replay me at the recorded pace")
    with HistoryStore.open(history_file(data_home)) as store:
        assert sorted(store.recordings(made["id"])) == [1, 2, 3]
    def paced_as_recorded(again: dict[str, Any]) -> bool:
        """The replay's own measured timing against the recording's (within 1 ms on a
        quiet machine; the bounds leave room for a busy one, and
        benchmarks/replay_timing.py measures the 10 ms target)."""
        for was, now in zip(made["panels"], again["panels"], strict=True):
            if abs(now["metrics"]["ttft_s"] - was["metrics"]["ttft_s"]) > 0.025:
                return False
            rate = was["metrics"]["output_tokens_per_s"]
            if now["metrics"]["output_tokens_per_s"] != pytest.approx(rate, rel=0.03):
                return False
        return True

    # A process starved of CPU for a moment is late whatever it replays: up to three
    # tries for the timing (a replay that paces wrongly is off in every one).
    for _ in range(3):
        again = replay(data_home, made["id"])
        if paced_as_recorded(again):
            break
    assert paced_as_recorded(again), (made["panels"], again["panels"])
    assert again["id"] is None and again["replay_of"] == made["id"] and again["speed"] == 1
    for was, now in zip(made["panels"], again["panels"], strict=True):
        assert (now["model"], now["status"], now["text"]) == (was["model"], was["status"],
                                                              was["text"])
        assert now["anoman"] == was["anoman"] and now["usage"] == was["usage"]
        assert now["recorded"]["metrics"]["ttft_s"] == pytest.approx(was["metrics"]["ttft_s"],
                                                                      abs=1e-4)
        assert now["metrics"]["chunks"] == was["metrics"]["chunks"]
    # Replays are not comparisons: the history holds the one it replayed, only.
    with sqlite3.connect(history_file(data_home)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM comparisons").fetchone()[0] == 1
    def three_times_faster(faster: dict[str, Any]) -> bool:
        return all(now["metrics"]["ttft_s"] == pytest.approx(was["metrics"]["ttft_s"] / 3,
                                                             abs=0.025)
                   for was, now in zip(made["panels"], faster["panels"], strict=True))

    for _ in range(3):
        faster = replay(data_home, made["id"], "--speed", "3")
        if three_times_faster(faster):
            break
    assert three_times_faster(faster), (made["panels"], faster["panels"])
    for was, now in zip(made["panels"], faster["panels"], strict=True):
        assert now["text"] == was["text"]


@pytest.mark.parametrize(("endpoint", "fault", "kind"), [
    ("openai", "interrupt-after=7", "stream_error"),
    ("anthropic", "drop-after=9", "truncated"),
    ("playground", "malformed-after=5", "protocol_error"),
    ("openai", "status=429", "http_error"),
    ("anthropic", "stall-after=6", "stalled"),
])
def test_a_failure_replays_the_same_way(gateway: EmbeddedGateway, data_home: Path,
                                        endpoint: str, fault: str, kind: str) -> None:
    made = live(data_home, gateway, f"fail by {fault} in {endpoint}", "--endpoint", endpoint,
                "--idle-timeout", "0.6", models=("anoman-lite",),
                simulate=f"X-Anoman-Simulate: ttft=0.05,rate=200,{fault}")
    was = made["panels"][0]
    assert was["status"] == "failed" and was["failure"]["kind"] == kind, was["failure"]
    now = replay(data_home, made["id"], "--idle-timeout", "0.6")["panels"][0]
    assert (now["status"], now["text"], now["committed"]) == ("failed", was["text"], False)
    assert now["failure"] == was["failure"]
    assert now["metrics"]["chunks"] == was["metrics"]["chunks"]


def test_what_cannot_be_replayed_is_refused_in_one_line(gateway: EmbeddedGateway,
                                                        data_home: Path) -> None:
    plain = live(data_home, gateway, "saved but not recorded", "--no-record",
                 models=("anoman-lite",), simulate="X-Anoman-Simulate: ttft=0,rate=4000")
    blind = cli(data_home, "compare", "a blind round", "--blind", "--json", "--base-url",
                gateway.base_url, "-H", "X-Anoman-Simulate: ttft=0,rate=4000",
                env={"ANOMAN_API_KEY": KEY})
    blind_id = json.loads(blind.stdout)["id"]
    cases = [
        (("--replay", str(plain["id"])), "was not recorded"),
        (("--replay", str(blind_id)), "blind round not voted on yet"),
        (("--rerun", str(blind_id)), "blind round not voted on yet"),
        (("--replay", "999"), "no comparison 999"),
        (("--rerun", "999"), "no comparison 999"),
        (("--replay", str(plain["id"]), "a prompt"), "drop the prompt"),
        (("--replay", str(plain["id"]), "-m", "anoman-pro"), "--model cannot change it"),
        (("--speed", "2", "a prompt"), "--speed is for --replay"),
        (("--rerun", str(plain["id"]), "--blind"), "does not go with --rerun"),
        ((), "a prompt is needed"),
    ]
    for args, said in cases:
        result = cli(data_home, "compare", *args)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0], (args, result.stderr)
    # A damaged recording is named, not a traceback.
    with sqlite3.connect(history_file(data_home)) as conn:
        conn.execute("INSERT INTO recordings VALUES (?, 1, 3, ?)", (plain["id"], b"junk"))
    result = cli(data_home, "compare", "--replay", str(plain["id"]))
    assert result.returncode == 2 and "recording cannot be replayed: pane 1:" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_recording_is_dropped_over_the_limit_with_a_notice(gateway: EmbeddedGateway,
                                                           data_home: Path) -> None:
    result = cli(data_home, "compare", "too big to record", "--json", "--base-url",
                 gateway.base_url, "-m", "anoman-lite", "-H", "X-Anoman-Simulate: ttft=0,rate=4000",
                 env={"ANOMAN_API_KEY": KEY}, config="record_limit_mb = 0.0001\n")
    made = json.loads(result.stdout)
    assert "saved without its recording" in result.stderr and "0.0001 MB limit" in result.stderr
    with HistoryStore.open(history_file(data_home)) as store:
        assert store.recordings(made["id"]) == {}
        saved = store.get(made["id"])
        assert saved is not None and saved.panes[0].text == made["panels"][0]["text"]


def test_a_rerun_sends_the_prompt_again_and_says_what_changed(gateway: EmbeddedGateway,
                                                              data_home: Path) -> None:
    first = live(data_home, gateway, "rerun this later", models=("anoman-lite", "anoman-pro"),
                 simulate="X-Anoman-Simulate: ttft=0.05,rate=400,tokens=30")
    assert first["panels"][1]["status"] == "failed"  # the local gateway has no anoman-pro
    args = ["compare", "--rerun", str(first["id"]), "--json", "--base-url", gateway.base_url,
            "-H", "X-Anoman-Simulate: ttft=0.02,rate=800,tokens=30"]
    same = json.loads(cli(data_home, *args, env={"ANOMAN_API_KEY": KEY}).stdout)
    assert same["rerun_of"] == first["id"] and same["prompt"] == first["prompt"]
    assert [p["model"] for p in same["panels"]] == ["anoman-lite", "anoman-pro"]
    other = cli(data_home, *args, "-m", "deepseek-r1", "-m", "anoman-lite",
                env={"ANOMAN_API_KEY": KEY})
    changed = json.loads(other.stdout)
    assert [p["model"] for p in changed["panels"]] == ["deepseek-r1", "anoman-lite"]
    with HistoryStore.open(history_file(data_home)) as store:
        original, rerun = store.get(first["id"]), store.get(changed["id"])
    assert original is not None and rerun is not None and rerun.rerun_of == first["id"]
    expected = rerun_deltas(rerun.panes, original.panes, first["id"])
    assert [p["vs_original"] for p in changed["panels"]] == [expected[1].to_json(),
                                                             expected[2].to_json()]
    second = changed["panels"][1]["vs_original"]
    assert (second["model_was"], second["outcome_was"], second["outcome"]) == (
        "anoman-pro", "failed: not found", "done")
    # The table says the same in words.
    shown = cli(data_home, *[a for a in args if a != "--json"], "-m", "deepseek-r1", "-m",
                "anoman-lite", env={"ANOMAN_API_KEY": KEY})
    assert f"Rerun of comparison #{first['id']}" in shown.stdout
    assert f"Against comparison #{first['id']}" in shown.stdout
    assert "anoman-pro → anoman-lite" in shown.stdout
    assert "failed: not found → done" in shown.stdout


def test_record_and_its_limit_come_from_flag_env_and_file(gateway: EmbeddedGateway,
                                                          data_home: Path) -> None:
    fast = "X-Anoman-Simulate: ttft=0,rate=4000"

    def recorded(*extra: str, env: dict[str, str] | None = None, config: str = "") -> bool:
        result = cli(data_home, "compare", "record or not", "--json", "--base-url",
                     gateway.base_url, "-m", "anoman-lite", "-H", fast, *extra,
                     env={"ANOMAN_API_KEY": KEY, **(env or {})}, config=config)
        assert result.returncode == 0, result.stderr
        with HistoryStore.open(history_file(data_home)) as store:
            return bool(store.recordings(json.loads(result.stdout)["id"]))

    assert recorded()  # on by default
    assert not recorded(config="record = false\n")
    assert recorded(env={"ANOMAN_RECORD": "true"}, config="record = false\n")
    assert not recorded("--no-record", env={"ANOMAN_RECORD": "true"})
    assert not recorded(env={"ANOMAN_RECORD_LIMIT_MB": "0.0001"})
    assert recorded(env={"ANOMAN_RECORD_LIMIT_MB": "5"}, config="record_limit_mb = 0.0001\n")
    bad = cli(data_home, "compare", "never sent", config="record_limit_mb = -1\n")
    assert bad.returncode == 2 and "record_limit_mb" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_replay_at_another_speed_prints_the_recorded_figures(gateway: EmbeddedGateway,
                                                               data_home: Path) -> None:
    made = live(data_home, gateway, "replay me fast", models=("anoman-lite", "deepseek-r1"),
                simulate="X-Anoman-Simulate: ttft=0.3,rate=100,tokens=30")
    result = cli(data_home, "compare", "--replay", str(made["id"]), "--speed", "4",
                 env={"ANOMAN_BASE_URL": "http://127.0.0.1:9"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "TTFT" in line)
    assert "TTFT (recorded)" in header and "tok/s (recorded)" in header
    for number, panel in enumerate(made["panels"], start=1):
        row = next(line for line in lines if line.startswith(f"│ {number} │"))
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        recorded = panel["metrics"]
        # The recorded figures, not those of a stream played four times as fast.
        assert cells[3] == f"{recorded['ttft_s']:.2f} s"
        # Within the last digit: --json rounds the figure before this test formats it
        # again (98.95 → 99.0 beside the table's 98.9); a 4× replay would be ~4× off.
        assert abs(float(cells[4]) - recorded["output_tokens_per_s"]) <= 0.11
        assert recorded["ttft_s"] >= 0.29
    assert f"TTFT and tok/s: as recorded in comparison #{made['id']}, not as replayed " \
           "at 4×" in result.stdout
