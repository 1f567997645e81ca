"""The network thread: streams read and timed off the UI's loop, aborts that do not wait
for it, a clean stop; and the answer's scrollbar that repaints only when its thumb moves."""

from __future__ import annotations

import asyncio
import time

from textual.app import App, ComposeResult

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.streaming import ChatTurn, StreamDone, StreamRequest, TextDelta
from anoman_tui.ui.network import NetworkThread
from anoman_tui.ui.widgets.answer_view import AnswerView, _ThumbScrollBar


def request(gateway: EmbeddedGateway, simulate: str) -> StreamRequest:
    return StreamRequest(
        base_url=gateway.base_url,
        api_key=gateway.api_key,  # type: ignore[arg-type]
        model="anoman-lite",
        messages=(ChatTurn(role="user", content="network thread test"),),
        extra_headers=(("X-Anoman-Simulate", simulate),),
        idle_timeout=10,
    )


async def test_stream_is_read_on_the_network_thread(ui_gateway: EmbeddedGateway) -> None:
    network = NetworkThread()
    try:
        stream = network.stream(request(ui_gateway, "ttft=0.05,rate=500,tokens=50"))
        texts: list[str] = []
        events = []
        async for event in stream:
            events.append((event, time.monotonic()))
            if isinstance(event, TextDelta):
                texts.append(event.text)
        assert isinstance(events[-1][0], StreamDone)
        assert stream.result is not None and stream.result.status == "completed"
        assert "".join(texts) == stream.result.text and len(texts) == 50
        # Stamped where the bytes arrived (before the UI saw them), on the other loop.
        assert all(event.at <= seen for event, seen in events)
        assert stream.sent_at is not None and stream.sent_at <= events[0][0].at
        task = stream._inner._task
        assert task is not None and task.get_loop() is network.loop
        assert network.loop is not asyncio.get_running_loop()
    finally:
        network.stop()


async def test_cancel_closes_the_connection_without_the_ui(ui_gateway: EmbeddedGateway
                                                           ) -> None:
    network = NetworkThread()
    try:
        stream = network.stream(request(ui_gateway, "ttft=0.01,rate=200,tokens=100000"))
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        stream.cancel()
        # The UI loop is blocked (a long frame); the connection closes all the same.
        time.sleep(0.3)
        assert not stream._inner.running
        async for _ in stream:
            pass
        assert stream.result is not None and stream.result.status == "cancelled"
    finally:
        network.stop()


async def test_stop_ends_the_thread_and_cancels_what_runs(ui_gateway: EmbeddedGateway
                                                         ) -> None:
    network = NetworkThread()
    stream = network.stream(request(ui_gateway, "ttft=0.01,rate=100,tokens=100000"))
    stream.start()
    await asyncio.sleep(0.2)
    thread = network._thread
    network.stop()
    assert thread is not None and not thread.is_alive()
    assert not stream._inner.running


class OneView(App[None]):
    CSS = "AnswerView { height: 1fr; }"

    def compose(self) -> ComposeResult:
        yield AnswerView()


async def test_scrollbar_ends_where_the_answer_ends() -> None:
    app = OneView()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        for i in range(300):
            view.append(f"line {i} of a long answer\n\n")
            if i % 20 == 0:
                await pilot.pause(0.05)
        view.finish()
        await pilot.pause(0.4)  # past the thumb's repaint interval
        bar = view.vertical_scrollbar
        assert isinstance(bar, _ThumbScrollBar)
        assert view.scroll_y == view.max_scroll_y > 0
        # What was last painted is where the thumb is now: at the bottom.
        assert bar._thumb == bar._thumb_cells()
        size, start, end = bar._thumb_cells()
        assert start is not None and end is not None and end // 8 >= size - 1
