"""The fenced code blocks of a Markdown answer, for copying one: pure Python, no Textual.

CommonMark fences: a line of at least three backticks or tildes (indented at most three
spaces) opens a block, with an optional info string whose first word is the language;
the block ends at a line of the same character at least as long, or at the end of the
text (an answer cut mid-block still yields what it has).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    language: str  # "" when the fence names none
    code: str  # the lines between the fences, without them, ending in no newline

    @property
    def first_line(self) -> str:
        """The first non-blank line of the code, stripped ("" for an empty block)."""
        return next((line.strip() for line in self.code.splitlines() if line.strip()), "")


def code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced code block of `text`, in order."""
    blocks: list[CodeBlock] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        # A backtick fence's info string may not contain a backtick (CommonMark): such a
        # line is inline code, not a fence.
        if opened is None or (opened[2][0] == "`" and "`" in opened[3]):
            i += 1
            continue
        indent, fence, info = len(opened[1]), opened[2], opened[3].strip()
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            line = lines[i]
            # Content lines lose up to the opening fence's indentation.
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        i += 1  # past the closing fence (or the end)
        blocks.append(CodeBlock(info.split()[0] if info else "", "\n".join(body)))
    return blocks
