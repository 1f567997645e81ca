"""Reading promptfoo configs (`anoman_tui.suites.promptfoo`, through `load_suite`): the
supported subset mapped onto a `Suite`, and everything else refused with one line naming
it and its YAML path, or skipped and listed with `skip_unsupported`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from anoman_tui.suites.loader import SuiteError, load_suite
from anoman_tui.suites.model import Assertion
from anoman_tui.suites.promptfoo import load_promptfoo

ROOT = Path(__file__).resolve().parents[2]

# In the style of promptfoo's own examples/ (a getting-started config).
CONFIG = """\
# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json
description: 'Translation checks'

prompts:
  - 'Convert the following English text to {{language}}: {{input}}'
  - file://prompts.txt

providers:
  - openai:gpt-4o-mini
  - id: openai:chat:gpt-4.1
    label: bigger
  - id: anthropic:messages:claude-sonnet-4-6

defaultTest:
  vars:
    language: French
  assert:
    - type: not-icontains
      value: sorry
  threshold: 0.5

evaluateOptions:
  maxConcurrency: 2
  repeat: 3

tests:
  - description: greeting
    vars:
      input: Hello world
    assert:
      - type: icontains
        value: bonjour
      - type: latency
        threshold: 5000
        metric: speed
  - vars:
      language: German
      input: Good morning
    threshold: 1
    assert:
      - type: contains-any
        value: [Guten, Morgen]
  - file://more_tests.csv
"""


def write(tmp_path: Path, text: str, name: str = "promptfooconfig.yaml", **files: str) -> Path:
    for file, content in files.items():
        target = tmp_path / file.replace("__", "/").replace("_dot_", ".")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def full_config(tmp_path: Path) -> Path:
    return write(tmp_path, CONFIG,
                 prompts_dot_txt="Translate to {{language}}:\n{{input}}\n---\n\n"
                                 "  {{input}} in {{ language }}, please  \n---\n",
                 more_tests_dot_csv="input,__expected,__description\n"
                                    "Thank you,icontains:merci,thanks\n")


def error(tmp_path: Path, text: str, **files: str) -> str:
    with pytest.raises(SuiteError) as caught:
        load_suite(write(tmp_path, text, **files))
    message = caught.value.message
    assert "\n" not in message
    return message


MINIMAL = "providers: [openai:gpt-4o-mini]\nprompts: ['Say {{x}}']\ntests:\n  - vars: {x: hi}\n"


# -- the supported subset ----------------------------------------------------------------

def test_a_promptfoo_example_config_maps_onto_a_suite(tmp_path: Path) -> None:
    path = full_config(tmp_path)
    suite = load_suite(path)
    assert suite.name == "Translation checks"
    assert suite.models == ("openai:gpt-4o-mini", "openai:gpt-4.1",
                            "anthropic:claude-sonnet-4-6")
    assert (suite.repeat, suite.concurrency) == (3, 2)
    assert suite.targets == () and suite.skipped == ()
    assert suite.path == str(path)
    # Three prompts (one inline, two from the file) are variants of every test.
    ids = [c.id for c in suite.cases]
    assert ids == ["greeting/1", "greeting/2", "greeting/3", "2/1", "2/2", "2/3",
                   "thanks/1", "thanks/2", "thanks/3"]
    by_id = {c.id: c for c in suite.cases}
    assert by_id["greeting/1"].prompt == "Convert the following English text to French: " \
                                         "Hello world"
    assert by_id["greeting/2"].prompt == "Translate to French:\nHello world"
    assert by_id["greeting/3"].prompt == "Hello world in French, please"
    # defaultTest: its vars under the test's, its assertions first, its threshold as default.
    assert by_id["greeting/1"].asserts == (
        Assertion(type="icontains", value="sorry", negate=True),
        Assertion(type="icontains", value="bonjour"),
        Assertion(type="latency", threshold=5000.0))
    assert by_id["greeting/1"].threshold == 0.5
    assert by_id["2/1"].prompt.endswith("to German: Good morning")
    assert by_id["2/1"].threshold == 1.0
    assert by_id["2/1"].asserts[1] == Assertion(type="contains-any", value=("Guten", "Morgen"))
    assert by_id["thanks/1"].asserts == (
        Assertion(type="icontains", value="sorry", negate=True),
        Assertion(type="icontains", value="merci"))
    assert dict(by_id["thanks/1"].vars) == {"language": "French", "input": "Thank you"}


def test_load_promptfoo_directly_and_the_default_name(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL, name="checks.yml")
    suite = load_promptfoo(path)
    assert suite.name == "checks" and suite.cases[0].prompt == "Say hi"
    assert suite.cases[0].id == "1" and suite.cases[0].asserts == ()


def test_no_prompts_means_the_prompt_var(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, "providers: [openai:m]\ntests:\n"
                                       "  - vars: {prompt: 'What is 2+2?'}\n"))
    assert suite.cases[0].prompt == "What is 2+2?"


def test_an_api_base_url_provider_is_a_target_of_the_suite(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, """
providers:
  - id: openai:chat:anoman-lite
    config: {apiBaseUrl: 'http://localhost:8787/v1', apiKeyEnvar: ANOMAN_API_KEY,
             temperature: 0.3, max_tokens: 200}
  - id: openai:claude-sonnet-4-6
    config: {apiBaseUrl: 'http://localhost:8787/v1/', apiKeyEnvar: ANOMAN_API_KEY,
             temperature: 0.3, max_tokens: 200}
  - id: openai:chat:llama
    config: {apiBaseUrl: 'http://localhost:4000', apiKey: '{{ env.LITELLM_KEY }}',
             temperature: 0.3, max_tokens: 200}
  - id: openai:chat:gpt-4o
    config: {apiHost: openai.proxy.example, temperature: 0.3, max_tokens: 200}
  - id: openai:chat:local-model
    config: {apiBaseUrl: 'http://127.0.0.1:8080/v1', temperature: 0.3, max_tokens: 200}
prompts: ['{{q}}']
tests: [{vars: {q: hi}}]
"""))
    assert suite.models == ("localhost:anoman-lite", "localhost:claude-sonnet-4-6",
                            "localhost-2:llama", "openai.proxy.example:gpt-4o",
                            "127.0.0.1:local-model")
    assert suite.targets == (
        ("localhost", "http://localhost:8787", "ANOMAN_API_KEY"),
        ("localhost-2", "http://localhost:4000", "LITELLM_KEY"),
        ("openai.proxy.example", "https://openai.proxy.example", ""),
        ("127.0.0.1", "http://127.0.0.1:8080", ""),
    )
    assert (suite.temperature, suite.max_tokens) == (0.3, 200)


def test_a_target_never_takes_a_built_in_name(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, """
providers:
  - id: openai:m
    config: {apiBaseUrl: 'https://openai/v1'}
prompts: ['p']
tests: [{}]
"""))
    assert suite.models == ("openai-2:m",)


def test_a_chat_prompt_of_one_user_message_after_a_system_message(tmp_path: Path) -> None:
    chat = ('[{"role": "system", "content": "Be brief."},'
            ' {"role": "user", "content": "Define {{term}}"}]')
    suite = load_suite(write(tmp_path, "providers: [openai:m]\nprompts: [file://chat.json]\n"
                                       "tests: [{vars: {term: latency}}]\n",
                             chat_dot_json=chat))
    assert suite.system == "Be brief."
    assert suite.cases[0].prompt == "Define latency"


def test_tests_from_yaml_jsonl_and_description_ids(tmp_path: Path) -> None:
    long = "x" * 41
    suite = load_suite(write(
        tmp_path, "providers: [openai:m]\nprompts: ['{{q}}']\n"
                  "tests: [file://t.yaml, file://t.jsonl]\n",
        t_dot_yaml=f"- description: same\n  vars: {{q: a}}\n"
                   f"- description: same\n  vars: {{q: b}}\n"
                   f"- description: '{long}'\n  vars: {{q: c}}\n"
                   f"- description: '7'\n  vars: {{q: d}}\n",
        t_dot_jsonl='{"description": "json one", "vars": {"q": "e"},'
                    ' "assert": [{"type": "equals", "value": "E"}]}\n\n'))
    assert [(c.id, c.prompt) for c in suite.cases] == [
        ("1", "a"), ("2", "b"), ("3", "c"), ("4", "d"), ("json one", "e")]
    assert suite.cases[-1].asserts == (Assertion(type="equals", value="E"),)


def test_a_text_file_var_and_prefix_suffix_options(tmp_path: Path) -> None:
    suite = load_suite(write(
        tmp_path, "providers: [openai:m]\nprompts: ['Summarise: {{doc}}']\n"
                  "defaultTest: {options: {prefix: 'Q. '}}\n"
                  "tests:\n  - vars: {doc: file://doc.txt}\n    options: {suffix: ' A.'}\n",
        doc_dot_txt="a long text"))
    assert suite.cases[0].prompt == "Q. Summarise: a long text A."


def test_the_examples_promptfoo_config_loads() -> None:
    suite = load_suite(ROOT / "examples" / "promptfoo" / "promptfooconfig.yaml")
    assert suite.name == "Shop support answers"
    assert suite.models == ("localhost:claude-sonnet-4-6", "localhost:anoman-lite",
                            "localhost:qwen3-coder")
    assert suite.targets == (("localhost", "http://localhost:8787", "ANOMAN_API_KEY"),)
    assert (suite.repeat, suite.concurrency, suite.temperature) == (2, 6, 0.0)
    assert [c.id for c in suite.cases][:2] == ["refund/1", "refund/2"]
    assert "late order/2" in [c.id for c in suite.cases]
    assert suite.skipped == ()


# -- refused, with its place; or skipped and listed ----------------------------------------

def test_exact_lines_for_unsupported_things(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    assert error(tmp_path, """
providers: [openai:m]
prompts: ['{{q}}']
tests:
  - vars: {q: a}
  - vars: {q: b}
  - vars: {q: c}
  - vars: {q: d}
    assert:
      - type: contains
        value: d
      - type: javascript
        value: output.length > 3
""") == f'{config}: tests[3].assert[1]: assertion type "javascript" is not supported'
    assert error(tmp_path, "providers: ['exec: python run.py']\nprompts: [p]\ntests: [{}]\n") \
        == (f'{config}: providers[0]: provider "exec: python run.py" is not supported (only '
            f"openai:MODEL, openai:chat:MODEL and anthropic:messages:MODEL)")
    assert error(tmp_path, "providers: [openai:m]\nprompts: ['{{ doc | load }}']\n"
                           "tests: [{}]\n") == (
        f'{config}: prompts[0]: Nunjucks filter "load" in "{{{{ doc | load }}}}" is not '
        f"supported (only {{{{ var }}}})")


@pytest.mark.parametrize(("text", "expected"), [
    ("providers: [http]\nprompts: [p]\ntests: [{}]\n", 'providers[0]: provider "http"'),
    ("providers: [python:provider.py]\nprompts: [p]\ntests: [{}]\n",
     'providers[0]: provider "python:provider.py"'),
    ("providers: [openai:responses:gpt-5]\nprompts: [p]\ntests: [{}]\n",
     'provider "openai:responses:gpt-5" is not supported'),
    ("providers: [{id: openai:m, config: {top_p: 0.9}}]\nprompts: [p]\ntests: [{}]\n",
     'providers[0]: config.top_p is not supported (provider "openai:m")'),
    ("providers: [{id: openai:m, transform: output.trim()}]\nprompts: [p]\ntests: [{}]\n",
     'providers[0]: "transform" is not supported'),
    ("providers: [{id: openai:m, config: {apiBaseUrl: 'http://h/v1', apiKey: sk-SECRET-1}}]\n"
     "prompts: [p]\ntests: [{}]\n",
     "providers[0]: config.apiKey: a key written in the config is not supported"),
    ("providers: [{id: openai:m, config: {apiKey: '{{ env.K }}'}}]\nprompts: [p]\n"
     "tests: [{}]\n", "providers[0]: config.apiKey without config.apiBaseUrl is not supported"),
    ("providers: [{id: anthropic:messages:c, config: {apiBaseUrl: 'http://x'}}]\n"
     "prompts: [p]\ntests: [{}]\n", "providers[0]: config.apiBaseUrl is not supported for"),
    ("providers: [openai:m]\nprompts: ['{% if a %}x{% endif %}']\ntests: [{}]\n",
     'prompts[0]: template tag "{% if a %}" is not supported'),
    ("providers: [openai:m]\nprompts: [file://gen.py]\ntests: [{}]\n",
     "prompts[0]: prompts from .py files are not supported"),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - assert: [{type: factuality, value: ok}]\n",
     'tests[0].assert[0]: assertion type "factuality" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - assert: [{type: python, value: x}]\n",
     'tests[0].assert[0]: assertion type "python" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - assert: [{type: my-check}]\n",
     'tests[0].assert[0]: assertion type "my-check" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n"
     "  - assert: [{type: contains, value: p, transform: output.toLowerCase()}]\n",
     'tests[0].assert[0]: "transform" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - options: {transform: output.trim()}\n",
     "tests[0]: options.transform is not supported"),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - vars: {x: [a, b]}\n",
     "tests[0].vars.x: a var that is a list is not supported"),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - vars: {x: file://f.py}\n",
     "tests[0].vars.x: a var loaded from file://f.py is not supported"),
    ("providers: [openai:m]\nprompts: [p]\ntests: [{provider: openai:x}]\n",
     'tests[0]: "provider" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests: file://gen.js\n",
     'tests: tests from .js files are not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests: ['huggingface://datasets/x']\n",
     'tests[0]: tests from "huggingface://datasets/x" are not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests: [{}]\nscenarios: []\n",
     'scenarios: "scenarios" is not supported'),
    ("providers: [openai:m]\nprompts: [p]\ntests: [{}]\nevaluateOptions: {delay: 100}\n",
     "evaluateOptions.delay: is not supported"),
])
def test_unsupported_is_refused_naming_it_and_its_place(
        tmp_path: Path, text: str, expected: str) -> None:
    message = error(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'promptfooconfig.yaml'}: "), message
    assert expected in message, message
    assert "SECRET" not in message


@pytest.mark.parametrize(("text", "expected"), [
    ("providers: [openai:m\n", "line 2, column 1: "),
    ("- a\n- b\n", "a promptfoo config is a YAML mapping"),
    ("prompts: [p]\ntests: [{}]\n", "providers: missing"),
    ("providers: [openai:m]\nprompts: [p]\n", "tests: missing"),
    ("providers: [openai:m]\nprompts: [p]\ntests: []\n", "tests: no test to run"),
    ("providers: [openai:m, openai:chat:m]\nprompts: [p]\ntests: [{}]\n",
     'providers[1]: "openai:m" is the same model as '),
    ("providers:\n  - {id: openai:a, config: {temperature: 0.2}}\n"
     "  - {id: openai:b, config: {temperature: 0.7}}\nprompts: [p]\ntests: [{}]\n",
     "providers[1]: config.temperature is 0.7 but providers[0] has 0.2: a suite has one "
     "temperature for all its models"),
    ("providers:\n  - {id: openai:a, config: {max_tokens: 10}}\n  - openai:b\n"
     "prompts: [p]\ntests: [{}]\n", "providers[1]: config.max_tokens is not set but"),
    ("providers: [openai:m]\nprompts: ['{{q}}']\ntests: [{vars: {r: x}}]\n",
     'tests[0]: prompt uses {{q}} but the case has no var "q" (its vars: r)'),
    ("providers: [openai:m]\nprompts: [p]\ntests:\n  - assert: [{type: regex, value: '('}]\n",
     'tests[0].assert[0]: regex "(" does not compile'),
    ("providers: [openai:m]\nprompts: [p]\ntests: [{threshold: 5}]\n",
     "tests[0]: threshold: must be a number from 0 to 1"),
    ("providers: [openai:m]\nprompts: [p]\ntests: [{}]\nevaluateOptions: {repeat: 0}\n",
     "evaluateOptions.repeat: must be a whole number ≥ 1, not 0"),
    ("providers: [{id: openai:m, config: {apiBaseUrl: 'localhost:1'}}]\nprompts: [p]\n"
     "tests: [{}]\n", "providers[0]: config.apiBaseUrl: must start with http://"),
    ("providers: [openai:m]\nprompts: [file://missing.txt]\ntests: [{}]\n",
     "missing.txt: no such file"),
])
def test_a_bad_config_is_one_line(tmp_path: Path, text: str, expected: str) -> None:
    message = error(tmp_path, text)
    assert expected in message, message


def test_a_bad_tests_jsonl_line_is_named(tmp_path: Path) -> None:
    message = error(tmp_path, "providers: [openai:m]\nprompts: [p]\ntests: file://t.jsonl\n",
                    t_dot_jsonl='{"vars": {}}\n{"vars": \n')
    assert message.startswith(f"{tmp_path / 't.jsonl'}: line 2: not JSON"), message


def test_skip_unsupported_runs_the_rest_and_lists_each_skipped_thing(tmp_path: Path) -> None:
    path = write(tmp_path, """
providers:
  - openai:m
  - exec:./run.sh
prompts:
  - 'Q: {{q}}'
  - '{{ q | upper }}'
defaultTest:
  assert:
    - type: factuality
      value: is polite
tests:
  - description: kept
    vars: {q: a}
    assert:
      - type: icontains
        value: a
      - type: javascript
        value: output.length > 1
  - vars: {q: b}
    options: {transform: output.trim()}
""")
    with pytest.raises(SuiteError):
        load_suite(path)
    suite = load_suite(path, skip_unsupported=True)
    assert suite.models == ("openai:m",)
    assert [(c.id, c.prompt, c.asserts) for c in suite.cases] == [
        ("kept", "Q: a", (Assertion(type="icontains", value="a"),))]
    where = str(path)
    assert suite.skipped == (
        f'{where}: providers[1]: provider "exec:./run.sh" is not supported (only '
        f"openai:MODEL, openai:chat:MODEL and anthropic:messages:MODEL)",
        f'{where}: prompts[1]: Nunjucks filter "upper" in "{{{{ q | upper }}}}" is not '
        f"supported (only {{{{ var }}}})",
        f'{where}: defaultTest.assert[0]: assertion type "factuality" is not supported',
        f'{where}: tests[0].assert[1]: assertion type "javascript" is not supported',
        f"{where}: tests[1]: options.transform is not supported",
    )


def test_skipping_everything_still_refuses_an_empty_run(tmp_path: Path) -> None:
    path = write(tmp_path, "providers: [http]\nprompts: [p]\ntests: [{}]\n")
    with pytest.raises(SuiteError, match="providers: no provider is left to run"):
        load_suite(path, skip_unsupported=True)


def test_a_multi_turn_chat_prompt_is_unsupported(tmp_path: Path) -> None:
    chat = ("- {role: system, content: a}\n- {role: user, content: b}\n"
            "- {role: assistant, content: c}\n- {role: user, content: d}\n")
    message = error(tmp_path, "providers: [openai:m]\nprompts: [file://chat.yaml]\n"
                              "tests: [{}]\n", chat_dot_yaml=chat)
    assert message == (f"{tmp_path / 'promptfooconfig.yaml'}: prompts[0] (chat.yaml): a chat "
                       f"prompt other than one user message after at most one system "
                       f"message is not supported")


def test_the_grader_of_default_test_is_the_suites_judge(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, """
providers:
  - id: openai:chat:anoman-lite
    config: {apiBaseUrl: 'http://localhost:8787/v1', apiKeyEnvar: ANOMAN_API_KEY}
defaultTest:
  options:
    provider:
      id: openai:chat:anoman-judge
      config: {apiBaseUrl: 'http://localhost:8787/v1', apiKeyEnvar: ANOMAN_API_KEY}
prompts: ['{{q}}']
tests:
  - vars: {q: Explain WAL}
    assert: [{type: llm-rubric, value: mentions the log}]
"""))
    # The grader's server is the models' own: one target for both.
    assert suite.judge == "localhost:anoman-judge"
    assert suite.targets == (("localhost", "http://localhost:8787", "ANOMAN_API_KEY"),)
    assert suite.rubrics and suite.cases[0].asserts[0].type == "llm-rubric"
    plain = load_suite(write(tmp_path, """
providers: [openai:m]
prompts: [p]
defaultTest: {options: {provider: 'anthropic:messages:claude-sonnet-4-6'}}
tests: [{vars: {}}]
"""))
    assert plain.judge == "anthropic:claude-sonnet-4-6"
    assert load_suite(write(tmp_path, "providers: [openai:m]\nprompts: [p]\n"
                            "tests: [{vars: {}}]\n")).judge is None


def test_a_grader_of_one_test_or_an_unknown_grader_is_unsupported(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"tests\[0\]: options.provider is not supported "
                       r"\(a grader of its own: only defaultTest's is\)"):
        load_suite(write(tmp_path, "providers: [openai:m]\nprompts: [p]\n"
                         "tests:\n  - options: {provider: openai:judge}\n"))
    with pytest.raises(SuiteError, match=r'defaultTest.options.provider: provider '
                       r'"exec:grade.sh" is not supported'):
        load_suite(write(tmp_path, "providers: [openai:m]\nprompts: [p]\n"
                         "defaultTest: {options: {provider: 'exec:grade.sh'}}\n"
                         "tests: [{vars: {}}]\n"))


def test_file_refs_stay_inside_the_config_s_folder_unless_allowed(tmp_path: Path) -> None:
    """`file://` resolves inside the config's folder tree (symlinks followed first);
    `allow_outside_files` reads a file elsewhere, whose text is then the prompt."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (tmp_path / "shared.txt").write_text("Shared prompt about {{x}}")
    (folder / "inside.txt").write_text("Inside prompt about {{x}}")
    (folder / "link.txt").symlink_to(tmp_path / "shared.txt")
    config = folder / "promptfooconfig.yaml"
    for ref in ("../shared.txt", "link.txt"):
        config.write_text(f"providers: [openai:gpt-4o-mini]\nprompts: [file://{ref}]\n"
                          "tests:\n  - vars: {x: tea}\n")
        with pytest.raises(SuiteError, match="outside the suite's folder"):
            load_suite(config)
        suite = load_suite(config, allow_outside_files=True)
        assert suite.cases[0].prompt == "Shared prompt about tea"
    config.write_text("providers: [openai:gpt-4o-mini]\nprompts: [file://./sub/../inside.txt]\n"
                      "tests:\n  - vars: {x: tea}\n")
    assert load_suite(config).cases[0].prompt == "Inside prompt about tea"
