"""The `vs #ID` line of a rerun's pane: signs, units, unknowns, estimates, outcomes, and
one line at every width (`anoman_tui.ui.render.rerun`)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from rich.cells import cell_len

from anoman_tui.history import PaneRecord
from anoman_tui.streaming.cost import HIDDEN, UNKNOWN, Cost
from anoman_tui.ui.render.rerun import delta_line, delta_plain, outcome, pane_delta

OLD = PaneRecord(1, "gpt-4o-mini", "http://gw", "openai", text="old",
                 metrics={"ttft_s": 0.5, "output_tokens_per_s": 80.0},
                 cost=Cost(Decimal("0.000040"), "gateway"))
NEW = replace(OLD, text="new", metrics={"ttft_s": 0.38, "output_tokens_per_s": 92.0},
              cost=Cost(Decimal("0.000052"), "gateway"))


def test_faster_and_dearer_in_signed_units_with_words_where_there_is_room() -> None:
    delta = pane_delta(NEW, OLD, 12)
    assert delta.ttft_ms == -120 and delta.rate == pytest.approx(12.0)
    assert delta.rate_pct == pytest.approx(15.0) and delta.cost == Decimal("0.000012")
    assert delta.original_model is None and delta.was is None and delta.now is None
    assert delta_plain(delta) == ("vs #12  TTFT −120 ms ▲ faster  tok/s +12.0 (+15%) ▲ faster"
                                  "  cost +$0.000012 ▼ dearer")


def test_slower_and_cheaper_reverse_the_arrows() -> None:
    delta = pane_delta(OLD, NEW, 3)
    assert delta_plain(delta) == ("vs #3  TTFT +120 ms ▼ slower  tok/s −12.0 (−13%) ▼ slower"
                                  "  cost −$0.000012 ▲ cheaper")


def test_no_change_says_so_without_an_arrow() -> None:
    line = delta_plain(pane_delta(OLD, OLD, 1))
    assert line == "vs #1  TTFT ±0 ms  tok/s ±0.0 (±0.0%)  cost ±$0"
    assert "▲" not in line and "▼" not in line


def test_a_change_too_small_to_show_gets_no_arrow() -> None:
    # +0.09 tok/s on 220 is +0.04%: shown as ±0.0% in the short form, so not "better".
    old = replace(OLD, metrics={"ttft_s": 0.5, "output_tokens_per_s": 220.0})
    new = replace(OLD, metrics={"ttft_s": 0.5, "output_tokens_per_s": 220.09})
    delta = pane_delta(new, old, 2)
    assert delta.rate == pytest.approx(0.09)
    for width in (200, 40):
        line = delta_plain(delta, width)
        assert "▲" not in line and "▼" not in line, line


def test_unknown_figures_are_a_dash_never_a_zero() -> None:
    failed = replace(OLD, status="failed", committed=False, metrics={}, cost=UNKNOWN,
                     failure={"kind": "http_error", "status": 429, "message": "slow down"})
    delta = pane_delta(failed, OLD, 7)
    assert delta.ttft_ms is None and delta.rate is None and delta.cost is None
    assert delta_plain(delta) == ("vs #7  TTFT —  tok/s —  cost —  "
                                  "was done → now failed: rate limit")


def test_an_estimate_against_a_reported_cost_is_not_subtracted() -> None:
    estimated = replace(NEW, cost=Cost(Decimal("0.000030"), "estimate"))
    delta = pane_delta(estimated, OLD, 4)
    assert delta.cost is None and delta.cost_kind == "mixed"
    assert "cost — (est. vs reported)" in delta_plain(delta)
    both = pane_delta(estimated, replace(OLD, cost=Cost(Decimal("0.000050"), "estimate")), 4)
    assert both.cost == Decimal("-0.000020") and both.cost_kind == "estimate"
    assert "cost ~−$0.00002 (est.) ▲ cheaper" in delta_plain(both)


def test_provider_costs_count_as_reported() -> None:
    provider = replace(NEW, cost=Cost(Decimal("0.000060"), "provider"))
    assert provider.cost_text == "$0.000060 (provider)"
    hidden = pane_delta(replace(NEW, cost=HIDDEN), OLD, 1)
    assert hidden.cost is None and hidden.cost_kind == "unknown"
    assert pane_delta(provider, OLD, 1).cost == Decimal("0.000020")


def test_a_small_change_in_rate_keeps_a_decimal_in_its_percentage() -> None:
    near = replace(NEW, metrics={"ttft_s": 0.5, "output_tokens_per_s": 79.8})
    assert "tok/s −0.2 (−0.3%) ▼ slower" in delta_plain(pane_delta(near, OLD, 1))


def test_a_percentage_needs_an_original_rate() -> None:
    zero = replace(OLD, metrics={"ttft_s": 0.5, "output_tokens_per_s": 0.0})
    delta = pane_delta(NEW, zero, 1)
    assert delta.rate == pytest.approx(92.0) and delta.rate_pct is None
    assert "tok/s +92.0 ▲" in delta_plain(delta)


@pytest.mark.parametrize(("failure", "words"), [
    ({"kind": "stalled"}, "failed: stalled"),
    ({"kind": "stream_error", "completion_tokens": 40}, "failed: interrupted"),
    ({"kind": "truncated"}, "failed: truncated"),
    ({"kind": "http_error", "status": 503}, "failed: HTTP 503"),
    ({"kind": "transport_error"}, "failed: unreachable"),
])
def test_outcomes_in_a_few_words(failure, words) -> None:
    assert outcome(replace(OLD, status="failed", failure=failure)) == words


def test_outcome_change_and_other_model_are_named() -> None:
    stalled = replace(OLD, status="failed", committed=False, failure={"kind": "stalled"})
    other = replace(NEW, model="gpt-5-mini")
    delta = pane_delta(other, stalled, 12)
    assert delta.original_model == "gpt-4o-mini"
    assert delta.was == "failed: stalled" and delta.now == "done"
    assert delta_plain(delta).startswith("vs #12 gpt-4o-mini  TTFT")
    assert delta_plain(delta).endswith("was failed: stalled → now done")
    assert outcome(replace(OLD, anoman={"cache": {"hit": True}})) == "done (cache hit)"
    assert outcome(replace(OLD, status="cancelled")) == "cancelled"


@pytest.mark.parametrize("width", [200, 120, 90, 62, 50, 30])
def test_one_line_at_every_width_outcome_first_when_short(width) -> None:
    stalled = replace(OLD, status="failed", committed=False, failure={"kind": "stalled"})
    delta = pane_delta(replace(NEW, model="gpt-5-mini"), stalled, 12)
    line = delta_line(delta, width)
    assert "\n" not in line.plain and cell_len(line.plain) <= width
    assert line.plain.startswith("vs #12 gpt-")
    if width <= 90:  # the short forms lead with the outcome
        assert "stalled→done" in line.plain
    if width >= 62:  # every figure still there (at 200 columns a pane has 62)
        assert "TTFT" in line.plain and "tok/s" in line.plain and "$" in line.plain
        assert "0.000012" in line.plain and "120" in line.plain and "15%" in line.plain
