"""Reading a promptfoo config (`promptfooconfig.yaml`) as a suite: the subset
docs/suites.md lists, mapped onto the same `Suite` a TOML suite gives.

- `description` is the suite's name; `prompts` (inline, `file://` text files with
  several prompts separated by a line `---`, or a chat array of one user message after
  at most one system message) are variants of every test; `providers` become models
  (`openai:MODEL`, `openai:chat:MODEL` -> `openai:MODEL`; `anthropic:messages:MODEL` ->
  `anthropic:MODEL`; an OpenAI provider with `config.apiBaseUrl` or `config.apiHost`
  -> a target the suite declares itself, named after the server's host, `HOST:MODEL`;
  a provider's `label` is promptfoo's display name, not used); `tests` (inline, or
  `file://` CSV, JSONL, YAML or JSON files) with `defaultTest` merged into each as promptfoo does
  (its vars under the test's, its assertions first); `evaluateOptions.maxConcurrency`
  and `evaluateOptions.repeat`.
- A test's `description` is its case id when it is short (at most 40 characters, one
  line), not a number, and no other test has the same; otherwise its 1-based position.
- `llm-rubric` assertions are graded by the suite's judge: `defaultTest.options.provider`
  (promptfoo's grader, any provider the `providers` list could name), else `--judge`.
- Anything else (a `javascript` assertion, a per-test grader, a Nunjucks filter, a
  transform, an `exec:` or `http` provider, a provider setting such as `top_p`) is
  unsupported: refused with one line naming it and its YAML path
  (`promptfooconfig.yaml: tests[3].assert[1]: assertion type "javascript" is not
  supported`; indices count from 0, as YAML paths do), or, with `skip_unsupported`,
  left out (the assertion, the prompt, the provider or the test) and listed in
  `Suite.skipped`.

May import: the standard library, PyYAML, `anoman_tui.targets`, `anoman_tui.suites.model`
and `anoman_tui.suites.reading`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# No stubs in the declared dependencies (pyproject.toml): PyYAML is typed as Any here.
import yaml

from anoman_tui.parameters import max_tokens_problem, temperature_problem
from anoman_tui.suites.model import Suite
from anoman_tui.suites.reading import (
    AssertionDraft,
    CaseDraft,
    Notes,
    PromptTemplate,
    SuiteError,
    assertion_draft,
    build_cases,
    check_share,
    check_size,
    csv_drafts,
    describe,
    files_within,
    plain,
    read_text,
    shown_value,
    template_problem,
    too_long_number,
    var_text,
)
from anoman_tui.targets import BUILT_IN, LOCAL

# Keys that change nothing this project sends or judges: read past.
_IGNORED_KEYS = ("tags", "metadata", "outputPath", "sharing", "writeLatestResults")
_TEST_KEYS = ("vars", "assert", "threshold", "description", "options", "metadata")
# promptfoo's OpenAI providers other than chat completions (its docs/providers/openai.md).
_OPENAI_OTHER_APIS = frozenset({
    "responses", "assistant", "completion", "embedding", "embeddings", "moderation",
    "image", "transcription", "tts", "speech", "realtime", "video", "agents", "chatkit",
    "codex-sdk", "codex", "codex-app-server", "codex-desktop",
})
_SUPPORTED_PROVIDERS = "openai:MODEL, openai:chat:MODEL and anthropic:messages:MODEL"
_ENV_KEY = re.compile(r"^\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TEXT_FILES = (".txt", ".md", "")
_DESCRIPTION_ID_MAX = 40


def load_promptfoo(path: Path, *, skip_unsupported: bool = False,
                   shown: str | None = None, allow_outside_files: bool = False) -> Suite:
    """The suite a promptfoo config describes. `shown`: the file as the user named it,
    for messages (default: `path`). Its `file://` files must be inside the config's
    folder tree unless `allow_outside_files`."""
    shown = shown or str(path)
    data = _load_yaml(read_text(path, shown), shown)
    with files_within(path.parent, allow_outside=allow_outside_files):
        suite = _suite(data, path, shown, Notes(skip_unsupported))
    check_size(suite, shown)
    return suite


def _suite(data: Any, path: Path, shown: str, notes: Notes) -> Suite:
    if not isinstance(data, dict):
        raise SuiteError(f"{shown}: a promptfoo config is a YAML mapping (description, "
                         f"prompts, providers, tests), not {describe(data)}")
    base = path.parent
    known = ("description", "providers", "prompts", "tests", "defaultTest",
             "evaluateOptions", *_IGNORED_KEYS)
    for key in data:
        if key not in known:
            notes.unsupported(f'{shown}: {key}: "{key}" is not supported')
    name = data.get("description")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise SuiteError(f"{shown}: description: must be text, not {shown_value(name)}")
    if "providers" not in data:
        raise SuiteError(f"{shown}: providers: missing: the models to compare")
    providers = _providers(data["providers"], shown, notes, _grader(data.get("defaultTest")))
    prompts, system = _prompts(data.get("prompts"), shown, base, notes)
    if "tests" not in data:
        raise SuiteError(f"{shown}: tests: missing: no test to run")
    default = _default_test(data.get("defaultTest"), shown, base, notes)
    tests = _tests(data["tests"], shown, base, notes)
    if not tests:
        raise SuiteError(f"{shown}: tests: no test to run")
    drafts = [_merged(t.draft, default) for t in tests]
    cases = build_cases(drafts, prompts, notes, ids=_description_ids(tests))
    if not cases:
        raise SuiteError(f"{shown}: no test is left to run")
    repeat, concurrency = _evaluate_options(data.get("evaluateOptions"), shown, notes)
    return Suite(
        name=name.strip() if name else path.stem, models=providers.models, cases=cases,
        path=shown, repeat=repeat, concurrency=concurrency, system=system,
        max_tokens=providers.max_tokens, temperature=providers.temperature,
        skipped=tuple(notes.skipped), targets=providers.targets, judge=providers.judge)


def _load_yaml(text: str, shown: str) -> Any:
    try:
        loaded = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SuiteError(f"{shown}: {place}{exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"{shown}: not YAML: {exc}") from None
    except RecursionError:
        raise SuiteError(f"{shown}: nested too deeply to read") from None
    except ValueError:  # a whole number of thousands of digits
        raise too_long_number(shown) from None
    plain(loaded, shown)
    return loaded


def _beside(shown: str, ref: str) -> str:
    """A file the config names, as messages show it: beside the config as the user
    named it (`examples/promptfoo/tests.csv`)."""
    return str(Path(shown).parent / ref)


def _file_ref(value: Any) -> str | None:
    """`tests.csv` of `file://tests.csv`; None when `value` is not a file reference."""
    return value[len("file://"):] if isinstance(value, str) and value.startswith(
        "file://") else None


# -- providers -----------------------------------------------------------------------------

@dataclass
class _Providers:
    models: tuple[str, ...]
    targets: tuple[tuple[str, str, str], ...]
    temperature: float | None
    max_tokens: int | None
    judge: str | None = None
    """The grader (`defaultTest.options.provider`) as the suite's judge."""


def _grader(default_test: Any) -> Any:
    """`defaultTest.options.provider`, promptfoo's grader for `llm-rubric` (None: none)."""
    if not isinstance(default_test, dict):
        return None
    options = default_test.get("options")
    return options.get("provider") if isinstance(options, dict) else None


@dataclass
class _Provider:
    where: str
    model: str
    temperature: float | None
    max_tokens: int | None


def _providers(raw: Any, shown: str, notes: Notes, grader: Any = None) -> _Providers:
    entries: list[tuple[str, Any]]
    if isinstance(raw, str):
        entries = [("providers", raw)]
    elif isinstance(raw, list):
        entries = [(f"providers[{i}]", item) for i, item in enumerate(raw)]
    elif isinstance(raw, dict):
        # promptfoo's map form: { "openai:gpt-4o-mini": { config: ... } }.
        entries = [(f"providers.{key}", {"id": key, **(value or {})})
                   if isinstance(value, dict | None) else (f"providers.{key}", value)
                   for key, value in raw.items()]
    else:
        raise SuiteError(f"{shown}: providers: must be a list of provider ids or "
                         f"{{id, label, config}} tables, not {describe(raw)}")
    targets: dict[tuple[str, str], str] = {}  # (base URL, key variable) -> name
    made: list[_Provider] = []
    for path, entry in entries:
        provider = _provider(entry, f"{shown}: {path}", notes, targets)
        if provider is not None:
            made.append(provider)
    if not made:
        raise SuiteError(f"{shown}: providers: no provider is left to run")
    seen: dict[str, str] = {}
    for p in made:
        if p.model in seen:
            raise SuiteError(f'{p.where}: "{p.model}" is the same model as {seen[p.model]}: '
                             f"a suite runs each model once")
        seen[p.model] = p.where
    temperature = _agreed(made, "temperature")
    max_tokens = _agreed(made, "max_tokens")
    judge = None
    if grader is not None:
        # The grader is a provider like the others (its server a target of the suite);
        # it judges at temperature 0 whatever its config says (docs/judges.md).
        judged_by = _provider(grader, f"{shown}: defaultTest.options.provider", notes,
                              targets)
        judge = judged_by.model if judged_by is not None else None
    return _Providers(
        models=tuple(p.model for p in made),
        targets=tuple((name, url, key) for (url, key), name in targets.items()),
        temperature=temperature, max_tokens=max_tokens, judge=judge)


def _agreed(made: list[_Provider], setting: str) -> Any:
    """The one value of `setting` all providers share; refused when they differ."""
    first = made[0]
    for p in made[1:]:
        if getattr(p, setting) != getattr(first, setting):
            raise SuiteError(
                f"{p.where}: config.{setting} is {_setting(getattr(p, setting))} but "
                f"{first.where.split(': ', 1)[1]} has {_setting(getattr(first, setting))}: "
                f"a suite has one {setting} for all its models")
    return getattr(first, setting)


def _setting(value: Any) -> str:
    return "not set" if value is None else str(value)


def _provider(entry: Any, where: str, notes: Notes,
              targets: dict[tuple[str, str], str]) -> _Provider | None:
    config: dict[str, Any] = {}
    pid: Any
    if isinstance(entry, str):
        pid = entry
    elif isinstance(entry, dict):
        pid = entry.get("id")
        if not isinstance(pid, str) or not pid:
            raise SuiteError(f"{where}: id: missing: a provider table needs an id such as "
                             f'"openai:chat:gpt-4o-mini"')
        for key in entry:
            if key not in ("id", "label", "config"):
                notes.unsupported(f'{where}: "{key}" is not supported (provider "{pid}")')
                return None
        label = entry.get("label")  # promptfoo's display name: checked, not used
        if label is not None and not isinstance(label, str):
            raise SuiteError(f"{where}: label: must be text, not {describe(label)}")
        raw_config = entry.get("config") or {}
        if not isinstance(raw_config, dict):
            raise SuiteError(f"{where}: config: must be a table, not {describe(raw_config)}")
        config = raw_config
    else:
        raise SuiteError(f"{where}: must be a provider id or an {{id, label, config}} table, "
                         f"not {describe(entry)}")
    kind, model = _provider_model(pid)
    if kind is None or not model:
        notes.unsupported(f'{where}: provider "{pid}" is not supported (only '
                          f"{_SUPPORTED_PROVIDERS})")
        return None
    settings = ("temperature", "max_tokens", "apiBaseUrl", "apiHost", "apiKeyEnvar", "apiKey")
    for key in config:
        if key not in settings:
            notes.unsupported(f'{where}: config.{key} is not supported (provider "{pid}")')
            return None
    temperature = config.get("temperature")
    # The ranges flags and the config file share (anoman_tui.parameters).
    problem = None if temperature is None else temperature_problem(temperature)
    if problem:
        raise SuiteError(f"{where}: config.temperature: {problem}")
    max_tokens = config.get("max_tokens")
    problem = None if max_tokens is None else max_tokens_problem(max_tokens)
    if problem:
        raise SuiteError(f"{where}: config.max_tokens: {problem}")
    server: dict[str, Any] = {k: config[k] for k in ("apiBaseUrl", "apiHost", "apiKeyEnvar",
                                                      "apiKey") if k in config}
    if not server:
        return _Provider(where, f"{kind}:{model}",
                         None if temperature is None else float(temperature), max_tokens)
    if kind != "openai":
        notes.unsupported(f"{where}: config.{next(iter(server))} is not supported for "
                          f'"{pid}" (only for OpenAI-compatible servers)')
        return None
    target = _server(server, where, pid, notes, targets)
    if target is None:
        return None
    return _Provider(where, f"{target}:{model}",
                     None if temperature is None else float(temperature), max_tokens)


def _provider_model(pid: str) -> tuple[str | None, str]:
    """("openai" or "anthropic", model) of a provider id; (None, "") when unsupported."""
    if pid.startswith("openai:"):
        rest = pid[len("openai:"):]
        if rest.startswith("chat:"):
            return "openai", rest[len("chat:"):]
        if rest == "chat" or rest.split(":", 1)[0] in _OPENAI_OTHER_APIS:
            return None, ""
        return "openai", rest
    if pid.startswith("anthropic:messages:"):
        return "anthropic", pid[len("anthropic:messages:"):]
    return None, ""


def _server(server: Mapping[str, Any], where: str, pid: str, notes: Notes,
            targets: dict[tuple[str, str], str]) -> str | None:
    """The name of the suite-declared target `server` describes (made on first use)."""
    url: str | None = None
    if "apiHost" in server:
        host = server["apiHost"]
        if not isinstance(host, str) or not host or "/" in host:
            raise SuiteError(f"{where}: config.apiHost: must be a host name such as "
                             f'"api.example.com", not {shown_value(host)}')
        url = f"https://{host}"  # as promptfoo builds it: https://HOST/v1
    elif "apiBaseUrl" in server:
        raw = server["apiBaseUrl"]
        if not isinstance(raw, str) or not raw.lower().startswith(("http://", "https://")):
            raise SuiteError(f"{where}: config.apiBaseUrl: must start with http:// or "
                             f"https://, not {shown_value(raw)}")
        # Targets add /v1/chat/completions themselves: a trailing /v1 (as SDKs and
        # promptfoo take it) is dropped, as anoman_tui/streaming/request.py does.
        url = raw.strip().rstrip("/").removesuffix("/v1")
    if url is None:
        notes.unsupported(f"{where}: config.{next(iter(server))} without config.apiBaseUrl "
                          f'is not supported (provider "{pid}")')
        return None
    key_env = ""
    if "apiKeyEnvar" in server:
        env = server["apiKeyEnvar"]
        if not isinstance(env, str) or not _ENV_NAME.match(env):
            raise SuiteError(f"{where}: config.apiKeyEnvar: must be the name of an "
                             f"environment variable, not {shown_value(env)}")
        key_env = env
    elif "apiKey" in server:
        key = server["apiKey"]
        match = _ENV_KEY.match(key) if isinstance(key, str) else None
        if match is None:
            # Never echo it: it may be a real key.
            notes.unsupported(f"{where}: config.apiKey: a key written in the config is not "
                              f"supported; name its variable with apiKeyEnvar, or write "
                              f"'{{{{ env.NAME }}}}'")
            return None
        key_env = match.group(1)
    found = targets.get((url, key_env))
    if found is not None:
        return found
    host = urlsplit(url).hostname or "server"
    # Named after its host (`localhost:anoman-lite`): providers on one server share it.
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", host).strip("-._").lower()[:36]
    slug = slug or "server"
    taken = set(targets.values()) | set(BUILT_IN) | {LOCAL, "gateway"}
    name, n = slug, 1
    while name in taken:
        n += 1
        name = f"{slug}-{n}"
    targets[(url, key_env)] = name
    return name


# -- prompts -------------------------------------------------------------------------------

def _prompts(raw: Any, shown: str, base: Path,
             notes: Notes) -> tuple[list[PromptTemplate], str | None]:
    if raw is None:
        # promptfoo's default: the test's `prompt` var is the prompt.
        return [PromptTemplate(f"{shown}: prompts", "{{prompt}}")], None
    entries: list[tuple[str, Any]]
    if isinstance(raw, str):
        entries = [("prompts", raw)]
    elif isinstance(raw, list):
        entries = [(f"prompts[{i}]", item) for i, item in enumerate(raw)]
    elif isinstance(raw, dict):
        # promptfoo's map form: { "file://prompt.txt": "label" }.
        entries = [(f"prompts.{key}", key) for key in raw]
    else:
        raise SuiteError(f"{shown}: prompts: must be a list of prompts, "
                         f"not {describe(raw)}")
    out: list[PromptTemplate] = []
    systems: list[tuple[str, str]] = []  # (where, system)
    for path, entry in entries:
        where = f"{shown}: {path}"
        if isinstance(entry, dict):
            for key in entry:
                if key not in ("id", "raw", "label"):
                    notes.unsupported(f'{where}: "{key}" is not supported')
                    break
            else:
                text = entry.get("raw", entry.get("id"))
                if not isinstance(text, str):
                    raise SuiteError(f"{where}: raw: must be the prompt's text, "
                                     f"not {describe(text)}")
                out.extend(_prompt_texts(text, where, shown, base, notes, systems))
            continue
        if not isinstance(entry, str):
            raise SuiteError(f"{where}: must be text or a file://, not {describe(entry)}")
        out.extend(_prompt_texts(entry, where, shown, base, notes, systems))
    if not out:
        raise SuiteError(f"{shown}: prompts: no prompt is left to run")
    system = None
    if systems:
        if len(systems) != len(out) or len({s for _, s in systems}) > 1:
            where = systems[0][0]
            notes.unsupported(f"{where}: a system message that not every prompt shares is "
                              f"not supported (a suite has one system message)")
        else:
            system = systems[0][1]
    return out, system


def _prompt_texts(text: str, where: str, shown: str, base: Path, notes: Notes,
                  systems: list[tuple[str, str]]) -> list[PromptTemplate]:
    ref = _file_ref(text)
    found: list[tuple[str, str]] = []  # (where, template)
    if ref is None:
        chat = _chat_json(text)
        found = [(where, text)] if chat is None else _chat(chat, where, notes, systems)
    elif any(c in ref for c in "*?[") or ":" in Path(ref).name:
        notes.unsupported(f"{where}: {text}: file globs and functions are not supported")
    else:
        file = base / ref
        suffix = file.suffix.lower()
        if suffix in _TEXT_FILES:
            content = read_text(file, _beside(shown, ref))
            parts = _split_prompts(content)
            several = len(parts) > 1
            found = [(f"{where} ({ref}, prompt {n})" if several else f"{where} ({ref})", p)
                     for n, p in enumerate(parts, 1)]
        elif suffix in (".json", ".yaml", ".yml"):
            content = read_text(file, _beside(shown, ref))
            try:
                loaded = (json.loads(content) if suffix == ".json"
                          else yaml.safe_load(content))
            except (ValueError, yaml.YAMLError, RecursionError):
                raise SuiteError(f"{where}: {ref}: not valid {suffix[1:].upper()}") from None
            plain(loaded, f"{where}: {ref}")
            found = _chat(loaded, f"{where} ({ref})", notes, systems)
        else:
            notes.unsupported(f"{where}: prompts from {suffix} files are not supported "
                              f"(text files, or a chat as JSON or YAML)")
    out = []
    for place, template in found:
        trouble = template_problem(template)
        if trouble is not None:
            notes.unsupported(f"{place}: {trouble}")
            continue
        out.append(PromptTemplate(place, template))
    return out


def _split_prompts(content: str) -> list[str]:
    """Prompts of a text file: separated by a line `---`, each trimmed, empty ones
    dropped (as promptfoo's src/prompts/processors/text.ts reads them)."""
    parts: list[str] = []
    buffer: list[str] = []
    for line in [*content.splitlines(), "---"]:
        if line.strip() == "---":
            joined = "\n".join(buffer).strip()
            if joined:
                parts.append(joined)
            buffer = []
        else:
            buffer.append(line)
    return parts


def _chat_json(text: str) -> Any:
    """A chat written inline as a JSON array of messages, else None."""
    if not text.lstrip().startswith("["):
        return None
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(loaded, list) and loaded and all(
            isinstance(m, dict) and "role" in m for m in loaded):
        return loaded
    return None


def _chat(messages: Any, where: str, notes: Notes,
          systems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The one user message of a chat prompt (its system message noted); unsupported
    when it is more than that."""
    ok = (isinstance(messages, list) and messages
          and all(isinstance(m, dict) and set(m) <= {"role", "content"}
                  and isinstance(m.get("content"), str) for m in messages))
    roles = [m.get("role") for m in messages] if ok else []
    if roles not in (["user"], ["system", "user"]):
        notes.unsupported(f"{where}: a chat prompt other than one user message after at "
                          f"most one system message is not supported")
        return []
    if roles == ["system", "user"]:
        system = messages[0]["content"]
        if template_problem(system) is not None or "{{" in system:
            notes.unsupported(f"{where}: a system message with template vars is not "
                              f"supported (a suite has one system message)")
            return []
        systems.append((where, system))
    return [(where, messages[-1]["content"])]


# -- tests ---------------------------------------------------------------------------------

@dataclass
class _Test:
    draft: CaseDraft
    description: str | None


@dataclass
class _Default:
    vars: dict[str, str]
    asserts: list[AssertionDraft]
    threshold: float | None
    prefix: str
    suffix: str


def _default_test(raw: Any, shown: str, base: Path, notes: Notes) -> _Default:
    if raw is None:
        return _Default({}, [], None, "", "")
    where = f"{shown}: defaultTest"
    ref = _file_ref(raw)
    if ref is not None:
        raw = _load_yaml(read_text(base / ref, _beside(shown, ref)), _beside(shown, ref))
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: must be a table (vars, assert, threshold), "
                         f"not {describe(raw)}")
    test = _test(raw, where, shown, base, notes, default=True)
    if test is None:
        return _Default({}, [], None, "", "")
    d = test.draft
    return _Default(d.vars, d.asserts, d.threshold, d.prefix, d.suffix)


def _merged(draft: CaseDraft, default: _Default) -> CaseDraft:
    """`draft` with the defaultTest merged in as promptfoo's evaluator does: its vars
    under the test's, its assertions before the test's, its threshold and prefix/suffix
    where the test has none."""
    test_where = draft.where
    inherited = [replace(a, where=f"{test_where}, {a.where.split(': ', 1)[1]}")
                 for a in default.asserts]
    return replace(draft, vars={**default.vars, **draft.vars},
                   asserts=[*inherited, *draft.asserts],
                   threshold=draft.threshold if draft.threshold is not None
                   else default.threshold,
                   prefix=draft.prefix or default.prefix, suffix=draft.suffix or default.suffix)


def _tests(raw: Any, shown: str, base: Path, notes: Notes) -> list[_Test]:
    entries: list[tuple[str, Any]]
    if isinstance(raw, str):
        entries = [("tests", raw)]
    elif isinstance(raw, list):
        entries = [(f"tests[{i}]", item) for i, item in enumerate(raw)]
    else:
        raise SuiteError(f"{shown}: tests: must be a list of tests or a file://, "
                         f"not {describe(raw)}")
    out: list[_Test] = []
    for path, entry in entries:
        where = f"{shown}: {path}"
        if isinstance(entry, dict):
            test = _test(entry, where, shown, base, notes)
            if test is not None:
                out.append(test)
        elif isinstance(entry, str):
            out.extend(_tests_file(entry, where, shown, base, notes))
        else:
            raise SuiteError(f"{where}: must be a test table or a file://, "
                             f"not {describe(entry)}")
    return out


def _tests_file(entry: str, where: str, shown: str, base: Path,
                notes: Notes) -> list[_Test]:
    ref = _file_ref(entry)
    if ref is None or any(c in ref for c in "*?[") or ":" in Path(ref).name:
        notes.unsupported(f'{where}: tests from "{entry}" are not supported (file:// CSV, '
                          f"JSONL, YAML or JSON files)")
        return []
    file = base / ref
    file_shown = _beside(shown, ref)
    suffix = file.suffix.lower()
    if suffix == ".csv":
        descriptions: list[str | None] = []
        drafts = csv_drafts(file, file_shown, notes, descriptions=descriptions)
        return [_Test(d, desc) for d, desc in zip(drafts, descriptions, strict=True)]
    items: list[tuple[str, Any]]
    if suffix == ".jsonl":
        items = []
        for n, line in enumerate(read_text(file, file_shown).splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"{file_shown}: line {n}", json.loads(line)))
            except ValueError as exc:
                raise SuiteError(f"{file_shown}: line {n}: not JSON: {exc}") from None
            except RecursionError:
                raise SuiteError(f"{file_shown}: line {n}: nested too deeply to read") \
                    from None
            plain(items[-1][1], f"{file_shown}: line {n}")
    elif suffix in (".yaml", ".yml", ".json"):
        loaded = _load_yaml(read_text(file, file_shown), file_shown)
        if isinstance(loaded, dict):
            loaded = [loaded]
        if not isinstance(loaded, list):
            raise SuiteError(f"{file_shown}: must be a list of tests, not {describe(loaded)}")
        items = [(f"{file_shown}: [{i}]", item) for i, item in enumerate(loaded)]
    else:
        notes.unsupported(f"{where}: tests from {suffix or 'extensionless'} files are not "
                          f"supported (CSV, JSONL, YAML or JSON)")
        return []
    out = []
    for item_where, item in items:
        if not isinstance(item, dict):
            raise SuiteError(f"{item_where}: must be a test table, not {describe(item)}")
        test = _test(item, item_where, shown, base, notes)
        if test is not None:
            out.append(test)
    return out


def _test(table: Mapping[str, Any], where: str, shown: str, base: Path, notes: Notes, *,
          default: bool = False) -> _Test | None:
    """A test table; None when it asks for something unsupported and was skipped."""
    for key in table:
        if key not in _TEST_KEYS:
            notes.unsupported(f'{where}: "{key}" is not supported')
            return None
    draft = CaseDraft(where, None, None, {}, [])
    options = table.get("options") or {}
    if not isinstance(options, dict):
        raise SuiteError(f"{where}: options: must be a table, not {describe(options)}")
    for key, value in options.items():
        if default and key == "provider":
            continue  # the grader: read with the providers (`_grader`)
        if key not in ("prefix", "suffix"):
            notes.unsupported(f"{where}: options.{key} is not supported"
                              + (" (a grader of its own: only defaultTest's is)"
                                 if key == "provider" else ""))
            return None
        if not isinstance(value, str):
            raise SuiteError(f"{where}: options.{key}: must be text, not {describe(value)}")
        setattr(draft, key, value)
    raw_vars = table.get("vars") or {}
    if not isinstance(raw_vars, dict):
        notes.unsupported(f"{where}: vars: vars from {shown_value(raw_vars)} are not "
                          f"supported (a table of names to text)")
        return None
    for name, value in raw_vars.items():
        text = _var(value, f"{where}.vars.{name}", shown, base, notes)
        if text is None:
            return None
        draft.vars[str(name)] = text
    if "threshold" in table:
        draft.threshold = check_share(table["threshold"], where)
    asserts = table.get("assert") or []
    if not isinstance(asserts, list):
        raise SuiteError(f"{where}: assert: must be a list, not {describe(asserts)}")
    for i, item in enumerate(asserts):
        made = assertion_draft(item, f"{where}.assert[{i}]", notes, promptfoo=True)
        if made is not None:
            draft.asserts.append(made)
    description = table.get("description")
    if description is not None and not isinstance(description, str):
        raise SuiteError(f"{where}: description: must be text, not {describe(description)}")
    if default and description is not None:
        description = None  # a default description names no test
    return _Test(draft, description)


def _var(value: Any, where: str, shown: str, base: Path, notes: Notes) -> str | None:
    """A var's text; a `file://` text file is read (as promptfoo does); None when the
    value is unsupported and skipped."""
    ref = _file_ref(value)
    if ref is not None:
        if Path(ref).suffix.lower() in (".txt", ".md") and ":" not in Path(ref).name:
            return read_text(base / ref, _beside(shown, ref))
        notes.unsupported(f"{where}: a var loaded from {value} is not supported "
                          f"(only .txt and .md files)")
        return None
    text = var_text(value)
    if text is None:
        # A list would expand into one test per value in promptfoo; an object is for
        # templates with attribute access: neither is run here.
        notes.unsupported(f"{where}: a var that is {describe(value)} is not supported "
                          f"(text or a number only)")
        return None
    return text


def _description_ids(tests: list[_Test]) -> list[str | None]:
    """Each test's description as its id where it makes a good one (short, one line, not
    a number, no `/N` ending, unique), else None (its position)."""
    counts: dict[str, int] = {}
    for t in tests:
        if t.description:
            counts[t.description.strip()] = counts.get(t.description.strip(), 0) + 1
    ids: list[str | None] = []
    for t in tests:
        d = (t.description or "").strip()
        good = (d and counts[d] == 1 and len(d) <= _DESCRIPTION_ID_MAX and "\n" not in d
                and not d.isdigit() and not re.search(r"/\d+$", d))
        ids.append(d if good else None)
    return ids


# -- evaluateOptions -------------------------------------------------------------------------

def _evaluate_options(raw: Any, shown: str, notes: Notes) -> tuple[int, int]:
    """(repeat, concurrency); promptfoo's defaults are ours (1 and 4)."""
    if raw is None:
        return 1, 4
    where = f"{shown}: evaluateOptions"
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: must be a table, not {describe(raw)}")
    values = {"repeat": 1, "maxConcurrency": 4}
    for key, value in raw.items():
        if key in values:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise SuiteError(f"{where}.{key}: must be a whole number ≥ 1, "
                                 f"not {shown_value(value)}")
            values[key] = value
        elif key in ("showProgressBar", "cache"):
            continue  # display only; and every suite request bypasses the cache anyway
        else:
            notes.unsupported(f"{where}.{key}: is not supported")
    return values["repeat"], values["maxConcurrency"]
