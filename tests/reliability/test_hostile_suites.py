"""Hostile suite files given to `anoman-tui eval` (a subprocess, as a user runs it): each
is refused before anything is sent with one line naming the file and the problem, exit
status 2, never a traceback and never a hang:

- promptfoo `file://` paths and TOML cases files that lead outside the suite's folder
  (`../../etc/passwd`, a symlink to `/proc/self/environ`) unless `--allow-outside-files`;
- special files as a cases, var, prompt or default-test file (a FIFO blocked forever, a
  link to `/dev/zero` never ended), and files above the size cap;
- values nothing can use: nesting thousands deep, NaN and infinity, whole numbers beyond
  64 bits or of thousands of digits, a lone surrogate in JSONL;
- `repeat = 1000000000` (it printed nothing and grew memory by 75 MB/s).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from anoman_tui.cli import main
from anoman_tui.suites.reading import MAX_CELLS, MAX_FILE_BYTES

DEAD_URL = "http://127.0.0.1:9"
"""Where a plain model would stream from: nothing listens (and nothing must be sent)."""

TOML_HEAD = 'name = "hostile"\nmodels = ["anoman-lite"]\n'
PROMPTFOO_HEAD = "description: hostile\nproviders:\n  - openai:gpt-4o-mini\n"


@dataclass
class _Ran:
    returncode: int | None
    stdout: str
    stderr: str


Evaluate = Callable[..., _Ran]


@pytest.fixture
def evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Evaluate:
    """`anoman-tui eval SUITE FLAGS` through the command's `main()`, in a thread it must
    leave within 60 s (a FIFO blocked it forever; `repeat = 1000000000` grew memory)."""
    monkeypatch.setenv("ANOMAN_API_KEY", "anm-sk-hostile-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", DEAD_URL)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hostile-0000")

    def run(suite: Path, *flags: str) -> _Ran:
        capsys.readouterr()
        status: list[int] = []
        worker = threading.Thread(target=lambda: status.append(main(
            ["eval", str(suite), "--base-url", DEAD_URL, "--no-history", *flags])),
            daemon=True)
        worker.start()
        worker.join(60)
        captured = capsys.readouterr()
        assert not worker.is_alive(), f"eval still running after 60 s: {captured.err}"
        return _Ran(status[0] if status else None, captured.out, captured.err)

    return run


def _refused(result: _Ran, *words: str) -> str:
    err = result.stderr
    assert result.returncode == 2, err
    assert "Traceback" not in err and result.stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "suites" / "mine"
    folder.mkdir(parents=True)
    return folder


# -- outside the suite's folder -----------------------------------------------------------

@pytest.mark.parametrize(("body", "place"), [
    ("prompts:\n  - file://../../../../../../../../etc/passwd\n"
     "tests:\n  - vars: {}\n", "etc/passwd"),
    ("prompts:\n  - 'Say {{x}}'\ntests:\n  - vars:\n      x: file://../../../etc/hostname.txt\n",
     "hostname.txt"),
    ("prompts:\n  - 'Say hi'\ntests: file://../outside.csv\n", "outside.csv"),
    ("prompts:\n  - 'Say hi'\ndefaultTest: file://../outside.yaml\ntests:\n  - vars: {}\n",
     "outside.yaml"),
], ids=["prompt", "var", "tests", "default-test"])
def test_a_promptfoo_file_outside_the_config_s_folder_is_refused_by_name(
        evaluate: Evaluate, tmp_path: Path, body: str, place: str) -> None:
    folder = _folder(tmp_path)
    (folder.parent / "outside.csv").write_text("x\n1\n")
    (folder.parent / "outside.yaml").write_text("vars: {}\n")
    config = folder / "promptfooconfig.yaml"
    config.write_text(PROMPTFOO_HEAD + body)
    line = _refused(evaluate(config), place, "outside the suite's folder",
                    "--allow-outside-files")
    assert "root:" not in line  # nothing of the file's text


def test_a_symlink_leading_out_of_the_folder_is_refused(
        evaluate: Evaluate, tmp_path: Path) -> None:
    """A link inside the folder to `/proc/self/environ` (the process's keys) is
    followed before the check: refused, and its target named."""
    folder = _folder(tmp_path)
    (folder / "context.txt").symlink_to("/proc/self/environ")
    config = folder / "promptfooconfig.yaml"
    config.write_text(PROMPTFOO_HEAD + "prompts:\n  - 'Use {{context}}'\n"
                      "tests:\n  - vars:\n      context: file://context.txt\n")
    line = _refused(evaluate(config), "context.txt", "/proc/", "/environ")
    assert "anm-sk-hostile" not in line


def test_a_toml_cases_file_outside_the_folder_is_refused(
        evaluate: Evaluate, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder.parent / "cases.jsonl").write_text('{"prompt": "hi"}\n')
    suite = folder / "suite.toml"
    suite.write_text(TOML_HEAD + 'cases = "../cases.jsonl"\n')
    _refused(evaluate(suite), "../cases.jsonl", "outside the suite's folder")


def test_allow_outside_files_reads_a_file_outside_the_folder(
        evaluate: Evaluate, tmp_path: Path) -> None:
    """With the flag the same file is read: here its one line is wrong on purpose, and
    the refusal names that line."""
    folder = _folder(tmp_path)
    (folder.parent / "cases.jsonl").write_text('{"prompt": 5}\n')
    suite = folder / "suite.toml"
    suite.write_text(TOML_HEAD + 'cases = "../cases.jsonl"\n')
    _refused(evaluate(suite, "--allow-outside-files"), "cases.jsonl: line 1", "prompt")


# -- special and huge files ------------------------------------------------------------------

def _special(tmp_path: Path, kind: str, name: str) -> Path:
    folder = _folder(tmp_path)
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return folder


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_a_device_as_a_cases_file_is_refused_at_once(
        evaluate: Evaluate, tmp_path: Path, kind: str) -> None:
    folder = _special(tmp_path, kind, "cases.jsonl")
    suite = folder / "suite.toml"
    suite.write_text(TOML_HEAD + 'cases = "cases.jsonl"\n')
    started = time.monotonic()
    result = evaluate(suite, "--allow-outside-files")
    assert time.monotonic() - started < 30
    _refused(result, "cases.jsonl", "not a regular file",
             "a FIFO" if kind == "fifo" else "a device")


@pytest.mark.parametrize("where", ["var", "tests", "prompt"])
def test_a_fifo_as_a_promptfoo_file_is_refused_at_once(
        evaluate: Evaluate, tmp_path: Path, where: str) -> None:
    name = {"var": "context.txt", "tests": "tests.csv", "prompt": "prompt.txt"}[where]
    folder = _special(tmp_path, "fifo", name)
    body = {
        "var": "prompts:\n  - 'Use {{c}}'\ntests:\n  - vars:\n      c: file://context.txt\n",
        "tests": "prompts:\n  - 'Say hi'\ntests: file://tests.csv\n",
        "prompt": "prompts:\n  - file://prompt.txt\ntests:\n  - vars: {}\n",
    }[where]
    config = folder / "promptfooconfig.yaml"
    config.write_text(PROMPTFOO_HEAD + body)
    _refused(evaluate(config), name, "a FIFO")


def test_a_file_above_the_size_cap_is_refused(
        evaluate: Evaluate, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with (folder / "cases.jsonl").open("wb") as big:
        big.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing written to disk
    suite = folder / "suite.toml"
    suite.write_text(TOML_HEAD + 'cases = "cases.jsonl"\n')
    _refused(evaluate(suite), "cases.jsonl", "larger than 50 MB")


# -- values nothing can use ------------------------------------------------------------------

@pytest.mark.parametrize(("suite", "cases", "words"), [
    ('prompt = "hi"\n[[case]]\nvars = { a = ' + "[" * 3000 + "]" * 3000 + " }\n", None,
     ("suite.toml", "nested too deeply")),
    ('prompt = "hi"\nmax_cost = nan\n[[case]]\n', None, ("max_cost", "nan", "not a finite")),
    ('prompt = "hi"\ntemperature = inf\n[[case]]\n', None, ("temperature", "inf")),
    ('prompt = "hi"\nconcurrency = 99999999999999999999999999\n[[case]]\n', None,
     ("concurrency", "too large")),
    ('prompt = "hi"\n[[case]]\nvars = { a = 1' + "0" * 5000 + " }\n", None,
     ("suite.toml", "too large to read")),
    ('prompt = "hi {{a}}"\ncases = "cases.jsonl"\n', '{"vars": {"a": "\\ud800"}}\n',
     ("cases.jsonl: line 1", "vars.a", "lone surrogate")),
    ('prompt = "hi {{a}}"\ncases = "cases.jsonl"\n',
     '{"vars": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}\n",
     ("cases.jsonl: line 1", "nested too deeply")),
    ('prompt = "hi {{a}}"\ncases = "cases.jsonl"\n', '{"vars": {"a": NaN}}\n',
     ("cases.jsonl: line 1", "vars.a", "nan")),
], ids=["nested-toml", "nan", "inf", "huge-integer", "5000-digits", "lone-surrogate",
        "nested-jsonl", "nan-jsonl"])
def test_values_nothing_can_use_are_one_line(
        evaluate: Evaluate, tmp_path: Path, suite: str, cases: str | None,
        words: tuple[str, ...]) -> None:
    folder = _folder(tmp_path)
    if cases is not None:
        (folder / "cases.jsonl").write_text(cases)
    path = folder / "suite.toml"
    path.write_text(TOML_HEAD + suite)
    _refused(evaluate(path), *words)


def test_promptfoo_values_nothing_can_use_are_one_line(
        evaluate: Evaluate, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    config = folder / "promptfooconfig.yaml"
    config.write_text(PROMPTFOO_HEAD + "prompts:\n  - 'Say {{x}}'\ntests:\n"
                      "  - vars:\n      x: .nan\n")
    _refused(evaluate(config), "tests[0].vars.x", "not a finite number")
    (folder / "tests.jsonl").write_text('{"vars": {"x": "\\udfff"}}\n')
    config.write_text(PROMPTFOO_HEAD + "prompts:\n  - 'Say {{x}}'\ntests: file://tests.jsonl\n")
    _refused(evaluate(config), "tests.jsonl: line 1", "lone surrogate")


# -- too many cells -----------------------------------------------------------------------------

def test_a_run_of_too_many_cells_is_refused_before_one_is_built(
        evaluate: Evaluate, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    path = folder / "suite.toml"
    path.write_text(TOML_HEAD + 'prompt = "hi"\nrepeat = 1000000000\n[[case]]\n')
    started = time.monotonic()
    line = _refused(evaluate(path), "repeat 1,000,000,000", "1,000,000,000 cells",
                    f"{MAX_CELLS:,}")
    assert time.monotonic() - started < 30, line
    # promptfoo's evaluateOptions.repeat, and cases × models, count the same way.
    config = folder / "promptfooconfig.yaml"
    config.write_text(PROMPTFOO_HEAD + "  - openai:gpt-4.1\nprompts:\n  - 'Say hi'\n"
                      "tests:\n  - vars: {}\nevaluateOptions:\n  repeat: 60000\n")
    _refused(evaluate(config), "2 models", "120,000 cells")
