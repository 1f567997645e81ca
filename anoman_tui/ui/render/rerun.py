"""A rerun against its original, drawn as one line per pane at any width.

The figures and their words come from `anoman_tui.report.rerun` (also what `anoman-tui
compare --rerun` prints); here they become one Rich line that fits the pane. Better and
worse are said with ▲ (better) and ▼ (worse), and in words where there is room; colour
only repeats it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from anoman_tui.report.rerun import (
    BETTER,
    DASH,
    DELTA_HELP,
    MINUS,
    WORSE,
    DeltaField,
    PaneDelta,
    delta_fields,
    outcome,
    pane_delta,
    rerun_deltas,
)


@dataclass(frozen=True, slots=True)
class DeltaStyles:
    """The line's styles: the theme's, from the widget that draws it."""

    label: Style | str = "dim"
    better: Style | str = "bold green"
    worse: Style | str = "bold red"
    outcome: Style | str = "bold"


def delta_line(delta: PaneDelta, width: int, styles: DeltaStyles | None = None) -> Text:
    """One line, at most `width` cells: the most that fits of
    `vs #12 gpt-4o-mini  TTFT −120 ms ▲ faster  tok/s +12.3 (+15%) ▲ faster  cost ...
    was failed: stalled → now done`, down to `vs #12 gpt-4o… stalled→done TTFT−120ms▲
    tok/s+15%▲ $+0.000012▼` (the model's name shortened last). Cut with an ellipsis
    only when even that does not fit: the short forms lead with the outcome, so a cut
    takes figures, not the outcome."""
    styles = styles or DeltaStyles()
    fields = delta_fields(delta)
    for level in range(5):
        text = _line(delta, fields, level, styles, width)
        if text.cell_len <= width:
            return text
    text.truncate(max(1, width), overflow="ellipsis")
    return text


def _line(delta: PaneDelta, fields: list[DeltaField], level: int, styles: DeltaStyles,
          width: int) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    model = delta.original_model
    room = max(6, width // {2: 4, 3: 5}.get(level, 10))
    if model and level >= 2 and cell_len(model) > room:
        model = model[: room - 1] + "…"
    text.append(f"vs #{delta.original_id}" + (f" {model}" if model else ""), style="bold")
    gap = "  " if level < 2 else " "
    changed = delta.was is not None and delta.now is not None
    if changed and level >= 2:
        was, now = delta.was or "", delta.now or ""
        if level >= 3:  # "stalled→done": the failure says it failed
            was, now = was.removeprefix("failed: "), now.removeprefix("failed: ")
        text.append(gap)
        text.append(f"{was}→{now}", style=styles.outcome)
    for field in fields:
        text.append(gap)
        if level >= 3 and field.name == "cost":
            if field.short.startswith(DASH):  # "$—", "$— est./rep."
                value = "$" + field.short.replace("est./reported", "est./rep.")
            else:  # "$+0.000012", "~$−0.00002 est."
                value = field.short.replace("+$", "$+").replace(f"{MINUS}$", f"${MINUS}")
            text.append(value)
        else:
            text.append(field.name + ("" if level >= 3 else " "), style=styles.label)
            text.append(field.long if level < 2 else field.short)
        if field.verdict in ("better", "worse"):
            arrow = BETTER if field.verdict == "better" else WORSE
            style = styles.better if field.verdict == "better" else styles.worse
            text.append(arrow if level >= 2 else f" {arrow}", style=style)
            if level == 0 and field.word:
                text.append(f" {field.word}", style=style)
    if changed and level < 2:
        text.append(gap)
        text.append("was ", style=styles.label)
        text.append(delta.was or "", style=styles.outcome)
        text.append(" → now ", style=styles.label)
        text.append(delta.now or "", style=styles.outcome)
    return text


def delta_plain(delta: PaneDelta, width: int = 1000) -> str:
    """The line as plain text (tests, logs)."""
    return delta_line(delta, width).plain


__all__ = ["DELTA_HELP", "DeltaStyles", "PaneDelta", "delta_line", "delta_plain",
           "outcome", "pane_delta", "rerun_deltas"]
