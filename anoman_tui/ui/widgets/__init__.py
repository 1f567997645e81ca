"""Reusable widgets of the compare screen."""

from anoman_tui.ui.widgets.answer_view import AnswerView

__all__ = ["AnswerView"]
