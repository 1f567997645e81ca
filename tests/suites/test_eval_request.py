"""An eval's request is made in one place (`suites.prepare.eval_request`) and what a run
stores of it is read back the same way: a resumed run runs as it began. The exit
statuses and the `--json` flag belong to the command, not to the suite run. Pure and
in-process."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

from anoman_tui.config import Settings
from anoman_tui.headless import eval as eval_command
from anoman_tui.suites.model import Case, Suite
from anoman_tui.suites.prepare import EvalRequest, eval_request

SUITES = Path(__file__).resolve().parents[2] / "anoman_tui" / "suites"
SUITE = Suite(name="s", models=("anoman-lite",), cases=(Case(id="c", prompt="Hi"),),
              concurrency=3, max_cost=Decimal("0.5"))


def test_a_stored_run_is_asked_again_as_it_was() -> None:
    settings = Settings(idle_timeout=12.0, record=False)
    first = eval_request(settings, SUITE, concurrency=5, retries=1, max_cost=Decimal("2"),
                         min_pass_rate=0.9, allow_self_judge=True,
                         headers=(("X-Team", "evals"),), max_retry_after=2.5)
    assert first.options.retry.retries == 1 and first.options.retry.max_retry_after == 2.5
    stored = first.stored_settings()
    assert stored == {"concurrency": 5, "retries": 1, "max_cost": "2", "min_pass_rate": 0.9,
                      "record": False, "idle_timeout": 12.0, "headers": [["X-Team", "evals"]],
                      "allow_self_judge": True}
    # Another day, other settings: the stored ones win where no flag is given.
    again = eval_request(Settings(idle_timeout=60.0, record=True), SUITE, run_id="run-1",
                         stored=stored)
    assert again.stored_settings() == stored
    assert again.options.record_limit is None and again.run_id == "run-1"
    # A flag given now wins over what was stored.
    assert eval_request(settings, SUITE, stored=stored, concurrency=7).options.concurrency == 7


def test_without_flags_or_a_stored_run_the_suite_and_the_settings_decide() -> None:
    request = eval_request(Settings(record=True, record_limit_mb=2), SUITE)
    options = request.options
    assert (options.concurrency, options.max_cost, options.record_limit) == \
        (3, Decimal("0.5"), 2_000_000)
    assert (options.retry.retries, options.retry.max_retry_after) == (2, 60.0)
    assert request.min_pass_rate is None and not request.allow_self_judge


def test_exit_statuses_and_json_output_are_the_command_s() -> None:
    assert (eval_command.EXIT_PASSED, eval_command.EXIT_FAILED, eval_command.EXIT_USAGE,
            eval_command.EXIT_COST_LIMIT, eval_command.EXIT_INTERRUPTED) == (0, 1, 2, 3, 130)
    assert "as_json" not in EvalRequest.__dataclass_fields__
    for path in SUITES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "id", None) or getattr(node, "name", None) or ""
            assert not (isinstance(name, str) and name.startswith("EXIT_")), \
                f"{path.name}: {name} (exit statuses are the eval command's)"
            assert name != "exit_status", f"{path.name}: exit_status"
