"""Making untrusted model output safe to put on a terminal.

Model output is text, never instructions to the terminal: ANSI CSI / OSC /
DCS sequences (colour, cursor moves, title changes, OSC 52 clipboard writes),
C0 and C1 controls other than newline and tab, and bidi overrides that can
make text read differently from what it is, are removed. Pure standard library.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings ending in
# BEL or ST, and two-byte escapes. Then the 8-bit C1 forms of CSI and OSC.
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?            # CSI
    | \x1b[\]PX^_].*?(?:\x07|\x1b\\|$)  # OSC, DCS, SOS, PM, APC up to BEL / ST
    | \x1b[ -/]*[0-~]?                  # other ESC sequences (incl. a lone ESC)
    | \x9b[0-?]*[ -/]*[@-~]?            # 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x9c|$)  # 8-bit string controls
    """,
    re.VERBOSE | re.DOTALL,
)
# C0 except \t and \n, DEL, C1, and bidi embedding/override/isolate controls.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Strip escape sequences and control characters; keep newlines and tabs."""
    if text.isprintable():
        return text  # the common case: nothing to strip, no regex work
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
