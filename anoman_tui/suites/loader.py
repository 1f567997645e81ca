"""Reading a suite file into a `Suite` whose prompts and assertion values are already
filled from each case's vars: TOML (the format docs/suites.md describes), with cases
inline and in JSONL or CSV files, or a promptfoo config (`.yaml`/`.yml`), handed to
`anoman_tui.suites.promptfoo`.

Everything that can be wrong with a suite is found here, before anything is sent: a bad
file raises `SuiteError`, whose `message` is one line `FILE: PLACE: PROBLEM`
(`suite.toml: case "refund", assert 2: regex does not compile: ...`).

May import: the standard library, `anoman_tui.suites.scenarios`, `anoman_tui.suites.model`,
`anoman_tui.suites.reading` and `anoman_tui.suites.promptfoo` (only when a YAML file is given).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from anoman_tui.parameters import max_tokens_problem, temperature_problem
from anoman_tui.suites.model import Suite
from anoman_tui.suites.reading import (
    ENDPOINTS,
    CaseDraft,
    Notes,
    PromptTemplate,
    SuiteError,
    assertion_draft,
    build_cases,
    check_share,
    check_size,
    closest,
    csv_drafts,
    describe,
    files_within,
    number,
    plain,
    read_text,
    shown_value,
    too_long_number,
    vars_table,
)
from anoman_tui.suites.scenarios import SCENARIO_HEADERS

__all__ = ["SuiteError", "jsonl_drafts", "load_suite"]


# -- the TOML suite ------------------------------------------------------------------------

_TOP_KEYS = ("name", "models", "repeat", "concurrency", "max_cost", "system", "max_tokens",
             "temperature", "endpoint", "cases", "prompt", "prompts", "case", "simulate",
             "judge", "judge_concurrency", "judge_prompt", "pairwise", "pairwise_prompt")
_CASE_KEYS = ("id", "prompt", "vars", "threshold", "assert")
_JSONL_KEYS = ("id", "prompt", "vars", "assert", "threshold")


def load_suite(path: str | Path, *, skip_unsupported: bool = False,
               allow_outside_files: bool = False) -> Suite:
    """The suite in `path`: TOML, or a promptfoo config (`.yaml`/`.yml`). The files it
    names must be inside its folder's tree unless `allow_outside_files`."""
    shown = str(path)
    file = Path(path)
    if file.suffix.lower() in (".yaml", ".yml"):
        # Imported here: PyYAML stays off the path of TOML suites.
        from anoman_tui.suites.promptfoo import load_promptfoo
        return load_promptfoo(file, skip_unsupported=skip_unsupported, shown=shown,
                              allow_outside_files=allow_outside_files)
    if file.suffix.lower() != ".toml":
        raise SuiteError(f"{shown}: a suite is a .toml file, or a promptfoo config "
                         f"(.yaml, .yml)")
    text = read_text(file, shown)
    try:
        # Decimal floats: max_cost = 0.1 stays 0.1 (floats are converted where wanted).
        data = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{shown}: {_toml_error(str(exc))}") from None
    except RecursionError:
        raise SuiteError(f"{shown}: nested too deeply to read") from None
    except ValueError:  # a whole number of thousands of digits
        raise too_long_number(shown) from None
    plain(data, shown)
    with files_within(file.parent, allow_outside=allow_outside_files):
        suite = _suite(data, file, shown, Notes(skip_unsupported))
    check_size(suite, shown)
    return suite


def _toml_error(message: str) -> str:
    match = re.match(r"^(.*) \(at line (\d+), column (\d+)\)$", message)
    if match:
        return f"line {match.group(2)}, column {match.group(3)}: {match.group(1)}"
    return message.replace(" (at end of document)", " at the end of the file")


def _positive(data: Mapping[str, Any], key: str, shown: str, default: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SuiteError(f"{shown}: {key}: must be a whole number ≥ 1, "
                         f"not {shown_value(value)}")
    return value


def _text(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise SuiteError(f"{where}: {key}: must be text, not {describe(value)}")
    return value


def _unknown_keys(table: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in table:
        if key not in known:
            raise SuiteError(f'{where}: unknown key "{key}"{closest(key, known)}')


def check_models(models: Any, where: str) -> tuple[str, ...]:
    """A non-empty list of distinct `[TARGET:]MODEL` texts."""
    if not isinstance(models, list) or not models:
        raise SuiteError(f'{where}: must be a non-empty list of "[TARGET:]MODEL" texts')
    seen: set[str] = set()
    for i, model in enumerate(models, 1):
        if not isinstance(model, str) or not model.strip() or model != model.strip() \
                or any(c.isspace() for c in model):
            raise SuiteError(f'{where}: entry {i}: must be "[TARGET:]MODEL" without spaces, '
                             f"not {model!r}")
        if model in seen:
            raise SuiteError(f'{where}: "{model}" is listed twice')
        seen.add(model)
    return tuple(models)


def _suite(data: dict[str, Any], file: Path, shown: str, notes: Notes) -> Suite:
    _unknown_keys(data, _TOP_KEYS, shown)
    name = _text(data, "name", shown)
    if name is not None and not name.strip():
        raise SuiteError(f"{shown}: name: must not be empty")
    if "models" not in data:
        raise SuiteError(f'{shown}: models: missing: the models to compare, e.g. '
                         f'models = ["claude-sonnet-4-6", "anoman-lite"]')
    models = check_models(data["models"], f"{shown}: models")
    repeat = _positive(data, "repeat", shown, 1)
    concurrency = _positive(data, "concurrency", shown, 4)
    max_cost: Decimal | None = None
    if "max_cost" in data:
        raw = data["max_cost"]
        if not number(raw) or raw < 0:
            raise SuiteError(f"{shown}: max_cost: must be a number of USD ≥ 0, "
                             f"not {shown_value(raw)}")
        max_cost = Decimal(raw) if isinstance(raw, int) else raw
    system = _text(data, "system", shown)
    max_tokens: int | None = None
    if "max_tokens" in data:
        problem = max_tokens_problem(data["max_tokens"])
        if problem:
            raise SuiteError(f"{shown}: max_tokens: {problem}")
        max_tokens = data["max_tokens"]
    temperature: float | None = None
    if "temperature" in data:
        raw = data["temperature"]
        problem = temperature_problem(raw)  # the range flags and the config file share
        if problem:
            raise SuiteError(f"{shown}: temperature: {problem}")
        temperature = float(raw)
    endpoint = _text(data, "endpoint", shown)
    if endpoint is not None and endpoint not in ENDPOINTS:
        raise SuiteError(f'{shown}: endpoint: must be one of {", ".join(ENDPOINTS)}, '
                         f'not "{endpoint}"{closest(endpoint, ENDPOINTS)}')
    prompts = _suite_prompts(data, shown)
    drafts = _inline_drafts(data.get("case", []), shown, notes)
    for rel, where in _cases_files(data.get("cases"), shown):
        target = file.parent / rel
        shown_file = str(Path(shown).parent / rel)
        suffix = target.suffix.lower()
        if suffix == ".jsonl":
            drafts.extend(jsonl_drafts(target, shown_file, notes))
        elif suffix == ".csv":
            drafts.extend(csv_drafts(target, shown_file, notes))
        else:
            raise SuiteError(f'{where}: "{rel}": a cases file is .jsonl or .csv')
    if not drafts:
        raise SuiteError(f'{shown}: no cases: add [[case]] tables or a "cases" file')
    cases = build_cases(drafts, prompts, notes,
                        no_prompt=', or the suite a "prompt" or "prompts"')
    if not cases:
        raise SuiteError(f"{shown}: no case is left to run")
    simulate = _simulate(data.get("simulate"), models, shown)
    judge = _text(data, "judge", shown)
    if judge is not None:
        check_models([judge], f"{shown}: judge")
    pairwise = data.get("pairwise", False)
    if not isinstance(pairwise, bool):
        raise SuiteError(f"{shown}: pairwise: must be true or false, not {shown_value(pairwise)}")
    return Suite(name=name or file.stem, models=models, cases=cases, path=shown,
                 repeat=repeat, concurrency=concurrency, max_cost=max_cost, system=system,
                 max_tokens=max_tokens, temperature=temperature, endpoint=endpoint,
                 simulate=simulate, skipped=tuple(notes.skipped), judge=judge,
                 judge_concurrency=_positive(data, "judge_concurrency", shown, 4),
                 judge_prompt=judge_template(data, "judge_prompt", "rubric", file, shown),
                 pairwise=pairwise,
                 pairwise_prompt=judge_template(data, "pairwise_prompt", "pairwise", file,
                                                shown))


def judge_template(data: Mapping[str, Any], key: str, kind: Literal["rubric", "pairwise"],
                   file: Path, shown: str) -> str | None:
    """The text of a judge prompt file (`judge_prompt = "FILE"`, relative to the suite),
    refused when it lacks a placeholder the judge needs (docs/judges.md)."""
    rel = _text(data, key, shown)
    if rel is None:
        return None
    shown_file = str(Path(shown).parent / rel)
    text = read_text(file.parent / rel, shown_file)
    # Imported here: the judges' prompts are only needed by a suite that has a judge.
    from anoman_tui.judges.prompts import check_template
    trouble = check_template(text, kind)
    if trouble is not None:
        raise SuiteError(f"{shown}: {key}: {shown_file}: {trouble}")
    return text


def _suite_prompts(data: Mapping[str, Any], shown: str) -> list[PromptTemplate]:
    if "prompt" in data and "prompts" in data:
        raise SuiteError(f'{shown}: prompts: give "prompt" or "prompts", not both')
    if "prompt" in data:
        text = _text(data, "prompt", shown)
        assert text is not None
        return [PromptTemplate(f"{shown}: prompt", text)]
    if "prompts" in data:
        raw = data["prompts"]
        if not isinstance(raw, list) or not raw or not all(isinstance(p, str) for p in raw):
            raise SuiteError(f"{shown}: prompts: must be a non-empty list of texts")
        return [PromptTemplate(f"{shown}: prompts[{i}]", p) for i, p in enumerate(raw, 1)]
    return []


def _cases_files(value: Any, shown: str) -> list[tuple[str, str]]:
    where = f"{shown}: cases"
    if value is None:
        return []
    files = [value] if isinstance(value, str) else value
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise SuiteError(f"{where}: must be a file name or a list of file names "
                         f"(.jsonl or .csv, relative to the suite)")
    return [(f, where) for f in files]


def _inline_drafts(tables: Any, shown: str, notes: Notes) -> list[CaseDraft]:
    if not isinstance(tables, list):
        raise SuiteError(f"{shown}: case: must be [[case]] tables, not {describe(tables)}")
    drafts = []
    for i, table in enumerate(tables, 1):
        where = f"{shown}: case {i}"
        if not isinstance(table, dict):
            raise SuiteError(f"{where}: must be a table, not {describe(table)}")
        case_id = table.get("id")
        if number(case_id):
            case_id = str(case_id)
        if case_id is not None:
            if not isinstance(case_id, str) or not case_id.strip():
                raise SuiteError(f"{where}: id: must be non-empty text, not {case_id!r}")
            where = f'{shown}: case "{case_id}"'
        drafts.append(_table_draft(table, where, case_id, _CASE_KEYS, notes))
    return drafts


def _table_draft(table: Mapping[str, Any], where: str, case_id: str | None,
                 known: Sequence[str], notes: Notes) -> CaseDraft:
    _unknown_keys(table, known, where)
    prompt = _text(table, "prompt", where)
    draft = CaseDraft(where, case_id, prompt, vars_table(table.get("vars", {}), where), [])
    if "threshold" in table:
        draft.threshold = check_share(table["threshold"], where)
    raw = table.get("assert", [])
    if not isinstance(raw, list):
        raise SuiteError(f"{where}: assert: must be a list of tables, not {describe(raw)}")
    for j, item in enumerate(raw, 1):
        made = assertion_draft(item, f"{where}, assert {j}", notes)
        if made is not None:
            draft.asserts.append(made)
    return draft


def jsonl_drafts(path: Path, shown: str, notes: Notes) -> list[CaseDraft]:
    """Cases from a JSONL file: one object a line with `prompt` or `vars`, optional `id`,
    `assert` and `threshold`; blank lines are allowed."""
    drafts = []
    for number_, line in enumerate(read_text(path, shown).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{shown}: line {number_}"
        try:
            # Floats as Decimal, as in TOML suites.
            table = json.loads(line, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise SuiteError(f"{where}: not JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise SuiteError(f"{where}: nested too deeply to read") from None
        except ValueError:  # a whole number of thousands of digits
            raise too_long_number(where) from None
        plain(table, where)
        if not isinstance(table, dict):
            raise SuiteError(f"{where}: must be a JSON object, not {describe(table)}")
        if "prompt" not in table and "vars" not in table:
            raise SuiteError(f'{where}: needs "prompt" or "vars"')
        case_id = table.get("id")
        if number(case_id):
            case_id = str(case_id)
        if case_id is not None and (not isinstance(case_id, str) or not case_id.strip()):
            raise SuiteError(f"{where}: id: must be non-empty text, not {case_id!r}")
        drafts.append(_table_draft(table, where, case_id, _JSONL_KEYS, notes))
    return drafts


def _simulate(value: Any, models: tuple[str, ...], shown: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    where = f"{shown}: simulate"
    if not isinstance(value, dict):
        raise SuiteError(f'{where}: must be a table of MODEL = "SCENARIO", '
                         f"not {describe(value)}")
    out = []
    for model, scenario in value.items():
        if model not in models:
            raise SuiteError(f'{where}: "{model}" is not one of the suite\'s models'
                             f"{closest(model, models)}")
        if not isinstance(scenario, str) or not (
                scenario in SCENARIO_HEADERS or "=" in scenario):
            # A name from anoman_tui/suites/scenarios.py, or the header's own `key=value` syntax
            # (which the local gateway checks when the request arrives).
            hint = closest(scenario, SCENARIO_HEADERS) if isinstance(scenario, str) else ""
            raise SuiteError(f'{where}: "{model}": {shown_value(scenario)} is not a scenario'
                             f"{hint}: one of {', '.join(SCENARIO_HEADERS)}, or the "
                             f'X-Anoman-Simulate syntax such as "interrupt-after=40"')
        out.append((model, scenario))
    return tuple(out)
