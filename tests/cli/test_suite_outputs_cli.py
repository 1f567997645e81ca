"""What `eval`, `runs`, `runs show` and `runs diff` print, run as a user runs them
(in this process, and once as the real command in a subprocess; a real history file, the
local gateway over real sockets): summaries laid
out for 80, 100 and 120 columns and for a pipe with no `COLUMNS` (a CI log), every figure
whole; `runs diff` comparing like with like (as the CI gate it is); each answer in
`eval --json` and `--junit` with the history on; no `--resume` offered for a run that was
not saved; `95%` in the help."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import junitparser

from anoman_tui.cli import build_parser
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from tests.cli.helpers import FAST, KEY, ROOT, history_file, write
from tests.helpers import run_main

SUITE = """
name = "widths"
models = ["anoman-lite", "claude-sonnet-4-6"]
repeat = 2
temperature = 0  # the same answers every run: the widths are the point, not the draw

[[case]]
id = "kettle"
prompt = "How do I get a refund for a broken kettle?"
[[case.assert]]
type = "icontains"
value = "kettle"

[[case]]
id = "never"
prompt = "Explain what a palindrome is."
[[case.assert]]
type = "icontains"
value = "zyzzyva"
"""

WIDTHS: tuple[int | None, ...] = (80, 100, 120, None)
"""Columns; None: piped with no COLUMNS, laid out for a fixed 80."""


def _env(data_home: Path, columns: int | None) -> dict[str, str]:
    config = data_home.parent / "config.toml"
    if not config.exists():
        config.write_text("")
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(data_home),
               ANOMAN_CONFIG=str(config), ANOMAN_API_KEY=KEY)
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def _start(data_home: Path, columns: int | None, *args: str) -> subprocess.Popen[str]:
    """`anoman-tui ARGS` as a process of its own, piped, no terminal anywhere (stdin
    too), `COLUMNS` as given."""
    return subprocess.Popen([sys.executable, "-m", "anoman_tui.cli", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=_env(data_home, columns))


def _run(data_home: Path, *args: str, columns: int | None = 200) -> tuple[int, str, str]:
    """`anoman-tui ARGS` in this process, its output captured (not a terminal),
    `COLUMNS` as given (None: unset)."""
    done = run_main(args, env=_env(data_home, columns), cwd=ROOT)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def _main(data_home: Path, columns: int | None, *args: str) -> str:
    """`_run`'s output, the command having succeeded."""
    status, out, err = _run(data_home, *args, columns=columns)
    assert status == 0, err
    return out


def _eval(data_home: Path, gateway: EmbeddedGateway, *args: str) -> list[str]:
    return [*args, "--base-url", gateway.base_url, "-H", FAST]


def _whole(text: str, figure: str) -> bool:
    """`figure` on one line of `text`, not a piece of a longer number."""
    pattern = r"(?<![\w.])" + re.escape(figure) + r"(?![\w])"
    return any(re.search(pattern, line) for line in text.splitlines())


def _figures(run: dict[str, Any]) -> list[str]:
    """The figures a summary must show whole, from the run's JSON document."""
    figures = []
    for model, m in run["summary"].items():
        low, high = m["pass_rate_ci"]
        figures += [model, f"{m['passed']}/{m['judged']}", f"{m['pass_rate'] * 100:.1f}%",
                    f"[{low * 100:.1f}–{high * 100:.1f}%]", f"{m['ttft_p50_s']:.2f} s",
                    f"{m['ttft_p95_s']:.2f} s", f"${m['cost_usd']:.6f}"]
        if m["output_tokens_per_s_p50"] is not None:
            figures.append(f"{m['output_tokens_per_s_p50']:.1f}")
    return figures


def test_summaries_fit_80_100_120_columns_and_a_pipe(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = str(write(tmp_path, SUITE))
    # eval at each width, and runs and runs show with no COLUMNS (piped: no terminal).
    evals = [_run(data_home, *_eval(data_home, gateway, "eval", suite), columns=columns)
             for columns in WIDTHS]
    listed = json.loads(_main(data_home, 200, "runs", "--json"))
    assert len(listed) == len(WIDTHS)
    by_id = {r["run_id"]: json.loads(_main(data_home, 200, "runs", "show", r["run_id"],
                                           "--json")) for r in listed}
    first = next(iter(by_id))
    shown = [_main(data_home, c, "runs", "show", first) for c in WIDTHS]
    lists = [_main(data_home, c, "runs") for c in WIDTHS]
    for columns, (status, out, _), show, runs in zip(WIDTHS, evals, shown, lists,
                                                     strict=True):
        assert status == 1  # the "never" case fails
        width = columns or 80
        run_id = next(r for r in by_id if r in out)
        summary = out[out.index("Suite widths:"):]  # after the one line per cell
        for text, figures in ((summary, _figures(by_id[run_id])),
                              (show, _figures(by_id[first])), (runs, [*by_id, "4/8"])):
            long = [line for line in text.splitlines() if len(line) > width]
            assert not long, (columns, long)
            missing = [f for f in figures if not _whole(text, f)]
            assert not missing, (columns, missing, text)
            assert "…" not in text.split("Failed (")[0], (columns, text)
    # Piped with no COLUMNS: one fixed layout, the figures in blocks, one per model.
    assert "\n  passed    " in shown[-1] and "┃" not in shown[-1]


SAME = """
name = "gate"
models = ["anoman-lite"]
temperature = 0  # one answer per prompt, so only what the test changes changes a verdict

[[case]]
id = "kettle"
prompt = "How do I get a refund for a broken {thing}?"
[[case.assert]]
type = "icontains"
value = "kettle"

[[case]]
id = "stable"
prompt = "Tell me about teapots."
[[case.assert]]
type = "icontains"
value = "{check}"
"""


def _suite(tmp: Path, name: str, *, thing: str = "kettle", check: str = "teapot",
           title: str = "gate", system: str = "") -> str:
    text = SAME.replace("{thing}", thing).replace("{check}", check)
    head = f'name = "{title}"' + (f'\nsystem = "{system}"' if system else "")
    return str(write(tmp, text.replace('name = "gate"', head), name))


def test_runs_diff_compares_like_with_like(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suites = [_suite(tmp_path, "base.toml"),
              # The kettle case now asks about a toaster: it fails, but it is not the
              # same case, so it is no regression.
              _suite(tmp_path, "prompt.toml", thing="toaster"),
              _suite(tmp_path, "checks.toml", thing="toaster", check="zyzzyva"),
              _suite(tmp_path, "other.toml", title="another suite", system="Be brief.")]
    runs = [json.loads(_run(data_home, *_eval(data_home, gateway, "eval", s, "--json"),
                            columns=None)[1])["run_id"] for s in suites]
    base, prompt, checks, other = runs

    def runs_cli(*args: str) -> tuple[int, str, str]:
        return _run(data_home, "runs", *args)

    status, out, err = runs_cli("diff", base, prompt, "--json")
    assert status == 0, err  # the changed case neither fails nor passes the gate
    doc = json.loads(out)
    assert doc["changed"] == [{"case": "kettle", "changed": ["prompt"]}]
    assert doc["regressions"] == [] and doc["regressed"] is False
    assert doc["compared_cases"] == 1 and doc["models"]["anoman-lite"]["matched"] == 1
    status, text, _ = runs_cli("diff", base, prompt)
    assert status == 0
    assert "Changed cases (not compared): 1" in text and "kettle  changed: prompt" in text
    assert "no regression (1 changed case(s) not compared)" in text

    # Every case changed: nothing to compare, so no verdict for the gate.
    status, out, err = runs_cli("diff", base, checks)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "nothing to compare" in err and "2 changed" in err
    status, out, _ = runs_cli("diff", base, checks, "--force", "--json")
    assert status == 0
    assert json.loads(out)["changed"] == [{"case": "kettle", "changed": ["prompt"]},
                                          {"case": "stable", "changed": ["assertions"]}]

    # Runs of different suites: refused in one line, unless --force (the real command,
    # as a CI gate runs it).
    gate = _start(data_home, None, "runs", "diff", base, other)
    out, err = gate.communicate(timeout=180)
    status = gate.returncode
    assert status == 2 and out == "" and err.count("\n") == 1
    assert '"gate"' in err and '"another suite"' in err and "--force" in err
    status, out, err = runs_cli("diff", base, other, "--force", "--json")
    assert status == 0 and json.loads(out)["compared_cases"] == 2
    assert "note: the runs' suites differ in system prompt" in err


def test_eval_json_and_junit_carry_each_answer_with_the_history_on(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    junit = tmp_path / "out.xml"
    status, out, err = _run(data_home, *_eval(data_home, gateway, "eval",
                                              str(write(tmp_path, SUITE)), "--json",
                                              "--junit", str(junit)))
    assert status == 1, err
    doc = json.loads(out)
    with HistoryStore.open(history_file(data_home)) as store:
        for result in doc["results"]:
            record = store.get(result["comparison_id"])
            assert record is not None
            pane = doc["models"].index(result["model"]) + 1
            saved = next(p.text for p in record.panes if p.pane == pane)
            assert saved and result["answer"] == saved
    cases = {(suite.name, case.name): case for suite in junitparser.JUnitXml.fromfile(
        str(junit)) for case in suite}
    assert len(cases) == len(doc["results"]) == 8
    for result in doc["results"]:
        case = cases[(result["model"], f"{result['case']} [repeat {result['repeat']}]")]
        assert result["answer"].strip() in (case.system_out or "")
    # `runs show --json` is the same document, answers and all.
    shown = json.loads(_run(data_home, "runs", "show", doc["run_id"], "--json")[1])
    assert shown["results"] == doc["results"]


def test_a_run_not_saved_offers_no_resume(gateway: EmbeddedGateway, data_home: Path,
                                          tmp_path: Path) -> None:
    status, out, err = _run(data_home, *_eval(
        data_home, gateway, "eval", str(write(tmp_path, SUITE)), "--no-history",
        "--max-cost", "0.0000001", "--concurrency", "1"))
    assert status == 3, err
    assert "--resume" not in out + err
    assert "not saved (the history is off)" in err
    assert "cannot be resumed" in out.strip().splitlines()[-1]
    status, out, err = _run(data_home, *_eval(
        data_home, gateway, "eval", str(write(tmp_path, SUITE)), "--no-history"))
    assert "runs show" not in out and "not saved (the history is off)" in out


def test_help_says_95_percent(data_home: Path) -> None:
    status, out, _ = _run(data_home, "eval", "--help")
    assert status == 0 and "95% Wilson" in out and "%%" not in out
    parser = build_parser()
    commands = next(a for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        assert "%%" not in sub.format_help(), name
