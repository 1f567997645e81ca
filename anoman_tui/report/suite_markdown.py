"""A suite run as Markdown (the suite screen's Ctrl+S → Markdown): the run, per model
the figures `eval` prints, the pairs, the judge's ratings, and the cells that failed.

Every text that came from a suite file, a model or a server (names, case ids, prompts,
failure reasons) is escaped for a Markdown table cell or line (`report.markdown.cell`):
it can neither end a cell nor start markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from anoman_tui.report.markdown import cell
from anoman_tui.report.suite_text import (
    created_iso,
    failed_reasons,
    failures_text,
    interval_seconds,
    model_label,
    p_text,
    pass_text,
    rate,
    seconds,
    signed_seconds,
    usd,
)
from anoman_tui.suites.model import CellResult, RunSummary, Suite

FAILED_LISTED = 200
"""Failed cells listed at most (the HTML and JSON reports have every cell)."""


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def suite_markdown(*, suite: Suite, results: Sequence[CellResult], summary: RunSummary,
                   run_id: str, created_at: float, finished: bool,
                   stopped: str | None) -> str:
    state = "finished" if finished else f"stopped ({stopped or 'not finished'})"
    lines = [f"# Suite {cell(suite.name)}", "",
             f"Run `{run_id}` · {created_iso(created_at)} · {state} · {len(suite.cases)} "
             f"cases × {len(summary.models)} models × {suite.repeat} repeats", ""]
    simulated = [m.model for m in summary.models if m.simulated]
    if simulated:
        lines += [f"Simulated (the local gateway's models, not the real ones): "
                  f"{', '.join(cell(m) for m in simulated)}", ""]
    lines += ["## Per model", "",
              _row(("model", "passed/judged [95% CI]", "failures", "TTFT p50", "TTFT p95",
                    "tok/s p50", "e2e p50", "cost", "per pass")),
              "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for m in summary.models:
        lines.append(_row((model_label(m.model, m.simulated), pass_text(m),
                           failures_text(m.failures, m.not_run), seconds(m.ttft_p50_s),
                           seconds(m.ttft_p95_s), rate(m.tokens_per_s_p50),
                           seconds(m.e2e_p50_s), usd(m.cost_usd, m.cost_estimated),
                           usd(m.cost_per_pass_usd, m.cost_estimated))))
    if summary.pairs:
        lines += ["", "## Pairs", "",
                  _row(("a vs b", "paired", "a only", "b only", "McNemar p (Holm)",
                        "TTFT a−b median", "95% CI")),
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for p in summary.pairs:
            lines.append(_row((f"{p.a} vs {p.b}", str(p.paired), str(p.a_only),
                               str(p.b_only), p_text(p), signed_seconds(p.ttft_diff_s),
                               interval_seconds(p.ttft_diff_ci))))
    if summary.ratings:
        lines += ["", "## Judge ratings (Bradley–Terry, 95% bootstrap interval)", "",
                  _row(("model", "rating", "95% CI", "wins", "ties", "losses")),
                  "|---|---:|---:|---:|---:|---:|"]
        for rating in summary.ratings:
            lines.append(_row((rating.model, f"{rating.rating:.0f}",
                               f"{rating.ci[0]:.0f}–{rating.ci[1]:.0f}", str(rating.wins),
                               str(rating.ties), str(rating.losses))))
    failed = [r for r in results if r.failed]
    if failed:
        lines += ["", f"## Failed ({len(failed)}"
                  + (f", first {FAILED_LISTED} listed" if len(failed) > FAILED_LISTED
                     else "") + ")", "",
                  _row(("case", "model", "repeat", "why")), "|---|---|---:|---|"]
        for r in failed[:FAILED_LISTED]:
            why = "; ".join(failed_reasons(r)) or r.failure or r.status
            lines.append(_row((r.case, r.model, str(r.repeat), why)))
    return "\n".join(lines) + "\n"
