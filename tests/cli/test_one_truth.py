"""One comparison, three JSON documents: `compare --json`, `export --format json` and
`compare --replay --json` give each pane the same keys and values (a replay adds only
what was recorded, and measures its own timing), all from the one serializer
(`report.json_report.panel_json`). And a simulated model says so in each, in the summary
and in the history's list. Real CLI, real local gateway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.report.json_report import PANEL_KEYS
from tests.cli.helpers import KEY, cli

PACED = "X-Anoman-Simulate: ttft=0.05,rate=400"
MODELS = ("anoman-lite", "deepseek-r1", "claude-sonnet-4-6")
# What a replay measures afresh (the stream is replayed at its recorded pace, not copied).
MEASURED = ("metrics",)


def _json(result: Any) -> dict[str, Any]:
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_the_three_documents_agree_panel_by_panel_key_by_key(
        gateway: EmbeddedGateway, data_home: Path, tmp_path: Path) -> None:
    models = [a for m in MODELS for a in ("-m", m)]
    live = _json(cli(data_home, "compare", "what is a mutex", "--json", "--base-url",
                     gateway.base_url, *models, "-H", PACED, env={"ANOMAN_API_KEY": KEY}))
    comparison = live["id"]
    assert isinstance(comparison, int)
    exported = _json(cli(data_home, "export", str(comparison), "-f", "json", "-o", "-"))
    replayed = _json(cli(data_home, "compare", "--replay", str(comparison), "--json",
                         env={"ANOMAN_BASE_URL": "http://127.0.0.1:9"}))
    assert len(live["panels"]) == len(exported["panels"]) == len(replayed["panels"]) == 3
    for a, b, c in zip(live["panels"], exported["panels"], replayed["panels"], strict=True):
        assert list(a) == list(PANEL_KEYS), a.keys()
        assert list(b) == list(PANEL_KEYS), b.keys()
        assert list(c) == [*PANEL_KEYS, "recorded"], c.keys()
        for key in PANEL_KEYS:
            assert a[key] == b[key], (a["model"], key)  # the export is what compare said
            if key not in MEASURED:
                assert c[key] == a[key], (a["model"], key)
        assert c["recorded"] == {"status": a["status"], "metrics": a["metrics"]}
        assert a["simulated"] is True and a["target"] == "gateway" and a["endpoint"] == "openai"
        assert a["provider_cost_usd"] is None  # the local gateway bills in its own block
    for document in (live, exported, replayed):
        assert document["prompt"] == "what is a mutex" and document["endpoint"] == "openai"


def test_a_simulated_model_says_so_in_the_summary_and_the_history(
        gateway: EmbeddedGateway, data_home: Path) -> None:
    shown = cli(data_home, "compare", "what is a mutex", "--base-url", gateway.base_url,
                "-m", "anoman-lite", "-H", PACED, env={"ANOMAN_API_KEY": KEY})
    assert shown.returncode == 0, shown.stderr
    assert "anoman-lite (simulated)" in shown.stdout
    assert "simulated: anoman-lite answered from the local gateway's simulated models" \
        in " ".join(shown.stdout.split())
    listed = cli(data_home, "history")
    assert "anoman-lite (simulated) completed $" in listed.stdout
    rows = [json.loads(line) for line in cli(data_home, "history", "--json").stdout.splitlines()]
    assert rows[0]["panes"][0]["simulated"] is True
