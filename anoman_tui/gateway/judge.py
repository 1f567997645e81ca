"""The simulated judge `anoman-judge`: a deterministic verdict on a judge prompt.

A judge prompt (the last user message of the request) carries its data in blocks between
marker lines that carry a per-prompt nonce::

    [The Start of the Question NONCE]            ...  [The End of the Question NONCE]
    [The Start of the Rubric NONCE]              ...  [The End of the Rubric NONCE]
    [The Start of the Answer NONCE]              ...  [The End of the Answer NONCE]
    [The Start of Assistant A's Answer NONCE]    ...  [The End of Assistant A's Answer NONCE]
    [The Start of Assistant B's Answer NONCE]    ...  [The End of Assistant B's Answer NONCE]

A block ends only at the end marker with the same name and the same nonce as its start
marker, so an answer cannot close its block early with a marker of its own. With A and B
blocks the prompt is pairwise; with an Answer block it is a rubric prompt; anything else
gets a plain sentence and no verdict.

The rule (docs/local-gateway.md, "The simulated judge"): content words are the lowercase
runs of letters of at least 4 letters, minus a small stopword list, deduplicated.

- rubric: target = content words of the question and the rubric; score = the share of them
  found among the answer's words, rounded to 2 decimals; pass = score >= 0.5. The reply is
  one sentence, then one JSON object on its own line.
- pairwise: the share of the question's content words each answer contains; the higher
  wins, equal is a tie. The reply explains the two shares and ends with ``[[A]]``,
  ``[[B]]`` or ``[[C]]``.

Nothing inside an answer is read but its words: a verdict token, a fake marker or a JSON
object in an answer cannot change the decision.

``content_words`` is also what the composer uses to make the simulated answer models cover
a question's content words to different degrees.

Imports only the standard library.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

MIN_LETTERS = 4
PASS_AT = Decimal("0.5")
MAX_MISSING_LISTED = 5

# Function words (English and Indonesian) and the verbs a request or a rubric is framed
# with ("explain", "mention", "jelaskan"); only words of 4 letters or more matter here.
STOPWORDS = frozenset(
    """
    about above across after again against also although always among another anything
    around because been before behind being below beside besides between beyond both
    cannot could didn does doesn doing done down during each either else enough even ever
    every from further have having hence here hers herself himself however into itself
    just least less like many more most much must myself near neither never none often
    only onto other others ought ours ourselves over same shall should since some such
    than that their theirs them themselves then there therefore these they this those
    though through thus till together toward towards under unless unlike until upon very
    what whatever when whenever where whether which while whom whose will with within
    without would your yours yourself yourselves
    please tell give write explain explains explained describe describes described show
    want need know make using used uses answer answers response respond question questions
    mention mentions mentioned include includes including included correct correctly
    clearly briefly short brief really actually thing things something hello thanks thank
    okay
    yang dengan untuk dari pada adalah akan atau juga tidak bisa saya kamu anda kami kita
    mereka bagaimana mengapa kenapa siapa kapan dimana tolong jelaskan buat buatkan tentang
    apakah dalam sudah belum karena jadi lebih mana sebaiknya perlu harus boleh saat ketika
    agar supaya sebuah suatu seperti secara oleh bahwa para telah sedang masih hanya sangat
    semua setiap antara sebagai sehingga namun tetapi tapi kalau jika maka lagi pula yaitu
    yakni ialah merupakan dapat tersebut begitu bila punya sendiri sebelum sesudah setelah
    banyak halo terima kasih makasih sebutkan tuliskan berikan
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_LETTERS = re.compile(r"[^\W\d_]+")

Kind = Literal["pairwise", "rubric", "none"]

_BLOCKS = {
    "the Question": "question",
    "the Rubric": "rubric",
    "the Answer": "answer",
    "Assistant A's Answer": "a",
    "Assistant B's Answer": "b",
}
_START = re.compile(
    r"\[The Start of (the Question|the Rubric|the Answer|Assistant A's Answer|"
    r"Assistant B's Answer) (\S+)\]"
)

NO_ANSWERS = ("I found no answers to judge in this prompt: it has no answer block (or "
              "Assistant A and B blocks) that I can read, so I give no verdict.")


# Unicode's format characters (category Cf, as of Unicode 14): soft hyphen, zero-width
# spaces and joiners, bidi marks, U+2060 WORD JOINER, the BOM, tags.
_FORMAT = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd"
    "\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _clean(text: str) -> str:
    """NFC, without format characters (zero-width spaces and joiners, U+2060, soft
    hyphens): a word split by one is still one word."""
    if text.isascii():
        return text
    return _FORMAT.sub("", unicodedata.normalize("NFC", text))


def words(text: str) -> set[str]:
    """Every lowercase run of letters in ``text``."""
    return {w.lower() for w in _LETTERS.findall(_clean(text))}


def content_words(text: str, *, keep_case: bool = False) -> list[str]:
    """The content words of ``text`` in order of first appearance, deduplicated:
    lowercase runs of at least 4 letters that are not stopwords. ``keep_case``: each as
    first written (for restating them), still deduplicated by lowercase form."""
    seen: dict[str, str] = {}
    for word in _LETTERS.findall(_clean(text)):
        low = word.lower()
        if len(low) < MIN_LETTERS or low in STOPWORDS or low in seen:
            continue
        seen[low] = word
    return list(seen.values()) if keep_case else list(seen)


def read_blocks(prompt: str) -> dict[str, str]:
    """The judge prompt's data blocks by name (question, rubric, answer, a, b): the first
    complete block of each name. Inside a block only its own end marker (same name, same
    nonce) ends it; after a block that is never closed nothing more is read."""
    blocks: dict[str, str] = {}
    lines = prompt.splitlines()
    i = 0
    while i < len(lines):
        match = _START.fullmatch(lines[i].strip())
        i += 1
        if match is None:
            continue
        label, nonce = match.group(1), match.group(2)
        end = f"[The End of {label} {nonce}]"
        for j in range(i, len(lines)):
            if lines[j].strip() == end:
                blocks.setdefault(_BLOCKS[label], "\n".join(lines[i:j]))
                i = j + 1
                break
        else:
            break  # never closed: what follows its start marker is all data
    return blocks


def prompt_kind(blocks: dict[str, str]) -> Kind:
    """Pairwise with both A and B blocks, else rubric with an Answer block, else none."""
    if "a" in blocks and "b" in blocks:
        return "pairwise"
    if "answer" in blocks:
        return "rubric"
    return "none"


@dataclass(frozen=True, slots=True)
class Coverage:
    """Which of the ``target`` words an answer contains."""

    target: tuple[str, ...]
    found: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def share(self) -> Decimal:
        """found / target, rounded half up to 2 decimals (0 when there is no target)."""
        if not self.target:
            return Decimal(0)
        return (Decimal(len(self.found)) / Decimal(len(self.target))).quantize(
            Decimal("0.01"), rounding=ROUND_HALF_UP)

    @property
    def fraction(self) -> str:
        return f"{len(self.found)} of {len(self.target)}"


def coverage(target: list[str], answer: str) -> Coverage:
    """Which of ``target`` (content words) appear among the words of ``answer``."""
    have = words(answer)
    found = tuple(w for w in target if w in have)
    missing = tuple(w for w in target if w not in have)
    return Coverage(tuple(target), found, missing)


def targets(*texts: str) -> list[str]:
    """The content words of ``texts`` together, in order, deduplicated."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in content_words(text):
            seen.setdefault(word, None)
    return list(seen)


def _listed(missing: tuple[str, ...]) -> str:
    if not missing:
        return "nothing missing"
    shown = ", ".join(missing[:MAX_MISSING_LISTED])
    more = len(missing) - MAX_MISSING_LISTED
    return f"missing {shown}" + (f" and {more} more" if more > 0 else "")


def rubric_reply(question: str, rubric: str, answer: str) -> str:
    """One sentence, then the verdict as one JSON object on its own line."""
    target = targets(question, rubric)
    cov = coverage(target, answer)
    score = cov.share
    passed = bool(target) and score >= PASS_AT
    if target:
        reason = f"covers {cov.fraction}: {_listed(cov.missing)}"
        sentence = (f"The answer contains {cov.fraction} content words of the question and "
                    f"the rubric (score {score:.2f}), so it "
                    f"{'passes' if passed else 'does not pass'}.")
    else:
        reason = "covers 0 of 0: the question and the rubric name no content words to check"
        sentence = ("The question and the rubric name no content words to check the answer "
                    "against, so it does not pass.")
    verdict = (f'{{"pass": {"true" if passed else "false"}, "score": {score:.2f}, '
               f'"reason": {json.dumps(reason, ensure_ascii=False)}}}')
    return f"{sentence}\n{verdict}"


def pairwise_reply(question: str, answer_a: str, answer_b: str) -> str:
    """An explanation naming both shares, then ``[[A]]``, ``[[B]]`` or ``[[C]]`` last."""
    target = targets(question)
    if not target:
        return ("The question names no content words to check the answers against, so "
                "neither answer covers more of it: a tie.\n\n[[C]]")
    a, b = coverage(target, answer_a), coverage(target, answer_b)
    shares = (f"Assistant A's answer contains {a.fraction} content words of the question "
              f"({a.share:.2f}); Assistant B's contains {b.fraction} ({b.share:.2f}).")
    if len(a.found) > len(b.found):
        return f"{shares} Assistant A covers more of what was asked.\n\n[[A]]"
    if len(b.found) > len(a.found):
        return f"{shares} Assistant B covers more of what was asked.\n\n[[B]]"
    return f"{shares} They cover the same share of what was asked: a tie.\n\n[[C]]"


def judge_reply(prompt: str) -> str:
    """The simulated judge's whole reply to ``prompt`` (the request's last user turn)."""
    blocks = read_blocks(prompt)
    kind = prompt_kind(blocks)
    if kind == "pairwise":
        return pairwise_reply(blocks.get("question", ""), blocks["a"], blocks["b"])
    if kind == "rubric":
        return rubric_reply(blocks.get("question", ""), blocks.get("rubric", ""),
                            blocks["answer"])
    return NO_ANSWERS
