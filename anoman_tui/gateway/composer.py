"""Deterministic answers for the simulated models.

``compose_answer(model, prompt, seed)`` writes a plausible Markdown answer
built around the prompt's own words, in the model's style (terse, verbose,
plain prose, code-first, balanced, or thinking with a reasoning preamble).
The same (model, prompt, seed) always gives the same text; the output
exercises the client's renderer with headings, lists, tables, code fences and
block quotes. Nothing here is lorem ipsum: the sentences are generic but
sensible advice about the words the prompt used.

Imports only the standard library and the catalogue / tokenizer modules.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from anoman_tui.gateway.catalogue import SimulatedModel, Style
from anoman_tui.gateway.tokenizer import tokenize

_STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself please tell give write explain
    make show want need like know let get use using used one two three short long brief
    describe list some many much thing things way ways really actually maybe something
    build create implement help compare summarize draft difference differences versus
    perbedaan antara apakah cara bagaimanakah contoh
    yang dan di ke dari ini itu untuk dengan pada adalah akan atau juga tidak bisa saya kamu
    anda kami kita mereka apa bagaimana mengapa kenapa tolong jelaskan buat buatkan tentang
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    """A planned completion: optional reasoning, then the answer text."""

    reasoning: str
    text: str


def keywords(prompt: str, limit: int = 4) -> list[str]:
    """The prompt's content words, in order of appearance, without duplicates."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(prompt):
        word = match.group(0).strip("'-")
        low = word.lower()
        if len(low) < 3 or low in _STOPWORDS or low in seen:
            continue
        seen[low] = None
        if len(seen) >= limit:
            break
    return list(seen)


def _rng(model: str, prompt: str, seed: int, salt: str = "") -> random.Random:
    digest = hashlib.sha256(f"{model}\x00{prompt}\x00{seed}\x00{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class _Words:
    """The prompt's keywords with safe fallbacks, for filling templates."""

    def __init__(self, kws: list[str]) -> None:
        fallback = ["the problem", "the constraints", "the result", "the trade-offs"]
        self.kws = kws
        padded = [*kws, *fallback[len(kws) :]] if len(kws) < 4 else kws
        self.k1, self.k2, self.k3, self.k4 = padded[:4]
        self.topic = " ".join(kws[:3]) if kws else "your question"
        self.title = self.topic[:1].upper() + self.topic[1:]
        ident = re.sub(r"\W+", "_", (kws[0] if kws else "item").lower()).strip("_") or "item"
        self.ident = ident if ident.isidentifier() else f"item_{ident}"
        self.cls = "".join(part.capitalize() for part in self.ident.split("_")) or "Item"

    def fill(self, template: str) -> str:
        return template.format(
            k1=self.k1, k2=self.k2, k3=self.k3, k4=self.k4, topic=self.topic,
            Topic=self.title, ident=self.ident, cls=self.cls,
        )


_INTROS = [
    "{Topic} comes down to a few decisions: what you need from {k1}, how {k2} fits in, "
    "and what it costs to change your mind later.",
    "Here is a practical overview of {topic}, focused on what matters once you actually "
    "work with {k1} day to day.",
    "Short version: start simple with {k1}, measure, and add complexity around {k2} only "
    "when the numbers ask for it.",
    "Good question. {Topic} is easier to reason about once you separate the parts that "
    "change often ({k2}) from the parts that should stay stable ({k1}).",
    "Most trouble with {topic} comes from unclear goals rather than from {k1} itself, so "
    "it pays to write down what success looks like first.",
]

_LABELS = [
    "Start small", "Measure first", "Make it observable", "Plan for failure",
    "Write it down", "Automate the routine", "Watch the edges", "Budget the cost",
    "Keep a baseline", "Review regularly",
]

_POINTS = [
    "pick one concrete use of {k1} and get it working end to end before generalising.",
    "record how {k2} behaves today so you can tell whether a change helped.",
    "log the inputs and outputs around {k1}; most surprises show up there first.",
    "decide in advance what happens when {k2} is slow, missing or wrong.",
    "a short note on why you chose this approach to {topic} saves hours later.",
    "script the repetitive steps around {k3} so they run the same way every time.",
    "empty input, very large input and unusual characters break {k1} more often than "
    "the happy path does.",
    "{k2} has a price in time, money or attention; estimate it before you commit.",
    "compare every new idea about {k3} against a simple version that already works.",
    "revisit the assumptions about {k1} once real usage data is in.",
]

_ASPECTS = [
    ("Scope", "what {w} must do on day one", "keeps the first version small"),
    ("Inputs", "where the data for {w} comes from", "bad input is the usual failure"),
    ("Cost", "time and money per use of {w}", "decides whether it scales"),
    ("Risk", "what breaks if {w} fails", "sets how much testing it needs"),
    ("Ownership", "who maintains {w}", "unowned parts decay quickly"),
    ("Feedback", "how you learn {w} works", "without it you are guessing"),
]

_CLOSINGS = [
    "If you share more about your constraints around {k1}, I can make this more specific.",
    "Start with the first point, measure, and adjust; {topic} rewards small, checked steps.",
    "None of this is exotic: consistent habits around {k1} and {k2} do most of the work.",
    "The table is a checklist: if a row has no answer yet, that is where to look next.",
]

_NOTES = [
    "> **Note:** numbers beat opinions. Keep a small benchmark for {k1} and rerun it after "
    "every change.",
    "> **Tip:** when two options for {k2} look equal, pick the one that is easier to undo.",
    "> **Caveat:** the right answer for {topic} depends on scale; what works for ten users "
    "may not work for ten thousand.",
]

_CODE = [
    '''```python
from collections import Counter


def summarize_{ident}(records: list[dict[str, str]]) -> dict[str, int]:
    """Count how often each {k2} value appears in the {k1} records."""
    counts = Counter(r.get("{k2}", "unknown") for r in records)
    return dict(counts.most_common())


if __name__ == "__main__":
    sample = [{{"{k2}": "a"}}, {{"{k2}": "b"}}, {{"{k2}": "a"}}]
    print(summarize_{ident}(sample))
```''',
    '''```python
from dataclasses import dataclass, field


@dataclass
class {cls}Check:
    """A tiny, testable check for {topic}."""

    threshold: float = 0.8
    seen: list[float] = field(default_factory=list)

    def record(self, value: float) -> bool:
        self.seen.append(value)
        return value >= self.threshold
```''',
    '''```bash
# Reproduce the {k1} baseline before changing {k2}
mkdir -p results
for run in 1 2 3; do
  ./measure --target "{k1}" --label "{k2}" >> results/baseline.txt
done
sort -n results/baseline.txt | head -n 1
```''',
    '''```typescript
type {cls}Result = {{ ok: boolean; detail: string }};

export function check{cls}(input: string): {cls}Result {{
  const trimmed = input.trim();
  if (trimmed.length === 0) return {{ ok: false, detail: "empty {k1}" }};
  return {{ ok: true, detail: `checked ${{trimmed.length}} chars of {k2}` }};
}}
```''',
]

_REASONING = [
    "The user is asking about {topic}. Let me think about what they actually need.",
    "First, {k1}: the core question seems to be how to approach it sensibly.",
    "They also mention {k2}, so the answer should connect the two.",
    "Wait, I should check whether {k3} changes the picture. It might, if scale matters.",
    "A good structure: a short overview, the key points, a comparison table, and an example.",
    "I should keep the example small and runnable rather than exhaustive.",
    "Let me also flag the main risk, so the answer is not only optimistic.",
    "Okay, that covers it. I will write the answer now.",
]


def _pick(rng: random.Random, items: list[str], n: int) -> list[str]:
    return rng.sample(items, min(n, len(items)))


def _bullets(rng: random.Random, w: _Words, n: int, numbered: bool = False) -> str:
    # Labels and points are parallel lists: each label titles its own point.
    picks = rng.sample(range(len(_POINTS)), min(n, len(_POINTS)))
    lines = []
    for i, index in enumerate(picks, start=1):
        label, point = _LABELS[index], _POINTS[index]
        marker = f"{i}." if numbered else "-"
        lines.append(f"{marker} **{label}**: {w.fill(point)}")
    return "\n".join(lines)


def _table(rng: random.Random, w: _Words, rows: int) -> str:
    header = "| Aspect | What to look at | Why it matters |\n|---|---|---|"
    subjects = [*w.kws, w.topic] if w.kws else [w.topic]
    body = []
    for i, (aspect, what, why) in enumerate(rng.sample(_ASPECTS, min(rows, len(_ASPECTS)))):
        subject = subjects[i % len(subjects)]
        body.append(f"| {aspect} | {what.format(w=subject)} | {why} |")
    return header + "\n" + "\n".join(body)


def _section(rng: random.Random, w: _Words, style: Style) -> str:
    """One answer in the given style."""
    intro = w.fill(rng.choice(_INTROS))
    closing = w.fill(rng.choice(_CLOSINGS))
    code = w.fill(rng.choice(_CODE))
    if not w.kws:
        return (
            "## Hello!\n\n"
            "Happy to help. Here is what I can do in this playground:\n\n"
            "- **Explain** a concept step by step\n"
            "- **Compare** options in a table\n"
            "- **Write code** with a short runnable example\n\n"
            "Ask about a concrete topic and I will answer with specifics."
        )
    if style == "terse":
        return f"{intro}\n\n{_bullets(rng, w, 3)}\n\n`{w.ident}` is a good name to start with."
    if style == "plain":
        sentences = [w.fill(p) for p in _pick(rng, _POINTS, 6)]
        para1 = " ".join(s[:1].upper() + s[1:] for s in sentences[:3])
        para2 = " ".join(s[:1].upper() + s[1:] for s in sentences[3:])
        return f"{intro}\n\n{para1}\n\n{para2}\n\n{closing}"
    if style == "code":
        return (
            f"Here is a compact starting point for {w.topic}:\n\n{code}\n\n"
            f"### Notes\n\n{_bullets(rng, w, 3)}\n\n{closing}"
        )
    if style == "verbose":
        note = w.fill(rng.choice(_NOTES))
        return (
            f"# {w.title}: a detailed guide\n\n{intro}\n\n"
            f"## Background\n\n{w.fill(rng.choice(_INTROS))}\n\n"
            f"## Step by step\n\n{_bullets(rng, w, 5, numbered=True)}\n\n"
            f"## Comparison\n\n{_table(rng, w, 4)}\n\n{note}\n\n"
            f"## Example\n\n{code}\n\n"
            f"## Things to watch\n\n{_bullets(rng, w, 3)}\n\n"
            f"## Summary\n\n{closing}"
        )
    # balanced and thinking share the answer shape
    parts = [f"## {w.title}\n\n{intro}", f"### Key points\n\n{_bullets(rng, w, 4)}"]
    parts.append(f"### At a glance\n\n{_table(rng, w, 3)}")
    if rng.random() < 0.7 or style == "thinking":
        parts.append(f"### Example\n\n{code}")
    parts.append(closing)
    return "\n\n".join(parts)


def compose_answer(model: SimulatedModel, prompt: str, seed: int = 0) -> ComposedAnswer:
    """The deterministic answer of ``model`` to ``prompt`` for ``seed``."""
    w = _Words(keywords(prompt))
    rng = _rng(model.name, prompt, seed)
    text = _section(rng, w, model.style)
    reasoning = ""
    if model.thinking:
        steps = _REASONING[:2] + _pick(rng, _REASONING[2:7], 3) + _REASONING[7:]
        reasoning = " ".join(w.fill(s) for s in steps)
    return ComposedAnswer(reasoning=reasoning, text=text)


def answer_tokens(
    model: SimulatedModel, prompt: str, seed: int, text: str, exact_tokens: int | None
) -> list[str]:
    """``text`` (the composed answer) as tokens, cut or extended to ``exact_tokens``."""
    tokens = tokenize(text)
    if exact_tokens is None:
        return tokens
    extra = 1
    while len(tokens) < exact_tokens:
        # More of the same voice: another section, composed with a shifted seed.
        w = _Words(keywords(prompt))
        section = _section(_rng(model.name, prompt, seed, f"more{extra}"), w, model.style)
        tokens.extend(tokenize("\n\n" + section))
        extra += 1
    return tokens[:exact_tokens]
