"""`compare`'s terminal output: the live progress table (or one line per milestone when
not on a terminal), each answer, the summary table with its failures, and a rerun's
table of what changed against the comparison it repeats.

Imports Rich (which Textual brings), never Textual itself. Model output is shown as
text, never as markup, with terminal control sequences stripped.
"""

from __future__ import annotations

import time

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from anoman_tui.headless.run import CompareRun, PaneProgress, ProgressListener, blind_failure
from anoman_tui.headless.spec import CompareSpec
from anoman_tui.history import ComparisonRecord
from anoman_tui.report.rerun import rerun_deltas
from anoman_tui.streaming import describe_failure
from anoman_tui.streaming.safe_text import mask_partial_end, mask_secrets, terminal_safe


def _fmt(value: float | None, unit: str, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


_STATUS_STYLE = {"completed": "green", "failed": "red", "cancelled": "yellow"}


def named(run: CompareRun, pane: PaneProgress) -> str:
    """What the output calls a pane's model: `anoman-lite (simulated)` when its server
    said the model is simulated (the local gateway's), so nobody takes it for the real one."""
    return f"{pane.shown} (simulated)" if run.simulated(pane) else pane.shown


def simulated_line(run: CompareRun) -> str | None:
    """The sentence below the summary when some answers were simulated, else None."""
    names = [p.shown for p in run.panes if p.result is not None and run.simulated(p)]
    if not names:
        return None
    return (f"simulated: {', '.join(names)} answered from the local gateway's simulated "
            "models, generated on this machine, not by the real models of those names")


def recorded_figures(run: CompareRun) -> dict[int, dict[str, float | None]] | None:
    """A replay's TTFT and tokens/s per pane as they were recorded (a replay at another
    speed measures its own pace, which is not the model's); None for a live run."""
    original = run.spec.original
    if run.spec.replay is None or original is None:
        return None
    return {p.pane: {"ttft_s": p.metrics.get("ttft_s"),
                     "output_tokens_per_s": p.metrics.get("output_tokens_per_s")}
            for p in original.panes}


def recorded_line(run: CompareRun) -> str | None:
    """Below a replay's summary: whose figures its TTFT and tok/s are."""
    original = run.spec.original
    if recorded_figures(run) is None or original is None:
        return None
    return (f"TTFT and tok/s: as recorded in comparison #{original.id}, not as replayed "
            f"at {run.spec.speed:g}×")


def summary_table(run: CompareRun) -> Table:
    """One row per model; a failure's description is below the table (`failure_lines`).
    A replay's TTFT and tok/s are the recorded ones, and headed so."""
    table = Table(title="Summary", title_justify="left", expand=False)
    longest = max((len(named(run, p)) for p in run.panes), default=5)
    # Models from more than one server: which one each streamed from.
    several = len({p.target for p in run.panes}) > 1 and not run.spec.blind
    recorded = recorded_figures(run)
    label = " (recorded)" if recorded is not None else ""
    columns = [("#", "right"), ("model", "left"), *([("target", "left")] if several else []),
               ("status", "left"), (f"TTFT{label}", "right"), (f"tok/s{label}", "right"),
               ("tokens", "right"), ("cost", "right")]
    for column, justify in columns:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    model_column = table.columns[1]  # never shortened: a cut name is a different model
    model_column.no_wrap, model_column.min_width = True, longest
    for pane in run.panes:
        r = pane.result
        if r is None:
            continue
        if r.usage is not None:
            tokens = f"{r.usage.prompt_tokens}→{r.usage.completion_tokens}"
        elif r.failure is not None and r.failure.completion_tokens is not None:
            tokens = f"→{r.failure.completion_tokens} (received)"
        elif r.metrics.chunks:
            # No usage from the server (a stream cut short): what arrived, counted here.
            tokens = f"~{r.metrics.chunks} received"
        else:
            tokens = "—"
        cost = "hidden until the vote" if run.spec.blind else run.cost(pane).shown()
        status = r.status + (" (cache hit)" if r.cache_hit else "")
        if r.cut_at_max_tokens:
            status += " (cut: max tokens)"
        ttft, rate = r.metrics.ttft_s, r.metrics.output_tokens_per_s
        if recorded is not None:
            figures = recorded.get(pane.pane, {})
            ttft, rate = figures.get("ttft_s"), figures.get("output_tokens_per_s")
        table.add_row(
            str(pane.pane),
            Text(named(run, pane)),
            *([Text(pane.target)] if several and not run.spec.blind else []),
            Text(status, style=_STATUS_STYLE.get(r.status, "")),
            _fmt(ttft, " s"),
            _fmt(rate, "", 1),
            tokens,
            cost,
        )
    return table


def rerun_table(original: ComparisonRecord, new: ComparisonRecord) -> Table:
    """Per pane, what changed against the comparison it repeats."""
    table = Table(title=f"Against comparison #{original.id}", title_justify="left",
                  expand=False)
    for column, justify in (("#", "right"), ("model", "left"), ("TTFT", "right"),
                            ("tok/s", "right"), ("cost", "right"), ("outcome", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.columns[1].no_wrap = True
    for pane, d in rerun_deltas(new.panes, original.panes, original.id or 0).items():
        now = next(p.model for p in new.panes if p.pane == pane)
        model = f"{d.original_model} → {now}" if d.original_model else now
        table.add_row(
            str(pane), Text(model), *d.cells(),
            Text(f"{d.outcome_was} → {d.outcome_now}" if d.was is not None
                 else f"{d.outcome_now} (unchanged)"))
    return table


def failure_lines(run: CompareRun) -> list[str]:
    """`failures:` and one line per failed model, for below the summary table."""
    lines = [f"  {p.pane} {p.shown}: {describe_failure(blind_failure(p)).line}"
             for p in run.panes if p.result is not None and p.result.failure is not None]
    return ["failures:", *lines] if lines else []


def progress_table(run: CompareRun, secrets: tuple[str, ...] = ()) -> Table:
    """The live view; `secrets` are masked in each latest text, a half-arrived one too."""
    table = Table(box=None, show_header=True, expand=True)
    table.add_column("#", width=2, justify="right")
    table.add_column("model", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("chunks", justify="right")
    table.add_column("latest text", no_wrap=True, overflow="ellipsis", ratio=1)
    for p in run.panes:
        tail = " ".join(mask_partial_end(mask_secrets(terminal_safe(p.tail), secrets),
                                         secrets).split())[-80:]
        table.add_row(
            str(p.pane),
            Text(p.shown),
            Text(p.state, style=_STATUS_STYLE.get(p.state, "cyan")),
            str(p.chunks),
            Text(tail, style="dim"),
        )
    return table


def answers(run: CompareRun) -> Group:
    """Each answer under a rule naming its pane and model, reasoning first if any."""
    parts: list[RenderableType] = []
    for p in run.panes:
        r = p.result
        if r is None:
            continue
        label = "" if r.committed else " [not committed]"
        parts.append(Rule(Text(f"{p.pane} · {named(run, p)}{label}"), align="left"))
        if r.reasoning:
            # Labelled: in a file, dim italics are gone and the two would run together.
            parts.append(Text("Reasoning:", style="bold"))
            parts.append(Text(terminal_safe(r.reasoning).strip(), style="dim italic"))
            parts.append(Text("Answer:", style="bold"))
        parts.append(Text(terminal_safe(r.text).strip() or "(no text)",
                          style="" if r.committed else "dim"))
    return Group(*parts)



def milestones(console: Console) -> ProgressListener:
    """One line per pane's milestone: the progress where no live table can be drawn."""
    def milestone(pane: PaneProgress, what: str) -> None:
        if what == "first_token" and pane.result is None:
            console.print(f"[{pane.pane}] {escape(pane.shown)}: streaming")
        elif what == "thinking":
            console.print(f"[{pane.pane}] {escape(pane.shown)}: thinking")
        elif what == "done" and pane.result is not None:
            r = pane.result
            why = f" ({blind_failure(pane).message})" if r.failure else ""
            console.print(f"[{pane.pane}] {escape(pane.shown)}: {r.status}{escape(why)}")

    return milestone


def print_heading(console: Console, spec: CompareSpec) -> None:
    """The line above the progress: what is compared, and through what."""
    labels = list(dict.fromkeys(c.label() for c in spec.connections))
    where = ", ".join(labels) if len(labels) > 1 else (spec.gateway_label or spec.base_url)
    count = len(spec.panes)
    if spec.replay is not None and spec.original is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(spec.original.created_at))
        console.print(f"Replaying comparison #{spec.original.id} (recorded {when}) at "
                      f"{spec.speed:g}×: {count} model{'' if count == 1 else 's'}, "
                      "no network")
    else:
        rerun = f"Rerun of comparison #{spec.original.id}: " if spec.original else ""
        console.print(
            f"{rerun}Comparing {count} model{'' if count == 1 else 's'} via "
            f"{escape(where)} ({spec.endpoint} format)"
        )


def print_results(console: Console, run: CompareRun, rerun: ComparisonRecord | None,
                  *, as_is: bool) -> None:
    """Each answer, the summary table and its failures, and with `rerun` (the run's own
    record, when it repeats a saved comparison) what changed against the original.
    `as_is`: into a file or a pipe, where no table is squeezed to the console's width."""
    console.print(answers(run))
    console.print()
    table = summary_table(run)
    original = run.spec.original
    against = rerun_table(original, rerun) \
        if original is not None and rerun is not None else None
    if as_is:  # as wide as it needs: no column of a file's table is ever squeezed
        unbounded = console.options.update_width(10_000)
        console.width = max(console.width, *(
            console.measure(t, options=unbounded).maximum for t in (table, against) if t))
    console.print(table, soft_wrap=False)
    recorded = recorded_line(run)
    if recorded is not None:
        console.print(Text(recorded))
    simulated = simulated_line(run)
    if simulated is not None:
        console.print(Text(simulated, style="yellow"))
    for line in failure_lines(run):
        console.print(Text(line))
    if against is not None:
        console.print()
        console.print(against, soft_wrap=False)
        console.print(Text("(rerun minus original; ▲ better, ▼ worse; est.: both costs "
                           "estimated; — (est. vs reported): one estimated, one "
                           "reported, not compared)", style="dim"))
