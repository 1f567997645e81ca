"""`anoman-tui eval` and `anoman-tui runs` as a user runs them (subprocesses), against
the local gateway over real sockets, with a real history file: the JSON document, exit
statuses, JUnit read by a real JUnit parser, the HTML page, the cost limit, a SIGKILL and
`--resume`, `--retry-errors`, Ctrl+C, and `runs list/show/diff`."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import junitparser
import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from tests.cli.helpers import (
    FAST,
    KEY,
    ROOT,
    cells_printed,
    cli,
    history_file,
    run_eval,
    spawn_eval,
    write,
)

SUITE = """
name = "support answers"
models = ["anoman-lite", "claude-sonnet-4-6"]
repeat = 2
concurrency = 4
temperature = 0  # fixed simulated answers: the pass rate is the test's

[[case]]
id = "kettle"
prompt = "How do I get a refund for {{product}}?"
vars = { product = "a broken kettle" }
[[case.assert]]
type = "icontains"
value = "kettle"

[[case]]
id = "never"
prompt = "Explain what a palindrome is."
[[case.assert]]
type = "equals"
value = "this exact text is never the answer"
"""


def test_eval_prints_one_json_document_with_every_result_and_figure(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    done = run_eval(data_home, gateway, str(write(tmp_path, SUITE)), "--json")
    assert done.returncode == 1, done.stderr  # the "never" case fails
    doc = json.loads(done.stdout)
    assert doc["suite"] == "support answers" and doc["repeat"] == 2
    assert doc["models"] == ["anoman-lite", "claude-sonnet-4-6"]
    assert doc["run_id"].startswith("run-")
    assert len(doc["results"]) == 8
    for result in doc["results"]:
        assert {"case", "model", "repeat", "status", "pass", "assertions", "metrics",
                "cost_usd", "comparison_id"} <= set(result)
        assert {"ttft_s", "e2e_s", "output_tokens_per_s"} <= set(result["metrics"])
        assert result["status"] == "completed"
        assert result["pass"] is (result["case"] == "kettle")
        assert all({"type", "pass", "reason"} <= set(a) for a in result["assertions"])
        assert isinstance(result["comparison_id"], int)
    for model in doc["models"]:
        figures = doc["summary"][model]
        assert figures["passed"] == 2 and figures["judged"] == 4
        assert figures["pass_rate"] == 0.5
        low, high = figures["pass_rate_ci"]
        assert 0 < low < 0.5 < high < 1
        assert figures["ttft_p50_s"] > 0 and figures["ttft_p95_s"] >= figures["ttft_p50_s"]
        assert figures["cost_usd"] > 0 and figures["failures"] == {}
    (pair,) = doc["pairs"]
    assert (pair["a"], pair["b"]) == ("anoman-lite", "claude-sonnet-4-6")
    assert pair["a_only"] == pair["b_only"] == 0 and pair["p_value"] == 1.0
    assert {"p_value_holm", "ttft_diff_s", "ttft_diff_ci"} <= set(pair)
    # Every (case, repeat) is a comparison in the history, reopened like any other.
    with HistoryStore.open(history_file(data_home)) as store:
        ids = {r["comparison_id"] for r in doc["results"]}
        assert len(ids) == 4
        record = store.get(ids.pop())
        assert record is not None and len(record.panes) == 2


def test_min_pass_rate_decides_the_exit_status(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = write(tmp_path, SUITE)
    assert run_eval(data_home, gateway, str(suite), "--min-pass-rate", "0.5").returncode == 0
    assert run_eval(data_home, gateway, str(suite), "--min-pass-rate", "0.6").returncode == 1


def test_piped_output_is_one_line_per_cell_then_the_summary(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    done = run_eval(data_home, gateway, str(write(tmp_path, SUITE)))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    cells = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert len(cells) == 8
    assert sum(line.startswith("PASS") for line in cells) == 4
    assert "anoman-lite" in done.stdout and "simulated" in done.stdout
    assert "Traceback" not in done.stderr


def test_junit_and_html_reports(gateway: EmbeddedGateway, data_home: Path,
                                tmp_path: Path) -> None:
    junit, page = tmp_path / "out.xml", tmp_path / "out.html"
    done = run_eval(data_home, gateway, str(write(tmp_path, SUITE)), "--junit", str(junit),
                    "--html", str(page))
    assert done.returncode == 1, done.stderr
    xml = junitparser.JUnitXml.fromfile(str(junit))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 8
    failed = [case for case in cases if not case.is_passed]
    assert len(failed) == 4 and all("never" in case.name for case in failed)
    html = page.read_text()
    assert "<script" not in html.lower() and "support answers" in html
    assert "simulated" in html


def test_a_bad_suite_is_one_line_and_exit_status_2(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    bad = write(tmp_path, SUITE.replace("repeat = 2", "repeats = 2"), "bad.toml")
    done = run_eval(data_home, gateway, str(bad))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "bad.toml" in done.stderr and "repeat" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_the_cost_limit_ends_the_run_with_status_3_and_lists_what_did_not_run(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = write(tmp_path, SUITE.replace("concurrency = 4", "concurrency = 1"))
    done = run_eval(data_home, gateway, str(suite), "--json", "--max-cost", "0.0000001")
    assert done.returncode == 3, done.stderr
    assert "cost limit" in done.stderr and "--resume" in done.stderr
    doc = json.loads(done.stdout)
    statuses = [r["status"] for r in doc["results"]]
    assert statuses.count("completed") == 1 and statuses.count("not_run") == 7
    assert doc["finished"] is False and doc["stopped"] == "cost_limit"


@pytest.mark.long(9)
def test_a_killed_run_resumes_to_the_same_summary(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    cases = "\n".join(
        f'[[case]]\nprompt = "Tell me about item {i}"\n[[case.assert]]\ntype = "icontains"\n'
        f'value = "item"\n' for i in range(1, 13))
    suite = write(tmp_path, 'name = "kill"\nmodels = ["anoman-lite", "claude-sonnet-4-6"]\n'
                            f"concurrency = 2\n{cases}")
    proc = spawn_eval(data_home, gateway, suite, "X-Anoman-Simulate: ttft=0.05,rate=150")
    finished = cells_printed(proc, 12)  # about half of the 24 cells
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert finished >= 12
    listed = json.loads(cli(data_home, "runs", "--json").stdout)
    (run,) = listed
    assert run["finished"] is False and 12 <= run["results"] < 24
    done = run_eval(data_home, gateway, "--resume", run["run_id"][:14], "--json")
    assert done.returncode == 0, done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["run_id"] == run["run_id"] and resumed["finished"] is True
    assert len(resumed["results"]) == 24
    assert len({(r["case"], r["model"], r["repeat"]) for r in resumed["results"]}) == 24
    straight = json.loads(run_eval(data_home, gateway, str(suite), "--json").stdout)
    for model in straight["models"]:
        a, b = resumed["summary"][model], straight["summary"][model]
        assert (a["passed"], a["judged"], a["pass_rate"], a["pass_rate_ci"], a["failures"]) \
            == (b["passed"], b["judged"], b["pass_rate"], b["pass_rate_ci"], b["failures"])


def test_retry_errors_runs_only_the_failed_cells_again(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = write(tmp_path, SUITE + '\n[simulate]\n"claude-sonnet-4-6" = "interrupt-after=2"\n')
    first = json.loads(run_eval(data_home, gateway, str(suite), "--json").stdout)
    failed = [r for r in first["results"] if r["status"] != "completed"]
    assert len(failed) == 4 and {r["model"] for r in failed} == {"claude-sonnet-4-6"}
    assert first["summary"]["claude-sonnet-4-6"]["failures"] == {"stream_error": 4}
    # The stored suite keeps its [simulate] table: the retried cells fail again, and
    # only they were sent again (the other model's answers are the same comparisons).
    again = json.loads(run_eval(data_home, gateway, "--retry-errors", first["run_id"],
                                "--json").stdout)
    assert len(again["results"]) == 8
    kept = {(r["case"], r["model"], r["repeat"]): r["comparison_id"]
            for r in again["results"] if r["model"] == "anoman-lite"}
    assert kept == {(r["case"], r["model"], r["repeat"]): r["comparison_id"]
                    for r in first["results"] if r["model"] == "anoman-lite"}


def test_ctrl_c_stops_keeps_what_finished_and_says_how_to_continue(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    cases = "\n".join(f'[[case]]\nprompt = "Item {i}"\n' for i in range(1, 30))
    suite = write(tmp_path, f'name = "stop"\nmodels = ["anoman-lite"]\n{cases}')
    proc = spawn_eval(data_home, gateway, suite, "X-Anoman-Simulate: ttft=0.05,rate=100")
    assert cells_printed(proc, 1) == 1
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "anoman-tui eval --resume run-" in err and "Traceback" not in err


def test_runs_lists_shows_and_diffs(gateway: EmbeddedGateway, data_home: Path,
                                    tmp_path: Path) -> None:
    good = write(tmp_path, SUITE, "good.toml")
    first = json.loads(run_eval(data_home, gateway, str(good), "--json").stdout)
    worse = write(tmp_path, SUITE + '\n[simulate]\n"anoman-lite" = "drop-after=2"\n',
                  "worse.toml")
    second = json.loads(run_eval(data_home, gateway, str(worse), "--json").stdout)
    listed = json.loads(cli(data_home, "runs", "--json").stdout)
    assert [r["run_id"] for r in listed] == [second["run_id"], first["run_id"]]
    for run in listed:
        assert {"run_id", "suite", "created_at", "models", "results", "passed",
                "finished"} <= set(run)
        assert run["suite"] == "support answers" and run["results"] == 8
    assert listed[1]["passed"] == 4 and listed[0]["passed"] == 2
    shown = json.loads(cli(data_home, "runs", "show", first["run_id"], "--json").stdout)
    assert shown["results"] == first["results"] and shown["summary"] == first["summary"]
    text = cli(data_home, "runs", "show", first["run_id"])
    assert text.returncode == 0 and first["run_id"] in text.stdout
    diff = cli(data_home, "runs", "diff", first["run_id"], second["run_id"], "--json")
    assert diff.returncode == 1, diff.stderr
    doc = json.loads(diff.stdout)
    assert sorted((r["case"], r["model"]) for r in doc["regressions"]) == \
        [("kettle", "anoman-lite"), ("kettle", "anoman-lite")]
    assert doc["improvements"] == []
    back = cli(data_home, "runs", "diff", second["run_id"], first["run_id"])
    assert back.returncode == 0 and "kettle" in back.stdout
    missing = cli(data_home, "runs", "show", "run-nope")
    assert missing.returncode == 2 and "run-nope" in missing.stderr


def test_simulated_faults_are_refused_for_a_server_that_is_not_the_local_gateway(
        data_home: Path, tmp_path: Path, unused_tcp_port: int) -> None:
    suite = write(tmp_path, 'models = ["far:m"]\n[[case]]\nprompt = "hi"\n'
                            '[simulate]\n"far:m" = "rate_limit"\n')
    done = cli(data_home, "eval", str(suite),
               config=f'[targets.far]\nbase_url = "http://127.0.0.1:{unused_tcp_port}"\n')
    assert done.returncode == 2
    assert "[simulate]" in done.stderr and "local gateway" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_example_suite_and_the_promptfoo_example_run(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    """The files of examples/, as the README runs them (the promptfoo config's server
    moved to the test's gateway)."""
    done = run_eval(data_home, gateway, str(ROOT / "examples" / "support-suite.toml"),
                    "--json", "--max-cost", "5")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["suite"] == "support answers" and doc["finished"] is True
    assert all(r["status"] == "completed" for r in doc["results"])
    assert {r["pass"] for r in doc["results"]} == {True, False}  # the checks tell models apart
    folder = tmp_path / "promptfoo"
    folder.mkdir()
    for source in (ROOT / "examples" / "promptfoo").iterdir():
        text = source.read_text(encoding="utf-8")
        (folder / source.name).write_text(
            text.replace("http://localhost:8787", gateway.base_url), encoding="utf-8")
    done = cli(data_home, "eval", str(folder / "promptfooconfig.yaml"), "--json",
               "-H", FAST, env={"ANOMAN_API_KEY": KEY})
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["finished"] is True and len(doc["models"]) == 3
    assert all(r["status"] == "completed" for r in doc["results"])
    assert any(r["pass"] for r in doc["results"])


def test_runs_and_eval_name_who_started_each_run(gateway: EmbeddedGateway, data_home: Path,
                                                 tmp_path: Path) -> None:
    suite = write(tmp_path, 'name = "small"\nmodels = ["anoman-lite"]\n'
                            '[[case]]\nprompt = "Say hello"\n')

    def eval_as(user: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = cli(data_home, "eval", *args, "--base-url", gateway.base_url, "-H", FAST,
                   env={"ANOMAN_API_KEY": KEY, "ANOMAN_USER": user})
        assert done.returncode == 0, done.stderr
        return done

    anns = json.loads(eval_as("ann", str(suite), "--json").stdout)
    assert anns["user"] == "ann"
    bobs = eval_as("bob", str(suite)).stdout
    bob_run = next(line for line in bobs.splitlines() if line.startswith("run run-"))
    assert " by bob: finished." in bob_run
    # Taken up again by bob, ann's run stays hers.
    again = json.loads(eval_as("bob", "--resume", anns["run_id"], "--json").stdout)
    assert again["run_id"] == anns["run_id"] and again["user"] == "ann"
    # Not kept in a history: the `user` setting still says who ran it.
    unsaved = json.loads(eval_as("carol", str(suite), "--json", "--no-history").stdout)
    assert unsaved["user"] == "carol"

    listed = json.loads(cli(data_home, "runs", "--json").stdout)
    assert [(r["run_id"] == anns["run_id"], r["user"]) for r in listed] == [
        (False, "bob"), (True, "ann")]
    table = cli(data_home, "runs").stdout.splitlines()
    header = next(line for line in table if "created (UTC)" in line)
    assert [cell.strip() for cell in header.split("┃")][1:4] == ["run", "created (UTC)", "by"]
    ann_row = next(line for line in table if anns["run_id"] in line)
    assert [cell.strip() for cell in ann_row.split("│")][3] == "ann"
    shown = cli(data_home, "runs", "show", anns["run_id"])
    assert shown.returncode == 0
    assert f"run {anns['run_id']} by ann: finished." in shown.stdout
    shown_json = json.loads(cli(data_home, "runs", "show", anns["run_id"], "--json").stdout)
    assert shown_json["user"] == "ann"
