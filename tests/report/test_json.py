"""The JSON report: the `compare --json` document plus the comparison's id and time."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from anoman_tui.report import FORMATS, export, to_json
from tests.report.records import ANOMAN, FAILED_FAILURE, hostile, sample

PANEL_KEYS = {"panel", "model", "status", "text", "committed", "finish_reason", "failure",
              "usage", "anoman", "metrics"}


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
