"""`anoman-tui runs diff OLD NEW`: what changed between two runs of a suite, per model.

Like is compared with like: given the two runs' suites, a case is matched by its id and
what it asks and checks. A case whose prompt or assertions (their values, thresholds,
weights, or the case's threshold) differ between the runs is `changed`: listed, never
counted as a regression or an improvement, and left out of every figure below; a case of
one run only is listed too. (Each run keeps its suite whole in the history, so this holds
for runs saved before it was written.)

Cells of the unchanged cases are matched on (case, repeat) for the same model. Among those
judged in both runs, `regressions` went pass -> fail and `improvements` fail -> pass (a
failed stream is a fail, as in the summary); any regression makes the command exit 1, for
CI. The change in
TTFT is the median of new - old over the matched cells both timed (completed, not a cache
hit), with a paired bootstrap 95% interval; the change in cost is the mean per-cell
new - old over the matched cells whose costs are both known, with its interval, beside
both runs' totals over those cells. Models found in one run only are listed as such.

The comparison and its JSON are plain data; `suite_terminal.print_diff` prints it.

May import: the standard library, `anoman_tui.suites.model`, `anoman_tui.suites.stats`
and `report.suite_text`. Never Rich.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from anoman_tui.report.suite_text import DASH, usd
from anoman_tui.suites.model import Case, CellResult, RunSummary
from anoman_tui.suites.stats import paired_bootstrap_ci


@dataclass(frozen=True, slots=True)
class CellChange:
    """One (case, model, repeat) whose verdict changed."""

    case: str
    model: str
    repeat: int

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "model": self.model, "repeat": self.repeat}


@dataclass(frozen=True, slots=True)
class ModelDiff:
    """One model's change between the runs, on the cells both runs have."""

    model: str
    matched: int
    """(case, repeat) present in both runs."""
    judged: int
    """Of those, judged in both."""
    regressions: tuple[CellChange, ...]
    improvements: tuple[CellChange, ...]
    ttft_pairs: int
    ttft_diff_s: float | None
    """Median of TTFT(new) - TTFT(old); negative: faster now."""
    ttft_diff_ci: tuple[float, float] | None
    cost_pairs: int
    cost_diff_usd: float | None
    """Mean per-cell cost(new) - cost(old); negative: cheaper now."""
    cost_diff_ci: tuple[float, float] | None
    cost_old_usd: Decimal | None
    """Total of the old run's costs over the `cost_pairs` cells."""
    cost_new_usd: Decimal | None
    cost_estimated: bool
    """Part of a compared cost is an estimate."""

    def to_json(self) -> dict[str, Any]:
        return {
            "matched": self.matched, "judged": self.judged,
            "regressions": len(self.regressions), "improvements": len(self.improvements),
            "ttft_pairs": self.ttft_pairs, "ttft_diff_s": self.ttft_diff_s,
            "ttft_diff_ci": None if self.ttft_diff_ci is None else list(self.ttft_diff_ci),
            "cost_pairs": self.cost_pairs, "cost_diff_usd": self.cost_diff_usd,
            "cost_diff_ci": None if self.cost_diff_ci is None else list(self.cost_diff_ci),
            "cost_old_usd": None if self.cost_old_usd is None else float(self.cost_old_usd),
            "cost_new_usd": None if self.cost_new_usd is None else float(self.cost_new_usd),
            "cost_estimated": self.cost_estimated,
        }


@dataclass(frozen=True, slots=True)
class CaseChange:
    """A case both suites have under one id, asking or checking something else now."""

    case: str
    what: tuple[str, ...]
    """`prompt`, `assertions`: what differs."""

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "changed": list(self.what)}


@dataclass(frozen=True, slots=True)
class CaseMatch:
    """How the cases of two runs' suites line up (`match_cases`)."""

    same: frozenset[str]
    """Case ids both have, asking and checking the same: the only ones compared."""
    changed: tuple[CaseChange, ...]
    only_in_old: tuple[str, ...]
    only_in_new: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunDiff:
    models: tuple[ModelDiff, ...]
    only_in_old: tuple[str, ...]
    """Models with results in the old run only."""
    only_in_new: tuple[str, ...]
    cases: CaseMatch | None = None
    """The suites' cases lined up; None: every case compared (no suites given)."""

    @property
    def changed(self) -> tuple[CaseChange, ...]:
        return () if self.cases is None else self.cases.changed

    @property
    def regressions(self) -> tuple[CellChange, ...]:
        return tuple(c for m in self.models for c in m.regressions)

    @property
    def improvements(self) -> tuple[CellChange, ...]:
        return tuple(c for m in self.models for c in m.improvements)

    @property
    def regressed(self) -> bool:
        """Any case went pass -> fail: `runs diff` exits 1."""
        return any(m.regressions for m in self.models)


def _interval(values: Sequence[float], statistic: Literal["median", "mean"],
              ) -> tuple[float, float] | None:
    # Seed 0, as the run's summary uses: the same runs always give the same interval.
    return paired_bootstrap_ci(values, statistic)


def _model_diff(model: str, old: dict[tuple[str, int], CellResult],
                new: dict[tuple[str, int], CellResult]) -> ModelDiff:
    keys = [k for k in new if k in old]
    regressions: list[CellChange] = []
    improvements: list[CellChange] = []
    ttft: list[float] = []
    cost: list[float] = []
    old_total = new_total = Decimal(0)
    judged = 0
    estimated = False
    for key in keys:
        was, now = old[key], new[key]
        if was.passed is not None and now.passed is not None:
            judged += 1
            if was.passed and not now.passed:
                regressions.append(CellChange(key[0], model, key[1]))
            elif not was.passed and now.passed:
                improvements.append(CellChange(key[0], model, key[1]))
        if was.timed and now.timed and was.ttft_s is not None and now.ttft_s is not None:
            ttft.append(now.ttft_s - was.ttft_s)
        if was.cost.usd is not None and now.cost.usd is not None:
            cost.append(float(now.cost.usd - was.cost.usd))
            old_total += was.cost.usd
            new_total += now.cost.usd
            estimated = estimated or was.cost.estimated or now.cost.estimated
    return ModelDiff(
        model=model, matched=len(keys), judged=judged, regressions=tuple(regressions),
        improvements=tuple(improvements), ttft_pairs=len(ttft),
        ttft_diff_s=statistics.median(ttft) if ttft else None,
        ttft_diff_ci=_interval(ttft, "median"), cost_pairs=len(cost),
        cost_diff_usd=statistics.fmean(cost) if cost else None,
        cost_diff_ci=_interval(cost, "mean"),
        cost_old_usd=old_total if cost else None, cost_new_usd=new_total if cost else None,
        cost_estimated=estimated)


def _by_model(results: Sequence[CellResult], cases: CaseMatch | None
              ) -> dict[str, dict[tuple[str, int], CellResult]]:
    grouped: dict[str, dict[tuple[str, int], CellResult]] = {}
    for cell in results:
        grouped.setdefault(cell.model, {})
        if cases is None or cell.case in cases.same:
            grouped[cell.model][(cell.case, cell.repeat)] = cell
    return grouped


def _checks(case: Case) -> tuple[Any, ...]:
    return (tuple(json.dumps(a.to_json(), sort_keys=True) for a in case.asserts),
            case.threshold)


def match_cases(old: Sequence[Case], new: Sequence[Case]) -> CaseMatch:
    """The cases of two suites by id: the same, changed (prompt or assertions), or in one
    suite only; each list in its suite's order."""
    before = {c.id: c for c in old}
    after = {c.id: c for c in new}
    same: set[str] = set()
    changed: list[CaseChange] = []
    for case in new:
        was = before.get(case.id)
        if was is None:
            continue
        what = tuple(name for name, differs in (
            ("prompt", was.prompt != case.prompt),
            ("assertions", _checks(was) != _checks(case))) if differs)
        if what:
            changed.append(CaseChange(case.id, what))
        else:
            same.add(case.id)
    return CaseMatch(same=frozenset(same), changed=tuple(changed),
                     only_in_old=tuple(c.id for c in old if c.id not in after),
                     only_in_new=tuple(c.id for c in new if c.id not in before))


def diff_runs(old_results: Sequence[CellResult], new_results: Sequence[CellResult],
              models: Sequence[str], cases: CaseMatch | None = None) -> RunDiff:
    """Per model of `models` (in that order; any other model a run has is added after),
    the change from `old_results` to `new_results`; with `cases`, over the cells of the
    cases both suites have unchanged only."""
    old, new = _by_model(old_results, cases), _by_model(new_results, cases)
    order = list(dict.fromkeys([*models, *old, *new]))
    return RunDiff(
        models=tuple(_model_diff(m, old[m], new[m]) for m in order if m in old and m in new),
        only_in_old=tuple(m for m in order if m in old and m not in new),
        only_in_new=tuple(m for m in order if m in new and m not in old),
        cases=cases,
    )


def judge_json(summary: RunSummary | None) -> dict[str, Any] | None:
    """One run's judge as `runs diff --json` gives it: its figures and ratings."""
    if summary is None or summary.judge is None:
        return None
    return {**summary.judge.to_json(),
            "ratings": {r.model: r.to_json() for r in summary.ratings}}


def diff_json(diff: RunDiff, judges: tuple[RunSummary | None, RunSummary | None] = (None, None)
              ) -> dict[str, Any]:
    """`runs diff --json`: `regressions` and `improvements` (each `case`, `model`,
    `repeat`), the per-model figures under `models`, the models of one run only, the
    cases `changed` (each `case` and what `changed`) and those of one run only, and
    each run's judge (`judge`: `old`, `new`; null when neither had one)."""
    old_judge, new_judge = judge_json(judges[0]), judge_json(judges[1])
    cases = diff.cases
    return {
        "compared_cases": None if cases is None else len(cases.same),
        "changed": [c.to_json() for c in diff.changed],
        "cases_only_in_old": [] if cases is None else list(cases.only_in_old),
        "cases_only_in_new": [] if cases is None else list(cases.only_in_new),
        "judge": None if old_judge is None and new_judge is None else {
            "old": old_judge, "new": new_judge},
        "regressed": diff.regressed,
        "regressions": [c.to_json() for c in diff.regressions],
        "improvements": [c.to_json() for c in diff.improvements],
        "models": {m.model: m.to_json() for m in diff.models},
        "only_in_old": list(diff.only_in_old),
        "only_in_new": list(diff.only_in_new),
    }


def cost_ci_text(m: ModelDiff) -> str:
    """The 95% interval of the change in cost per cell, in USD."""
    return DASH if m.cost_diff_ci is None else \
        f"[{m.cost_diff_ci[0]:+.6f}, {m.cost_diff_ci[1]:+.6f}]"


def cost_totals_text(m: ModelDiff) -> str:
    """Both runs' totals over the matched cells: `$old → $new`."""
    return DASH if m.cost_old_usd is None else \
        f"{usd(m.cost_old_usd, m.cost_estimated)} → {usd(m.cost_new_usd, m.cost_estimated)}"
