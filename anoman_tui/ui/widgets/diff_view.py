"""`DiffView`: a pane's answer shown as a word diff against another pane's answer.

A summary line (how many words came and went, where the answers first part), a note
while either answer still streams, and the answer itself with the other pane's words
it lacks as `[-words-]` and its own new words as `{+words+}` (`anoman_tui.ui.render.diff`),
scrollable. The colours are the theme's (`$success`, `$error`, `$accent` in
anoman.tcss), so every theme shows them; the brackets say the same without colour.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from anoman_tui.ui.render.diff import WordDiff, render_diff, summary


class DiffBody(Widget):
    """The rendered diff; drawn again with the theme's styles when the theme changes."""

    COMPONENT_CLASSES = {"diff--insert", "diff--delete", "diff--marker"}

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.diff: WordDiff | None = None

    def show(self, diff: WordDiff) -> None:
        self.diff = diff
        self.refresh(layout=True)

    def render(self) -> Text:
        if self.diff is None:
            return Text()
        # Whole styles, not partial ones: a partial style drops the tint's transparency,
        # and the words would sit on a background of their own colour.
        return render_diff(
            self.diff,
            self.get_component_rich_style("diff--insert"),
            self.get_component_rich_style("diff--delete"),
            self.get_component_rich_style("diff--marker"),
        )


class DiffView(Vertical):
    """The summary, the streaming note and the scrollable diff of one pane."""

    def compose(self) -> ComposeResult:
        yield Static(classes="diff-summary")
        yield Static(classes="diff-note")
        with VerticalScroll(classes="diff-scroll"):
            yield DiffBody(classes="diff-body")

    @property
    def scroller(self) -> VerticalScroll:
        return self.query_one(".diff-scroll", VerticalScroll)

    @property
    def diff(self) -> WordDiff | None:
        return self.query_one(DiffBody).diff

    def show(self, diff: WordDiff, base_index: int | str, running: list[int]) -> None:
        """Show `diff` (against pane `base_index`, or the answer so named); `running`: the
        panes of the two that still stream, so the diff is of the text so far."""
        line = summary(diff, base_index)
        if running:
            line += " (so far)"
        self.query_one(".diff-summary", Static).update(Text(line))
        note = self.query_one(".diff-note", Static)
        note.display = bool(running)
        if running:
            names = " and ".join(str(i) for i in running)
            which = f"Pane {names} is" if len(running) == 1 else f"Panes {names} are"
            note.update(Text(f"{which} still streaming: the diff updates when "
                             f"{'it finishes' if len(running) == 1 else 'they finish'}."))
        self.query_one(DiffBody).show(diff)

    def summary_text(self) -> str:
        """The summary line and the note, as shown."""
        note = self.query_one(".diff-note", Static)
        lines = [str(self.query_one(".diff-summary", Static).render())]
        if note.display:
            lines.append(str(note.render()))
        return "\n".join(lines)
