"""Each suite result's answer text, for the reports that carry it (`eval --json`,
`--junit`, `runs show --json` and `--junit`).

A result read back from the history holds no answer: its text is a pane of its (case,
repeat)'s comparison (pane N is the suite's Nth model), so it is read from there. The
answers a run has in hand (its own cells, when they were kept) are used first.

Imports the history and the suites' records; never Rich or Textual.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import replace

from anoman_tui.history import HistoryStore, HistoryUnavailable
from anoman_tui.suites.model import NOT_RUN, CellResult


def with_answers(results: Sequence[CellResult], store: HistoryStore | None,
                 models: Sequence[str], in_hand: Iterable[CellResult] = ()
                 ) -> list[CellResult]:
    """`results` with their `answer` filled: from `in_hand` (same key), else from the
    comparison the history holds for it; "" when neither has it (never run, or its
    comparison is gone, or the history cannot be read now)."""
    known = {r.key: r.answer for r in in_hand if r.answer}
    pane_of = {model: pane for pane, model in enumerate(models, start=1)}
    texts: dict[int, dict[int, str]] = {}
    filled: list[CellResult] = []
    for result in results:
        answer = result.answer or known.get(result.key, "")
        if not answer and store is not None and result.status != NOT_RUN \
                and result.comparison_id is not None and result.model in pane_of:
            answer = _pane_texts(store, result.comparison_id, texts).get(
                pane_of[result.model], "")
        filled.append(result if answer == result.answer else replace(result, answer=answer))
    return filled


def _pane_texts(store: HistoryStore, comparison_id: int,
                texts: dict[int, dict[int, str]]) -> dict[int, str]:
    """A comparison's pane texts by pane, read once per comparison."""
    if comparison_id not in texts:
        found: dict[int, str] = {}
        with contextlib.suppress(HistoryUnavailable):
            record = store.get(comparison_id)
            if record is not None:
                found = {p.pane: p.text for p in record.panes}
        texts[comparison_id] = found
    return texts[comparison_id]
