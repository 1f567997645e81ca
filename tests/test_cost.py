"""The cost as a value (`anoman_tui.streaming.cost`): where it comes from, how it is shown,
and that it travels as an exact decimal."""

from __future__ import annotations

from decimal import Decimal

import pytest

from anoman_tui.streaming import ModelInfo
from anoman_tui.streaming.cost import HIDDEN, UNKNOWN, Cost, cost_of
from anoman_tui.wire import AnomanBlock, Usage

USAGE = Usage(prompt_tokens=1000, completion_tokens=2000, total_tokens=3000)
PRICED = ModelInfo("m", input_usd_per_mtok=Decimal("3"), output_usd_per_mtok=Decimal("15"))


def test_the_gateway_figure_wins_then_the_provider_then_an_estimate() -> None:
    block = AnomanBlock.model_validate({"cost_usd": "0.000041"})
    assert cost_of(block, USAGE, PRICED, Decimal("0.5")) == Cost(Decimal("0.000041"), "gateway")
    assert cost_of(None, USAGE, PRICED, Decimal("0.5")) == Cost(Decimal("0.5"), "provider")
    assert cost_of(None, USAGE, PRICED) == Cost(Decimal("0.033000"), "estimate")
    assert cost_of(None, None, PRICED) == UNKNOWN
    assert cost_of(None, USAGE, None, model="no-such-model-anywhere") == UNKNOWN


@pytest.mark.parametrize(("cost", "shown"), [
    (Cost(Decimal("0.000041"), "gateway"), "$0.000041"),
    (Cost(Decimal("0.00006"), "provider"), "$0.000060 (provider)"),
    (Cost(Decimal("0.00000004"), "provider"), "$4e-8 (provider)"),
    (Cost(Decimal("0.000038"), "estimate"), "~$0.000038 (est.)"),
    (UNKNOWN, "—"),
    (HIDDEN, "hidden until the vote"),
])
def test_shown_only_where_shown(cost: Cost, shown: str) -> None:
    assert cost.shown() == shown
    assert Cost.from_json(cost.to_json()) == cost


def test_json_keeps_the_exact_decimal() -> None:
    cost = Cost(Decimal("0.1000000000000000055511151231257827"), "gateway")
    assert cost.to_json() == {"usd": "0.1000000000000000055511151231257827",
                              "source": "gateway"}
    assert Cost.from_json(cost.to_json()).usd == cost.usd


@pytest.mark.parametrize("bad", [
    None, "0.1", {"usd": "0.1"}, {"usd": "x", "source": "gateway"},
    {"usd": "-1", "source": "estimate"}, {"usd": "NaN", "source": "gateway"},
    {"usd": None, "source": "provider"}, {"usd": "1", "source": "unknown"},
    {"usd": "1", "source": "elsewhere"}, {"usd": True, "source": "gateway"},
])
def test_a_malformed_cost_is_refused_in_one_sentence(bad: object) -> None:
    with pytest.raises(ValueError) as caught:
        Cost.from_json(bad)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("anoman", "simulated"), [
    ({"simulated": True}, True), ({"simulated": "true"}, False), ({}, False), (None, False),
])
def test_a_model_is_simulated_only_when_its_server_says_so(anoman: object,
                                                           simulated: bool) -> None:
    entry: dict[str, object] = {"id": "m"}
    if anoman is not None:
        entry["anoman"] = anoman
    assert ModelInfo.from_json(entry).simulated is simulated
