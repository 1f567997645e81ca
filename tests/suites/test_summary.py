"""summarize() on hand-built cell results, every figure computed by hand below."""

from __future__ import annotations

from decimal import Decimal

import pytest

from anoman_tui.streaming.cost import UNKNOWN, Cost
from anoman_tui.suites.model import NOT_RUN, CellResult
from anoman_tui.suites.stats import paired_bootstrap_ci
from anoman_tui.suites.summary import summarize, verdict


def cell(case: str, model: str, repeat: int, status: str = "completed",
         passed: bool | None = None, ttft: float | None = None, e2e: float | None = None,
         tps: float | None = None, cost: Cost = UNKNOWN, **other: object) -> CellResult:
    return CellResult(case=case, model=model, repeat=repeat, status=status, passed=passed,
                      ttft_s=ttft, e2e_s=e2e, output_tokens_per_s=tps, cost=cost,
                      **other)  # type: ignore[arg-type]


A, B, C = "model-a", "litellm:model-b", "model-c"

RESULTS = [
    # model a: 8 cells
    cell("c1", A, 1, passed=True, ttft=0.1, e2e=1.0, tps=50,
         cost=Cost(Decimal("0.001"), "gateway")),
    cell("c1", A, 2, passed=True, ttft=0.3, e2e=2.0, tps=40,
         cost=Cost(Decimal("0.002"), "estimate")),
    cell("c2", A, 1, passed=False, ttft=0.2, e2e=1.5, tps=30,
         cost=Cost(Decimal("0.0005"), "provider")),
    cell("c2", A, 2, passed=True, ttft=0.001, e2e=0.01, tps=9000, cache_hit=True,
         cost=Cost(Decimal("0"), "gateway")),
    cell("c3", A, 1, status="timeout", passed=False, ttft=0.9),
    cell("c3", A, 2, passed=None, ttft=0.4, e2e=3.0, tps=20),
    cell("c4", A, 1, status=NOT_RUN),
    cell("c4", A, 2, status="timeout", passed=False),
    # model b: 8 cells, every one timed, no cost known
    cell("c1", B, 1, passed=False, ttft=0.15, simulated=True),
    cell("c1", B, 2, passed=True, ttft=0.2),
    cell("c2", B, 1, passed=True, ttft=0.1),
    cell("c2", B, 2, passed=True, ttft=0.5),
    cell("c3", B, 1, passed=True, ttft=0.3),
    cell("c3", B, 2, passed=None, ttft=0.35),
    cell("c4", B, 1, passed=False, ttft=0.6),
    cell("c4", B, 2, passed=True, ttft=0.7),
    # model c: never ran
    cell("c1", C, 1, status=NOT_RUN),
    cell("c1", C, 2, status=NOT_RUN),
]


def test_model_figures() -> None:
    summary = summarize([A, B, C], RESULTS)
    a, b, c = summary.models
    assert [m.model for m in summary.models] == [A, B, C]
    # Judged: c1/1 T, c1/2 T, c2/1 F, c2/2 T, c3/1 F (failed stream), c4/2 F; c3/2 has no
    # assertion, c4/1 never ran.
    assert (a.results, a.judged, a.passed, a.pass_rate) == (8, 6, 3, 0.5)
    # Wilson 3/6 by the closed form: centre (0.5 + z²/12) / (1 + z²/6) = 0.5, half-width
    # z·sqrt(0.25/6 + z²/144) / (1 + z²/6).
    z = 1.959963984540054
    half = z * (0.25 / 6 + z * z / 144) ** 0.5 / (1 + z * z / 6)
    assert a.pass_rate_ci == pytest.approx((0.5 - half, 0.5 + half))
    # Timed: c1/1, c1/2, c2/1, c3/2 (the cache hit and the failed streams are out).
    assert a.ttft_p50_s == pytest.approx(0.25)  # [0.1, 0.2, 0.3, 0.4]
    assert a.ttft_p95_s == pytest.approx(0.385)  # 0.3 + 0.85 * 0.1
    assert a.e2e_p50_s == pytest.approx(1.75)  # [1.0, 1.5, 2.0, 3.0]
    assert a.e2e_p95_s == pytest.approx(2.85)
    assert a.tokens_per_s_p50 == pytest.approx(35.0)  # [20, 30, 40, 50]
    assert a.cost_usd == Decimal("0.0035")  # exact: no float on the way
    assert a.cost_estimated is True
    assert a.cost_per_pass_usd == Decimal("0.0035") / 3
    assert a.failures == {"timeout": 2}
    assert (a.not_run, a.cache_hits, a.simulated) == (1, 1, False)

    assert (b.results, b.judged, b.passed) == (8, 7, 5)
    assert b.ttft_p50_s == pytest.approx(0.325)  # 8 values: (0.3 + 0.35) / 2
    assert b.cost_usd is None and b.cost_per_pass_usd is None and b.cost_estimated is False
    assert b.failures == {} and b.simulated is True
    assert b.e2e_p50_s is None and b.tokens_per_s_p50 is None

    assert (c.results, c.judged, c.passed, c.not_run) == (2, 0, 0, 2)
    assert c.pass_rate is None and c.pass_rate_ci is None and c.ttft_p50_s is None


def test_pair_figures() -> None:
    summary = summarize([A, B, C], RESULTS, seed=5)
    assert [(p.a, p.b) for p in summary.pairs] == [(A, B), (A, C), (B, C)]
    ab, ac, bc = summary.pairs
    # Judged for both: c1/1 (a only), c1/2, c2/1 (b only), c2/2, c3/1 (b only), c4/2 (b only).
    assert (ab.paired, ab.a_only, ab.b_only) == (6, 1, 3)
    assert ab.p_value == pytest.approx(2 * (1 + 4) / 16)  # 2 P(X ≤ 1), X ~ Bin(4, 1/2)
    assert ab.p_value_holm == ab.p_value  # the only pair with anything paired: m = 1
    # Both timed: c1/1 (0.1-0.15), c1/2 (0.3-0.2), c2/1 (0.2-0.1), c3/2 (0.4-0.35).
    diffs = [0.1 - 0.15, 0.3 - 0.2, 0.2 - 0.1, 0.4 - 0.35]
    assert ab.ttft_pairs == 4
    assert ab.ttft_diff_s == pytest.approx(0.075)
    assert ab.ttft_diff_ci == paired_bootstrap_ci(diffs, seed=5)
    low, high = ab.ttft_diff_ci or (1.0, -1.0)
    assert min(diffs) <= low <= high <= max(diffs)
    for pair in (ac, bc):
        assert (pair.paired, pair.p_value, pair.p_value_holm) == (0, None, None)
        assert pair.ttft_pairs == 0
        assert pair.ttft_diff_s is None and pair.ttft_diff_ci is None


def test_holm_runs_across_pairs() -> None:
    # Three models on 10 cases: a passes all, b passes 2, c passes 5.
    cells = []
    for i in range(10):
        cells += [cell(f"k{i}", A, 1, passed=True), cell(f"k{i}", B, 1, passed=i < 2),
                  cell(f"k{i}", C, 1, passed=i < 5)]
    ab, ac, bc = summarize([A, B, C], cells).pairs
    assert (ab.a_only, ab.b_only, ac.a_only, bc.b_only) == (8, 0, 5, 3)
    p_ab, p_ac, p_bc = 2 / 2**8, 2 / 2**5, 2 / 2**3
    assert (ab.p_value, ac.p_value, bc.p_value) == pytest.approx((p_ab, p_ac, p_bc))
    # Sorted: ab x3, ac x2, bc x1 (kept monotone).
    assert ab.p_value_holm == pytest.approx(3 * p_ab)
    assert ac.p_value_holm == pytest.approx(2 * p_ac)
    assert bc.p_value_holm == pytest.approx(max(2 * p_ac, p_bc))


def test_a_later_result_replaces_an_earlier_one() -> None:
    first = cell("c1", A, 1, status="timeout", passed=False)
    retried = cell("c1", A, 1, passed=True, ttft=0.2)
    (model,) = summarize([A], [first, retried]).models
    assert (model.results, model.judged, model.passed, model.failures) == (1, 1, 1, {})


def test_a_failed_stream_fails_whatever_was_recorded() -> None:
    odd = cell("c1", A, 1, status="timeout", passed=True)
    assert verdict(odd) is False
    assert verdict(cell("c1", A, 1, status=NOT_RUN, passed=False)) is None
    assert summarize([A], [odd]).models[0].passed == 0


def test_an_unknown_model_is_refused() -> None:
    with pytest.raises(ValueError, match="model-z"):
        summarize([A], [cell("c1", "model-z", 1)])


def test_json_shape_as_eval_json_gives_it() -> None:
    document = summarize([A, B], RESULTS[:16]).to_json()
    assert set(document) == {"summary", "pairs"}
    low, high = document["summary"][A]["pass_rate_ci"]
    assert low < 0.5 < high
    assert document["pairs"][0]["a_only"] == 1
