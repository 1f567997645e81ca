"""`anoman-tui eval` with a judge, as a user runs it: the local gateway's models graded by
its simulated judge (`anoman-judge`, docs/local-gateway.md) over real sockets, `--json`,
`--junit` and `--html` carrying the judge's figures, the refusals (no judge, a
self-judge), and a killed pairwise run resumed without asking the judge twice."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import junitparser
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.cli.helpers import KEY, cells_printed, cli, run_eval, spawn_eval, write

MODELS = ["claude-sonnet-4-6", "anoman-lite", "qwen3-coder"]
PROMPTS = ["How do I descale a kettle with vinegar?",
           "How do I get a refund for a broken toaster bought online?",
           "Does the warranty of a washing machine cover a leaking door seal?"]


def judged_suite(judge: str, *, pairwise: bool = True, repeat: int = 1,
                 cases: list[str] = PROMPTS) -> str:
    lines = ['name = "judged"', f"models = {json.dumps(MODELS)}", f"repeat = {repeat}",
             f'judge = "{judge}"', "judge_concurrency = 4", f"pairwise = {str(pairwise).lower()}"]
    for prompt in cases:
        lines += ["[[case]]", f'prompt = "{prompt}"', "[[case.assert]]", 'type = "llm-rubric"',
                  f'value = "Answers: {prompt}"']
    return "\n".join(lines) + "\n"


def test_a_judged_suite_reports_the_judge_its_bias_and_the_ratings(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    # The suite names a model under test as its judge; --judge wins over it.
    suite = write(tmp_path, judged_suite("claude-sonnet-4-6"))
    junit, html = tmp_path / "judged.xml", tmp_path / "judged.html"
    done = run_eval(data_home, gateway, str(suite), "--judge", "anoman-judge", "--json",
                    "--junit", str(junit), "--html", str(html))
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    judge = doc["judge"]
    assert judge["model"] == "anoman-judge" and judge["self_judge"] is False
    assert judge["simulated"] is True
    pairs = len(PROMPTS) * 3  # three pairs of three models per case
    # One call per rubric per result, two per pair (both orders); none failed.
    assert judge["calls"] == len(PROMPTS) * len(MODELS) + 2 * pairs
    assert judge["errors"] == 0 and judge["cost_usd"] > 0
    # The simulated judge decides by content: swapping the answers swaps its verdict.
    assert judge["position_consistency"] == 1.0
    assert len(doc["pairwise"]) == pairs
    assert all(p["ab"] is not None and p["ba"] is not None for p in doc["pairwise"])
    assert set(doc["ratings"]) == set(MODELS)
    for figures in doc["ratings"].values():
        low, high = figures["ci"]
        assert low <= figures["rating"] <= high
        assert figures["wins"] + figures["ties"] + figures["losses"] == 2 * len(PROMPTS)
    for result in doc["results"]:
        (rubric,) = result["assertions"]
        assert rubric["type"] == "llm-rubric"
        assert isinstance(rubric["judge_pass"], bool)
        assert 0 <= rubric["judge_score"] <= 1 and rubric["judge_reason"]
        assert result["judge_calls"] == 1
    parsed = junitparser.JUnitXml.fromfile(str(junit))
    assert sum(1 for suite_ in parsed for _ in suite_) == len(PROMPTS) * len(MODELS)
    page = html.read_text(encoding="utf-8")
    assert "Judge ratings" in page and "anoman-judge (simulated)" in page


def test_the_summary_and_runs_show_say_what_the_judge_did(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = write(tmp_path, judged_suite("anoman-judge", cases=PROMPTS[:2]))
    done = run_eval(data_home, gateway, str(suite))
    assert done.returncode in (0, 1), done.stderr
    assert "judge anoman-judge (simulated): 18 calls, 0 errors" in done.stdout
    assert "judge bias: position consistency 100%" in done.stdout
    assert "Judge ratings" in done.stdout
    # The last line: "run ID by NAME: finished."
    run_id = done.stdout.rsplit("run ", 1)[1].split(":", 1)[0].split(" by ", 1)[0]
    shown = cli(data_home, "runs", "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    again = json.loads(shown.stdout)
    assert again["judge"]["calls"] == 18 and len(again["pairwise"]) == 6
    assert set(again["ratings"]) == set(MODELS)


def test_a_rubric_without_a_judge_and_a_self_judge_are_refused_in_one_line(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    no_judge = write(tmp_path, judged_suite("anoman-judge").replace(
        'judge = "anoman-judge"\n', ""), name="no-judge.toml")
    done = run_eval(data_home, gateway, str(no_judge))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "need a judge" in done.stderr
    assert "Traceback" not in done.stderr
    own = write(tmp_path, judged_suite("anoman-lite", cases=PROMPTS[:1]), name="own.toml")
    done = run_eval(data_home, gateway, str(own))
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1 and "--allow-self-judge" in done.stderr
    assert "one of the models under test" in done.stderr
    allowed = run_eval(data_home, gateway, str(own), "--allow-self-judge", "--json")
    assert allowed.returncode in (0, 1), allowed.stderr
    doc = json.loads(allowed.stdout)
    assert doc["judge"]["self_judge"] is True and doc["judge"]["model"] == "anoman-lite"


@pytest.mark.long(8)
def test_a_killed_pairwise_run_resumes_without_asking_the_judge_twice(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    cases = [f"Tell me how to clean item {i} of a kitchen" for i in range(1, 9)]
    suite = write(tmp_path, judged_suite("anoman-judge", cases=cases))
    proc = spawn_eval(data_home, gateway, suite, "X-Anoman-Simulate: ttft=0.05,rate=150")
    finished = cells_printed(proc, 12)  # half of the 24 cells
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert finished >= 12
    (run,) = json.loads(cli(data_home, "runs", "--json").stdout)
    assert run["finished"] is False
    before = json.loads(cli(data_home, "runs", "show", run["run_id"], "--json").stdout)
    cells_before = sum(1 for r in before["results"] if r["status"] != "not_run")
    pairs_before = len(before["pairwise"])
    started = time.time()
    done = run_eval(data_home, gateway, "--resume", run["run_id"], "--json")
    assert done.returncode in (0, 1), done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["finished"] is True and len(resumed["pairwise"]) == len(cases) * 3
    # The resume asked the judge only for what was missing: a rubric per new cell, and
    # both orders of each pair not judged before the kill (the gateway's ledger counts
    # the requests; it writes a row as a request's handler ends, so wait for them).
    wanted = (24 - cells_before) + 2 * (len(cases) * 3 - pairs_before)
    deadline = time.monotonic() + 10
    while True:
        asked = sum(1 for row in gateway.state.ledger.recent(limit=10_000)
                    if row["model"] == "anoman-judge" and row["started_at"] >= started)
        if asked >= wanted or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert asked == wanted, (asked, cells_before, pairs_before)
    straight = json.loads(run_eval(data_home, gateway, str(suite), "--json").stdout)
    # The figures are those of an uninterrupted run of the same cells.
    assert resumed["judge"]["calls"] == straight["judge"]["calls"]
    assert resumed["judge"]["errors"] == 0
    assert {(p["case"], p["a"], p["b"]) for p in resumed["pairwise"]} == {
        (p["case"], p["a"], p["b"]) for p in straight["pairwise"]}


def test_a_promptfoo_config_grades_llm_rubric_with_its_default_test_grader(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    server = {"apiBaseUrl": gateway.base_url + "/v1", "apiKeyEnvar": "ANOMAN_API_KEY"}
    config = write(tmp_path, json.dumps({  # JSON is YAML: the same config promptfoo reads
        "description": "graded",
        "providers": [{"id": "openai:chat:claude-sonnet-4-6", "config": server},
                      {"id": "openai:chat:anoman-lite", "config": server}],
        "prompts": ["{{question}}"],
        "defaultTest": {"options": {"provider": {"id": "openai:chat:anoman-judge",
                                                 "config": server}}},
        "tests": [{"vars": {"question": p},
                   "assert": [{"type": "llm-rubric", "value": f"Answers: {p}"}]}
                  for p in PROMPTS[:2]],
    }), name="promptfooconfig.yaml")
    done = cli(data_home, "eval", str(config), "--json", env={"ANOMAN_API_KEY": KEY})
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["judge"]["model"] == "127.0.0.1:anoman-judge"
    assert doc["judge"]["calls"] == 4 and doc["judge"]["errors"] == 0
    verdicts = {r["model"]: r["assertions"][0]["judge_pass"] for r in doc["results"]}
    assert set(verdicts) == {"127.0.0.1:claude-sonnet-4-6", "127.0.0.1:anoman-lite"}
    # The full-coverage model passes every rubric that restates its question.
    assert verdicts["127.0.0.1:claude-sonnet-4-6"] is True
