"""Simulated answers: the prompt's kind and language, each model's style, determinism."""

from __future__ import annotations

import re

import pytest

from anoman_tui.gateway.catalogue import ANSWER_MODELS, CATALOGUE
from anoman_tui.gateway.composer import classify, compose_answer, detect_language, read_prompt

PROMPTS = {
    ("explain", "en"): "Explain TCP slow start",
    ("explain", "id"): "Jelaskan apa itu connection pooling di Postgres",
    ("steps", "en"): "How do I keep my Kubernetes cluster stable?",
    ("steps", "id"): "Bagaimana cara menjaga klaster Kubernetes tetap stabil?",
    ("compare", "en"): "Postgres vs MySQL for a small analytics app",
    ("compare", "id"): "Bandingkan Go dan Rust untuk layanan web",
    ("code", "en"): "Write a python function that parses log lines",
    ("code", "id"): "Tolong buatkan fungsi python untuk membaca file log",
    ("poem", "en"): "Write a haiku about autumn rain",
    ("poem", "id"): "Tulis haiku tentang hujan di Jakarta",
    ("greeting", "en"): "hello there",
    ("greeting", "id"): "halo, apa kabar?",
    ("thanks", "en"): "thanks a lot!",
    ("thanks", "id"): "terima kasih banyak",
    ("yesno", "en"): "Is Redis good for session storage?",
    ("yesno", "id"): "Apakah Redis cocok untuk menyimpan sesi?",
}

_EN_FUNCTION = {"the", "is", "and", "of", "to", "a", "for", "with", "what", "how", "you",
                "your", "it", "when", "that", "this", "are", "in", "on"}
_ID_FUNCTION = {"yang", "dan", "untuk", "dengan", "di", "ini", "itu", "adalah", "tidak", "apa",
                "anda", "jika", "saya", "lebih", "dalam", "ada", "sebelum", "agar", "bisa"}


def _prose(text: str) -> str:
    """The answer without code fences: code is English in any language."""
    return re.sub(r"```.*?```", " ", text, flags=re.S)


def _counts(text: str) -> tuple[int, int]:
    words = re.findall(r"[a-z]+", _prose(text).lower())
    return sum(w in _EN_FUNCTION for w in words), sum(w in _ID_FUNCTION for w in words)


@pytest.mark.parametrize(("kind", "lang"), sorted(PROMPTS))
def test_prompt_kind_and_language_are_read(kind: str, lang: str) -> None:
    prompt = PROMPTS[(kind, lang)]
    assert classify(prompt) == kind
    assert detect_language(prompt) == lang


@pytest.mark.parametrize("name", sorted(ANSWER_MODELS))  # the judge: test_judge_model.py
@pytest.mark.parametrize(("kind", "lang"), sorted(PROMPTS))
def test_answer_has_the_kind_and_language_of_the_prompt(name: str, kind: str, lang: str) -> None:
    model = CATALOGUE[name]
    prompt = PROMPTS[(kind, lang)]
    answer = compose_answer(model, prompt, seed=3)
    assert answer == compose_answer(model, prompt, seed=3)  # deterministic
    text = answer.text
    assert text.strip()
    english, indonesian = _counts(text)
    if kind in ("poem", "greeting", "thanks"):  # a few words may hold no function word
        assert (english if lang == "id" else indonesian) == 0, text
    elif lang == "id":
        assert indonesian > english, text
    else:
        assert english > indonesian, text
    if model.thinking:
        r_en, r_id = _counts(answer.reasoning)
        assert (r_id > r_en) if lang == "id" else (r_en > r_id), answer.reasoning
        # One article, the right one: "an explanation request", "a how-to request".
        assert not re.search(r"\ba an\b|\ban a\b|\ba a\b|\ba (?=[aeiou])",
                             answer.reasoning), answer.reasoning
    words = len(re.findall(r"\w+", _prose(text)))
    if kind == "poem":
        assert "```" not in text and "|---" not in text
        lines = [ln for ln in text.splitlines()
                 if ln.strip() and not ln.startswith(("#", "*"))]
        assert len(lines) == 3, text  # a haiku: three lines, kept apart by hard breaks
        assert all(ln.endswith("  ") for ln in lines[:2])
        assert ("autumn rain" if lang == "en" else "hujan") in text.lower()
    elif kind in ("greeting", "thanks"):
        assert words <= 40 and "```" not in text and "#" not in text
    elif kind == "yesno":
        assert words <= 120 and "```" not in text
        first = text.lstrip("*").lower()
        assert first.startswith(("yes", "usually", "generally", "not", "in most", "ya", "umumnya",
                                 "biasanya", "tidak", "dalam"))
    elif kind == "code":
        assert "```" in text
        if model.style == "code":
            assert text.index("```") < 200  # code first
    elif kind == "compare":
        a, b = ("Postgres", "MySQL") if lang == "en" else ("Go", "Rust")
        assert a in text and b in text
    if kind not in ("greeting", "thanks", "poem"):
        reading = read_prompt(prompt)
        assert reading.main.lower() in text.lower()
        if model.style in ("balanced", "thinking", "verbose") and kind != "yesno":
            # The heading restates the request in the user's words.
            assert re.search(rf"^#+ {re.escape(reading.title)}\b", text, re.M), text


def test_topic_words_are_the_prompts_subject() -> None:
    # The user's "my" is the answer's "your"; the articles stay.
    kubernetes = read_prompt("How do I keep my Kubernetes cluster stable?")
    assert kubernetes.main == "your Kubernetes cluster"
    assert kubernetes.title == "How to keep your Kubernetes cluster stable"
    assert read_prompt("Explain TCP slow start").main == "TCP slow start"
    assert read_prompt("what is the size of the universe").main == "the size of the universe"
    pooling = read_prompt("compare connection pooling strategies for postgres under bursty load")
    assert pooling.main == "connection pooling strategies"
    assert pooling.context == "postgres, bursty load"
    assert read_prompt("Postgres vs MySQL for a small analytics app").main == "Postgres and MySQL"


def test_no_canned_phrases() -> None:
    texts = [compose_answer(m, p, s).text for m in CATALOGUE.values()
             for p in PROMPTS.values() for s in range(3)]
    joined = "\n".join(texts)
    assert "is a good name to start with" not in joined
    assert "practical overview of" not in joined
    assert "overview of haiku" not in joined.lower()


def test_model_personalities_are_kept_per_language() -> None:
    for lang in ("en", "id"):
        prompt = PROMPTS[("explain", lang)]
        terse = compose_answer(CATALOGUE["anoman-lite"], prompt).text
        plain = compose_answer(CATALOGUE["llama-3.3-70b"], prompt).text
        verbose = compose_answer(CATALOGUE["gpt-5-mini"], prompt).text
        balanced = compose_answer(CATALOGUE["claude-sonnet-4-6"], prompt).text
        code = compose_answer(CATALOGUE["qwen3-coder"], prompt).text
        assert len(terse) < len(plain) < len(verbose)
        assert "|---" not in plain and "```" not in plain and "#" not in plain
        assert re.search(r"^# ", verbose, re.M) and re.search(r"^> ", verbose, re.M)
        assert re.search(r"^## ", balanced, re.M) and "|---" in balanced
        assert "```" in code
        thinking = compose_answer(CATALOGUE["deepseek-r1"], prompt)
        assert thinking.reasoning and CATALOGUE["deepseek-r1"].thinking
