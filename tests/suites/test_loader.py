"""Reading TOML suites (`anoman_tui.suites.loader`): every key, cases inline and in JSONL
and CSV files, templates, ids and prompt variants, and the one line a bad suite gets.

Each suite is written into `tmp_path`; the examples/ suite is read as shipped.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from anoman_tui.suites.loader import SuiteError, load_suite
from anoman_tui.suites.model import Assertion, Suite

ROOT = Path(__file__).resolve().parents[2]

MINIMAL = """
models = ["claude-sonnet-4-6", "anoman-lite"]
[[case]]
prompt = "hello"
"""


def suite_file(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error(tmp_path: Path, text: str, **files: str) -> str:
    """The one line a bad suite gets (files written beside it first)."""
    for name, content in files.items():
        (tmp_path / name.replace("_", ".")).write_text(content, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(suite_file(tmp_path, text))
    message = caught.value.message
    assert "\n" not in message and message == str(caught.value)
    return message


# -- what a good suite gives -------------------------------------------------------------

def test_every_top_level_key_of_the_issue_example(tmp_path: Path) -> None:
    path = suite_file(tmp_path, """
name = "support answers"
models = ["claude-sonnet-4-6", "anoman-lite", "litellm:gpt-4o-mini"]
repeat = 3
concurrency = 8
max_cost = 0.1
system = "You are a support agent."
max_tokens = 300
temperature = 0.2
endpoint = "anthropic"

[[case]]
id = "refund"
prompt = "How do I get a refund for {{product}}?"
vars = { product = "a broken kettle" }
threshold = 1.0
[[case.assert]]
type = "icontains"
value = "refund"

[simulate]
"anoman-lite" = "slow_thinking"
"claude-sonnet-4-6" = "interrupt-after=40"
""")
    suite = load_suite(path)
    assert suite.name == "support answers"
    assert suite.models == ("claude-sonnet-4-6", "anoman-lite", "litellm:gpt-4o-mini")
    assert (suite.repeat, suite.concurrency) == (3, 8)
    assert suite.max_cost == Decimal("0.1") and str(suite.max_cost) == "0.1"
    assert suite.system == "You are a support agent."
    assert (suite.max_tokens, suite.temperature, suite.endpoint) == (300, 0.2, "anthropic")
    assert suite.path == str(path)
    (case,) = suite.cases
    assert case.id == "refund"
    assert case.prompt == "How do I get a refund for a broken kettle?"
    assert case.vars == (("product", "a broken kettle"),)
    assert case.threshold == 1.0
    assert case.asserts == (Assertion(type="icontains", value="refund"),)
    assert suite.simulate == (("anoman-lite", "slow_thinking"),
                              ("claude-sonnet-4-6", "interrupt-after=40"))
    assert suite.skipped == () and suite.targets == ()


def test_defaults_name_from_the_file_and_settings_unset(tmp_path: Path) -> None:
    suite = load_suite(suite_file(tmp_path, MINIMAL, "nightly-check.toml"))
    assert suite.name == "nightly-check"
    assert (suite.repeat, suite.concurrency, suite.max_cost) == (1, 4, None)
    assert (suite.system, suite.max_tokens, suite.temperature, suite.endpoint) == (
        None, None, None, None)
    assert suite.cases[0].id == "1" and suite.cases[0].threshold is None


def test_an_integer_max_cost_and_a_string_path(tmp_path: Path) -> None:
    path = suite_file(tmp_path, "max_cost = 2\n" + MINIMAL)
    assert load_suite(str(path)).max_cost == Decimal(2)


def test_assertion_fields_negation_weight_threshold_and_templates(tmp_path: Path) -> None:
    suite = load_suite(suite_file(tmp_path, """
models = ["m"]
[[case]]
prompt = "Tell me about {{ topic }}, {{topic}}."
vars = { topic = "kettles", n = 3, ok = true }
[[case.assert]]
type = "not-icontains"
value = "sorry about {{topic}}"
weight = 2
[[case.assert]]
type = "icontains-any"
value = ["{{ topic }}", "steam {{n}}"]
[[case.assert]]
type = "contains-all"
value = "a, b,{{ok}}"
[[case.assert]]
type = "ttft"
threshold = 800
[[case.assert]]
type = "levenshtein"
value = "kettles"
threshold = 3
"""))
    (case,) = suite.cases
    assert case.prompt == "Tell me about kettles, kettles."
    assert dict(case.vars) == {"topic": "kettles", "n": "3", "ok": "true"}
    assert case.asserts == (
        Assertion(type="icontains", value="sorry about kettles", weight=2.0, negate=True),
        Assertion(type="icontains-any", value=("kettles", "steam 3")),
        # a text value of an -any/-all check is a comma-separated list, as promptfoo reads it
        Assertion(type="contains-all", value=("a", "b", "true")),
        Assertion(type="ttft", threshold=800.0),
        Assertion(type="levenshtein", value="kettles", threshold=3.0),
    )


def test_top_level_prompt_and_prompt_variants(tmp_path: Path) -> None:
    single = load_suite(suite_file(tmp_path, """
models = ["m"]
prompt = "Hi {{name}}"
[[case]]
vars = { name = "Ada" }
[[case]]
id = "own"
prompt = "Bye {{name}}"
vars = { name = "Bob" }
""", "single.toml"))
    assert [(c.id, c.prompt) for c in single.cases] == [("1", "Hi Ada"), ("own", "Bye Bob")]
    several = load_suite(suite_file(tmp_path, """
models = ["m"]
prompts = ["Hi {{name}}", "Hello, {{name}}!"]
[[case]]
id = "greet"
vars = { name = "Ada" }
[[case.assert]]
type = "icontains"
value = "{{name}}"
[[case]]
prompt = "Own {{name}}"
vars = { name = "Bob" }
""", "several.toml"))
    assert [(c.id, c.prompt) for c in several.cases] == [
        ("greet/1", "Hi Ada"), ("greet/2", "Hello, Ada!"), ("2", "Own Bob")]
    assert several.cases[0].asserts == several.cases[1].asserts == (
        Assertion(type="icontains", value="Ada"),)


def test_cases_files_jsonl_then_csv_with_ids_by_position(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cases.jsonl").write_text(
        '{"id": "j1", "prompt": "Q {{x}}", "vars": {"x": 1}, "threshold": 0.5,'
        ' "assert": [{"type": "contains", "value": "{{x}}"}, {"type": "is-json"}]}\n'
        "\n"
        '{"vars": {"x": "two"}}\n', encoding="utf-8")
    # A BOM, a quoted comma and a quoted newline, promptfoo's columns.
    (tmp_path / "data" / "cases.csv").write_bytes(
        '\ufeffx,__expected,__expected2,__threshold,__description,__metric\n'
        '"a, b",icontains:refund,not-contains:sorry,0.5,first,m\n'
        '"line\nbreak",plain answer,,,,\n'
        '"c",latency(3000),"contains-any:x,y",,,\n'.encode())
    suite = load_suite(suite_file(tmp_path, """
models = ["m"]
prompt = "Default {{x}}"
cases = ["data/cases.jsonl", "data/cases.csv"]
[[case]]
prompt = "inline"
"""))
    cases = {c.id: c for c in suite.cases}
    assert list(cases) == ["1", "j1", "3", "4", "5", "6"]
    assert cases["1"].prompt == "inline"
    assert (cases["j1"].prompt, cases["j1"].threshold) == ("Q 1", 0.5)
    assert cases["j1"].asserts == (Assertion(type="contains", value="1"),
                                   Assertion(type="is-json"))
    assert cases["3"].prompt == "Default two"
    assert cases["4"].prompt == "Default a, b" and cases["4"].threshold == 0.5
    assert cases["4"].asserts == (Assertion(type="icontains", value="refund"),
                                  Assertion(type="contains", value="sorry", negate=True))
    assert dict(cases["4"].vars) == {"x": "a, b"}  # __ columns are not vars
    assert cases["5"].prompt == "Default line\nbreak"
    assert cases["5"].asserts == (Assertion(type="equals", value="plain answer"),)
    assert cases["6"].asserts == (Assertion(type="latency", threshold=3000.0),
                                  Assertion(type="contains-any", value=("x", "y")))


def test_a_tab_separated_cases_file(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("q\t__expected\nhello\ticontains:hi\n", encoding="utf-8")
    suite = load_suite(suite_file(tmp_path, 'models = ["m"]\nprompt = "{{q}}"\n'
                                  'cases = "c.csv"\n'))
    assert [(c.prompt, c.asserts) for c in suite.cases] == [
        ("hello", (Assertion(type="icontains", value="hi"),))]


def test_a_nunjucks_comment_renders_as_nothing(tmp_path: Path) -> None:
    suite = load_suite(suite_file(tmp_path, 'models = ["m"]\n[[case]]\n'
                                  'prompt = "a{# note #}b"\n'))
    assert suite.cases[0].prompt == "ab"


def test_the_examples_suite_loads(tmp_path: Path) -> None:
    suite = load_suite(ROOT / "examples" / "support-suite.toml")
    assert suite.models == ("claude-sonnet-4-6", "anoman-lite", "deepseek-r1", "qwen3-coder")
    ids = [c.id for c in suite.cases]
    assert ids[:2] == ["refund", "descale-steps"]
    assert "warranty" in ids and "7/2" in ids  # the JSONL, then the CSV under two prompts
    assert all(c.asserts for c in suite.cases)
    assert all("{{" not in c.prompt for c in suite.cases)


# -- what a bad suite gets: one line, FILE: PLACE: PROBLEM --------------------------------

def test_exact_lines_for_representative_errors(tmp_path: Path) -> None:
    assert error(tmp_path, """
models = ["m"]
[[case]]
id = "refund"
prompt = "p"
[[case.assert]]
type = "icontains"
value = "x"
[[case.assert]]
type = "regex"
value = "[ab"
""") == (f"{tmp_path / 'suite.toml'}: case \"refund\", assert 2: regex \"[ab\" does not "
         "compile: unterminated character set at position 0")
    assert error(tmp_path, 'modles = ["m"]\n') == (
        f'{tmp_path / "suite.toml"}: unknown key "modles" (did you mean "models"?)')
    assert error(tmp_path, 'models = ["m"]\n[[case]]\nprompt = "Hi {{name}}"\n') == (
        f'{tmp_path / "suite.toml"}: case 1: prompt uses {{{{name}}}} but the case has no '
        f'var "name" (its vars: none)')
    assert error(tmp_path, 'models = ["m"]\n') == (
        f'{tmp_path / "suite.toml"}: no cases: add [[case]] tables or a "cases" file')


@pytest.mark.parametrize(("text", "expected"), [
    ('models = ["m"]\nrepeat = \n', "suite.toml: line 2, column 10: Invalid value"),
    ('models = []\n[[case]]\nprompt = "p"\n', 'models: must be a non-empty list'),
    ('models = ["a", "a"]\n[[case]]\nprompt = "p"\n', 'models: "a" is listed twice'),
    ('models = ["a b"]\n[[case]]\nprompt = "p"\n', 'models: entry 1: must be "[TARGET:]MODEL"'),
    ('[[case]]\nprompt = "p"\n', "models: missing"),
    ('repeat = 0\n' + MINIMAL, "repeat: must be a whole number ≥ 1, not 0"),
    ('concurrency = "8"\n' + MINIMAL, 'concurrency: must be a whole number ≥ 1, not "8"'),
    ('repeat = 1.5\n' + MINIMAL, "repeat: must be a whole number ≥ 1, not 1.5"),
    ('max_cost = -0.5\n' + MINIMAL, "max_cost: must be a number of USD ≥ 0, not -0.5"),
    ('max_tokens = 0\n' + MINIMAL, "max_tokens: must be a whole number from 1 to 1000000, not 0"),
    ('temperature = "hot"\n' + MINIMAL, 'temperature: must be a number from 0 to 2, not "hot"'),
    ('temperature = 9\n' + MINIMAL, "temperature: must be a number from 0 to 2, not 9"),
    ('temperature = inf\n' + MINIMAL, "temperature: infinity is not a finite number"),
    ('temperature = nan\n' + MINIMAL, "temperature: nan is not a finite number"),
    ('system = 3\n' + MINIMAL, "system: must be text, not a number"),
    ('endpoint = "openapi"\n' + MINIMAL,
     'endpoint: must be one of openai, anthropic, playground, not "openapi" '
     '(did you mean "openai"?)'),
    ('prompt = "a"\nprompts = ["b"]\n' + MINIMAL, 'give "prompt" or "prompts", not both'),
    ('prompts = []\n' + MINIMAL, "prompts: must be a non-empty list of texts"),
    ('cases = "c.txt"\n' + MINIMAL, 'cases: "c.txt": a cases file is .jsonl or .csv'),
    ('cases = "none.jsonl"\n' + MINIMAL, "none.jsonl: no such file"),
    ('models = ["m"]\n[[case]]\nvars = { a = "1" }\n',
     'case 1: no prompt: give the case a prompt, or the suite a "prompt" or "prompts"'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\nthreshold = 2\n',
     "case 1: threshold: must be a number from 0 to 1"),
    ('models = ["m"]\n[[case]]\nprompt = "p"\nvars = { a = [1] }\n',
     'case 1: vars: "a" must be text or a number, not a list'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\nasert = []\n',
     'case 1: unknown key "asert" (did you mean "assert"?)'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "icontain"\nvalue = "x"\n',
     'case 1, assert 1: unknown assertion type "icontain" (did you mean "icontains"?)'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\nvalue = "x"\n',
     'case 1, assert 1: "type" is missing'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "icontains"\n'
     'valeu = "x"\n', 'case 1, assert 1: unknown key "valeu" (did you mean "value"?)'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "contains"\n',
     "case 1, assert 1: contains needs a value"),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "latency"\n',
     "case 1, assert 1: latency needs a threshold (ms)"),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "contains"\n'
     'value = "x"\nweight = -1\n', "case 1, assert 1: weight: must be a number ≥ 0, not -1"),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "factuality"\n'
     'value = "x"\n', 'case 1, assert 1: assertion type "factuality" is not supported'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "llm-rubric"\n',
     "case 1, assert 1: llm-rubric needs a rubric: a non-empty text value"),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case.assert]]\ntype = "llm-rubric"\n'
     'value = "polite"\nthreshold = 2\n',
     "case 1, assert 1: llm-rubric threshold must be a score from 0 to 1 (got 2.0)"),
    ('models = ["m"]\njudge = "a judge"\n[[case]]\nprompt = "p"\n',
     'judge: entry 1: must be "[TARGET:]MODEL" without spaces'),
    ('models = ["m"]\npairwise = "yes"\n[[case]]\nprompt = "p"\n',
     'pairwise: must be true or false, not "yes"'),
    ('models = ["m"]\njudge_concurrency = 0\n[[case]]\nprompt = "p"\n',
     "judge_concurrency: must be a whole number ≥ 1, not 0"),
    ('models = ["m"]\njudge_prompt = "none.txt"\n[[case]]\nprompt = "p"\n',
     "none.txt"),
    ('models = ["m"]\njuge = "j"\n[[case]]\nprompt = "p"\n',
     'unknown key "juge" (did you mean "judge"?)'),
    ('models = ["m"]\n[[case]]\nprompt = "{{ x | upper }}"\nvars = { x = "a" }\n',
     'case 1: prompt: Nunjucks filter "upper" in "{{ x | upper }}" is not supported'),
    ('models = ["m"]\n[[case]]\nprompt = "{% if x %}y{% endif %}"\n',
     'case 1: prompt: template tag "{% if x %}" is not supported'),
    ('models = ["m"]\n[[case]]\nprompt = "{{ a.b }}"\n',
     'case 1: prompt: template expression "{{ a.b }}" is not supported'),
    ('models = ["m"]\n[[case]]\nprompt = "p"\nvars = { x = "[" }\n[[case.assert]]\n'
     'type = "regex"\nvalue = "{{x}}"\n', 'case 1, assert 1: regex "[" does not compile'),
    ('models = ["m"]\n[[case]]\nid = "a"\nprompt = "p"\n[[case]]\nid = "a"\nprompt = "q"\n',
     'case "a": id "a" is also the id of '),
    ('models = ["m"]\n[[case]]\nprompt = "p"\n[[case]]\nid = "1"\nprompt = "q"\n',
     'case "1": id "1" is also the id of '),
    (MINIMAL + '[simulate]\n"other" = "rate_limit"\n',
     'simulate: "other" is not one of the suite\'s models'),
    (MINIMAL + '[simulate]\n"anoman-lite" = "slow_thinkin"\n',
     'simulate: "anoman-lite": "slow_thinkin" is not a scenario (did you mean "slow_thinking"?)'),
])
def test_a_bad_suite_is_one_line_naming_file_place_and_problem(
        tmp_path: Path, text: str, expected: str) -> None:
    message = error(tmp_path, text)
    assert message.startswith(str(tmp_path)), message
    assert expected in message, message


def test_a_duplicate_id_names_both_places(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"id": "refund", "prompt": "p"}\n', encoding="utf-8")
    message = error(tmp_path, 'models = ["m"]\ncases = "c.jsonl"\n'
                              '[[case]]\nid = "refund"\nprompt = "q"\n')
    assert message == (f'{tmp_path / "c.jsonl"}: line 1: id "refund" is also the id of '
                       f'{tmp_path / "suite.toml"}: case "refund"')


def test_a_variant_id_clash_is_refused(tmp_path: Path) -> None:
    message = error(tmp_path, 'models = ["m"]\nprompts = ["a", "b"]\n[[case]]\nid = "x"\n'
                              '[[case]]\nid = "x/2"\nprompt = "c"\n')
    assert 'case "x/2": id "x/2" is also the id of' in message


@pytest.mark.parametrize(("content", "expected"), [
    ('{"prompt": "a"}\n{"prompt": "b",}\n', "c.jsonl: line 2: not JSON: "),
    ('\n\n["a"]\n', "c.jsonl: line 3: must be a JSON object, not a list"),
    ('{"id": "x"}\n', 'c.jsonl: line 1: needs "prompt" or "vars"'),
    ('{"prompt": "a", "asserts": []}\n',
     'c.jsonl: line 1: unknown key "asserts" (did you mean "assert"?)'),
    ('{"prompt": "a", "assert": [{"type": "regex", "value": "("}]}\n',
     'c.jsonl: line 1, assert 1: regex "(" does not compile'),
])
def test_a_bad_jsonl_line_is_named_by_its_number(
        tmp_path: Path, content: str, expected: str) -> None:
    message = error(tmp_path, 'models = ["m"]\ncases = "c.jsonl"\n', c_jsonl=content)
    assert message.startswith(str(tmp_path / "c.jsonl")), message
    assert expected in message, message


@pytest.mark.parametrize(("content", "expected"), [
    ("", "c.csv: empty: a header row is needed"),
    ("a,a\n1,2\n", 'c.csv: line 1: column "a" appears twice'),
    ("a,__weird\n1,2\n", 'c.csv: line 1: column "__weird" is not supported'),
    ("a,__expected\n1,2\n3\n", "c.csv: line 3: 1 cells for 2 columns"),
    ("a,__expected\n1,javascript:output.length > 3\n",
     'c.csv: line 2, column "__expected": assertion type "javascript" is not supported'),
    ("a,__expected\n1,regex:[x\n", 'c.csv: line 2, column "__expected": regex "[x" does not'),
    ("a,__threshold\n1,most\n", 'c.csv: line 2, column "__threshold": threshold: must be'),
])
def test_a_bad_csv_row_is_named_by_its_line(tmp_path: Path, content: str, expected: str) -> None:
    message = error(tmp_path, 'models = ["m"]\nprompt = "{{a}}"\ncases = "c.csv"\n',
                    c_csv=content)
    assert expected in message, message


def test_a_missing_var_from_a_csv_names_the_row(tmp_path: Path) -> None:
    message = error(tmp_path, 'models = ["m"]\nprompt = "{{a}} {{b}}"\ncases = "c.csv"\n',
                    c_csv="a\n1\n")
    assert message == (f'{tmp_path / "c.csv"}: line 2: prompt uses {{{{b}}}} but the case '
                       f'has no var "b" (its vars: a)')


def test_not_a_suite_file_and_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"a suite is a \.toml file"):
        load_suite(tmp_path / "suite.json")
    bad = tmp_path / "latin.toml"
    bad.write_bytes(b'models = ["caf\xe9"]\n')
    with pytest.raises(SuiteError, match=r"latin\.toml: not UTF-8 text"):
        load_suite(bad)
    with pytest.raises(SuiteError, match=r"missing\.toml: no such file"):
        load_suite(tmp_path / "missing.toml")


def test_skip_unsupported_leaves_out_a_promptfoo_only_assertion(tmp_path: Path) -> None:
    path = suite_file(tmp_path, 'models = ["m"]\n[[case]]\nprompt = "p"\n'
                                '[[case.assert]]\ntype = "similar"\nvalue = "x"\n'
                                '[[case.assert]]\ntype = "contains"\nvalue = "p"\n')
    suite = load_suite(path, skip_unsupported=True)
    assert suite.cases[0].asserts == (Assertion(type="contains", value="p"),)
    assert suite.skipped == (
        f'{path}: case 1, assert 1: assertion type "similar" is not supported',)


def test_a_judged_suite_keeps_its_judge_settings_and_prompt_files(tmp_path: Path) -> None:
    (tmp_path / "rubric.txt").write_text("Grade {{answer}} against {{rubric}}.\n",
                                         encoding="utf-8")
    (tmp_path / "pair.txt").write_text("Which is better, {{answer_a}} or {{answer_b}}?\n",
                                       encoding="utf-8")
    suite = load_suite(suite_file(tmp_path, """
models = ["claude-sonnet-4-6", "anoman-lite"]
judge = "local:anoman-judge"
judge_concurrency = 16
judge_prompt = "rubric.txt"
pairwise = true
pairwise_prompt = "pair.txt"
[[case]]
prompt = "How do I descale a {{thing}}?"
vars = { thing = "kettle" }
[[case.assert]]
type = "not-llm-rubric"
value = "Is rude about the {{thing}}"
threshold = 0.7
"""))
    assert (suite.judge, suite.judge_concurrency, suite.pairwise) == (
        "local:anoman-judge", 16, True)
    assert suite.judge_prompt == "Grade {{answer}} against {{rubric}}.\n"
    assert suite.pairwise_prompt == "Which is better, {{answer_a}} or {{answer_b}}?\n"
    (rubric,) = suite.cases[0].asserts
    # The rubric is a template filled from the case's vars, as every assertion value.
    assert (rubric.type, rubric.negate, rubric.value, rubric.threshold) == (
        "llm-rubric", True, "Is rude about the kettle", 0.7)
    assert suite.rubrics
    # Stored whole with the run, so a resume judges as the run began.
    assert Suite.from_json(suite.to_json()) == suite


def test_a_judge_prompt_without_the_answer_is_refused(tmp_path: Path) -> None:
    message = error(tmp_path, MINIMAL.replace("[[case]]", 'judge_prompt = "r.txt"\n[[case]]'),
                    r_txt="Grade the rubric {{rubric}}.\n")
    assert "judge_prompt" in message and "r.txt" in message and "{{answer}}" in message
