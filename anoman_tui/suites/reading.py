"""What the suite readers share (`anoman_tui.suites.loader` for TOML suites,
`anoman_tui.suites.promptfoo` for promptfoo configs): the one-line error, the list of
what was skipped, templates, assertion tables, promptfoo's CSV test files, and the step
from cases as read (`CaseDraft`) to the suite's `Case`s (ids, prompt variants, filled
templates, every assertion checked by `assertions.problem`).

Templates are `{{ var }}` only: a Nunjucks filter (`{{ x | upper }}`), tag (`{% if %}`)
or any other expression is named and refused; `{# comments #}` render as nothing.

Every file a suite names is read by `read_text`: while a suite is read
(`files_within`), a file must resolve (symlinks followed) inside the suite file's folder
tree unless `--allow-outside-files` was given (a suite from elsewhere must not send
`/etc/passwd` or `/proc/self/environ` to a model); only regular files are read (a FIFO
would block forever, `/dev/zero` never ends), of at most `MAX_FILE_BYTES`. What a file
holds is checked by `plain` before it is used: nesting, numbers that are not finite or
not a machine's, text that is not Unicode.

Its own module so that `loader` can hand a YAML file to `promptfoo` while both use these
pieces without importing each other in a circle.

May import: the standard library, `anoman_tui.suites.model` and
`anoman_tui.suites.assertions`.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import io
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from anoman_tui.suites.assertions import problem
from anoman_tui.suites.model import ASSERTION_TYPES, Assertion, Case, Suite


class SuiteError(Exception):
    """A suite that cannot run; `message` is one line: `FILE: PLACE: PROBLEM`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# promptfoo's assertion types this project does not run (src/types of promptfoo): a
# suite naming one is asking for something real, refused as unsupported rather than as
# a typo. Any `promptfoo:` (red-team) type is treated the same.
PROMPTFOO_ONLY_TYPES: frozenset[str] = frozenset({
    "answer-relevance", "assert-set", "bleu", "classifier", "contains-html", "contains-sql",
    "contains-xml", "context-faithfulness", "context-recall", "context-relevance",
    "conversation-relevance", "factuality", "finish-reason", "g-eval", "gleu", "guardrails",
    "human", "is-html", "is-refusal", "is-sql", "is-valid-function-call",
    "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
    "max-score", "meteor", "model-graded-closedqa", "model-graded-factuality",
    "moderation", "perplexity", "perplexity-score", "pi", "python", "rouge-l", "rouge-n",
    "rouge-s", "ruby", "select-best", "similar", "similar:cosine", "similar:dot",
    "similar:euclidean", "tool-call-f1", "trace-error-spans", "trace-span-count",
    "trace-span-duration", "webhook",
})

_LIST_TYPES = frozenset({"contains-any", "icontains-any", "contains-all", "icontains-all"})
ENDPOINTS = ("openai", "anthropic", "playground")


# -- messages ----------------------------------------------------------------------------

def closest(word: str, choices: Iterable[str]) -> str:
    """` (did you mean "models"?)`, or "" when nothing is close."""
    match = difflib.get_close_matches(word, list(choices), n=1)
    return f' (did you mean "{match[0]}"?)' if match else ""


@dataclass
class Notes:
    """What a reading left out; `unsupported` raises unless skipping was asked for."""

    skip: bool = False
    skipped: list[str] = field(default_factory=list)

    def unsupported(self, line: str) -> None:
        if not self.skip:
            raise SuiteError(line)
        self.skipped.append(line)


def describe(value: Any) -> str:
    """A value's kind as a suite's reader calls it (for "must be ..., not ...")."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float | Decimal):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def shown_value(value: Any) -> str:
    """A value as a message quotes it: `0`, `"eight"`, or its kind (`a list`)."""
    if number(value):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    return describe(value)


# -- templates -----------------------------------------------------------------------------

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}|\{#.*?#\}", re.S)
_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def template_problem(template: str) -> str | None:
    """Why `template` needs more than `{{ var }}` (a Nunjucks filter, tag or expression),
    None when it does not."""
    for match in _TEMPLATE.finditer(template):
        expr, tag = match.group(1), match.group(2)
        if tag is not None:
            return f'template tag "{{%{tag}%}}" is not supported (only {{{{ var }}}})'
        if expr is None:
            continue  # a {# comment #}: renders as nothing
        inner = expr.strip()
        if "|" in inner:
            name = inner.split("|", 1)[1].strip().split("(")[0].strip()
            return (f'Nunjucks filter "{name}" in "{{{{{expr}}}}}" is not supported '
                    f"(only {{{{ var }}}})")
        if not _VAR.match(inner):
            return f'template expression "{{{{{expr}}}}}" is not supported (only {{{{ var }}}})'
    return None


def template_vars(template: str) -> list[str]:
    """The vars `template` uses, in order of first use."""
    names: list[str] = []
    for match in _TEMPLATE.finditer(template):
        if match.group(1) is not None:
            name = match.group(1).strip()
            if _VAR.match(name) and name not in names:
                names.append(name)
    return names


def missing_var(template: str, vars: Mapping[str, str]) -> str | None:
    """The first var `template` uses that `vars` lacks."""
    return next((name for name in template_vars(template) if name not in vars), None)


def render(template: str, vars: Mapping[str, str]) -> str:
    """`template` filled from `vars`. Call `template_problem` and `missing_var` first."""

    def fill(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return ""
        return vars[match.group(1).strip()]

    return _TEMPLATE.sub(fill, template)


def var_text(value: Any) -> str | None:
    """A var's value as text (numbers and true/false as Nunjucks prints them); None when
    it is not a scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if number(value):
        return str(value)
    return None


# -- cases as read ---------------------------------------------------------------------------

@dataclass
class AssertionDraft:
    """An assertion as read: its value not yet filled from the case's vars."""

    where: str
    """`suite.toml: case "refund", assert 2`: the start of any message about it."""
    type: str
    negate: bool
    value: str | tuple[str, ...] | None
    threshold: float | None
    weight: float


@dataclass
class CaseDraft:
    """A case as read, before its prompt is chosen and its templates are filled."""

    where: str
    """`suite.toml: case 2`, `cases.jsonl: line 3`: the start of any message about it."""
    id: str | None
    prompt: str | None
    """Its own prompt template; None: the suite's `prompt`/`prompts`."""
    vars: dict[str, str]
    asserts: list[AssertionDraft]
    threshold: float | None = None
    prefix: str = ""
    """Put before the prompt template (promptfoo's `__prefix` / `options.prefix`)."""
    suffix: str = ""


@dataclass(frozen=True)
class PromptTemplate:
    """One of the suite's prompts, for cases without their own."""

    where: str
    """`suite.toml: prompts[2]`."""
    text: str


def split_type(name: str) -> tuple[str, bool]:
    """(`icontains`, True) for `not-icontains`."""
    return (name[4:], True) if name.startswith("not-") else (name, False)


def _unknown_type(name: str) -> str:
    choices = list(ASSERTION_TYPES) + [f"not-{t}" for t in ASSERTION_TYPES]
    return f'unknown assertion type "{name}"{closest(name, choices)}'


def assertion_draft(table: Any, where: str, notes: Notes, *,
                    promptfoo: bool = False) -> AssertionDraft | None:
    """An assertion table (`type`, `value`, `threshold`, `weight`). None: unsupported and
    skipped. In a promptfoo config any type this project does not run is unsupported;
    in a suite an unknown type is an error with the closest type suggested."""
    if not isinstance(table, dict):
        raise SuiteError(f"{where}: must be a table with a type, not {describe(table)}")
    name = table.get("type")
    if not isinstance(name, str) or not name:
        raise SuiteError(f'{where}: "type" is missing' if name is None
                         else f'{where}: type: must be text, not {describe(name)}')
    base, negate = split_type(name)
    if base not in ASSERTION_TYPES:
        if promptfoo or base in PROMPTFOO_ONLY_TYPES or base.startswith("promptfoo:"):
            notes.unsupported(f'{where}: assertion type "{name}" is not supported')
            return None
        raise SuiteError(f"{where}: {_unknown_type(name)}")
    known = {"type", "value", "threshold", "weight"}
    for key in table:
        if key in known or (promptfoo and key == "metric"):
            continue  # promptfoo's metric only names a score in its own reports
        if promptfoo:
            notes.unsupported(f'{where}: "{key}" is not supported')
            return None
        raise SuiteError(f'{where}: unknown key "{key}"{closest(key, known)}')
    value = table.get("value")
    converted: str | tuple[str, ...] | None
    if value is None:
        converted = None
    elif isinstance(value, list):
        items = [var_text(v) for v in value]
        if any(item is None for item in items):
            raise SuiteError(f"{where}: value: a list of text values only")
        converted = tuple(i for i in items if i is not None)
    elif isinstance(value, dict) and promptfoo and base in ("is-json", "contains-json"):
        notes.unsupported(f"{where}: a JSON schema as the value of {name} is not supported")
        return None
    else:
        text = var_text(value)
        if text is None or isinstance(value, bool):
            raise SuiteError(f"{where}: value: must be text or a list of text, "
                             f"not {describe(value)}")
        converted = text
    threshold = table.get("threshold")
    if threshold is not None and not number(threshold):
        raise SuiteError(f"{where}: threshold: must be a number, not {describe(threshold)}")
    weight = table.get("weight", 1)
    if not number(weight) or weight < 0:
        raise SuiteError(f"{where}: weight: must be a number ≥ 0, not {shown_value(weight)}")
    return AssertionDraft(where, base, negate, converted,
                          None if threshold is None else float(threshold), float(weight))


# promptfoo's CSV cell: `[not-]TYPE[(THRESHOLD)][:VALUE]` (promptfoo's src/csv.ts).
_EXPECTED = re.compile(r"^(not-)?([a-z][a-z0-9:-]*?)(?:\((\d+(?:\.\d+)?)\))?(?::(.*))?$", re.S)
_LEGACY_PREFIXES = {"javascript:": "javascript", "fn:": "javascript", "eval:": "javascript",
                    "grade:": "llm-rubric", "llm-rubric:": "llm-rubric", "python:": "python"}


def expected_draft(cell: str, where: str, notes: Notes) -> AssertionDraft | None:
    """An `__expected` cell: `icontains:refund`, `not-contains:sorry`, `latency(3000)`,
    `contains-any:a,b` (split at commas), or a bare value meaning `equals`."""
    for prefix, kind in _LEGACY_PREFIXES.items():
        if cell.startswith(prefix):
            notes.unsupported(f'{where}: assertion type "{kind}" is not supported')
            return None
    if cell.startswith("file://"):
        notes.unsupported(f"{where}: an assertion from a file ({cell}) is not supported")
        return None
    match = _EXPECTED.match(cell)
    name = ""
    if match:
        base = match.group(2)
        if base in ASSERTION_TYPES or base in PROMPTFOO_ONLY_TYPES:
            name = base
    if not match or not name:
        return AssertionDraft(where, "equals", False, cell, None, 1.0)
    negate = bool(match.group(1))
    if name in PROMPTFOO_ONLY_TYPES:
        notes.unsupported(f'{where}: assertion type "{"not-" if negate else ""}{name}" '
                          f"is not supported")
        return None
    raw = match.group(4)
    value: str | tuple[str, ...] | None = raw if raw else None
    if name in _LIST_TYPES and raw is not None:
        value = tuple(part.strip() for part in raw.split(","))
    threshold = float(match.group(3)) if match.group(3) else None
    return AssertionDraft(where, name, negate, value, threshold, 1.0)


MAX_FILE_BYTES = 50_000_000
"""The largest suite file, cases file, prompt or var file read (docs/suites.md)."""
MAX_DEPTH = 64
"""Tables and lists nested deeper than this in a suite's data are refused."""
MAX_VALUES = 5_000_000
"""Values (texts, numbers, tables, lists) in one file's data, at most."""
MAX_INTEGER = 2 ** 63 - 1
"""Whole numbers beyond this (either sign) are refused: no setting needs one."""


@dataclass(frozen=True)
class _Folder:
    root: Path
    """The suite file's folder, symlinks resolved."""
    allow_outside: bool


_within: ContextVar[_Folder | None] = ContextVar("suite_folder", default=None)


@contextlib.contextmanager
def files_within(folder: Path, *, allow_outside: bool = False) -> Iterator[None]:
    """While the block reads a suite: the files it names must be inside `folder`'s tree
    (unless `allow_outside`)."""
    token = _within.set(_Folder(Path(os.path.realpath(folder)), allow_outside))
    try:
        yield
    finally:
        _within.reset(token)


def read_text(path: Path, shown: str) -> str:
    """A suite's file as text: inside the suite's folder (`files_within`), a regular
    file, at most `MAX_FILE_BYTES`, UTF-8; else one-line `SuiteError`."""
    real = Path(os.path.realpath(path))  # symlinks resolved before the inside-check
    folder = _within.get()
    if folder is not None and not folder.allow_outside and not real.is_relative_to(
            folder.root):
        resolved = "" if real == Path(os.path.abspath(path)) else f" (it leads to {real})"
        raise SuiteError(f"{shown}: outside the suite's folder {folder.root}{resolved}: "
                         f"refused (eval --allow-outside-files reads it)")
    try:
        # Non-blocking: opening a FIFO must not wait for a writer (it is refused below).
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SuiteError(f"{shown}: no such file") from None
    except OSError as exc:
        raise SuiteError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno())
            if not stat.S_ISREG(mode.st_mode):
                raise SuiteError(f"{shown}: not a regular file ({_kind(mode.st_mode)}): "
                                 f"refused")
            if mode.st_size > MAX_FILE_BYTES:
                raise SuiteError(_too_large(shown))
            data = handle.read(MAX_FILE_BYTES + 1)  # (a /proc file says 0 bytes)
    except OSError as exc:
        raise SuiteError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SuiteError(_too_large(shown))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{shown}: not UTF-8 text (byte {exc.start})") from None


MAX_CELLS = 100_000
"""cases × models × repeat, at most, in one suite (docs/suites.md): checked before a
cell is built (`repeat = 1000000000` grew memory by 75 MB/s and printed nothing)."""


def check_size(suite: Suite, shown: str) -> None:
    cases, models, repeat = len(suite.cases), len(suite.models), suite.repeat
    cells = cases * models * repeat
    if cells > MAX_CELLS:
        raise SuiteError(
            f"{shown}: {cases:,} case{'s' if cases != 1 else ''} × {models} "
            f"model{'s' if models != 1 else ''} × repeat {repeat:,} = {cells:,} cells: "
            f"more than the {MAX_CELLS:,} one run may have (docs/suites.md)")


def _too_large(shown: str) -> str:
    return f"{shown}: larger than {MAX_FILE_BYTES // 1_000_000} MB: refused"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def plain(value: Any, where: str) -> None:
    """Refuse, in one line naming the place (`where: cases[2].vars.x`), data a reader gave
    that nothing downstream can use: nesting deeper than `MAX_DEPTH`, a NaN or infinite
    number, a whole number beyond `MAX_INTEGER`, text holding a lone surrogate (JSON's
    `"\\ud800"`: it cannot be sent, saved or shown)."""
    todo: list[tuple[Any, str, int]] = [(value, "", 0)]
    seen = 0
    while todo:
        item, place, depth = todo.pop()
        seen += 1
        if seen > MAX_VALUES:  # (YAML aliases can make billions out of a few lines)
            raise SuiteError(f"{where}: more than {MAX_VALUES:,} values")
        at = f"{where}: {place}" if place else where
        if isinstance(item, dict | list | tuple) and depth >= MAX_DEPTH:
            raise SuiteError(f"{at}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            for key, inner in item.items():
                todo.append((key, place, depth + 1))
                name = str(key) if not isinstance(key, str) or not _SURROGATE.search(key) \
                    else "?"
                todo.append((inner, f"{place}.{name}" if place else name, depth + 1))
        elif isinstance(item, list | tuple):
            todo.extend((inner, f"{place}[{i}]", depth + 1) for i, inner in enumerate(item))
        elif isinstance(item, str):
            if _SURROGATE.search(item):
                raise SuiteError(f"{at}: text holding a lone surrogate "
                                 f"({_shown_surrogate(item)}), which is not a character")
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int):
            if abs(item) > MAX_INTEGER:
                raise SuiteError(f"{at}: the number {str(item)[:12]}… is too large")
        elif isinstance(item, float | Decimal):
            finite = item.is_finite() if isinstance(item, Decimal) else math.isfinite(item)
            if not finite:
                raise SuiteError(f"{at}: {str(item).lower()} is not a finite number")


def too_long_number(where: str) -> SuiteError:
    """A whole number of thousands of digits (Python will not even read it)."""
    return SuiteError(f"{where}: a number too large to read")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _shown_surrogate(text: str) -> str:
    found = _SURROGATE.search(text)
    return f"\\u{ord(found.group()):04x}" if found else ""


def csv_drafts(path: Path, shown: str, notes: Notes, *,
               descriptions: list[str | None] | None = None) -> list[CaseDraft]:
    """Cases from a CSV file as promptfoo reads tests: a column per var, `__expected`
    and `__expected1..N` assertions, `__threshold`, `__prefix`, `__suffix`;
    `__description` and `__metric` change no verdict and are not used, except that the
    description is appended to `descriptions` when given (promptfoo's test names)."""
    text = read_text(path, shown)
    first = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first and "," not in first else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise SuiteError(f"{shown}: empty: a header row is needed") from None
    except csv.Error as exc:
        raise SuiteError(f"{shown}: line 1: {exc}") from None
    header = [h.strip() for h in header]
    for i, name in enumerate(header, 1):
        if not name:
            raise SuiteError(f"{shown}: line 1: column {i} has no name")
        if header.index(name) != i - 1:
            raise SuiteError(f'{shown}: line 1: column "{name}" appears twice')
        if name.startswith("__") and not (
                re.fullmatch(r"__expected\d*", name)
                or name in ("__description", "__metric", "__threshold", "__prefix",
                            "__suffix")):
            raise SuiteError(f'{shown}: line 1: column "{name}" is not supported: vars are '
                             f"named without __; __expected, __expectedN, __threshold, "
                             f"__prefix, __suffix, __description and __metric are read")
    drafts: list[CaseDraft] = []
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise SuiteError(f"{shown}: line {line}: {exc}") from None
        where = f"{shown}: line {line}"
        line = reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        if len(row) != len(header):
            raise SuiteError(f"{where}: {len(row)} cells for {len(header)} columns")
        draft = CaseDraft(where, None, None, {}, [])
        description: str | None = None
        for name, cell in zip(header, row, strict=True):
            if name.startswith("__expected"):
                if cell.strip():
                    made = expected_draft(cell, f'{where}, column "{name}"', notes)
                    if made is not None:
                        draft.asserts.append(made)
            elif name == "__threshold":
                if cell.strip():
                    draft.threshold = _share(cell.strip(), f'{where}, column "{name}"')
            elif name == "__prefix":
                draft.prefix = cell
            elif name == "__suffix":
                draft.suffix = cell
            elif name == "__description":
                description = cell.strip() or None
            elif name != "__metric":
                draft.vars[name] = cell
        if descriptions is not None:
            descriptions.append(description)
        drafts.append(draft)
    return drafts


def _share(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SuiteError(f"{where}: threshold: must be a number from 0 to 1, "
                         f"not {text!r}") from None
    return check_share(value, where)


def check_share(value: Any, where: str) -> float:
    if not number(value) or not 0 <= value <= 1:
        raise SuiteError(f"{where}: threshold: must be a number from 0 to 1 (the share "
                         f"of the assertions' weight that must pass), not {shown_value(value)}")
    return float(value)


def vars_table(value: Any, where: str) -> dict[str, str]:
    """A case's `vars`: names to text (numbers and true/false are printed)."""
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: vars: must be a table of names to text, "
                         f"not {describe(value)}")
    out: dict[str, str] = {}
    for name, item in value.items():
        text = var_text(item)
        if text is None:
            raise SuiteError(f'{where}: vars: "{name}" must be text or a number, '
                             f"not {describe(item)}")
        out[str(name)] = text
    return out


# -- cases from drafts -------------------------------------------------------------------------

def _fill(template: str, vars: Mapping[str, str], where: str, what: str,
          notes: Notes) -> str | None:
    """`template` filled; None when it needs unsupported syntax and that was skipped."""
    trouble = template_problem(template)
    if trouble is not None:
        notes.unsupported(f"{where}: {what}: {trouble}")
        return None
    name = missing_var(template, vars)
    if name is not None:
        known = ", ".join(sorted(vars)) or "none"
        raise SuiteError(f'{where}: {what} uses {{{{{name}}}}} but the case has no var '
                         f'"{name}" (its vars: {known})')
    return render(template, vars)


def _assertion(draft: AssertionDraft, vars: Mapping[str, str],
               notes: Notes) -> Assertion | None:
    value: str | tuple[str, ...] | None
    if isinstance(draft.value, tuple):
        items = [_fill(v, vars, draft.where, "value", notes) for v in draft.value]
        if any(i is None for i in items):
            return None
        value = tuple(i for i in items if i is not None)
    elif draft.value is not None:
        value = _fill(draft.value, vars, draft.where, "value", notes)
        if value is None:
            return None
        if draft.type in _LIST_TYPES:
            # As promptfoo reads a text value of the -any/-all checks: a comma-separated list.
            value = tuple(part.strip() for part in value.split(","))
    else:
        value = None
    assertion = Assertion(type=draft.type, value=value, threshold=draft.threshold,
                          weight=draft.weight, negate=draft.negate)
    trouble = problem(assertion)
    if trouble is not None:
        raise SuiteError(f"{draft.where}: {trouble}")
    return assertion


def build_cases(drafts: Sequence[CaseDraft], prompts: Sequence[PromptTemplate],
                notes: Notes, *, ids: Sequence[str | None] | None = None,
                no_prompt: str = "") -> tuple[Case, ...]:
    """The cases: default ids (1-based positions; `ids` may propose others), each case
    once per suite prompt when it has none of its own (ids `ID/N` when there are
    several), templates filled. Raises on a duplicate id, naming both places."""
    seen: dict[str, str] = {}
    cases: list[Case] = []
    for position, draft in enumerate(drafts, 1):
        case_id = draft.id
        if case_id is None and ids is not None:
            case_id = ids[position - 1]
        if case_id is None:
            case_id = str(position)
        variants: list[tuple[str, str, str]]  # (id, template, what)
        if draft.prompt is not None:
            variants = [(case_id, draft.prompt, "prompt")]
        elif prompts:
            several = len(prompts) > 1
            variants = [(f"{case_id}/{n}" if several else case_id, p.text,
                         f"prompt {n}" if several else "prompt")
                        for n, p in enumerate(prompts, 1)]
        else:
            raise SuiteError(f"{draft.where}: no prompt: give the case a prompt"
                             f"{no_prompt}")
        asserts: list[Assertion] = []
        for a in draft.asserts:
            made = _assertion(a, draft.vars, notes)
            if made is not None:
                asserts.append(made)
        for variant_id, template, what in variants:
            if variant_id in seen:
                raise SuiteError(f'{draft.where}: id "{variant_id}" is also the id of '
                                 f"{seen[variant_id]}")
            seen[variant_id] = draft.where
            text = _fill(draft.prefix + template + draft.suffix, draft.vars, draft.where,
                         what, notes)
            if text is None:
                continue
            cases.append(Case(id=variant_id, prompt=text, vars=tuple(draft.vars.items()),
                              asserts=tuple(asserts), threshold=draft.threshold))
    return tuple(cases)
