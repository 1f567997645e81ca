"""Hostile model output through the app: markup, ANSI CSI/OSC (OSC 52 clipboard,
title changes, hyperlinks), DCS, bidi controls, NUL and C0/C1 controls, a 2 MB single
token, a 100,000-line answer and invalid UTF-8 split across reads are shown as text and
never act on the terminal.

What is checked is what would reach a terminal: the answer's rendered strips, every
segment of a full repaint of the screen, and the escape sequences Textual would write
for that repaint.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from textual.selection import Selection

from anoman_tui.streaming import EndpointFormat
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.widgets.answer_view import AnswerView
from tests.reliability.app_helpers import (
    badge_text,
    connect_to,
    panes,
    remote_app,
    screen_segments,
    send,
    settled,
    terminal_bytes,
    until,
)
from tests.reliability.helpers import check_segments, unsafe_chars
from tests.replay_server import ReplayServer, Script

HOSTILE: list[str] = [
    "Before [bold red]RED[/bold red] and [@click=app.quit]click me[/] and ",
    "[link=https://evil.example]a link[/link].\n\n",
    "\x1b[31mansi-red\x1b[0m \x1b[2J\x1b[H\x1b[?1049l\x1b[6n cursor games\n\n",
    "title\x1b]0;PWNED-TITLE\x07 and\x1b]2;PWNED-TITLE-2\x1b\\ more\n\n",
    "clip\x1b]52;c;UFdORUQtQ0xJUA==\x07board\n\n",
    "\x1b]8;;https://evil.example\x1b\\hyper\x1b]8;;\x1b\\ text\n\n",
    "dcs\x1bP+q544e\x1b\\ and apc\x1b_PWNED-APC\x1b\\ end\n\n",
    "bidi \u202eRTL-override\u202c \u2066isolate\u2069 \u202dLRO\u202c\u202a\u202b\u2067\u2068\n\n",
    "NUL\x00BEL\x07BS\x08VT\x0bFF\x0cCR\rESC\x1b DEL\x7f c0\n\n",
    "C1 \x85 \x9b31m \x9d0;PWNED-C1\x9c \x90x\x9c \x9a done\n\n",
    "split OSC \x1b]0;PWNED-",
    "ACROSS-DELTAS\x07 closed\n\n",
    "end-marker",
]
SECRET_PAYLOADS = ("PWNED", "UFdORUQtQ0xJUA")
HOSTILE_MESSAGE = ("\x1b]52;c;UFdORUQtQ0xJUA==\x07\x1b]0;PWNED-TITLE\x07 [bold]x[/bold] "
                   "[@click=app.quit]y[/] \u202ereversed <script>alert(1)</script>")


def openai_text_frames(pieces: list[str]) -> list[bytes]:
    frames = [b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n']
    for piece in pieces:
        chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
        frames.append(f"data: {json.dumps(chunk)}\n\n".encode())
    frames.append(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
                  b'"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}\n\n')
    frames.append(b"data: [DONE]\n\n")
    return frames


def anthropic_text_frames(pieces: list[str]) -> list[bytes]:
    def ev(name: str, payload: dict[str, object]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()

    frames = [ev("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "usage": {"input_tokens": 5, "output_tokens": 0}}}),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}})]
    frames += [ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": p}})
               for p in pieces]
    frames += [ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                    "usage": {"output_tokens": 9}}),
               ev("message_stop", {"type": "message_stop"})]
    return frames


def text_frames(endpoint: EndpointFormat, pieces: list[str]) -> list[bytes]:
    return (anthropic_text_frames if endpoint == "anthropic" else openai_text_frames)(pieces)


# Terminal output of a repaint may only hold cursor moves and colours (SGR).
_ALLOWED_ESCAPE = re.compile(r"\x1b\[[0-9;]*[mHf]")


def assert_terminal_safe(app: AnomanApp) -> None:
    check_segments(screen_segments(app), "screen")
    raw = terminal_bytes(app)
    leftover = _ALLOWED_ESCAPE.sub("", raw)
    assert "\x1b" not in leftover, repr(leftover[leftover.index("\x1b") - 20 :][:60])
    assert not [c for c in unsafe_chars(leftover) if c != repr("\n")]
    for payload in SECRET_PAYLOADS:
        assert payload not in raw


def answer_rows(view: AnswerView) -> str:
    return "\n".join(view._rendered_lines())


@pytest.mark.parametrize("endpoint", ["openai", "anthropic"])
async def test_hostile_answer_text_is_inert(
    replay: ReplayServer, endpoint: EndpointFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.scripts["hostile"] = Script(body=list(text_frames(endpoint, HOSTILE)))
    app = remote_app(replay.base_url, ["hostile", "hostile", "hostile"], endpoint)
    clipboard: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", clipboard.append)
    async with app.run_test(size=(160, 60)) as pilot:
        await connect_to(pilot, replay.base_url)
        title = app.title
        await send(pilot, "be hostile")
        await until(pilot, lambda: settled(app))
        one = panes(app)[0]
        assert one.status == "done"
        rendered = answer_rows(one.answer)
        # Markup is text, shown literally.
        for literal in ("[bold red]RED[/bold red]", "[@click=app.quit]click me[/]",
                        "[link=https://evil.example]a link[/link]", "ansi-red", "hyper",
                        "RTL-override", "closed", "end-marker"):
            assert literal in rendered, literal
        for payload in SECRET_PAYLOADS:
            assert payload not in rendered
        for y in range(one.answer.scrollable_content_region.height):
            check_segments(one.answer.render_line(y), f"answer row {y}")
        assert_terminal_safe(app)
        # Clicking the would-be action does nothing: the app keeps running.
        rows = one.answer._rendered_lines()
        y = next(i for i, row in enumerate(rows) if "click me" in row)
        x = rows[y].index("click me")
        scroll = one.answer.scroll_offset.y
        if 0 <= y - scroll < one.answer.size.height:
            await pilot.click(one.answer, offset=(x + 1, y - scroll))
        await pilot.pause(0.1)
        assert app.is_running and app.return_code is None
        assert app.title == title and clipboard == []
        # Copying the answer gives sanitised text, not the escapes.
        selected = one.answer.get_selection(Selection(None, None))
        assert selected is not None
        copied = selected[0]
        assert not [c for c in unsafe_chars(copied) if c not in (repr("\n"), repr("\t"))]
        assert "PWNED" not in copied


@pytest.mark.parametrize("endpoint", ["openai", "anthropic"])
async def test_hostile_error_messages_are_inert(
    replay: ReplayServer, endpoint: EndpointFormat
) -> None:
    replay.scripts["ok"] = Script(body=list(text_frames(endpoint, ["fine"])))
    replay.scripts["hostile-500"] = Script(status=500, content_type="application/json", body=[
        json.dumps({"error": {"type": "api_error", "message": HOSTILE_MESSAGE}}).encode()])
    frame = {"type": "provider_error", "code": "x", "message": HOSTILE_MESSAGE,
             "_anoman": {"failure_class": "upstream_error", "completion_tokens": 1}}
    error = (f"event: error\ndata: {json.dumps({'type': 'error', 'error': frame})}\n\n"
             if endpoint == "anthropic" else f"data: {json.dumps({'error': frame})}\n\n")
    replay.scripts["hostile-frame"] = Script(
        body=[*text_frames(endpoint, ["partial "])[:2], error.encode()])
    app = remote_app(replay.base_url, ["ok", "hostile-500", "hostile-frame"], endpoint)
    async with app.run_test(size=(160, 60)) as pilot:
        await connect_to(pilot, replay.base_url)
        await send(pilot, "fail with hostile messages")
        await until(pilot, lambda: settled(app))
        _, two, three = panes(app)
        assert "500" in badge_text(two) and "INTERRUPTED" in badge_text(three)
        for pane in (two, three):
            # A bidi override reaches the screen (the serious part) ...
            assert not unsafe_chars(badge_text(pane)), badge_text(pane)
            # ... and the payloads of stripped escapes show as junk text.
            assert "PWNED" not in badge_text(pane) and "<script>" not in badge_text(pane)
        assert_terminal_safe(app)


async def test_huge_and_broken_answers_stay_responsive(replay: ReplayServer) -> None:
    # Pane 1: one 2 MB token (one frame, arriving in many TCP reads).
    token = ("x" * 999_990) + "\x1b]0;PWNED\x07" + ("y" * 1_000_000)
    replay.scripts["huge-token"] = Script(body=openai_text_frames([token]))
    # Pane 2: a 100,000-line answer in 1,000 frames.
    pieces = ["".join(f"line {i}\n" for i in range(k, k + 100)) for k in range(0, 100_000, 100)]
    replay.scripts["many-lines"] = Script(body=openai_text_frames(pieces))
    # Pane 3: invalid UTF-8, and a valid character split across two reads.
    start = b'data: {"choices":[{"index":0,"delta":{"content":"euro \xe2\x82'
    rest = b'\xac bad \xff\xfe\xc3( nul-free end"}}]}\n\n'
    frames = openai_text_frames([])
    replay.scripts["bad-utf8"] = Script(body=[frames[0], start, 0.05, rest, *frames[1:]])
    app = remote_app(replay.base_url, ["huge-token", "many-lines", "bad-utf8"], idle_timeout=30)
    async with app.run_test(size=(160, 45)) as pilot:
        await connect_to(pilot, replay.base_url)
        started = time.monotonic()
        await send(pilot, "be big")
        # While the big answers are drawn, keys are still handled (bounded, generous).
        await until(pilot, lambda: settled(app), timeout=90)
        elapsed = time.monotonic() - started
        one, two, three = panes(app)
        assert [p.status for p in (one, two, three)] == ["done"] * 3
        assert len(one.answer.text.replace("\x1b]0;PWNED\x07", "")) == 1_999_990
        assert two.answer.text.count("\n") == 100_000
        # A finished answer is shown from its prompt once drawn (100,000 lines take
        # several frames after the stream ends); its end is one key away.
        await until(pilot, lambda: two.answer.caught_up, timeout=30)
        await pilot.pause()
        assert two.answer.render_line(0).text.strip() == "▌ You"
        two.answer.scroll_end(animate=False)
        await until(pilot, lambda: "line 99999" in two.answer.render_line(
            two.answer.scrollable_content_region.height - 1).text, timeout=30)
        text3 = "".join(three.answer._rendered_lines())
        assert "euro €" in text3 and "\ufffd" in text3 and "end" in text3
        assert_terminal_safe(app)
        key_at = time.monotonic()
        await pilot.press("ctrl+n")
        await until(pilot, lambda: all(p.status == "idle" for p in panes(app)), 10)
        assert time.monotonic() - key_at < 10
        print(f"\nhuge answers settled in {elapsed:.1f} s")
