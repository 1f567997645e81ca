"""The one builder of a comparison record (`anoman_tui.history.builder`), shared by the
compare screen and `anoman-tui compare`, and the recording limit it applies."""

from __future__ import annotations

from decimal import Decimal

from anoman_tui.history.builder import PaneTurn, comparison_record, for_history
from anoman_tui.streaming import StreamMetrics, StreamResult
from anoman_tui.streaming.cost import Cost
from anoman_tui.streaming.recording import StreamRecording


def _result(text: str, body: bytes = b"") -> StreamResult:
    recording = StreamRecording(endpoint="openai", path="/v1/chat/completions", model="m",
                                status=200, headers=(), headers_at=0.0,
                                reads=((0.1, body),), ending="complete", ended_at=0.2) \
        if body else None
    return StreamResult(status="completed", text=text, reasoning="", failure=None, usage=None,
                        anoman=None, anoman_raw=None,
                        metrics=StreamMetrics(ttft_s=0.1, e2e_s=0.2, output_tokens_per_s=9.87654,
                                              chunks=2),
                        provider_cost=Decimal("0.0002"), recording=recording)


def test_every_fact_of_a_pane_reaches_its_record() -> None:
    earlier = (("user", "hi"), ("assistant", "hello"))
    turns = [PaneTurn(1, "m1", _result("one"), "http://gw", "anthropic", target="local",
                      temperature=0.2, max_tokens=99, scenario="slow", rate_series=(1.0, 2.0),
                      cost=Cost(Decimal("0.01"), "gateway"), conversation=earlier,
                      simulated=True, label="A"),
             PaneTurn(2, "m2", _result("two"), "http://other", "openai", conversation=())]
    record = comparison_record("q", turns, source="compare", system_prompt="s", blind=True,
                               rerun_of=7, created_at=5.0)
    assert (record.prompt, record.source, record.system_prompt, record.blind,
            record.rerun_of, record.created_at) == ("q", "compare", "s", True, 7, 5.0)
    assert record.conversation == earlier  # the first pane's
    first, second = record.panes
    assert (first.pane, first.model, first.base_url, first.endpoint, first.target) == (
        1, "m1", "http://gw", "anthropic", "local")
    assert (first.temperature, first.max_tokens, first.scenario, first.rate_series) == (
        0.2, 99, "slow", (1.0, 2.0))
    assert first.cost == Cost(Decimal("0.01"), "gateway") and first.simulated
    assert first.label == "A" and first.provider_cost == Decimal("0.0002")
    assert first.metrics["output_tokens_per_s"] == 9.8765 and first.text == "one"
    assert second.conversation == () and not second.simulated and second.cost == Cost()


def test_recordings_over_the_limit_are_left_out_and_the_reason_given() -> None:
    record = comparison_record("q", [PaneTurn(1, "m", _result("x", b"a" * 3_000_000),
                                              "http://gw", "openai")], source="app")
    kept = for_history(record, 4_000_000)
    assert kept.dropped is None
    assert kept.record.panes[0].recording is not None
    over = for_history(record, 1_000_000)
    assert over.record.panes[0].recording is None and not over.record.recorded
    assert over.dropped == "3.0 MB of streams, over the 1 MB limit (record_limit_mb)"
    off = for_history(record, None)
    assert off.record.panes[0].recording is None and off.dropped is None
