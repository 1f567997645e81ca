"""What is refused before anything is sent, as a user meets it (the command in this
process, once a subprocess, against the local gateway over real sockets): a parameter
out of range on the command line, in the config file or in a suite; a suite model its
target does not list; a command-line argument holding bytes that are not UTF-8. Each is
one line on stderr and exit status 2, and the gateway's ledger shows no request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.parameters import (
    max_tokens_problem,
    parse_max_tokens,
    parse_temperature,
    temperature_problem,
)
from tests.cli.helpers import FAST, KEY, ROOT, cli, history_file, run_eval, write
from tests.helpers import run_main


def requests_seen(gateway: EmbeddedGateway) -> int:
    """The requests the gateway's ledger holds (one row each, whatever their ending)."""
    return gateway.state.ledger.count()


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err, err
    return err


# -- the ranges, defined once --------------------------------------------------------

@pytest.mark.parametrize("value", [0, 0.0, 1, 0.7, 2, 2.0])
def test_temperatures_from_0_to_2_are_accepted(value: float) -> None:
    assert temperature_problem(value) is None


@pytest.mark.parametrize("value", [-0.1, 2.01, 9, float("inf"), float("-inf"), float("nan"),
                                   "0.5", True, None, [1]])
def test_other_temperatures_are_refused(value: object) -> None:
    problem = temperature_problem(value)
    assert problem is not None and problem.startswith("must be a number from 0 to 2, not ")


@pytest.mark.parametrize("value", [0, -3, 1_000_001, 5.0, "12", True, float("nan")])
def test_max_tokens_is_a_whole_number_from_1(value: object) -> None:
    assert max_tokens_problem(value) is not None
    assert max_tokens_problem(1) is None and max_tokens_problem(1_000_000) is None


@pytest.mark.parametrize("text", ["9", "nan", "inf", "-inf", "1e400", "", "hot", "-0.5"])
def test_typed_temperatures_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="must be a number from 0 to 2"):
        parse_temperature(text)
    assert parse_temperature(" 1.5 ") == 1.5


@pytest.mark.parametrize("text", ["0", "-1", "1.5", "1e3", "1_000", "2000000", "9" * 5000])
def test_typed_max_tokens_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="must be a whole number from 1 to 1000000"):
        parse_max_tokens(text)
    assert parse_max_tokens("256") == 256


# -- compare: flags and the config file --------------------------------------------------

@pytest.mark.parametrize(("flag", "value"), [
    ("--temperature", "9"), ("--temperature", "nan"), ("--temperature", "inf"),
    ("--temperature", "-1"), ("--max-tokens", "0"), ("--max-tokens", "2.5"),
])
def test_compare_refuses_a_parameter_out_of_range_before_sending(
        gateway: EmbeddedGateway, data_home: Path, flag: str, value: str) -> None:
    before = requests_seen(gateway)
    done = cli(data_home, "compare", "hi", "--base-url", gateway.base_url, "-m", "anoman-lite",
               flag, value, "-H", FAST, env={"ANOMAN_API_KEY": KEY})
    assert done.returncode == 2 and done.stdout == ""
    err = one_line(done.stderr)
    assert err.startswith(f"anoman-tui compare: error: argument {flag}: must be "), err
    assert value in err
    assert requests_seen(gateway) == before
    assert not history_file(data_home).exists()


def test_the_compare_screen_refuses_the_same_flags(data_home: Path) -> None:
    done = cli(data_home, "--temperature", "9")
    assert done.returncode == 2
    assert one_line(done.stderr).startswith(
        "anoman-tui: error: argument --temperature: must be a number from 0 to 2, not 9")


@pytest.mark.parametrize(("config", "says"), [
    ("temperature = inf\n", "temperature: must be a number from 0 to 2 (got Infinity)"),
    ("temperature = 9\n", "temperature: must be a number from 0 to 2 (got 9)"),
    ("max_tokens = 0\n", "max_tokens: must be a whole number from 1 to 1000000 (got 0)"),
    ('[[panes]]\nmodel = "anoman-lite"\ntemperature = nan\n',
     "panes.0.temperature: must be a number from 0 to 2 (got NaN)"),
    ('[[panes]]\nmodel = "anoman-lite"\nmax_tokens = 1e9\n',
     "panes.0.max_tokens: "),
])
def test_a_parameter_out_of_range_in_the_config_file_is_one_line(
        gateway: EmbeddedGateway, data_home: Path, config: str, says: str) -> None:
    before = requests_seen(gateway)
    done = cli(data_home, "compare", "hi", "--base-url", gateway.base_url,
               env={"ANOMAN_API_KEY": KEY}, config=config)
    assert done.returncode == 2
    err = one_line(done.stderr)
    assert err.startswith(f"anoman-tui compare: config file {data_home.parent / 'config.toml'}")
    assert says in err, err
    assert requests_seen(gateway) == before


def test_a_variable_out_of_range_is_named(data_home: Path) -> None:
    done = cli(data_home, "compare", "hi", env={"ANOMAN_TEMPERATURE": "3"})
    assert done.returncode == 2
    assert "environment variable ANOMAN_TEMPERATURE: temperature: must be a number from 0 " \
        "to 2" in one_line(done.stderr)


# -- suites: parameters and models, checked before the first cell --------------------------

SUITE = """
models = {models}
{extra}
[[case]]
prompt = "Say hello."
"""


@pytest.mark.parametrize(("extra", "says"), [
    ("temperature = 9", "temperature: must be a number from 0 to 2, not 9"),
    # Not a finite number: refused where the file is read, before any range is checked.
    ("temperature = inf", "temperature: infinity is not a finite number"),
    ("max_tokens = 0", "max_tokens: must be a whole number from 1 to 1000000, not 0"),
])
def test_a_suite_parameter_out_of_range_is_one_line_naming_the_file(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path, extra: str, says: str
        ) -> None:
    before = requests_seen(gateway)
    suite = write(tmp_path, SUITE.format(models='["anoman-lite"]', extra=extra))
    done = run_eval(data_home, gateway, str(suite))
    assert done.returncode == 2
    err = one_line(done.stderr)
    assert "suite.toml" in err and says in err, err
    assert requests_seen(gateway) == before


def test_a_promptfoo_parameter_out_of_range_is_one_line_naming_the_file(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    config = write(tmp_path, "providers:\n  - id: openai:chat:anoman-lite\n"
                   "    config: {temperature: 9}\nprompts: [hi]\ntests: [{}]\n",
                   "promptfooconfig.yaml")
    before = requests_seen(gateway)
    done = run_eval(data_home, gateway, str(config))
    assert done.returncode == 2
    err = one_line(done.stderr)
    assert "promptfooconfig.yaml" in err and "config.temperature: must be a number from 0 " \
        "to 2" in err, err
    assert requests_seen(gateway) == before


def test_a_suite_model_the_gateway_does_not_list_is_refused_before_sending(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    before = requests_seen(gateway)
    suite = write(tmp_path, SUITE.format(models='["anoman-lite", "claude-sonet-4-6"]',
                                         extra=""))
    done = run_eval(data_home, gateway, str(suite))
    assert done.returncode == 2 and done.stdout == ""
    err = one_line(done.stderr)
    assert err.startswith("anoman-tui eval: model 'claude-sonet-4-6': 'claude-sonet-4-6' is "
                          "not a model "), err
    assert "anoman-lite" in err  # what it does list
    assert requests_seen(gateway) == before


def test_a_suite_model_with_a_mistyped_target_is_refused_by_name(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    suite = write(tmp_path, SUITE.format(models='["anoman-lite", "gatewy:gpt-5-mini"]',
                                         extra=""))
    before = requests_seen(gateway)
    done = run_eval(data_home, gateway, str(suite))
    assert done.returncode == 2
    assert 'no target named "gatewy" (targets: local, anoman, openai' in one_line(done.stderr)
    assert requests_seen(gateway) == before


def test_a_target_that_lists_no_models_is_a_warning_not_a_refusal() -> None:
    from anoman_tui.streaming import ModelInfo
    from anoman_tui.suites.prepare import EvalRefused, check_listed
    from anoman_tui.targets import BUILT_IN, ModelSlot, connect

    ollama = connect(BUILT_IN["ollama"], environ={})
    slot = ModelSlot(spec="ollama:llama3.2:1b", model="llama3.2:1b", pane=1,
                     connection=ollama)
    (warning,) = check_listed([slot], None, {"ollama": "cannot reach 127.0.0.1:11434"})
    assert "lists no models" in warning and "'ollama:llama3.2:1b' is not checked" in warning
    assert check_listed([slot], None, {"ollama": [ModelInfo(id="llama3.2:1b")]}) == []
    with pytest.raises(EvalRefused, match=r"'llama3\.2:1b' is not a model"):
        check_listed([slot], None, {"ollama": [ModelInfo(id="qwen3:4b")]})


# -- arguments that are not UTF-8 ------------------------------------------------------------

@pytest.mark.parametrize(("argv", "says", "own_process"), [
    # The real interpreter decoding its command line, once; in this process, the
    # arguments as it decodes them (surrogate escapes).
    ([b"hello \xff there"], "the prompt holds bytes that are not UTF-8 text", True),
    ([b"hi", b"--system", b"be \xfe brief"], "flag --system: holds bytes that are not UTF-8",
     False),
    ([b"hi", b"-m", b"anoman-lite\xff"], "flag --model: holds bytes that are not UTF-8",
     False),
    ([b"hi", b"-H", b"X-Note: \xff"], "argument --header/-H: holds bytes that are not UTF-8",
     False),
])
def test_an_argument_that_is_not_utf8_is_one_line_and_nothing_is_saved(
        data_home: Path, argv: list[bytes], says: str, own_process: bool) -> None:
    config = data_home.parent / "config.toml"
    config.write_text("")
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith("ANOMAN_")}
    env.update(PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(data_home), ANOMAN_CONFIG=str(config))
    if own_process:
        done = subprocess.run([sys.executable, "-m", "anoman_tui.cli", "compare", *argv],
                              capture_output=True, env=env, cwd=ROOT, timeout=120)
        assert done.returncode == 2 and done.stdout == b""
        stderr = done.stderr
    else:
        ran = run_main(["compare", *map(os.fsdecode, argv)], env=env, cwd=ROOT)
        assert ran.returncode == 2 and ran.stdout == ""
        stderr = ran.stderr.encode("utf-8", "surrogateescape")
    err = one_line(stderr.decode("utf-8", "backslashreplace"))
    assert says in err, err
    assert not history_file(data_home).exists()
    # Refused before the local gateway was started: no ledger was opened either.
    assert not (data_home / "anoman-tui" / "usage.sqlite3").exists()


def test_a_saved_comparison_whose_parameters_are_out_of_range_is_not_sent_again(
        gateway: EmbeddedGateway, data_home: Path) -> None:
    """One saved before the ranges were checked (here: its row edited) is refused by pane,
    in one line, when `--rerun` would send it to its own models again."""
    import json
    import sqlite3

    made = cli(data_home, "compare", "saved", "--json", "--base-url", gateway.base_url,
               "-m", "anoman-lite", "-H", FAST, "--temperature", "0.5", "--no-record",
               env={"ANOMAN_API_KEY": KEY})
    saved = json.loads(made.stdout)["id"]
    with sqlite3.connect(history_file(data_home)) as conn:
        conn.execute("UPDATE panes SET temperature = 9 WHERE comparison_id = ?", (saved,))
    before = requests_seen(gateway)
    done = cli(data_home, "compare", "--rerun", str(saved), "--base-url", gateway.base_url,
               env={"ANOMAN_API_KEY": KEY})
    assert done.returncode == 2
    err = one_line(done.stderr)
    assert "pane 1's temperature cannot be sent again: must be a number from 0 to 2" in err
    assert requests_seen(gateway) == before
