"""A pane record has one JSON form: the portable file and the pending-writes spool write
it with the one serializer (`history.pane_json`), the server's price of an answer is
`provider_cost_usd` in both, and a spool written with the old spelling still reads."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

from anoman_tui.history import ComparisonRecord, PaneRecord
from anoman_tui.history.pane_json import PROVIDER_COST_KEY, pane_json
from anoman_tui.history.pending import record_from_json, record_to_json
from anoman_tui.history.portable import comparison_document, dumps, read_comparison_document
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording

PACKAGE = Path(__file__).resolve().parents[1] / "anoman_tui"


def _recording(pane: int) -> StreamRecording:
    body = b'data: {"choices":[{"delta":{"content":"answer"}}]}\n\ndata: [DONE]\n\n'
    return StreamRecording(endpoint="openai", path="/v1/chat/completions", model="m1",
                           status=200, headers=(("content-type", "text/event-stream"),),
                           headers_at=0.1, reads=((0.2, body),), ending="completed", ended_at=0.3,
                           pane=pane)


def _record() -> ComparisonRecord:
    pane = PaneRecord(pane=1, model="m1", base_url="http://127.0.0.1:9", endpoint="openai",
                      text="answer", cost=Cost(Decimal("0.002"), "provider"),
                      provider_cost=Decimal("0.002"), recording=_recording(1))
    return ComparisonRecord(prompt="p", panes=(pane,), uid="u-1", created_at=1.0)


def test_the_spool_and_the_portable_file_write_a_pane_with_the_same_keys() -> None:
    record = _record()
    spooled = record_to_json(record)["panes"][0]
    shared = comparison_document(record, {1: _recording(1)})["panes"][0]
    assert list(spooled) == list(shared) == list(pane_json(record.panes[0], recording=None))
    assert spooled[PROVIDER_COST_KEY] == shared[PROVIDER_COST_KEY] == "0.002"
    assert "provider_cost" not in spooled and PROVIDER_COST_KEY == "provider_cost_usd"
    assert record_from_json(record_to_json(record)).panes[0].provider_cost == Decimal("0.002")
    back = read_comparison_document(dumps(comparison_document(record, {1: _recording(1)})))
    assert back.panes[0].provider_cost == Decimal("0.002")


def test_a_spool_written_with_the_old_spelling_still_reads() -> None:
    document = record_to_json(_record())
    pane = document["panes"][0]
    pane["provider_cost"] = pane.pop(PROVIDER_COST_KEY)
    del pane["cost_text"]  # spools never had it
    assert record_from_json(document).panes[0].provider_cost == Decimal("0.002")


def test_no_other_module_writes_a_pane_record_as_json() -> None:
    """Only `pane_json` writes the key `cost_text` (a pane record's JSON); the store's
    SQL column `provider_cost` is no JSON."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if '"cost_text"' not in source and '"provider_cost"' not in source:
            continue  # (parsing only the files that name one keeps this cheap)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value in ("cost_text", "provider_cost")
                    for k in node.keys):
                writers.append(path.relative_to(PACKAGE).as_posix())
    assert writers == ["history/pane_json.py"]
