"""Cutting streamed Markdown source into blocks, incrementally: pure Python.

`BlockSplitter` is fed the answer's text as it streams in and returns finished `Block`s:
it cuts the source at blank lines outside fenced code (so a fence with blank lines is one
block), keeps indented list continuations with their list, and cuts very long blocks into
bounded pieces (a 2 MB line or a 100,000-line answer never becomes one huge render). Its
decisions depend only on the text, never on how it was split into deltas, so any split of
the same answer yields the same blocks. Control sequences are removed with
`terminal_safe` line by line, carrying an unterminated OSC/DCS string across lines and
deltas.

Kept apart from the rendering (`anoman_tui.ui.render.markdown_render`, Rich) and the widget
(`anoman_tui.ui.widgets.answer_view`, Textual) so it can be tested and reasoned about as
plain text processing.

May import: the standard library and `anoman_tui.streaming.safe_text`. Never Rich or Textual
(tests/ui/test_answer_modules.py checks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from anoman_tui.streaming.safe_text import terminal_safe

__all__ = [
    "LIST_CUT_LINES",
    "MAX_BLOCK_CHARS",
    "MAX_BLOCK_LINES",
    "MAX_LINE_CHARS",
    "NOTE_ERROR",
    "NOTE_WARNING",
    "PROMPT",
    "PROMPT_MORE",
    "TABLE_CUT_ROWS",
    "Block",
    "BlockSplitter",
    "note_block",
    "ordered_items",
    "prompt_blocks",
]

# Bounds on one block (one Rich render). Measured here: Rich renders ~1 ms per 700
# characters of prose and ~0.15 ms per highlighted code line.
MAX_BLOCK_LINES = 200
MAX_BLOCK_CHARS = 8_000
MAX_LINE_CHARS = 8_000  # a longer line is cut (at a space if possible) into pieces
LIST_CUT_LINES = 40  # a long tight list is cut at an item boundary
TABLE_CUT_ROWS = 50  # a long table is cut; the continuation repeats the header

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_LIST_ITEM = re.compile(r"^( *)(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# Terminal "string" controls (OSC, DCS, SOS, PM, APC) may span lines; terminal_safe() eats
# an unterminated one to the end of its input, so the splitter carries that state over.
_STRING_CONTROL = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c)", re.S
)
_STRING_OPENER = re.compile(r"\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]")
_STRING_END = re.compile(r"\x07|\x1b\\|\x9c")
_TABLE_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


_ORDERED_ITEM = re.compile(r"(\d{1,9})([.)])[ \t]+\S")
_ANY_NUMBER = re.compile(r"[ \t]*\d{1,9}[.)]")


def ordered_items(lines: list[str]) -> list[int] | None:
    """Where each item of a tight numbered list begins in `lines` (indexes), or None
    when its items could draw differently one by one than as one list.

    While such a list streams its items are drawn one by one (only the last changes).
    That equals Rich's drawing of the whole list when: every line starts an item
    (unindented, numbered one more than the item before, with the same delimiter) or is
    indented at least to its item's text (a continuation or nested blocks); from the
    first line that is neither, the rest is drawn with the item above it, as one piece,
    unless a numbered line follows (it may be the list's next item); no line is blank
    (a loose list); and the numbers' width is the same for all items, with one more to
    spare (Rich pads every number to the width of the last + 1).
    """
    if not lines:
        return None
    first = _ORDERED_ITEM.match(lines[0])
    if first is None:
        return None
    number, delimiter = int(first.group(1)), first.group(2)
    first_number = number
    starts = [0]
    indent = len(first.group(1)) + 2
    for index in range(1, len(lines)):
        line = lines[index]
        if not line.strip():
            return None
        item = _ORDERED_ITEM.match(line)
        if item is not None and int(item.group(1)) == number + 1 and item.group(2) == delimiter:
            number += 1
            starts.append(index)
            indent = len(item.group(1)) + 2
        elif line[:indent].strip():
            # Not inside the item above: it and all that follows draw as one piece, if
            # no item follows (markdown-it counts any number as the list's next item).
            if any(_ANY_NUMBER.match(rest) for rest in lines[index:]):
                return None
            break
    if len(str(first_number + 1)) != len(str(number + 2)):
        return None
    return starts


def _is_bullet(line: str) -> bool:
    """`line` (a list item) starts with a bullet, not a number."""
    return line.lstrip()[:1] in ("-", "+", "*")


def _sanitize(line: str, in_string: bool) -> tuple[str, bool]:
    """`terminal_safe` for one line of a stream; returns (clean, inside a string control)."""
    if in_string:
        end = _STRING_END.search(line)
        if end is None:
            return "", True
        line = line[end.end() :]
    if line.isprintable():
        return line, False
    unterminated = _STRING_OPENER.search(_STRING_CONTROL.sub("", line)) is not None
    return terminal_safe(line), unterminated


Row = TypeVar("Row")


@dataclass(slots=True, eq=False)
class Block(Generic[Row]):
    """A finished piece of the answer, rendered as one Rich `Markdown`.

    The splitter fills in the source fields; the rest is the view's layout state, typed
    by the view's row type (`Row`: a Textual `Strip` in `AnswerView`), so a block is one
    object for both (there may be hundreds of thousands of them).
    """

    raw: str  # the (sanitised) text of this piece, without synthetic lines
    prefix: str  # synthetic source before raw (fence opener / table header of a cut block)
    suffix: str  # synthetic source after raw (fence closer of a cut block)
    joiner: str  # original text between the previous piece and this one (for copying)
    gap: bool  # draw a blank row before it (False for the pieces of a cut block)
    trim_top: bool  # drop the first rendered row (code padding shared with the piece above)
    trim_bottom: bool
    serial: int  # which open block it came from (matches the soft-chunk cache)
    nlines: int
    top_gap: int = 0  # rows of gap actually drawn (no gap above the first block)
    strips: list[Row] | None = None  # None: not rendered at the current width
    height: int = 0  # len(strips), or an estimate while strips is None
    approx: bool = False  # rendered in chunks while streaming; finish() re-renders it
    kind: str = "markdown"  # or PROMPT / PROMPT_MORE (the user's words) or NOTE_* (a marker)
    dim: bool = False  # drawn dimmed (the answer of a turn that was not committed)
    hidden: bool = False  # takes no rows (the body of a collapsed reasoning section)

    @property
    def source(self) -> str:
        return f"{self.prefix}{self.raw}{self.suffix}"

    @property
    def rows(self) -> int:
        return 0 if self.hidden else self.top_gap + self.height

    def estimate(self, width: int) -> int:
        # Cheap (O(1)) so a resize of a huge answer costs one pass over the blocks.
        if self.kind != "markdown":
            header = 1 if self.kind == PROMPT else 0
            return max(1, self.nlines + len(self.raw) // max(1, width - 4) + header)
        fence = 2 if self.prefix or "```" in self.raw or "~~~" in self.raw else 0
        return max(1, self.nlines + len(self.raw) // max(1, width - 2) + fence)


# Block kinds besides Markdown: the prompt of a turn (its first piece has the "You"
# header) and one-line markers of how a turn ended. Never parsed as Markdown or markup.
PROMPT = "prompt"
PROMPT_MORE = "prompt-more"
NOTE_ERROR = "note-error"
NOTE_WARNING = "note-warning"


def prompt_blocks(prompt: str) -> list[Block[Any]]:
    """The blocks that show a turn's prompt: sanitised and cut into bounded pieces."""
    text = terminal_safe(prompt.rstrip("\n"))
    pieces: list[list[str]] = []
    current: list[str] = []
    chars = 0
    for line in text.split("\n"):
        while len(line) > MAX_LINE_CHARS:
            if current:
                pieces.append(current)
                current, chars = [], 0
            pieces.append([line[:MAX_LINE_CHARS]])
            line = line[MAX_LINE_CHARS:]
        if current and (len(current) >= MAX_BLOCK_LINES or chars + len(line) > MAX_BLOCK_CHARS):
            pieces.append(current)
            current, chars = [], 0
        current.append(line)
        chars += len(line) + 1
    if current or not pieces:
        pieces.append(current or [""])
    return [
        Block(
            raw="\n".join(lines),
            prefix="",
            suffix="",
            joiner="" if index == 0 else "\n",
            gap=index == 0,
            trim_top=False,
            trim_bottom=False,
            serial=0,
            nlines=len(lines),
            kind=PROMPT if index == 0 else PROMPT_MORE,
        )
        for index, lines in enumerate(pieces)
    ]


def note_block(text: str, *, error: bool) -> Block[Any]:
    """A one-line marker under a turn (how it ended), drawn as plain text."""
    return Block(
        raw=terminal_safe(text), prefix="", suffix="", joiner="\n", gap=True, trim_top=False,
        trim_bottom=False, serial=0, nlines=1, kind=NOTE_ERROR if error else NOTE_WARNING,
    )


class BlockSplitter:
    """Incrementally split Markdown source into blocks.

    Decisions depend only on the text, never on how it was split into deltas, so any
    split of the same answer yields the same blocks.
    """

    def __init__(self, *, gap: bool = False) -> None:
        """`gap`: draw a blank row before the first block (an answer below a prompt)."""
        self.serial = 0
        self.partial = ""  # the incomplete last line (not yet sanitised)
        self.in_string = False  # inside an unterminated OSC/DCS/... string control
        self._start_block(joiner="\n\n" if gap else "", gap=gap, prefix="", trim_top=False)

    def _start_block(self, *, joiner: str, gap: bool, prefix: str, trim_top: bool) -> None:
        self.serial += 1
        self.lines: list[str] = []
        self.chars = 0
        self.prefix = prefix
        self.joiner = joiner
        self.gap = gap
        self.trim_top = trim_top
        self.blank_run = 0
        self.is_list = False
        self.fence: tuple[str, int] | None = None
        self.fence_opener = ""
        self.fence_start = -1  # index in lines of the opener; -1 when it is in prefix
        self.table_header: str | None = None

    # -- feeding -------------------------------------------------------------------
    def feed(self, text: str) -> list[Block[Any]]:
        out: list[Block[Any]] = []
        data = self.partial + text
        pos = 0
        find = data.find
        while (nl := find("\n", pos)) >= 0:
            self._line(data[pos:nl], out)
            pos = nl + 1
        rest = data[pos:]
        while len(rest) > MAX_LINE_CHARS:
            rest = self._cut_long_line(rest, out)
        self.partial = rest
        return out

    def close(self) -> list[Block[Any]]:
        """End of the answer: the open block (with any partial line) is finished."""
        out: list[Block[Any]] = []
        if self.partial:
            self._line(self.partial, out)
            self.partial = ""
        self._emit(out, suffix="", trim_bottom=False)
        self._start_block(joiner="\n", gap=True, prefix="", trim_top=False)
        return out

    def _cut_long_line(self, line: str, out: list[Block[Any]]) -> str:
        cut = line.rfind(" ", MAX_LINE_CHARS // 2, MAX_LINE_CHARS)
        cut = cut + 1 if cut > 0 else MAX_LINE_CHARS
        escape = line.rfind("\x1b", cut - 32, cut)
        if escape > 0:
            cut = escape  # never split an escape sequence between pieces
        self._content(line[:cut], out, fragment=True)
        self._cut(out, joiner="")
        return line[cut:]

    def _line(self, line: str, out: list[Block[Any]]) -> None:
        while len(line) > MAX_LINE_CHARS:
            line = self._cut_long_line(line, out)
        self._content(line, out, fragment=False)
        if self.fence is not None:
            # Rich drops trailing blank lines of a code block, so never end a piece on
            # one (unless a hostile run of blank lines goes on and on).
            over = len(self.lines) >= MAX_BLOCK_LINES or self.chars >= MAX_BLOCK_CHARS
            if over and (self.lines[-1].strip() or len(self.lines) >= MAX_BLOCK_LINES + 64):
                self._cut(out, joiner="\n")
        elif self.lines and (len(self.lines) >= MAX_BLOCK_LINES or self.chars >= MAX_BLOCK_CHARS):
            self._cut(out, joiner="\n")

    def _content(self, line: str, out: list[Block[Any]], *, fragment: bool) -> None:
        # Work on sanitised text so control sequences can neither hide a fence or a blank
        # line nor be split across blocks.
        line, self.in_string = _sanitize(line, self.in_string)
        clean = line
        if self.fence is not None:
            self._add(line)
            if not fragment and (m := _FENCE_CLOSE.match(clean)):
                char, length = self.fence
                if m.group(1)[0] == char and len(m.group(1)) >= length:
                    self.fence = None
            return
        if not clean.strip():
            if fragment:
                self._add(line)
            elif self.lines:
                if self.is_list:
                    self.blank_run += 1  # a list may continue after blank lines
                else:
                    self._emit(out, suffix="", trim_bottom=False)
                    self._start_block(joiner="\n\n", gap=True, prefix="", trim_top=False)
            else:
                self.joiner += "\n"  # blank lines between blocks (kept for copying)
            return
        if self.blank_run:
            indent = len(clean) - len(clean.lstrip(" \t"))
            if indent >= 2:
                self.lines.extend([""] * self.blank_run)  # list item continuation
                self.blank_run = 0
            else:
                joiner = "\n" * (self.blank_run + 1)
                self._emit(out, suffix="", trim_bottom=False)
                self._start_block(joiner=joiner, gap=True, prefix="", trim_top=False)
        elif self.lines and not fragment:
            long_table = self.table_header is not None and len(self.lines) >= TABLE_CUT_ROWS
            item = _LIST_ITEM.match(clean) if self.is_list else None
            if long_table or (item and len(item.group(1)) <= 1 and (
                len(self.lines) >= LIST_CUT_LINES
                # A bullet list is cut at each of its items: the open block (rendered
                # again every frame while it streams) is then one item, not the list.
                # Not a numbered one: Rich aligns its numbers to the widest.
                or (_is_bullet(clean) and _is_bullet(self.lines[0]))
            )):
                self._cut(out, joiner="\n")
        if not self.lines and not self.prefix:
            self.is_list = _LIST_ITEM.match(clean) is not None
        elif (
            len(self.lines) == 1
            and self.table_header is None
            and not self.prefix
            and "|" in self.lines[0]
            and _TABLE_DELIMITER.match(clean)
            and "-" in clean
        ):
            self.table_header = f"{self.lines[0]}\n{line}\n"
        self._add(line)
        if not fragment and (m := _FENCE_OPEN.match(clean)):
            marker = m.group(1)
            if not (marker[0] == "`" and "`" in m.group(2)):
                self.fence = (marker[0], len(marker))
                self.fence_opener = clean.strip()
                self.fence_start = len(self.lines) - 1

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.chars += len(line) + 1

    def _cut(self, out: list[Block[Any]], *, joiner: str) -> None:
        """Finish the open block here and continue the same construct in a new piece."""
        fence, opener = self.fence, self.fence_opener
        header, is_list = self.table_header, self.is_list
        if fence is not None:
            self._emit(out, suffix="\n" + fence[0] * fence[1], trim_bottom=True)
            self._start_block(joiner=joiner, gap=False, prefix=opener + "\n", trim_top=True)
            self.fence, self.fence_opener = fence, opener
        elif header is not None:
            self._emit(out, suffix="", trim_bottom=False)
            self._start_block(joiner=joiner, gap=False, prefix=header, trim_top=False)
            self.table_header = header
        else:
            self._emit(out, suffix="", trim_bottom=False)
            self._start_block(joiner=joiner, gap=False, prefix="", trim_top=False)
            self.is_list = is_list

    def _emit(self, out: list[Block[Any]], *, suffix: str, trim_bottom: bool) -> None:
        if self.lines:
            raw = "\n".join(self.lines)
            out.append(
                Block(
                    raw=raw,
                    prefix=self.prefix,
                    suffix=suffix,
                    joiner=self.joiner,
                    gap=self.gap,
                    trim_top=self.trim_top,
                    trim_bottom=trim_bottom,
                    serial=self.serial,
                    nlines=len(self.lines),
                )
            )

    # -- the open block ------------------------------------------------------------
    def open_raw(self) -> str:
        """Sanitised text of the open block, including the partial line."""
        body = "\n".join(self.lines)
        partial = _sanitize(self.partial, self.in_string)[0] if self.partial else ""
        if partial:
            sep = "\n" * (self.blank_run + 1) if self.lines else ""
            body = f"{body}{sep}{partial}"
        return body

    @property
    def has_open(self) -> bool:
        return bool(self.lines or self.partial.strip())
