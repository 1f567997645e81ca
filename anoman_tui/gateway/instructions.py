"""What a prompt (or its system prompt) asks of an answer's form, for the simulated models.

``read_instructions(text)`` finds the explicit instructions the simulated models follow:
a number of sentences ("in two sentences", "dalam dua kalimat"), a bulleted or numbered
list ("as a bulleted list", "as bullet points"), JSON ("answer in JSON", "reply with only a
JSON object"), brevity ("be concise", "briefly") and the answer's language ("answer in
Indonesian", "jawab dalam bahasa Inggris"). ``without_instructions(text)`` is the prompt
with those phrases taken out, so the topic is read from what is left ("Explain TCP slow
start in two sentences" is about TCP slow start).

Imports only the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Lang = Literal["en", "id"]

_NUMBERS = {
    "one": 1, "a single": 1, "a": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "satu": 1, "dua": 2, "tiga": 3, "empat": 4,
    "lima": 5, "sebuah": 1,
}
_NUMBER = r"(one|two|three|four|five|a single|single|a|[1-5]|satu|dua|tiga|empat|lima|sebuah)"
_SENTENCES = [
    re.compile(rf"\b(?:in|using|with|within|as|to|dalam|hanya)\s+(?:exactly\s+|just\s+|only\s+|"
               rf"no more than\s+)?{_NUMBER}\s+(?:short\s+|brief\s+|singkat\s+)?"
               r"(?:sentences?|kalimat)(?:\s+(?:only|saja))?\b", re.I),
    # "a one-sentence summary": the noun stays, so the topic reads "a summary of ...".
    re.compile(rf"\b{_NUMBER}[- ](?:sentence|kalimat)\s+(?=(?:answer|summary|reply|"
               r"explanation|description|jawaban|ringkasan)\b)", re.I),
]
_BULLETS = re.compile(
    r"\b(?:(?:as|in|using|with|into|dalam bentuk|dalam|sebagai)\s+)?(?:a\s+)?(?:short\s+)?"
    r"(?:bullet(?:ed)?(?:[- ]point)?\s+(?:list|points?)|bullet(?:ed)?[- ]points?|bullets|"
    r"bulleted|daftar (?:poin|berpoin)|poin-poin)\b", re.I)
_NUMBERED = re.compile(
    r"\b(?:(?:as|in|using|dalam bentuk|sebagai)\s+)?(?:a\s+)?(?:numbered list|"
    r"daftar bernomor)\b", re.I)
_JSON = [
    re.compile(r"\b(?:answer|reply|respond|output|return|jawab|balas)\w*\b(?:\s+\w+){0,3}?\s+"
               r"(?:in|as|with|using|dalam|dengan)\s+(?:only\s+)?(?:a\s+|an\s+)?(?:valid\s+)?"
               r"JSON(?:\s+(?:object|format|only))?\b", re.I),
    re.compile(r"\b(?:as|in|into|dalam format|dalam bentuk|sebagai)\s+(?:a\s+|an\s+)?"
               r"(?:valid\s+)?JSON(?:\s+object)?(?=\s*(?:[.!?,;]|$|only\b))(?:\s+only)?", re.I),
    re.compile(r"\bJSON\s+(?:only|format)\b|\bonly\s+(?:a\s+|valid\s+)?JSON(?:\s+object)?\b",
               re.I),
]
_CONCISE = re.compile(
    r"\b(?:be\s+(?:brief|concise|short)|keep\s+it\s+(?:short|brief)|answer\s+briefly|"
    r"concisely|singkat\s+saja|jawab\s+singkat)\b", re.I)
_ANSWER_LANG = re.compile(
    r"\b(?:answer|reply|respond|write|jawab|balas|tulis)\w*(?:\s+\w+){0,3}?\s+"
    r"(?:in|dalam)\s+(?:bahasa\s+)?(english|indonesian|inggris|indonesia)\b", re.I)


@dataclass(frozen=True, slots=True)
class Instructions:
    """The form asked for; the defaults ask for nothing in particular."""

    sentences: int | None = None
    bullets: bool = False
    numbered: bool = False
    json: bool = False
    concise: bool = False
    lang: Lang | None = None

    @property
    def any_form(self) -> bool:
        """Whether the answer's shape is prescribed (rather than left to the model)."""
        return self.sentences is not None or self.bullets or self.numbered or self.json

    def merged(self, other: Instructions) -> Instructions:
        """These instructions, with ``other``'s (a later, more specific source) on top."""
        return Instructions(
            sentences=other.sentences if other.sentences is not None else self.sentences,
            bullets=other.bullets or (self.bullets and not other.any_form),
            numbered=other.numbered or (self.numbered and not other.any_form),
            json=other.json or (self.json and not other.any_form),
            concise=other.concise or self.concise,
            lang=other.lang or self.lang,
        )


def read_instructions(text: str) -> Instructions:
    sentences = None
    for pattern in _SENTENCES:
        match = pattern.search(text)
        if match:
            sentences = _NUMBERS[match.group(1).lower()]
            break
    lang: Lang | None = None
    language = _ANSWER_LANG.search(text)
    if language:
        lang = "id" if language.group(1).lower().startswith("indonesia") else "en"
    return Instructions(
        sentences=sentences,
        bullets=bool(_BULLETS.search(text)),
        numbered=bool(_NUMBERED.search(text)),
        json=any(p.search(text) for p in _JSON),
        concise=bool(_CONCISE.search(text)),
        lang=lang,
    )


def without_instructions(text: str) -> str:
    """``text`` without the phrases that ask for a form, so its topic can be read."""
    for pattern in (*_SENTENCES, _BULLETS, _NUMBERED, *_JSON, _CONCISE, _ANSWER_LANG):
        text = pattern.sub(" ", text)
    text = re.sub(r"[ \t]+([,.!?;:])", r"\1", text)
    text = re.sub(r"([.!?])[.!?]+", r"\1", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip().lstrip(".,;: ")
