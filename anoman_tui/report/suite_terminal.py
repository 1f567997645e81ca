"""A suite run on a terminal, with Rich: the summary `eval` prints at its end (and `runs
show` prints again), the list of runs (`anoman-tui runs`) and `runs diff`'s figures, each
laid out for the width there is. The figures and lines are `suite_text`'s and
`suite_diff`'s (plain text); this module only lays them out, in colour on a terminal.
It is imported only to print one of these: `eval --json` never loads it.

Everything a cell holds came from a model, a suite file or a server: it is printed as
`rich.text.Text` (never markup) with terminal control sequences stripped.

May import: the standard library, Rich, `anoman_tui.suites.model` and the report's
own modules. Never Textual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import IO

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

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
from anoman_tui.suites.model import CellResult, ModelRating, RunSummary, Suite

PIPED_WIDTH = 80
"""The width a summary is laid out for off a terminal with no `COLUMNS` (a CI log)."""
FAILED_SHOWN = 20
"""How many failed cells the summary lists; the rest are in `runs show --json`."""


# --- laying out for the width there is ------------------------------------------------
#
# A table is printed only when it fits the width whole; else the same figures go in
# blocks, one per model (or run), label and value per line, which fit 80 columns. Rich
# squeezing a table to fit cuts its cells (`1…` for a pass rate) and folds names over
# lines: never that. Text wraps between words, never inside a number.


def output_console(file: IO[str] | None = None, *, soft_wrap: bool = False) -> Console:
    """The console a summary is printed on: a terminal's width, else `COLUMNS` when set,
    else (piped, a CI log) a fixed `PIPED_WIDTH`, whatever terminal stdin or stderr is."""
    console = Console(file=file, highlight=False, soft_wrap=soft_wrap)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        console.width = PIPED_WIDTH
    return console


def fits(console: Console, renderable: RenderableType) -> bool:
    """`renderable` at its natural width fits the console: nothing would be squeezed."""
    natural = console.measure(renderable, options=console.options.update_width(100_000))
    return natural.maximum <= console.width


def say(console: Console, renderable: RenderableType | str, indent: int = 0) -> None:
    """Print `renderable` at the console's width whatever its `soft_wrap`: text wrapped
    between words (a word longer than a line folded, never cut), its lines indented by
    `indent` and without trailing spaces."""
    if isinstance(renderable, str):
        renderable = Text(renderable)
    if not isinstance(renderable, Text):
        console.print(renderable, soft_wrap=False)
        return
    lines = renderable.wrap(console, max(1, console.width - indent), overflow="fold")
    for line in lines:
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True)


def model_blocks(console: Console, summary: RunSummary) -> None:
    """The per-model figures of `model_table`, one block per model."""
    say(console, Text("Per model", style="italic"))
    for m in summary.models:
        cost = usd(m.cost_usd, m.cost_estimated)
        per_pass = usd(m.cost_per_pass_usd, m.cost_estimated)
        failures = failures_text(m.failures, m.not_run)
        say(console, Text(model_label(m.model, m.simulated), style="bold"))
        for label, value, style in (
                ("passed", pass_text(m), ""),
                ("failures", failures, "red" if m.failures else ""),
                ("TTFT", f"p50 {seconds(m.ttft_p50_s)}, p95 {seconds(m.ttft_p95_s)}", ""),
                ("tok/s", f"p50 {rate(m.tokens_per_s_p50)}", ""),
                ("e2e", f"p50 {seconds(m.e2e_p50_s)}, p95 {seconds(m.e2e_p95_s)}", ""),
                ("cost", f"{cost}, per pass {per_pass}", "")):
            say(console, Text(f"{label:<8}  {value}", style=style), 2)


def pair_blocks(console: Console, summary: RunSummary) -> None:
    """The pairs of `pair_table`, one block per pair."""
    say(console, Text("Pairs (a vs b, on the cells judged for both)", style="italic"))
    simulated = {m.model for m in summary.models if m.simulated}
    for p in summary.pairs:
        a, b = (model_label(x, x in simulated) for x in (p.a, p.b))
        say(console, Text(f"{a} vs {b}", style="bold"), 2)
        say(console, f"paired {p.paired}, a only {p.a_only}, b only {p.b_only}, "
                     f"McNemar p {p_text(p)}", 4)
        say(console, f"TTFT a−b median {signed_seconds(p.ttft_diff_s)}, 95% CI "
                     f"{interval_seconds(p.ttft_diff_ci)}", 4)


def rating_blocks(console: Console, ratings: Sequence[ModelRating], self_judge: bool,
                  simulated: set[str] | frozenset[str] = frozenset()) -> None:
    """The judge's ratings of `ratings_table`, one line each (wrapped, never cut)."""
    say(console, Text("Judge ratings (pairwise, both orders)" + (
        " — self-judged: the judge is one of these models" if self_judge else ""),
        style="italic"))
    for r in sorted(ratings, key=lambda r: (-r.rating, r.model)):
        say(console, Text(model_label(r.model, r.model in simulated), style="bold"), 2)
        say(console, f"rating {r.rating:.0f}, 95% CI {r.ci[0]:.0f} to {r.ci[1]:.0f}, "
                     f"won {r.wins}, tied {r.ties}, lost {r.losses}", 4)


def _cell_row(console: Console, head: str, why: str) -> None:
    """`  case  model  #N  why` on one line when it fits, else why indented below."""
    line = f"  {head}  {why}"
    if len(line) <= console.width:
        say(console, Text(line))
    else:
        say(console, head, 2)
        say(console, why, 6)


# --- the summary ----------------------------------------------------------------------


def model_table(summary: RunSummary) -> Table:
    table = Table(title="Per model", title_justify="left", expand=False)
    for column, justify in (("model", "left"), ("passed/judged [95% CI]", "right"),
                            ("failures", "left"), ("TTFT p50", "right"),
                            ("TTFT p95", "right"), ("tok/s p50", "right"),
                            ("e2e p50", "right"), ("e2e p95", "right"), ("cost", "right"),
                            ("per pass", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.columns[0].no_wrap = True  # a cut name is a different model
    for m in summary.models:
        table.add_row(
            Text(one_line(model_label(m.model, m.simulated), 120)), Text(pass_text(m)),
            Text(failures_text(m.failures, m.not_run), style="red" if m.failures else ""),
            seconds(m.ttft_p50_s), seconds(m.ttft_p95_s), rate(m.tokens_per_s_p50),
            seconds(m.e2e_p50_s), seconds(m.e2e_p95_s),
            usd(m.cost_usd, m.cost_estimated), usd(m.cost_per_pass_usd, m.cost_estimated))
    return table


def pair_table(summary: RunSummary) -> Table:
    table = Table(title="Pairs (a vs b, on the cells judged for both)", title_justify="left",
                  expand=False)
    for column, justify in (("a vs b", "left"), ("paired", "right"), ("a only", "right"),
                            ("b only", "right"), ("McNemar p (Holm)", "right"),
                            ("TTFT a−b median", "right"), ("95% CI", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    # A narrow terminal breaks a long model name over lines, never cuts it: a cut name
    # is a different model.
    table.columns[0].overflow = "fold"
    simulated = {m.model for m in summary.models if m.simulated}
    for p in summary.pairs:
        a, b = (one_line(model_label(x, x in simulated), 80) for x in (p.a, p.b))
        table.add_row(Text(f"{a} vs {b}"), str(p.paired),
                      str(p.a_only), str(p.b_only), p_text(p), signed_seconds(p.ttft_diff_s),
                      interval_seconds(p.ttft_diff_ci))
    return table


def _simulated_models(summary: RunSummary, results: Iterable[CellResult]) -> list[str]:
    flagged = {m.model for m in summary.models if m.simulated}
    flagged |= {c.model for c in results if c.simulated}
    return [m.model for m in summary.models if m.model in flagged]


def print_summary(console: Console, *, suite: Suite, results: Sequence[CellResult],
                  summary: RunSummary, run_id: str, finished: bool, stopped: str | None,
                  skipped: Sequence[str] = (), user: str = "", saved: bool = True) -> None:
    """What `eval` prints at its end on a terminal, and `runs show` prints again; `user`:
    who started the run (named on its last line; "" when not known); `saved`: the run is
    in a history (else its last line offers no `--resume`)."""
    cases = len(suite.cases)
    say(console, Text(f"Suite {one_line(suite.name, 120)}: {cases} case"
                       f"{'' if cases == 1 else 's'} × {len(suite.models)} model"
                       f"{'' if len(suite.models) == 1 else 's'} × {suite.repeat} repeat"
                       f"{'' if suite.repeat == 1 else 's'}", style="bold"))
    table = model_table(summary)
    if fits(console, table):
        say(console, table)
    else:
        model_blocks(console, summary)
    simulated = _simulated_models(summary, results)
    if simulated:
        say(console, Text(
            f"simulated: {', '.join(one_line(m, 80) for m in simulated)} answered from the "
            "local gateway's simulated models, generated on this machine, not by the real "
            "models of those names", style="yellow"))
    if summary.pairs:
        pairs = pair_table(summary)
        if fits(console, pairs):
            say(console, pairs)
        else:
            pair_blocks(console, summary)
    if summary.judge is not None:
        say(console, Text(judge_line(summary.judge, results),
                           style="yellow" if summary.judge.self_judge else ""))
        bias = bias_line(summary.judge)
        if bias:
            say(console, Text(bias))
    if summary.ratings:
        self_judge = summary.judge is not None and summary.judge.self_judge
        ratings = ratings_table(summary.ratings, self_judge, set(simulated))
        if fits(console, ratings):
            say(console, ratings)
        else:
            rating_blocks(console, summary.ratings, self_judge, set(simulated))
    failed = [c for c in results if c.failed]
    if failed:
        say(console, Text(f"Failed ({len(failed)}"
                           + (f", first {FAILED_SHOWN} shown" if len(failed) > FAILED_SHOWN
                              else "") + "):", style="bold red"))
        for cell in failed[:FAILED_SHOWN]:
            why = one_line("; ".join(failed_reasons(cell)), 300)
            model = model_label(cell.model, cell.simulated or cell.model in simulated)
            _cell_row(console, f"{one_line(cell.case, 80)}  {one_line(model, 80)}  "
                               f"#{cell.repeat}", why)
    every_skip = list(dict.fromkeys([*suite.skipped, *skipped]))
    if every_skip:
        say(console, Text(f"skipped (unsupported): {one_line('; '.join(every_skip), 500)}",
                           style="yellow"))
    by = f" by {one_line(user, 64)}" if user else ""
    if finished and saved:
        say(console, Text(f"run {run_id}{by}: finished. Reopen it with `anoman-tui runs show "
                           f"{run_id}`."))
    elif finished:
        say(console, Text(f"run {run_id}{by}: finished; not saved (the history is off)."))
    elif saved:
        why = f" ({one_line(stopped, 120)})" if stopped else ""
        say(console, Text(f"run {run_id}{by}: stopped{why}. Continue it with `anoman-tui "
                           f"eval --resume {run_id}`.", style="yellow"))
    else:  # nothing of it is in a history: a --resume would find no such run
        why = f" ({one_line(stopped, 120)})" if stopped else ""
        say(console, Text(f"run {run_id}{by}: stopped{why}; not saved (the history is "
                           "off), so it cannot be resumed: run the suite again.",
                           style="yellow"))


def ratings_table(ratings: Sequence[ModelRating], self_judge: bool,
                  simulated: set[str] | frozenset[str] = frozenset()) -> Table:
    """The judge's ratings, best first, with their intervals and pair outcomes."""
    title = "Judge ratings (pairwise, both orders)" + (
        " — self-judged: the judge is one of these models" if self_judge else "")
    table = Table(title=title, title_justify="left", expand=False)
    for column, justify in (("model", "left"), ("rating", "right"), ("95% CI", "right"),
                            ("won", "right"), ("tied", "right"), ("lost", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in sorted(ratings, key=lambda r: (-r.rating, r.model)):
        table.add_row(Text(one_line(model_label(r.model, r.model in simulated), 60)),
                      f"{r.rating:.0f}",
                      f"{r.ci[0]:.0f} to {r.ci[1]:.0f}", str(r.wins), str(r.ties),
                      str(r.losses))
    return table


# --- anoman-tui runs ------------------------------------------------------------------


def print_runs(console: Console, listings: Sequence[RunListingLike]) -> None:
    """`anoman-tui runs`: one row per stored suite run, newest as given first."""
    if not listings:
        say(console, Text("No suite runs yet: start one with `anoman-tui eval SUITE`."))
        return
    table = _runs_table(listings)
    if fits(console, table):
        say(console, table)
        return
    say(console, Text("Suite runs", style="italic"))
    for run in listings:
        head = f"{run.run_id}  {created_iso(run.created_at).replace('T', ' ')}"
        by = one_line(run.user, 40)
        say(console, Text(head + (f"  by {by}" if by else ""), style="bold"))
        for label, value in (("suite", one_line(run.name, 60)),
                             ("models", one_line(", ".join(run.models), 120)),
                             ("results", f"{run.results}, passed/judged "
                              + (f"{run.passed}/{run.judged}" if run.judged else "not judged")),
                             ("state", run_state(run))):
            say(console, f"{label:<7}  {value}", 2)


def _runs_table(listings: Sequence[RunListingLike]) -> Table:
    table = Table(title="Suite runs", title_justify="left", expand=False)
    for column, justify in (("run", "left"), ("created (UTC)", "left"), ("by", "left"),
                            ("suite", "left"), ("models", "left"), ("results", "right"),
                            ("passed/judged", "right"), ("state", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.columns[0].no_wrap = True
    for run in listings:
        table.add_row(
            Text(str(run.run_id)), created_iso(run.created_at).replace("T", " "),
            Text(one_line(run.user, 40) or DASH), Text(one_line(run.name, 60)),
            Text(one_line(", ".join(run.models), 120)),
            str(run.results), f"{run.passed}/{run.judged}" if run.judged else "not judged",
            Text(run_state(run), style="" if run.finished else "yellow"))
    return table


# --- anoman-tui runs diff -------------------------------------------------------------


def _diff_table(diff: RunDiff) -> Table:
    table = Table(title="Change per model (new − old, on the cells both runs have)",
                  title_justify="left", expand=False)
    for column, justify in (("model", "left"), ("matched", "right"), ("pass→fail", "right"),
                            ("fail→pass", "right"), ("TTFT median", "right"),
                            ("95% CI", "right"), ("cost per cell", "right"),
                            ("95% CI", "right"), ("cost old → new", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.columns[0].no_wrap = True
    for m in diff.models:
        table.add_row(Text(one_line(m.model, 120)), str(m.matched),
                      Text(str(len(m.regressions)), style="red" if m.regressions else ""),
                      Text(str(len(m.improvements)), style="green" if m.improvements else ""),
                      signed_seconds(m.ttft_diff_s), interval_seconds(m.ttft_diff_ci),
                      signed_usd(m.cost_diff_usd), cost_ci_text(m), cost_totals_text(m))
    return table


def _diff_blocks(console: Console, diff: RunDiff) -> None:
    """The table's figures, one block per model, for a width the table does not fit."""
    say(console, Text("Change per model (new − old, on the cells both runs have)",
                      style="italic"))
    for m in diff.models:
        say(console, Text(one_line(m.model, 120), style="bold"))
        for line in (f"matched {m.matched}, pass→fail {len(m.regressions)}, fail→pass "
                     f"{len(m.improvements)}",
                     f"TTFT median {signed_seconds(m.ttft_diff_s)}, 95% CI "
                     f"{interval_seconds(m.ttft_diff_ci)}",
                     f"cost per cell {signed_usd(m.cost_diff_usd)}, 95% CI {cost_ci_text(m)}",
                     f"cost old → new {cost_totals_text(m)}"):
            say(console, line, 2)


def print_diff(console: Console, diff: RunDiff,
               judges: tuple[RunSummary | None, RunSummary | None] = (None, None)) -> None:
    """The per-model table (blocks when it does not fit the width), each run's judge,
    each regression and improvement, the changed cases, then the verdict."""
    table = _diff_table(diff)
    if fits(console, table):
        say(console, table)
    else:
        _diff_blocks(console, diff)
    for label, summary in (("old", judges[0]), ("new", judges[1])):
        if summary is None or summary.judge is None:
            continue
        judge = summary.judge
        cost = DASH if judge.cost_usd is None else f"${judge.cost_usd:.6f}"
        ratings = ", ".join(f"{one_line(r.model, 60)} {r.rating:.0f} [{r.ci[0]:.0f}, "
                            f"{r.ci[1]:.0f}]" for r in sorted(
                                summary.ratings, key=lambda r: (-r.rating, r.model)))
        say(console, Text(f"judge ({label} run) {one_line(judge.model, 80)}: {judge.calls} "
                          f"calls, {judge.errors} errors, {cost}"
                          + (f"; ratings {ratings}" if ratings else "")
                          + ("; self-judged" if judge.self_judge else "")))
    for label, changes, style in (("Regressions (pass → fail)", diff.regressions, "red"),
                                  ("Improvements (fail → pass)", diff.improvements, "green")):
        if changes:
            say(console, Text(f"{label}: {len(changes)}", style=f"bold {style}"))
            for c in changes:
                say(console, f"{one_line(c.case, 80)}  {one_line(c.model, 80)}  #{c.repeat}",
                    2)
    for label, names in (("only in the old run", diff.only_in_old),
                         ("only in the new run", diff.only_in_new)):
        if names:
            say(console, Text(f"{label}: {one_line(', '.join(names), 300)}", style="yellow"))
    if diff.changed:
        say(console, Text(f"Changed cases (not compared): {len(diff.changed)}",
                          style="bold yellow"))
        for change in diff.changed:
            say(console, f"{one_line(change.case, 80)}  changed: {', '.join(change.what)}",
                2)
    if diff.cases is not None:
        for label, names in (("cases only in the old run", diff.cases.only_in_old),
                             ("cases only in the new run", diff.cases.only_in_new)):
            if names:
                say(console, Text(f"{label} (not compared): "
                                  f"{one_line(', '.join(names), 300)}", style="yellow"))
    apart = f" ({len(diff.changed)} changed case(s) not compared)" if diff.changed else ""
    if diff.regressed:
        say(console, Text(f"regressed: {len(diff.regressions)} case(s) went pass → fail"
                          + apart, style="bold red"))
    else:
        say(console, Text("no regression" + apart, style="green"))
