"""Fitting names into the cells there are: a pane's header on one line, a tab's label.

A model or target name is the part a narrow place shortens, in its middle (`shorten`):
its start says the family and its end the version (`claude-so…4-6`), and the `…` says
that it was shortened. What a pane is doing (its state) is never what gives way.

May import: the standard library and `rich` (cell widths).
"""

from __future__ import annotations

from rich.cells import cell_len

ELLIPSIS = "…"


def _take(text: str, cells: int, *, from_end: bool = False) -> str:
    """The longest start (or end) of `text` at most `cells` wide."""
    chars = reversed(text) if from_end else iter(text)
    taken: list[str] = []
    used = 0
    for char in chars:
        width = cell_len(char)
        if used + width > cells:
            break
        taken.append(char)
        used += width
    return "".join(reversed(taken)) if from_end else "".join(taken)


def shorten(name: str, cells: int) -> str:
    """`name` in at most `cells` cells: whole if it fits, else its start and end around
    `…` (more of the start: the family reads first). Never wider than `cells`."""
    if cell_len(name) <= cells:
        return name
    if cells <= 1:
        return ELLIPSIS[:cells]
    room = cells - 1
    head = _take(name, room - room * 2 // 5)
    tail = _take(name, room - cell_len(head), from_end=True)
    return f"{head}{ELLIPSIS}{tail}"


def fit_model_and_target(model: str, target: str, cells: int) -> tuple[str, str | None]:
    """The model's name and its target's (None: left out) as they fit in `cells` cells
    together, written `model @target`: the target is shortened first, then left out
    (the status line names where requests go), then the model is shortened."""
    model_cells, target_cells = cell_len(model), cell_len(target)
    if model_cells + 2 + target_cells <= cells:
        return model, target
    # A long target keeps a few cells ("@op…i-eu" is still a hint), or goes; a short one
    # ("local") is shown whole or not at all ("@lo…l" saves one cell and reads as noise).
    if target_cells > 6 and model_cells + 2 + 4 <= cells:
        return model, shorten(target, cells - 2 - model_cells)
    return shorten(model, max(1, cells)), None
