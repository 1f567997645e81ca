"""The topic a simulated answer restates keeps the user's own words and grammar."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoman_tui.gateway.catalogue import ANSWER_MODELS, CATALOGUE
from anoman_tui.gateway.composer import compose_answer, read_prompt
from anoman_tui.gateway.topic import LIMIT, read_topic, shorten

# prompt -> (heading, the noun phrase the sentences restate, context)
TABLE: dict[str, tuple[str, str, str]] = {
    "Write a function that checks whether a string is a palindrome": (
        "A function that checks whether a string is a palindrome",
        "a function that checks whether a string is a palindrome", ""),
    "checks whether a string is a palindrome": (
        "Checks whether a string is a palindrome",
        "checks whether a string is a palindrome", ""),
    "Explain TCP slow start": ("TCP slow start", "TCP slow start", ""),
    "what is the size of the universe": (
        "The size of the universe", "the size of the universe", ""),
    "What is a B-tree for?": ("A B-tree", "a B-tree", ""),
    "Explain what a mutex protects": ("What a mutex protects", "what a mutex protects", ""),
    "Can you please explain why the sky is blue?": (
        "Why the sky is blue", "why the sky is blue", ""),
    "How do I keep my Kubernetes cluster stable?": (
        "How to keep your Kubernetes cluster stable", "your Kubernetes cluster", ""),
    "How should I size a Postgres connection pool?": (
        "How to size a Postgres connection pool", "a Postgres connection pool", ""),
    "When should I use a queue?": ("When to use a queue", "a queue", ""),
    "Summarise the incident report for the on-call team": (
        "The incident report for the on-call team", "the incident report",
        "the on-call team"),
    "compare connection pooling strategies for postgres under bursty load": (
        "Connection pooling strategies for postgres under bursty load",
        "connection pooling strategies", "postgres, bursty load"),
    "Write a Python function that retries with backoff": (
        "A Python function that retries with backoff",
        "a Python function that retries with backoff", ""),
    "Write a haiku about autumn rain": ("A haiku about autumn rain", "autumn rain", ""),
    "Hi! Can you explain list comprehensions in Python?": (
        "List comprehensions in Python", "list comprehensions", "Python"),
    "Explain C# async/await in Node.js": ("C# async/await in Node.js", "C# async/await",
                                         "Node.js"),
    "And how do I scale it?": ("How to scale it", "it", ""),
    "Is Redis good for session storage?": (
        "Is Redis good for session storage", "Redis", "session storage"),
    "Jelaskan apa itu rekursi dalam pemrograman": (
        "Rekursi dalam pemrograman", "rekursi", "pemrograman"),
    "Tolong buatkan fungsi yang memeriksa apakah sebuah string adalah palindrom": (
        "Fungsi yang memeriksa apakah sebuah string adalah palindrom",
        "fungsi yang memeriksa apakah sebuah string adalah palindrom", ""),
    "Jelaskan apa itu connection pooling di Postgres": (
        "Connection pooling di Postgres", "connection pooling", "Postgres"),
    "Bagaimana cara menjaga klaster Kubernetes tetap stabil?": (
        "Cara menjaga klaster Kubernetes tetap stabil", "klaster Kubernetes", ""),
    "Tolong buatkan fungsi python untuk membaca file log": (
        "Fungsi python untuk membaca file log", "fungsi python", "membaca file log"),
    "Bisa tolong jelaskan bagaimana cara kerja garbage collector di Java?": (
        "Cara kerja garbage collector di Java", "garbage collector", "Java"),
    "Apakah Redis cocok untuk menyimpan sesi?": (
        "Apakah Redis cocok untuk menyimpan sesi", "Redis", "menyimpan sesi"),
    "Dan bagaimana dengan Redis?": ("Redis", "Redis", ""),
    "Tulis puisi tentang laut yang tenang": (
        "Puisi tentang laut yang tenang", "laut yang tenang", ""),
}

# The answer speaks to the user: their "my" is its "your".
_SAME_PERSON = [{"my", "our", "your"}, {"saya", "aku", "kami", "anda"}]
# A how-to heading's opening is the only wording of the answer's own.
_PREFIXES = ("How to ", "When to ", "Where to ", "Cara ")
# Function words that cannot end a topic.
_DANGLING = {"a", "an", "the", "of", "to", "for", "in", "on", "with", "and", "or", "that",
             "is", "are", "yang", "di", "ke", "dari", "untuk", "dengan", "dan", "atau",
             "adalah", "sebuah"}


def _words(text: str) -> list[str]:
    return [w.rstrip(".'-/").lower() for w in re.findall(r"[^\W_][\w'+#/.-]*", text)]


def _same(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in _SAME_PERSON)


def _run_in(kept: list[str], prompt: list[str]) -> bool:
    """Whether ``kept`` is one contiguous run of ``prompt``'s words."""
    n = len(kept)
    return any(all(_same(k, p) for k, p in zip(kept, prompt[i:i + n], strict=True))
               for i in range(len(prompt) - n + 1))


def _in_order(kept: list[str], prompt: list[str]) -> bool:
    """Whether every word of ``kept`` appears in ``prompt``, in the same order."""
    it = iter(prompt)
    return all(any(_same(k, p) for p in it) for k in kept)


def _without_prefix(title: str) -> str:
    for prefix in _PREFIXES:
        if title.startswith(prefix):
            return title[len(prefix):]
    return title


@pytest.mark.parametrize("prompt", list(TABLE))
def test_topic_of_each_prompt(prompt: str) -> None:
    topic = read_topic(prompt)
    assert (topic.title, topic.main, topic.context) == TABLE[prompt]


@pytest.mark.parametrize("prompt", list(TABLE))
def test_no_word_is_dropped_from_the_middle(prompt: str) -> None:
    topic = read_topic(prompt)
    words = _words(prompt)
    for kept in (_without_prefix(topic.title), topic.main,
                 *(c for c in topic.context.split(", ") if c)):
        assert _in_order(_words(kept), words), (kept, prompt)
        assert _run_in(_words(kept), words), (kept, prompt)


def test_the_palindrome_heading_reads_as_the_user_wrote_it() -> None:
    for prompt, heading in (
        ("Write a function that checks whether a string is a palindrome",
         "## A function that checks whether a string is a palindrome"),
        ("Tolong buatkan fungsi yang memeriksa apakah sebuah string adalah palindrom",
         "## Fungsi yang memeriksa apakah sebuah string adalah palindrom"),
    ):
        text = compose_answer(CATALOGUE["claude-sonnet-4-6"], prompt).text
        assert text.startswith(heading + "\n"), text
    texts = [compose_answer(model, prompt, seed).text
             for model in CATALOGUE.values() for prompt in TABLE for seed in range(2)]
    joined = "\n".join(texts).lower()
    assert "checks whether string palindrome" not in joined
    assert "fungsi memeriksa string palindrom" not in joined


def test_the_verbose_heading_restates_the_request() -> None:
    prompt = "How do I keep my Kubernetes cluster stable?"
    text = compose_answer(CATALOGUE["gpt-5-mini"], prompt).text
    assert text.startswith("# How to keep your Kubernetes cluster stable: a detailed guide\n")


def test_a_long_topic_is_cut_at_a_word_boundary() -> None:
    prompt = ("Write a function that takes a list of integers and returns the sum of all even "
              "numbers in the list")
    topic = read_topic(prompt)
    assert topic.title == "A function that takes a list of integers and returns the sum"
    assert topic.main == "a function that takes a list of integers and returns the sum"
    # Cut at 60 characters, "... in a list of" would end on "of": the cut goes back.
    text = "a function that checks whether a value appears in a list of many numbers"
    assert shorten(text, 60) == "a function that checks whether a value appears in a list"
    assert shorten("fungsi yang memeriksa apakah sebuah string yang panjang di dalam berkas",
                   48) == "fungsi yang memeriksa apakah sebuah string"
    assert shorten("short enough", 60) == "short enough"
    assert shorten("Supercalifragilisticexpialidocious words", 10) == (
        "Supercalifragilisticexpialidocious")  # never cut inside a word


_VOCABULARY = [
    "explain", "write", "please", "how", "do", "I", "what", "is", "a", "the", "my", "of",
    "function", "that", "checks", "whether", "string", "palindrome", "for", "in", "and",
    "Postgres", "cluster", "keep", "stable", "haiku", "about", "rain", "to", "with",
    "tolong", "jelaskan", "apa", "itu", "yang", "sebuah", "adalah", "di", "untuk", "dalam",
    "rekursi", "fungsi", "cara", "saya", "C#", "B-tree", "Node.js", "3.12", ",", "?", ".",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=30))
def test_any_prompt_keeps_contiguous_words(parts: list[str]) -> None:
    prompt = " ".join(parts)
    topic = read_topic(prompt)
    assert topic == read_topic(prompt)  # deterministic
    words = _words(prompt)
    for kept in (_without_prefix(topic.title), topic.main,
                 *(c for c in topic.context.split(", ") if c)):
        kept_words = _words(kept)
        assert _run_in(kept_words, words), (kept, prompt)
        assert len(kept) <= LIMIT + len("How to ")
        if len(kept_words) > 1 and kept is not topic.title:
            assert kept_words[-1] not in _DANGLING, (kept, prompt)


@pytest.mark.parametrize("name", sorted(ANSWER_MODELS))  # the judge: test_judge_model.py
def test_answers_stay_deterministic(name: str) -> None:
    model = CATALOGUE[name]
    for prompt in TABLE:
        assert read_prompt(prompt) == read_prompt(prompt)
        first = compose_answer(model, prompt, seed=5)
        assert first == compose_answer(model, prompt, seed=5)
        reading = read_prompt(prompt)
        if reading.kind not in ("greeting", "thanks"):
            assert reading.main.lower() in (first.text + first.reasoning).lower(), prompt
