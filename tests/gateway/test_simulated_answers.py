"""The simulated models over real HTTP: answers that vary as a real model's do, and that
read like answers to what was asked (follow-ups, instructions, code in the language asked).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from anoman_tui.gateway.catalogue import CATALOGUE
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.gateway.helpers import auth, fast_config, prompt
from tests.helpers import LocalGateways, loopback_client

ANSWER_MODELS = [name for name, model in CATALOGUE.items() if model.role != "judge"]
NO_CACHE = {"Cache-Control": "no-cache"}


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    """Models far faster than life: these tests read answers, not their pace."""
    return make_module_gateway(fast_config(time_scale=0.001))


def answer(gw: EmbeddedGateway, model: str, messages: list[dict[str, str]],
           headers: dict[str, str] | None = None, **params: Any) -> str:
    """The text of ``model``'s answer, streamed over loopback (reasoning left out)."""
    body = {"model": model, "messages": messages, "stream": True, **params}
    with loopback_client(gw.base_url, timeout=30) as client:
        response = client.post("/v1/chat/completions", json=body,
                               headers={**auth(gw), **(headers or {})})
    assert response.status_code == 200, response.text
    text = []
    for line in response.text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        data = json.loads(line[6:])
        for choice in data.get("choices", []):
            text.append(choice.get("delta", {}).get("content") or "")
    return "".join(text)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


# -- variation ----------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["anoman-lite", "claude-sonnet-4-6", "llama-3.3-70b"])
def test_a_repeated_prompt_varies_above_temperature_0(gateway: EmbeddedGateway,
                                                      model: str) -> None:
    """The same prompt, the cache bypassed: at 0.7, and with no temperature (the APIs'
    default, 1.0), the answers differ; at 0 or with a seed they are the same."""
    question = user(prompt("Explain connection pooling in Postgres"))
    for params in ({"temperature": 0.7}, {}):
        texts = {answer(gateway, model, question, NO_CACHE, **params) for _ in range(3)}
        assert len(texts) > 1, params  # three draws all alike would give the model away
    for params in ({"temperature": 0}, {"temperature": 0.9, "seed": 7}, {"seed": 7}):
        texts = {answer(gateway, model, question, NO_CACHE, **params) for _ in range(2)}
        assert len(texts) == 1, params
    assert answer(gateway, model, question, NO_CACHE, seed=7) != answer(
        gateway, model, question, NO_CACHE, seed=8)


def test_the_cache_still_answers_a_repeat_that_does_not_bypass_it(
        gateway: EmbeddedGateway) -> None:
    question = user(prompt("Explain DNS caching"))
    first = answer(gateway, "anoman-lite", question, temperature=0.7)
    with loopback_client(gateway.base_url, timeout=30) as client:
        hit = client.post("/v1/chat/completions", headers=auth(gateway), json={
            "model": "anoman-lite", "messages": question, "stream": True, "temperature": 0.7})
    assert hit.json()["_anoman"]["cache"]["hit"] is True
    assert hit.json()["choices"][0]["message"]["content"] == first


# -- follow-ups ---------------------------------------------------------------------------

# Verbs a sentence opening with "It" may go on with; "It recursive instead of iterative
# is easiest ..." (the follow-up's words made a subject) is not a sentence.
_IT_VERBS = frozenset("""
    is was has had does did can could will would should may might must keeps works
    depends helps makes gives takes stays needs matters changes means
""".split())  # noqa: SIM905 - a word list reads better as text


def _first_prose_sentence(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return sentences(lines[0])[0]


def _not_sentences(text: str) -> list[str]:
    """Sentences (or bullet items) opening with "It" and no verb after it."""
    starts = re.findall(r"(?:^|[.!?]\s+|\n[-*\d.\s]*|\*\*:\s)It (\w+)", text)
    return [word for word in starts if word.lower() not in _IT_VERBS]


@pytest.mark.parametrize("model", ANSWER_MODELS)
def test_a_follow_up_continues_the_conversations_topic(gateway: EmbeddedGateway,
                                                       model: str) -> None:
    conversations = [
        ("Write a Python function that checks whether a string is a palindrome",
         "Make it recursive instead of iterative", "palindrome"),
        ("Explain TCP slow start", "Why does it matter on mobile networks?", "TCP slow start"),
        ("Jelaskan apa itu connection pooling di Postgres", "Kenapa itu penting?",
         "connection pooling"),
    ]
    for first, follow_up, term in conversations:
        earlier = answer(gateway, model, user(first), temperature=0)
        messages = [*user(first), {"role": "assistant", "content": earlier}, *user(follow_up)]
        text = answer(gateway, model, messages, NO_CACHE)
        assert term.lower() in _first_prose_sentence(text).lower(), (follow_up, text)
        assert not _not_sentences(text), (follow_up, text)
        assert "it recursive" not in text.lower() and "itu penting" not in text.lower()
        if "recursive" in follow_up:  # the same task's code, now calling itself
            code = "".join(re.findall(r"```python\n(.*?)```", text, re.S))
            assert code.count("is_palindrome(") >= 3, text  # def, its own call, the example


def test_the_old_follow_up_fails_the_grammar_check() -> None:
    """The check above would have caught the answer this used to get."""
    old = ("It recursive instead of iterative is easiest to understand through the problem "
           "it solves.\n\n- **Budget the cost**: It recursive instead of iterative has a price.")
    assert _not_sentences(old) == ["recursive", "recursive"]
    assert not _not_sentences("It works. Then it is done.\n- It depends on the load.")


# -- instructions -------------------------------------------------------------------------


@pytest.mark.parametrize("model", ANSWER_MODELS)
def test_instructions_on_the_form_are_followed(gateway: EmbeddedGateway, model: str) -> None:
    two = answer(gateway, model, user("Explain connection pooling in two sentences."))
    assert len(sentences(two)) == 2 and "\n" not in two.strip(), two
    assert "connection pooling" in two.lower()

    system = [{"role": "system", "content": "Answer in exactly one sentence."},
              *user("What is a mutex?")]
    one = answer(gateway, model, system)
    assert len(sentences(one)) == 1 and "mutex" in one, one

    listed = answer(gateway, model, user("List the benefits of unit tests as a bulleted list"))
    lines = [ln for ln in listed.splitlines() if ln.strip()]
    assert len(lines) >= 3 and all(ln.startswith("- ") for ln in lines), listed
    assert "unit tests" in listed

    as_json = answer(gateway, model, user("What is a B-tree? Answer in JSON."))
    parsed = json.loads(as_json)
    assert isinstance(parsed, dict) and "B-tree" in parsed["topic"], as_json

    system_json = [{"role": "system", "content": "Reply with only a JSON object."},
                   *user("What is the status of order A-1042?")]
    assert "A-1042" in json.dumps(json.loads(answer(gateway, model, system_json)))


# -- code ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ANSWER_MODELS)
def test_code_is_in_the_language_asked_and_about_the_task(gateway: EmbeddedGateway,
                                                          model: str) -> None:
    for language, fence in (("Rust", "rust"), ("Go", "go"), ("JavaScript", "javascript")):
        text = answer(gateway, model, user(
            f"Write a function in {language} that checks whether a string is a palindrome"))
        blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
        assert blocks and all(lang == fence for lang, _ in blocks), text
        assert all("palindrome" in code.lower() for _, code in blocks), text
        assert "with_retries" not in text
    text = answer(gateway, model, user("Write a Go function that parses a CSV line"))
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    assert blocks and all(lang == "go" and "csv" in code.lower() for lang, code in blocks), text
    python = answer(gateway, model, user("Write a Python function that computes a factorial"))
    assert "```python\n" in python and "def factorial" in python
