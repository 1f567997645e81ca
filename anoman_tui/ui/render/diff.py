"""A word-level diff of two answers, and its rendering as one readable text.

Pure: no Textual widget, only `difflib` and Rich `Text`. The texts are cut into words,
whitespace and punctuation (`tokenize`); the diff aligns the words and punctuation marks
and carries whitespace along, so a re-wrapped line or a doubled space is not a change.

Speed: `SequenceMatcher` over every word of two long answers is slow when they share
few lines (its longest-match search visits each occurrence of every common word), so
the lines are aligned first and only the lines that differ are diffed word by word; a
long stretch of differing lines is first cut at the words found once on each side
(pinned by tests/ui/test_diff.py: two 20,000-word answers well under a second).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import groupby
from typing import Literal

from rich.style import StyleType
from rich.text import Text

Tag = Literal["equal", "insert", "delete", "replace"]
MARKER = "▶ first difference "

# A word (letters, digits, underscore; "don't" is one word), one punctuation mark, or a
# run of whitespace: joined back together, the tokens are the text.
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]|\s+")
_WORD = re.compile(r"\w")
# Stretches up to this many word pairs go to SequenceMatcher whole; longer ones are cut
# at their anchors first.
MATCHER_CELLS = 1_000_000


def tokenize(text: str) -> list[str]:
    """Words, punctuation marks and whitespace runs, in order; `"".join()` gives `text`."""
    return _TOKEN.findall(text)


@dataclass(frozen=True, slots=True)
class Token:
    """One word or punctuation mark: its text, where it is, and on which line (from 1)."""

    text: str
    start: int
    end: int
    line: int

    @property
    def is_word(self) -> bool:
        return _WORD.search(self.text) is not None


@dataclass(frozen=True, slots=True)
class Op:
    """`base.tokens[i1:i2]` becomes `other.tokens[j1:j2]` (difflib's opcodes)."""

    tag: Tag
    i1: int
    i2: int
    j1: int
    j2: int


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where `other` first differs from `base`: a token index into `other`, and for
    people the line and the word on that line (both from 1). At the end of `other`
    (the base goes on), `token` is the number of tokens and `word` the next word."""

    token: int
    line: int
    word: int


@dataclass(frozen=True, slots=True)
class WordDiff:
    base: str
    other: str
    base_tokens: tuple[Token, ...]
    other_tokens: tuple[Token, ...]
    ops: tuple[Op, ...]
    inserted_words: int
    deleted_words: int
    first_divergence: Divergence | None

    @property
    def identical(self) -> bool:
        """The same words and punctuation in the same order (spacing may differ)."""
        return self.first_divergence is None

    @property
    def same_text(self) -> bool:
        return self.base == self.other


def _tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    line = 1
    last = 0
    for match in _TOKEN.finditer(text):
        piece = match.group()
        if piece[0].isspace():
            continue
        line += text.count("\n", last, match.start())
        last = match.start()
        tokens.append(Token(piece, match.start(), match.end(), line))
    return tokens


def _lines(tokens: list[Token]) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first token, end token, the line's token texts) for each line with a token."""
    lines = []
    index = 0
    for _, group in groupby(tokens, key=lambda t: t.line):
        texts = tuple(t.text for t in group)
        lines.append((index, index + len(texts), texts))
        index += len(texts)
    return lines


def _word_ops(a: list[str], b: list[str], i0: int, j0: int) -> list[Op]:
    """The word ops of `a` against `b` (which start at tokens `i0` and `j0`).

    A long stretch is first cut at its anchors, words found exactly once on each
    side (in order: a longest increasing run), and the pieces between are diffed in
    turn; `SequenceMatcher` takes the pieces small enough for it.
    """
    if not a or not b or len(a) * len(b) <= MATCHER_CELLS:
        matcher = SequenceMatcher(None, a, b, autojunk=False)
        return [Op(tag, i1 + i0, i2 + i0, j1 + j0, j2 + j0)
                for tag, i1, i2, j1, j2 in matcher.get_opcodes()]
    anchors = _anchors(a, b)
    if not anchors:
        return [Op("replace", i0, i0 + len(a), j0, j0 + len(b))]
    ops: list[Op] = []
    i = j = 0
    for ia, jb in anchors:
        ops.extend(_word_ops(a[i:ia], b[j:jb], i0 + i, j0 + j))
        ops.append(Op("equal", i0 + ia, i0 + ia + 1, j0 + jb, j0 + jb + 1))
        i, j = ia + 1, jb + 1
    ops.extend(_word_ops(a[i:], b[j:], i0 + i, j0 + j))
    return ops


def _anchors(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) with `a[i] == b[j]` found once in each, the longest run in order."""
    once_a: dict[str, int | None] = {}
    for i, word in enumerate(a):
        once_a[word] = None if word in once_a else i
    once_b: dict[str, int | None] = {}
    for j, word in enumerate(b):
        once_b[word] = None if word in once_b else j
    pairs: list[tuple[int, int]] = []
    for word, in_a in once_a.items():
        in_b = once_b.get(word)
        if in_a is not None and in_b is not None:
            pairs.append((in_a, in_b))
    pairs.sort()
    # Longest increasing subsequence of the j's (patience sorting).
    tails: list[int] = []  # the pair ending the best run of each length
    tail_js: list[int] = []  # ...and its j, for the binary search
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        at = bisect_left(tail_js, j)
        if at > 0:
            back[k] = tails[at - 1]
        if at == len(tails):
            tails.append(k)
            tail_js.append(j)
        else:
            tails[at] = k
            tail_js[at] = j
    run: list[tuple[int, int]] = []
    k = tails[-1] if tails else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _ops(base: list[Token], other: list[Token]) -> list[Op]:
    a_lines, b_lines = _lines(base), _lines(other)
    ops: list[Op] = []
    lines = SequenceMatcher(None, [t for *_, t in a_lines], [t for *_, t in b_lines],
                            autojunk=False)
    for tag, l1, l2, m1, m2 in lines.get_opcodes():
        i1 = a_lines[l1][0] if l1 < len(a_lines) else len(base)
        i2 = a_lines[l2 - 1][1] if l2 > l1 else i1
        j1 = b_lines[m1][0] if m1 < len(b_lines) else len(other)
        j2 = b_lines[m2 - 1][1] if m2 > m1 else j1
        if tag == "equal":
            ops.append(Op("equal", i1, i2, j1, j2))
        else:
            ops.extend(_word_ops([t.text for t in base[i1:i2]],
                                 [t.text for t in other[j1:j2]], i1, j1))
    return _merged(ops)


def _merged(ops: list[Op]) -> list[Op]:
    """Adjacent equal runs as one, and a delete next to an insert as one replace."""
    out: list[Op] = []
    for op in ops:
        if op.i1 == op.i2 and op.j1 == op.j2:
            continue
        if out:
            last = out[-1]
            same = last.tag == op.tag == "equal"
            changed = last.tag != "equal" and op.tag != "equal"
            if same or changed:
                tag: Tag = "equal" if same else (
                    "replace" if (last.i1 < op.i2 and last.j1 < op.j2) else
                    ("delete" if last.j1 == op.j2 else "insert"))
                out[-1] = Op(tag, last.i1, op.i2, last.j1, op.j2)
                continue
        out.append(op)
    return out


def _divergence(other_text: str, other: list[Token], index: int) -> Divergence:
    if index < len(other):
        line = other[index].line
        before = sum(1 for t in other[:index] if t.line == line and t.is_word)
        return Divergence(index, line, before + 1)
    line = other_text.count("\n") + 1
    words = sum(1 for t in other if t.line == line and t.is_word)
    return Divergence(index, line, words + 1)


def word_diff(base: str, other: str) -> WordDiff:
    """How `other` differs from `base`, word by word."""
    base_tokens, other_tokens = _tokens(base), _tokens(other)
    ops = _ops(base_tokens, other_tokens)
    inserted = deleted = 0
    first: Divergence | None = None
    for op in ops:
        if op.tag == "equal":
            continue
        if first is None:
            first = _divergence(other, other_tokens, op.j1)
        inserted += sum(1 for t in other_tokens[op.j1:op.j2] if t.is_word)
        deleted += sum(1 for t in base_tokens[op.i1:op.i2] if t.is_word)
    return WordDiff(base, other, tuple(base_tokens), tuple(other_tokens), tuple(ops),
                    inserted, deleted, first)


def render_diff(
    diff: WordDiff,
    insert_style: StyleType = "",
    delete_style: StyleType = "",
    marker_style: StyleType = "",
) -> Text:
    """The other text, with the base's words it lacks as `[-words-]` and its own new
    words as `{+words+}`, and `▶ first difference` where they first part.

    The brackets say it without colour (a monochrome terminal, a copied excerpt); the
    styles say it at a glance.
    """
    text = Text()
    base, other = diff.base_tokens, diff.other_tokens
    source = diff.other
    cursor = 0  # the other text is copied up to here
    marked = False
    for op in diff.ops:
        if op.tag == "equal":
            cursor_end = other[op.j2 - 1].end
            text.append(source[cursor:cursor_end])
            cursor = cursor_end
            continue
        gap = source[cursor:other[op.j1].start] if op.j1 < len(other) else ""
        text.append(gap)
        cursor += len(gap)
        if not marked:
            marked = True
            if text.plain and not text.plain[-1].isspace():
                text.append(" ")
            text.append(MARKER, style=marker_style)
        if op.tag in ("delete", "replace"):
            after = base[op.i2 - 1].end
            text.append(f"[-{diff.base[base[op.i1].start:after]}-]", style=delete_style)
            if op.tag == "delete" and op.j1 < len(other) and (
                gap or diff.base[after:after + 1].isspace()
            ):
                text.append(" ")  # the deleted words stand apart from the next word
        if op.tag in ("insert", "replace"):
            cursor_end = other[op.j2 - 1].end
            text.append(f"{{+{source[other[op.j1].start:cursor_end]}+}}", style=insert_style)
            cursor = cursor_end
    text.append(source[cursor:])
    return text


def summary(diff: WordDiff, base_index: int | str) -> str:
    """One line: what changed against pane `base_index` (or the answer so named, such as
    "#12 (gpt-4o-mini)"), and where it starts."""
    base = f"pane {base_index}" if isinstance(base_index, int) else base_index
    if diff.identical:
        if diff.same_text:
            return f"identical to {base}"
        return f"same words as {base}; only spacing and line breaks differ"
    first = diff.first_divergence
    assert first is not None
    where = f"first difference at line {first.line}, word {first.word}"
    if not diff.inserted_words and not diff.deleted_words:
        return f"Diff against {base}: only punctuation differs; {where}"
    return (f"Diff against {base}: +{_words(diff.inserted_words)}, "
            f"−{_words(diff.deleted_words)}; {where}")


def _words(count: int) -> str:
    return f"{count:,} word" if count == 1 else f"{count:,} words"


__all__ = ["MARKER", "Divergence", "Op", "Token", "WordDiff", "render_diff",
           "summary", "tokenize", "word_diff"]
