"""A suite run's figures: per model (pass rate with its Wilson interval, latency
percentiles, cost, failures) and per pair of models (exact McNemar, Holm-corrected, and
the median TTFT difference with its paired bootstrap interval), as `ModelSummary` and
`PairSummary` in `anoman_tui.suites.model` define each field; and, with a judge, its
calls, errors, cost and bias figures and the models' ratings from its pairwise verdicts
(`anoman_tui.judges`, docs/judges.md).

Pure: from cell results to a `RunSummary`, the same for the same results and seed (so a
resumed run and `runs show` print what the uninterrupted run printed). May import: the
standard library, `anoman_tui.suites.model`, `anoman_tui.suites.stats` and
`anoman_tui.judges`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal
from itertools import combinations
from typing import Any

from anoman_tui.judges.pairs import PairJudgement, bias_figures, judge_ratings
from anoman_tui.suites.model import (
    NOT_RUN,
    CellResult,
    JudgeSummary,
    ModelRating,
    ModelSummary,
    PairSummary,
    RunSummary,
)
from anoman_tui.suites.stats import (
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
    percentile,
    wilson,
)


def verdict(cell: CellResult) -> bool | None:
    """The cell's pass as the figures count it: None when not judged (no assertion, or
    never run); a failed stream with assertions fails, whatever was recorded."""
    if cell.status == NOT_RUN or cell.passed is None:
        return None
    return cell.passed and cell.completed


RATING_BOOTSTRAP = 1000
"""Resamples of the cases behind the judge ratings' intervals (docs/judges.md)."""

def summarize(models: Sequence[str], results: Iterable[CellResult], *,
              seed: int = 0, judge: str | None = None, self_judge: bool = False,
              pairwise: Iterable[dict[str, Any]] = (), judge_simulated: bool = False
              ) -> RunSummary:
    """Every model's figures and every pair's, models in the order given (a pair's `a`
    comes before its `b`). A later result for the same (case, model, repeat) replaces an
    earlier one (a retried cell). `seed` drives the bootstrap; every pair uses it."""
    known = set(models)
    cells: dict[tuple[str, str, int], CellResult] = {}
    for cell in results:
        if cell.model not in known:
            raise ValueError(f"a result for {cell.model!r}, which is not one of the run's models")
        cells[cell.key] = cell
    by_model: dict[str, dict[tuple[str, int], CellResult]] = {m: {} for m in models}
    for (case, model, repeat), cell in cells.items():
        by_model[model][(case, repeat)] = cell
    summaries = tuple(_model_summary(m, list(by_model[m].values())) for m in models)
    judged_pairs, judgements = _pair_rows(models, pairwise)
    pairs = [_pair_summary(a, b, by_model[a], by_model[b], seed)
             for a, b in combinations(models, 2)]
    adjusted = holm([p.p_value for p in pairs])
    return RunSummary(
        models=summaries,
        pairs=tuple(replace(p, p_value_holm=h) for p, h in zip(pairs, adjusted, strict=True)),
        judge=None if judge is None else replace(
            judge_summary(judge, cells.values(), self_judge, judged_pairs, judgements),
            simulated=judge_simulated),
        ratings=_ratings(models, judgements, seed),
        pairwise=tuple(judged_pairs),
    )


def _pair_rows(models: Sequence[str], pairs: Iterable[dict[str, Any]]
               ) -> tuple[list[dict[str, Any]], list[PairJudgement]]:
    """The stored pairwise verdicts of the run's models (the last of each pair wins), in
    suite order, and read as judgements; rows that cannot be read are left out."""
    order = {m: i for i, m in enumerate(models)}
    latest: dict[tuple[str, int, str, str], tuple[dict[str, Any], PairJudgement]] = {}
    for row in pairs:
        try:
            judgement = PairJudgement.from_json(row)
        except (KeyError, TypeError, ValueError):
            continue
        if judgement.a in order and judgement.b in order:
            # The winner and lengths as read back, whatever the stored row says of them.
            latest[(judgement.case, judgement.repeat, judgement.a, judgement.b)] = (
                {**row, **judgement.to_json()}, judgement)
    ranked = sorted(latest.items(), key=lambda kv: (
        kv[0][0], kv[0][1], order[kv[0][2]], order[kv[0][3]]))
    return [row for _, (row, _) in ranked], [j for _, (_, j) in ranked]


def _ratings(models: Sequence[str], judgements: Sequence[PairJudgement],
             seed: int) -> tuple[ModelRating, ...]:
    if not judgements:
        return ()
    rated = judge_ratings(models, judgements, bootstrap=RATING_BOOTSTRAP, seed=seed)
    return tuple(rated[m] for m in models)


def judge_summary(judge: str, results: Iterable[CellResult], self_judge: bool,
                  pairs: Sequence[dict[str, Any]] = (),
                  judgements: Sequence[PairJudgement] = ()) -> JudgeSummary:
    """The judge's calls, errors and cost over the results' `llm-rubric` verdicts and the
    pairwise verdicts (`pairs`, read as `judgements`), with its bias figures from the
    latter (docs/judges.md)."""
    calls = errors = 0
    cost = Decimal(0)
    known = False
    for cell in results:
        calls += cell.judge_calls
        errors += cell.judge_errors
        if cell.judge_cost_usd is not None:
            cost += cell.judge_cost_usd
            known = True
    for row in pairs:
        calls += int(row.get("calls") or 0)
        errors += len(row.get("errors") or ())
        spent = row.get("cost_usd")
        if spent is not None:
            cost += Decimal(str(spent))
            known = True
    bias = bias_figures(judgements)
    return JudgeSummary(model=judge, calls=calls, errors=errors,
                        cost_usd=cost if known or not calls else None, self_judge=self_judge,
                        position_consistency=bias.position_consistency,
                        first_position_wins=bias.first_position_wins,
                        longer_wins=bias.longer_wins)


def timed_ttfts(cells: Iterable[CellResult]) -> list[float]:
    """The TTFTs a model's figures count: of its timed cells (completed, not a cache
    hit), for the summary, the reports' charts and the suite screen's live figures alike."""
    return [c.ttft_s for c in cells if c.timed and c.ttft_s is not None]


def ttft_p50_p95(cells: Iterable[CellResult]) -> tuple[float | None, float | None]:
    """A model's TTFT p50 and p95 (None when no cell was timed), live and at the end."""
    ttfts = timed_ttfts(cells)
    return percentile(ttfts, 50), percentile(ttfts, 95)


def _model_summary(model: str, cells: list[CellResult]) -> ModelSummary:
    verdicts = [v for v in (verdict(c) for c in cells) if v is not None]
    judged, passed = len(verdicts), sum(verdicts)
    timed = [c for c in cells if c.timed]
    ttft_p50, ttft_p95 = ttft_p50_p95(cells)
    e2es = [c.e2e_s for c in timed if c.e2e_s is not None]
    rates = [c.output_tokens_per_s for c in timed if c.output_tokens_per_s is not None]
    costs = [c.cost for c in cells if c.cost.usd is not None]
    # Decimal sums are exact: a total is the sum of what the gateway said, to the digit.
    cost_usd = sum((c.usd for c in costs if c.usd is not None), Decimal(0)) if costs else None
    failures = Counter(c.status for c in cells if not c.completed and c.status != NOT_RUN)
    return ModelSummary(
        model=model,
        results=len(cells),
        judged=judged,
        passed=passed,
        pass_rate=passed / judged if judged else None,
        pass_rate_ci=wilson(passed, judged),
        ttft_p50_s=ttft_p50,
        ttft_p95_s=ttft_p95,
        tokens_per_s_p50=percentile(rates, 50),
        e2e_p50_s=percentile(e2es, 50),
        e2e_p95_s=percentile(e2es, 95),
        cost_usd=cost_usd,
        cost_estimated=any(c.estimated for c in costs),
        cost_per_pass_usd=cost_usd / passed if cost_usd is not None and passed else None,
        failures=dict(sorted(failures.items())),
        not_run=sum(1 for c in cells if c.status == NOT_RUN),
        cache_hits=sum(1 for c in cells if c.cache_hit),
        simulated=any(c.simulated for c in cells),
    )


def _pair_summary(a: str, b: str, a_cells: dict[tuple[str, int], CellResult],
                  b_cells: dict[tuple[str, int], CellResult], seed: int) -> PairSummary:
    paired = a_only = b_only = 0
    diffs: list[float] = []
    for key, a_cell in a_cells.items():
        b_cell = b_cells.get(key)
        if b_cell is None:
            continue
        a_pass, b_pass = verdict(a_cell), verdict(b_cell)
        if a_pass is not None and b_pass is not None:
            paired += 1
            a_only += a_pass and not b_pass
            b_only += b_pass and not a_pass
        if (a_cell.timed and b_cell.timed and a_cell.ttft_s is not None
                and b_cell.ttft_s is not None):
            diffs.append(a_cell.ttft_s - b_cell.ttft_s)
    return PairSummary(
        a=a, b=b, paired=paired, a_only=a_only, b_only=b_only,
        p_value=mcnemar_exact(a_only, b_only) if paired else None,
        p_value_holm=None,
        ttft_pairs=len(diffs),
        ttft_diff_s=percentile(diffs, 50),
        ttft_diff_ci=paired_bootstrap_ci(diffs, "median", seed=seed),
    )

