"""The JSON report: the `compare --json` document plus the comparison's id and time."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from decimal import Decimal

import pytest

from anoman_tui.history import VoteRecord
from anoman_tui.report import FORMATS, export, to_json
from tests.report.records import ANOMAN, EARLIER, FAILED_FAILURE, follow_up, hostile, sample

PANEL_KEYS = {"panel", "model", "target", "endpoint", "simulated", "status", "conversation",
              "text",
              "committed", "finish_reason", "failure", "usage", "anoman",
              "provider_cost_usd", "metrics"}


def test_shape_matches_compare_json() -> None:
    doc = to_json(sample())
    assert set(doc) == {"id", "created_at", "prompt", "endpoint", "panels"}
    assert doc["id"] == 42 and doc["endpoint"] == "openai"
    assert doc["created_at"] == "2025-12-01T02:05:26Z"
    assert datetime.fromisoformat(doc["created_at"]).utcoffset().total_seconds() == 0
    assert [set(p) for p in doc["panels"]] == [PANEL_KEYS] * 3
    first, failed, cancelled = doc["panels"]
    assert first["anoman"] == ANOMAN and first["committed"] is True
    assert first["metrics"]["ttft_s"] == 0.4213
    assert failed["failure"] == FAILED_FAILURE and failed["committed"] is False
    assert cancelled["status"] == "cancelled"


def test_round_trip_through_text() -> None:
    for record in (sample(), hostile()):
        text = export(record, "json")
        assert json.loads(text) == to_json(record)
        assert json.loads(text)["panels"][0]["text"] == record.panes[0].text  # byte for byte
        assert "anm-sk-" not in text


def test_export_formats() -> None:
    assert FORMATS == ("md", "html", "json")
    with pytest.raises(ValueError, match="md, html, json"):
        export(sample(), "pdf")  # type: ignore[arg-type]


def test_each_panel_says_whether_its_model_was_simulated() -> None:
    record = sample()
    record = replace(record, panes=(replace(record.panes[0], simulated=True),
                                    *record.panes[1:]))
    panels = to_json(record)["panels"]
    assert [p["simulated"] for p in panels] == [True, False, False]


def test_the_provider_figure_is_a_decimal_string() -> None:
    record = sample()
    record = replace(record, panes=(replace(record.panes[0], provider_cost=Decimal("0.00012")),
                                    *record.panes[1:]))
    assert to_json(record)["panels"][0]["provider_cost_usd"] == "0.00012"
    assert to_json(sample())["panels"][0]["provider_cost_usd"] is None


def test_a_blind_round_before_its_vote_names_no_model() -> None:
    record = sample()
    record = replace(record, blind=True, panes=tuple(
        replace(p, label="ABC"[i], failure=None if p.failure is None else
                {**p.failure, "detail": f"{p.model} said no", "route": "POST /x"})
        for i, p in enumerate(record.panes)))
    doc = to_json(record)
    assert doc["blind"] is True
    text = json.dumps(doc)
    for pane in record.panes:
        assert f'"{pane.model}"' not in text and "detail" not in text and "route" not in text
    assert [p["panel"] for p in doc["panels"]] == ["A", "B", "C"]
    assert set(doc["panels"][0]) == PANEL_KEYS - {"model", "target", "endpoint", "anoman",
                                                  "provider_cost_usd"}
    voted = replace(record, vote=VoteRecord(True, "win", 1, 1.0))
    assert [p["model"] for p in to_json(voted)["panels"]] == [p.model for p in record.panes]


def test_each_panel_carries_its_own_conversation() -> None:
    doc = to_json(follow_up())
    for panel in doc["panels"]:
        turns = panel["conversation"]
        assert [t["role"] for t in turns] == ["user", "assistant"] * len(EARLIER[panel["panel"]])
        assert tuple(t["content"] for t in turns if t["role"] == "assistant") == \
            EARLIER[panel["panel"]]
    # A record saved before panes kept their own turns: the comparison's, for each.
    old = replace(follow_up(), panes=tuple(replace(p, conversation=None)
                                           for p in follow_up().panes))
    assert all(p["conversation"][1]["content"] == EARLIER[1][0] for p in to_json(old)["panels"])
    assert to_json(sample())["panels"][0]["conversation"] == []
