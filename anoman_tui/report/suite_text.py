"""A suite run on a terminal: the summary `eval` prints at its end (and `runs show`
prints again), the one line per finished cell when output is piped, and the list of
runs (`anoman-tui runs`).

Everything a cell holds came from a model, a suite file or a server: it is printed as
`rich.text.Text` (never markup) with terminal control sequences stripped. Costs read
as `Cost.shown` writes them (anoman_tui/streaming/cost.py): `~` and `(est.)` when any
part is an estimate. The small formatters here are shared by the HTML report.

May import: the standard library, Rich, `anoman_tui.suites.model`, `anoman_tui.safe_text`
and `anoman_tui.streaming.cost`. Never Textual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import IO, Protocol

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from anoman_tui.safe_text import terminal_safe
from anoman_tui.suites.model import (
    NOT_RUN,
    CellResult,
    JudgeSummary,
    ModelRating,
    ModelSummary,
    PairSummary,
    RunSummary,
    Suite,
)

DASH = "—"
SIMULATED = "simulated"
PIPED_WIDTH = 80
"""The width a summary is laid out for off a terminal with no `COLUMNS` (a CI log)."""
FAILED_SHOWN = 20
"""How many failed cells the summary lists; the rest are in `runs show --json`."""


class RunListingLike(Protocol):
    """What `print_runs` and `runs_json` read of a stored run (the history's `RunListing`)."""

    @property
    def run_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def created_at(self) -> float: ...
    @property
    def models(self) -> Sequence[str]: ...
    @property
    def results(self) -> int: ...
    @property
    def passed(self) -> int: ...
    @property
    def judged(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def stopped(self) -> str | None: ...
    @property
    def user(self) -> str: ...


# --- formatters shared with suite_html -------------------------------------------------


def one_line(text: str, limit: int = 200) -> str:
    """Untrusted text for one line: controls stripped, whitespace folded, cut at `limit`."""
    folded = " ".join(terminal_safe(text).split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def model_label(model: str, simulated: bool) -> str:
    """`anoman-lite (simulated)`: a simulated model never passes for the real one."""
    return f"{model} ({SIMULATED})" if simulated else model


def seconds(value: float | None, digits: int = 2) -> str:
    return DASH if value is None else f"{value:.{digits}f} s"


def signed_seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:+.3f} s"


def interval_seconds(ci: tuple[float, float] | None) -> str:
    return DASH if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}] s"


def rate(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}"


def usd(amount: Decimal | float | None, estimated: bool = False) -> str:
    """A sum of costs: six decimals as the gateway writes them, `~… (est.)` when any part
    is an estimate, `—` when none is known (never a made-up zero)."""
    if amount is None:
        return DASH
    value = Decimal(str(amount)).quantize(Decimal("0.000001"))
    text = f"${value:f}"
    return f"~{text} (est.)" if estimated else text


def signed_usd(amount: float | None) -> str:
    return DASH if amount is None else f"{amount:+.6f} USD"


def percent(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f}%"


def pass_text(m: ModelSummary) -> str:
    """`7/9 77.8% [45.3–93.7%]`: passed of judged, the rate and its 95% Wilson interval."""
    if not m.judged:
        return "not judged"
    ci = "" if m.pass_rate_ci is None else \
        f" [{m.pass_rate_ci[0] * 100:.1f}–{m.pass_rate_ci[1] * 100:.1f}%]"
    return f"{m.passed}/{m.judged} {percent(m.pass_rate)}{ci}"


def failures_text(failures: dict[str, int], not_run: int = 0) -> str:
    """`stream_error 2, http_error 1`; cells never run are counted apart."""
    parts = [f"{kind} {count}" for kind, count in sorted(failures.items()) if count]
    if not_run:
        parts.append(f"not run {not_run}")
    return ", ".join(parts) if parts else DASH


def p_text(p: PairSummary) -> str:
    if p.p_value is None:
        return DASH
    holm = DASH if p.p_value_holm is None else f"{p.p_value_holm:.3g}"
    return f"{p.p_value:.3g} (Holm {holm})"


def created_iso(created_at: float) -> str:
    """ISO 8601 in UTC, as the comparison reports write dates (report/facts.py)."""
    moment = datetime.fromtimestamp(created_at, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def failed_reasons(cell: CellResult) -> list[str]:
    """Why a cell failed: its stream's failure line, else each failed assertion's
    `type: reason`."""
    if not cell.completed and cell.status != NOT_RUN:
        return [f"{cell.status}: {cell.failure or 'the stream did not complete'}"]
    return [f"{a.type}: {a.reason}" for a in cell.assertions if a.passed is False]


def verdict(cell: CellResult) -> str:
    """PASS, FAIL, ERROR (the stream failed), SKIP (never run) or DONE (not judged)."""
    if cell.status == NOT_RUN:
        return "SKIP"
    if not cell.completed:
        return "ERROR"
    if cell.passed is None:
        return "DONE"
    return "PASS" if cell.passed else "FAIL"


# --- one line per finished cell -------------------------------------------------------


def cell_line(cell: CellResult) -> str:
    """The line printed per finished cell when output is piped:
    `PASS  refund  claude-sonnet-4-6  #2  ttft 0.41 s  $0.0012`; a failure adds why."""
    parts = [f"{verdict(cell):<5}", one_line(cell.case, 80),
             one_line(model_label(cell.model, cell.simulated), 80), f"#{cell.repeat}"]
    if cell.completed:
        parts.append(f"ttft {seconds(cell.ttft_s)}" + (" (cache hit)" if cell.cache_hit else ""))
        parts.append(cell.cost.shown())
        if cell.passed is None:
            parts.append("not judged")
    elif cell.status != NOT_RUN:
        parts.append(cell.cost.shown())
    if cell.status == NOT_RUN:
        parts.append("not run (the cost limit was reached first)")
    else:
        reasons = failed_reasons(cell)
        if reasons:
            parts.append(one_line("; ".join(reasons), 300))
    if cell.retries:
        parts.append(f"retried {cell.retries}×")
    return "  ".join(parts)


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


def judge_line(judge: JudgeSummary, results: Sequence[CellResult]) -> str:
    """One line: what the judge did and cost, and what its errors left undecided."""
    cost = "cost unknown" if judge.cost_usd is None else f"${judge.cost_usd:.6f}"
    undecided = sum(1 for c in results if c.passed is None and c.judge_errors)
    name = model_label(judge.model, judge.simulated)
    line = (f"judge {one_line(name, 80)}: {judge.calls} call"
            f"{'' if judge.calls == 1 else 's'}, {judge.errors} error"
            f"{'' if judge.errors == 1 else 's'}, {cost} (apart from the models')")
    if undecided:
        line += (f"; {undecided} result{'' if undecided == 1 else 's'} undecided by its "
                 "errors (neither passed nor failed)")
    if judge.self_judge:
        line += "; self-judged: the judge is one of the models under test"
    return line


def bias_line(judge: JudgeSummary) -> str:
    """The judge's bias figures in one line (docs/judges.md); "" without pairwise verdicts."""
    if judge.position_consistency is None and judge.first_position_wins is None:
        return ""

    def share(value: float | None) -> str:
        return DASH if value is None else f"{value:.0%}"

    return (f"judge bias: position consistency {share(judge.position_consistency)}, "
            f"first-position wins {share(judge.first_position_wins)}, longer answer wins "
            f"{share(judge.longer_wins)}")


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
                             ("state", _state(run))):
            say(console, f"{label:<7}  {value}", 2)


def _state(run: RunListingLike) -> str:
    state = "finished" if run.finished else "stopped"
    if not run.finished and run.stopped:
        state += f" ({one_line(run.stopped, 60)})"
    return state


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
            Text(_state(run), style="" if run.finished else "yellow"))
    return table
