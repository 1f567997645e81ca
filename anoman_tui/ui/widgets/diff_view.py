"""`DiffView`: a pane's answer shown as a word diff against another pane's answer.

A summary line (how many words came and went, where the answers first part), a note
while either answer still streams, and the answer itself with the other pane's words
it lacks as `[-words-]` and its own new words as `{+words+}` (`anoman_tui.ui.render.diff`),
scrollable. The colours are the theme's (`$success`, `$error`, `$accent` in
anoman.tcss), so every theme shows them; the brackets say the same without colour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    # Imported with the first diff shown (not before the first paint).
    from anoman_tui.ui.render.diff import WordDiff


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
        from anoman_tui.ui.render.diff import render_diff
        # Whole styles, not partial ones: a partial style drops the tint's transparency,
        # and the words would sit on a background of their own colour.
        return render_diff(
            self.diff,
            self.get_component_rich_style("diff--insert"),
            self.get_component_rich_style("diff--delete"),
            self.get_component_rich_style("diff--marker"),
        )


class DiffView(Vertical):
    """The summary, the streaming note and the scrollable diff of one pane.

    Its parts are mounted after the first frame: every pane has a diff view, hidden
    until F7, and their four widgets each were a sixth of the compare screen's widgets to
    mount and style before the first paint (benchmarks/startup.py). Mounted by then, a
    diff's first frame shows it whole."""

    def __init__(self, **kwargs: str) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._summary = Static(classes="diff-summary")
        self._note = Static(classes="diff-note")
        self._body = DiffBody(classes="diff-body")
        self._scroll = VerticalScroll(self._body, classes="diff-scroll")
        self._built = False

    def compose(self) -> ComposeResult:
        return iter(())  # its parts come after the first frame (`build`)

    def build(self) -> None:
        """Mount its parts (its screen's first frame drawn; or a diff shown before)."""
        if not self._built and self.is_attached:  # (a screen taken apart as the app quits)
            self._built = True
            self.mount(self._summary, self._note, self._scroll)

    @property
    def scroller(self) -> VerticalScroll:
        return self._scroll

    @property
    def diff(self) -> WordDiff | None:
        return self._body.diff

    def show(self, diff: WordDiff, base_index: int | str, running: list[int]) -> None:
        """Show `diff` (against pane `base_index`, or the answer so named); `running`: the
        panes of the two that still stream, so the diff is of the text so far."""
        from anoman_tui.ui.render.diff import summary

        self.build()  # (shown before the first frame: at once)
        line = summary(diff, base_index)
        if running:
            line += " (so far)"
        self._summary.update(Text(line))
        note = self._note
        note.display = bool(running)
        if running:
            names = " and ".join(str(i) for i in running)
            which = f"Pane {names} is" if len(running) == 1 else f"Panes {names} are"
            note.update(Text(f"{which} still streaming: the diff updates when "
                             f"{'it finishes' if len(running) == 1 else 'they finish'}."))
        self._body.show(diff)

    def summary_text(self) -> str:
        """The summary line and the note, as shown."""
        note = self._note
        lines = [str(self._summary.render())]
        if note.display:
            lines.append(str(note.render()))
        return "\n".join(lines)
