"""A suite run's summary, the list of runs and `runs diff`, written as text onto a
`Sink` (`report.text_layout`): plain into a pipe, a CI log or a buffer (`PlainSink`), in
colour on a terminal (`report.suite_terminal`). The same lines and tables either way;
each table is written only when it fits the width whole, else its figures go in
blocks, one per model (or run or pair), label and value per line, which fit 80 columns.
A squeezed table would cut its cells (`1…` for a pass rate) and fold names over lines:
never that. Text wraps between words, never inside a number.

Everything a cell holds came from a model, a suite file or a server: it is written as
text (never markup) with terminal control sequences stripped.

May import: the standard library, `anoman_tui.suites.model` and the report's own
plain-text modules. Never Rich, never Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from anoman_tui.report.suite_diff import RunDiff, cost_ci_text, cost_totals_text
from anoman_tui.report.suite_text import (
    DASH,
    RunListingLike,
    bias_line,
    created_iso,
    failed_reasons,
    failures_text,
    interval_seconds,
    judge_line,
    model_label,
    one_line,
    p_text,
    pass_text,
    rate,
    run_state,
    seconds,
    signed_seconds,
    signed_usd,
    usd,
)
from anoman_tui.report.text_layout import Column, Grid, Sink, Span, rows
from anoman_tui.suites.model import CellResult, ModelRating, RunSummary, Suite

FAILED_SHOWN = 20
"""How many failed cells the summary lists; the rest are in `runs show --json`."""


def _justify(word: str) -> Literal["left", "right"]:
    return "right" if word == "right" else "left"


def model_blocks(sink: Sink, summary: RunSummary) -> None:
    """The per-model figures of `model_table`, one block per model."""
    sink.line(Span("Per model", style="italic"))
    for m in summary.models:
        cost = usd(m.cost_usd, m.cost_estimated)
        per_pass = usd(m.cost_per_pass_usd, m.cost_estimated)
        failures = failures_text(m.failures, m.not_run)
        sink.line(Span(model_label(m.model, m.simulated), style="bold"))
        for label, value, style in (
                ("passed", pass_text(m), ""),
                ("failures", failures, "red" if m.failures else ""),
                ("TTFT", f"p50 {seconds(m.ttft_p50_s)}, p95 {seconds(m.ttft_p95_s)}", ""),
                ("tok/s", f"p50 {rate(m.tokens_per_s_p50)}", ""),
                ("e2e", f"p50 {seconds(m.e2e_p50_s)}, p95 {seconds(m.e2e_p95_s)}", ""),
                ("cost", f"{cost}, per pass {per_pass}", "")):
            sink.line(Span(f"{label:<8}  {value}", style=style), 2)


def pair_blocks(sink: Sink, summary: RunSummary) -> None:
    """The pairs of `pair_table`, one block per pair."""
    sink.line(Span("Pairs (a vs b, on the cells judged for both)", style="italic"))
    simulated = {m.model for m in summary.models if m.simulated}
    for p in summary.pairs:
        a, b = (model_label(x, x in simulated) for x in (p.a, p.b))
        sink.line(Span(f"{a} vs {b}", style="bold"), 2)
        sink.line(f"paired {p.paired}, a only {p.a_only}, b only {p.b_only}, "
                     f"McNemar p {p_text(p)}", 4)
        sink.line(f"TTFT a−b median {signed_seconds(p.ttft_diff_s)}, 95% CI "
                     f"{interval_seconds(p.ttft_diff_ci)}", 4)


def rating_blocks(sink: Sink, ratings: Sequence[ModelRating], self_judge: bool,
                  simulated: set[str] | frozenset[str] = frozenset()) -> None:
    """The judge's ratings of `ratings_table`, one line each (wrapped, never cut)."""
    sink.line(Span("Judge ratings (pairwise, both orders)" + (
        " — self-judged: the judge is one of these models" if self_judge else ""),
        style="italic"))
    for r in sorted(ratings, key=lambda r: (-r.rating, r.model)):
        sink.line(Span(model_label(r.model, r.model in simulated), style="bold"), 2)
        sink.line(f"rating {r.rating:.0f}, 95% CI {r.ci[0]:.0f} to {r.ci[1]:.0f}, "
                     f"won {r.wins}, tied {r.ties}, lost {r.losses}", 4)


def _cell_row(sink: Sink, head: str, why: str) -> None:
    """`  case  model  #N  why` on one line when it fits, else why indented below."""
    line = f"  {head}  {why}"
    if len(line) <= sink.width:
        sink.line(Span(line))
    else:
        sink.line(head, 2)
        sink.line(why, 6)


# --- the summary ----------------------------------------------------------------------


def model_table(summary: RunSummary) -> Grid:
    columns = tuple(Column(header, _justify(j)) for header, j in (
        ("model", "left"), ("passed/judged [95% CI]", "right"), ("failures", "left"),
        ("TTFT p50", "right"), ("TTFT p95", "right"), ("tok/s p50", "right"),
        ("e2e p50", "right"), ("e2e p95", "right"), ("cost", "right"),
        ("per pass", "right")))
    # (A narrow terminal never cuts the model's name: a cut name is a different model.)
    columns = (replace(columns[0], overflow="no_wrap"), *columns[1:])
    return Grid("Per model", columns, rows(*(
        (one_line(model_label(m.model, m.simulated), 120), pass_text(m),
         Span(failures_text(m.failures, m.not_run), style="red" if m.failures else ""),
         seconds(m.ttft_p50_s), seconds(m.ttft_p95_s), rate(m.tokens_per_s_p50),
         seconds(m.e2e_p50_s), seconds(m.e2e_p95_s),
         usd(m.cost_usd, m.cost_estimated), usd(m.cost_per_pass_usd, m.cost_estimated))
        for m in summary.models)))


def pair_table(summary: RunSummary) -> Grid:
    # A narrow terminal breaks a long model name over lines, never cuts it: a cut name
    # is a different model.
    columns = (Column("a vs b", "left", "fold"), *(Column(header, "right") for header in (
        "paired", "a only", "b only", "McNemar p (Holm)", "TTFT a−b median", "95% CI")))
    simulated = {m.model for m in summary.models if m.simulated}
    pairs = []
    for p in summary.pairs:
        a, b = (one_line(model_label(x, x in simulated), 80) for x in (p.a, p.b))
        pairs.append((f"{a} vs {b}", str(p.paired), str(p.a_only), str(p.b_only), p_text(p),
                      signed_seconds(p.ttft_diff_s), interval_seconds(p.ttft_diff_ci)))
    return Grid("Pairs (a vs b, on the cells judged for both)", columns, rows(*pairs))


def _simulated_models(summary: RunSummary, results: Iterable[CellResult]) -> list[str]:
    flagged = {m.model for m in summary.models if m.simulated}
    flagged |= {c.model for c in results if c.simulated}
    return [m.model for m in summary.models if m.model in flagged]


def write_summary(sink: Sink, *, suite: Suite, results: Sequence[CellResult],
                  summary: RunSummary, run_id: str, finished: bool, stopped: str | None,
                  skipped: Sequence[str] = (), user: str = "", saved: bool = True) -> None:
    """What `eval` prints at its end on a terminal, and `runs show` prints again; `user`:
    who started the run (named on its last line; "" when not known); `saved`: the run is
    in a history (else its last line offers no `--resume`)."""
    cases = len(suite.cases)
    sink.line(Span(f"Suite {one_line(suite.name, 120)}: {cases} case"
                       f"{'' if cases == 1 else 's'} × {len(suite.models)} model"
                       f"{'' if len(suite.models) == 1 else 's'} × {suite.repeat} repeat"
                       f"{'' if suite.repeat == 1 else 's'}", style="bold"))
    table = model_table(summary)
    if sink.fits(table):
        sink.grid(table)
    else:
        model_blocks(sink, summary)
    simulated = _simulated_models(summary, results)
    if simulated:
        sink.line(Span(
            f"simulated: {', '.join(one_line(m, 80) for m in simulated)} answered from the "
            "local gateway's simulated models, generated on this machine, not by the real "
            "models of those names", style="yellow"))
    if summary.pairs:
        pairs = pair_table(summary)
        if sink.fits(pairs):
            sink.grid(pairs)
        else:
            pair_blocks(sink, summary)
    if summary.judge is not None:
        sink.line(Span(judge_line(summary.judge, results),
                           style="yellow" if summary.judge.self_judge else ""))
        bias = bias_line(summary.judge)
        if bias:
            sink.line(Span(bias))
    if summary.ratings:
        self_judge = summary.judge is not None and summary.judge.self_judge
        ratings = ratings_table(summary.ratings, self_judge, set(simulated))
        if sink.fits(ratings):
            sink.grid(ratings)
        else:
            rating_blocks(sink, summary.ratings, self_judge, set(simulated))
    failed = [c for c in results if c.failed]
    if failed:
        sink.line(Span(f"Failed ({len(failed)}"
                           + (f", first {FAILED_SHOWN} shown" if len(failed) > FAILED_SHOWN
                              else "") + "):", style="bold red"))
        for cell in failed[:FAILED_SHOWN]:
            why = one_line("; ".join(failed_reasons(cell)), 300)
            model = model_label(cell.model, cell.simulated or cell.model in simulated)
            _cell_row(sink, f"{one_line(cell.case, 80)}  {one_line(model, 80)}  "
                               f"#{cell.repeat}", why)
    every_skip = list(dict.fromkeys([*suite.skipped, *skipped]))
    if every_skip:
        sink.line(Span(f"skipped (unsupported): {one_line('; '.join(every_skip), 500)}",
                           style="yellow"))
    by = f" by {one_line(user, 64)}" if user else ""
    if finished and saved:
        sink.line(Span(f"run {run_id}{by}: finished. Reopen it with `anoman-tui runs show "
                           f"{run_id}`."))
    elif finished:
        sink.line(Span(f"run {run_id}{by}: finished; not saved (the history is off)."))
    elif saved:
        why = f" ({one_line(stopped, 120)})" if stopped else ""
        sink.line(Span(f"run {run_id}{by}: stopped{why}. Continue it with `anoman-tui "
                           f"eval --resume {run_id}`.", style="yellow"))
    else:  # nothing of it is in a history: a --resume would find no such run
        why = f" ({one_line(stopped, 120)})" if stopped else ""
        sink.line(Span(f"run {run_id}{by}: stopped{why}; not saved (the history is "
                           "off), so it cannot be resumed: run the suite again.",
                           style="yellow"))


def ratings_table(ratings: Sequence[ModelRating], self_judge: bool,
                  simulated: set[str] | frozenset[str] = frozenset()) -> Grid:
    """The judge's ratings, best first, with their intervals and pair outcomes."""
    title = "Judge ratings (pairwise, both orders)" + (
        " — self-judged: the judge is one of these models" if self_judge else "")
    columns = (Column("model"), *(Column(header, "right") for header in (
        "rating", "95% CI", "won", "tied", "lost")))
    return Grid(title, columns, rows(*(
        (one_line(model_label(r.model, r.model in simulated), 60), f"{r.rating:.0f}",
         f"{r.ci[0]:.0f} to {r.ci[1]:.0f}", str(r.wins), str(r.ties), str(r.losses))
        for r in sorted(ratings, key=lambda r: (-r.rating, r.model)))))


# --- anoman-tui runs ------------------------------------------------------------------


def write_runs(sink: Sink, listings: Sequence[RunListingLike]) -> None:
    """`anoman-tui runs`: one row per stored suite run, newest as given first."""
    if not listings:
        sink.line(Span("No suite runs yet: start one with `anoman-tui eval SUITE`."))
        return
    table = _runs_table(listings)
    if sink.fits(table):
        sink.grid(table)
        return
    sink.line(Span("Suite runs", style="italic"))
    for run in listings:
        head = f"{run.run_id}  {created_iso(run.created_at).replace('T', ' ')}"
        by = one_line(run.user, 40)
        sink.line(Span(head + (f"  by {by}" if by else ""), style="bold"))
        for label, value in (("suite", one_line(run.name, 60)),
                             ("models", one_line(", ".join(run.models), 120)),
                             ("results", f"{run.results}, passed/judged "
                              + (f"{run.passed}/{run.judged}" if run.judged else "not judged")),
                             ("state", run_state(run))):
            sink.line(f"{label:<7}  {value}", 2)


def _runs_table(listings: Sequence[RunListingLike]) -> Grid:
    columns = tuple(Column(header, _justify(j)) for header, j in (
        ("run", "left"), ("created (UTC)", "left"), ("by", "left"), ("suite", "left"),
        ("models", "left"), ("results", "right"), ("passed/judged", "right"),
        ("state", "left")))
    columns = (replace(columns[0], overflow="no_wrap"), *columns[1:])
    return Grid("Suite runs", columns, rows(*(
        (str(run.run_id), created_iso(run.created_at).replace("T", " "),
         one_line(run.user, 40) or DASH, one_line(run.name, 60),
         one_line(", ".join(run.models), 120), str(run.results),
         f"{run.passed}/{run.judged}" if run.judged else "not judged",
         Span(run_state(run), style="" if run.finished else "yellow"))
        for run in listings)))


# --- anoman-tui runs diff -------------------------------------------------------------


def _diff_table(diff: RunDiff) -> Grid:
    columns = tuple(Column(header, _justify(j)) for header, j in (
        ("model", "left"), ("matched", "right"), ("pass→fail", "right"),
        ("fail→pass", "right"), ("TTFT median", "right"), ("95% CI", "right"),
        ("cost per cell", "right"), ("95% CI", "right"), ("cost old → new", "right")))
    columns = (replace(columns[0], overflow="no_wrap"), *columns[1:])
    return Grid("Change per model (new − old, on the cells both runs have)", columns, rows(*(
        (one_line(m.model, 120), str(m.matched),
         Span(str(len(m.regressions)), style="red" if m.regressions else ""),
         Span(str(len(m.improvements)), style="green" if m.improvements else ""),
         signed_seconds(m.ttft_diff_s), interval_seconds(m.ttft_diff_ci),
         signed_usd(m.cost_diff_usd), cost_ci_text(m), cost_totals_text(m))
        for m in diff.models)))


def _diff_blocks(sink: Sink, diff: RunDiff) -> None:
    """The table's figures, one block per model, for a width the table does not fit."""
    sink.line(Span("Change per model (new − old, on the cells both runs have)",
                      style="italic"))
    for m in diff.models:
        sink.line(Span(one_line(m.model, 120), style="bold"))
        for line in (f"matched {m.matched}, pass→fail {len(m.regressions)}, fail→pass "
                     f"{len(m.improvements)}",
                     f"TTFT median {signed_seconds(m.ttft_diff_s)}, 95% CI "
                     f"{interval_seconds(m.ttft_diff_ci)}",
                     f"cost per cell {signed_usd(m.cost_diff_usd)}, 95% CI {cost_ci_text(m)}",
                     f"cost old → new {cost_totals_text(m)}"):
            sink.line(line, 2)


def write_diff(sink: Sink, diff: RunDiff,
               judges: tuple[RunSummary | None, RunSummary | None] = (None, None)) -> None:
    """The per-model table (blocks when it does not fit the width), each run's judge,
    each regression and improvement, the changed cases, then the verdict."""
    table = _diff_table(diff)
    if sink.fits(table):
        sink.grid(table)
    else:
        _diff_blocks(sink, diff)
    for label, summary in (("old", judges[0]), ("new", judges[1])):
        if summary is None or summary.judge is None:
            continue
        judge = summary.judge
        cost = DASH if judge.cost_usd is None else f"${judge.cost_usd:.6f}"
        ratings = ", ".join(f"{one_line(r.model, 60)} {r.rating:.0f} [{r.ci[0]:.0f}, "
                            f"{r.ci[1]:.0f}]" for r in sorted(
                                summary.ratings, key=lambda r: (-r.rating, r.model)))
        sink.line(Span(f"judge ({label} run) {one_line(judge.model, 80)}: {judge.calls} "
                          f"calls, {judge.errors} errors, {cost}"
                          + (f"; ratings {ratings}" if ratings else "")
                          + ("; self-judged" if judge.self_judge else "")))
    for label, changes, style in (("Regressions (pass → fail)", diff.regressions, "red"),
                                  ("Improvements (fail → pass)", diff.improvements, "green")):
        if changes:
            sink.line(Span(f"{label}: {len(changes)}", style=f"bold {style}"))
            for c in changes:
                sink.line(f"{one_line(c.case, 80)}  {one_line(c.model, 80)}  #{c.repeat}",
                    2)
    for label, names in (("only in the old run", diff.only_in_old),
                         ("only in the new run", diff.only_in_new)):
        if names:
            sink.line(Span(f"{label}: {one_line(', '.join(names), 300)}", style="yellow"))
    if diff.changed:
        sink.line(Span(f"Changed cases (not compared): {len(diff.changed)}",
                          style="bold yellow"))
        for change in diff.changed:
            sink.line(f"{one_line(change.case, 80)}  changed: {', '.join(change.what)}",
                2)
    if diff.cases is not None:
        for label, names in (("cases only in the old run", diff.cases.only_in_old),
                             ("cases only in the new run", diff.cases.only_in_new)):
            if names:
                sink.line(Span(f"{label} (not compared): "
                                  f"{one_line(', '.join(names), 300)}", style="yellow"))
    apart = f" ({len(diff.changed)} changed case(s) not compared)" if diff.changed else ""
    if diff.regressed:
        sink.line(Span(f"regressed: {len(diff.regressions)} case(s) went pass → fail"
                          + apart, style="bold red"))
    else:
        sink.line(Span("no regression" + apart, style="green"))
