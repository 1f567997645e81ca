"""The network thread: streams read and timed off the UI's loop, aborts that do not wait
for it, a clean stop; and the answer's scrollbar that repaints only when its thumb moves."""

from __future__ import annotations

import asyncio
import time

import pytest
from textual.app import App, ComposeResult

import anoman_tui.streaming.client as client_module
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
        # The UI loop is blocked (a long frame, until the connection closed or 10 s went
        # by: a fixed 0.3 s failed with a core busy); it closes all the same.
        deadline = time.monotonic() + 10
        while stream._inner.running and time.monotonic() < deadline:
            time.sleep(0.01)
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
    # Until it reads (not a fixed 0.2 s: with a core busy it might not have begun).
    deadline = time.monotonic() + 10
    while stream._received == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert stream._received > 0
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


async def test_a_frame_takes_the_deltas_read_before_it_in_order(
    ui_gateway: EmbeddedGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`take_deltas()` (what a frame does as it begins) and the iterator share the events:
    every one once, in the order read; once `caught_up`, every read made before is in."""

    class SlowDecoder(client_module.SSEDecoder):  # type: ignore[misc,name-defined]
        def feed(self, chunk: bytes) -> list[object]:  # type: ignore[override]
            time.sleep(0.0005)  # a busy network thread: a read takes a while to decode
            return super().feed(chunk)  # type: ignore[no-any-return]

    monkeypatch.setattr(client_module, "SSEDecoder", SlowDecoder)
    network = NetworkThread()
    try:
        stream = network.stream(request(ui_gateway, "ttft=0.02,rate=400,tokens=300"))
        handled: list[object] = []
        taken = 0
        late: list[float] = []  # how much earlier than a take a later event was read

        async def iterate() -> None:
            async for event in stream:
                handled.append(event)

        task = asyncio.create_task(iterate())
        while not task.done():
            time.sleep(0.03)  # a frame's work: reads pile up meanwhile
            deadline = time.monotonic() + 1.0
            checked = time.monotonic()
            while not stream.caught_up and time.monotonic() < deadline:
                time.sleep(0.0005)
                checked = time.monotonic()
            assert stream.caught_up
            events = stream.take_deltas()
            taken += len(events)
            handled.extend(events)
            before = len(handled)
            await asyncio.sleep(0.005)  # the iterator may run
            # Text the iterator handled after the take was read after the moment the
            # stream said it was caught up: except the stream's first, unpaced reads,
            # and what waited behind an event of another kind (a take stops there and
            # leaves the rest to the iterator, e.g. the deltas read with the role).
            for index in range(before, len(handled)):
                event = handled[index]
                if not isinstance(event, TextDelta):
                    break
                if index >= 5 and event.at < checked:
                    late.append(checked - event.at)
        await task
        assert taken > 50, f"only {taken} deltas taken by frames"
        texts = [e.text for e in handled if isinstance(e, TextDelta)]
        assert stream.result is not None and stream.result.status == "completed"
        assert "".join(texts) == stream.result.text and len(texts) == 300
        stamps = [e.at for e in handled]  # type: ignore[attr-defined]
        assert stamps == sorted(stamps)
        assert isinstance(handled[-1], StreamDone)
        assert not late, f"{len(late)} events read before caught_up were left for later"
    finally:
        network.stop()


async def test_take_deltas_stops_at_the_first_other_event(ui_gateway: EmbeddedGateway
                                                         ) -> None:
    network = NetworkThread()
    try:
        stream = network.stream(request(ui_gateway, "ttft=0.01,rate=1000,tokens=20"))
        stream.start()
        time.sleep(0.5)  # the whole stream is read, none of it iterated
        assert stream.caught_up
        deltas = stream.take_deltas()
        # StreamOpened comes first: nothing is taken past it, and the iterator is woken.
        assert deltas == []
        leading = []
        while not deltas:
            leading.append(await anext(aiter(stream)))
            deltas = stream.take_deltas()
        assert leading and not any(isinstance(e, TextDelta) for e in leading), leading
        assert [type(e) for e in deltas] == [TextDelta] * 20
        rest = [event async for event in stream]
        assert not any(isinstance(e, TextDelta) for e in rest)
        assert isinstance(rest[-1], StreamDone)
        assert "".join(e.text for e in deltas) == stream.result.text  # type: ignore[union-attr]
    finally:
        network.stop()


async def test_take_backlog_takes_everything_but_the_end(ui_gateway: EmbeddedGateway
                                                        ) -> None:
    # A pane that follows a stream from its middle (a suite's running case) takes in
    # everything read so far at once, its opening event included; the end stays for the
    # iterator, which ends the turn.
    network = NetworkThread()
    try:
        stream = network.stream(request(ui_gateway, "ttft=0.01,rate=1000,tokens=20"))
        stream.start()
        deadline = time.monotonic() + 10
        while not (stream._inner.result is not None and stream.caught_up):
            assert time.monotonic() < deadline, "the stream was not read"
            await asyncio.sleep(0.01)
        backlog = stream.take_backlog()
        kinds = [type(e) for e in backlog]
        assert kinds[0] is not TextDelta and kinds.count(TextDelta) == 20
        assert StreamDone not in kinds
        rest = [event async for event in stream]
        assert [type(e) for e in rest] == [StreamDone]
        text = "".join(e.text for e in backlog if isinstance(e, TextDelta))
        assert text == stream.result.text  # type: ignore[union-attr]
        assert stream.take_backlog() == []
    finally:
        network.stop()
