"""A suite run as plain text: the formatters every report of a run shares (figures,
costs, verdicts, reasons, the judge's line), and the one line per finished cell that
`eval` prints when output is piped. The summary, the list of runs and the diff lay
these out (`suite_print`, in plain text; `suite_terminal` draws them in colour with
Rich); the Markdown, HTML, JUnit and JSON reports use them as they are, so none of
those, nor `eval --json`, imports a terminal renderer.

Everything a cell holds came from a model, a suite file or a server: it is folded onto
one line with terminal control sequences stripped (`one_line`). Costs read as
`Cost.shown` writes them (anoman_tui/streaming/cost.py): `~` and `(est.)` when any part
is an estimate.

May import: the standard library, `anoman_tui.suites.model`, `anoman_tui.streaming.safe_text`
and `anoman_tui.streaming.cost`. Never Rich, never Textual (a test checks, in a fresh
interpreter, that `eval --json` imports no Rich).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import IO, Protocol

from anoman_tui.streaming.safe_text import terminal_safe
from anoman_tui.suites.model import (
    NOT_RUN,
    CellResult,
    JudgeSummary,
    ModelSummary,
    PairSummary,
)

DASH = "—"
SIMULATED = "simulated"


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


# --- formatters shared by every report --------------------------------------------------


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

# What Rich's `Text` drops from a line (bell, backspace, vertical tab, form feed,
# carriage return): a piped line is written as a terminal summary would print it.
_CONTROL_CODES = dict.fromkeys((7, 8, 11, 12, 13))


def may_be_terminal(file: IO[str]) -> bool:
    """Whether Rich could take `file` for a terminal (a TTY, or `TTY_COMPATIBLE=1` or
    `FORCE_COLOR` set): when not, a piped run writes plain lines and loads no Rich."""
    if os.environ.get("TTY_COMPATIBLE") == "0":
        return False
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    try:
        return file.isatty()
    except (AttributeError, ValueError):
        return False


def strip_control_codes(text: str) -> str:
    """`text` without the control codes a terminal would act on inside a line."""
    return text.translate(_CONTROL_CODES)



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


def run_state(run: RunListingLike) -> str:
    """`finished`, or `stopped (why)`."""
    state = "finished" if run.finished else "stopped"
    if not run.finished and run.stopped:
        state += f" ({one_line(run.stopped, 60)})"
    return state
