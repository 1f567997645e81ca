"""An incremental Server-Sent Events decoder that follows the WHATWG event-stream rules.

Bytes go in as they arrive from the network, in reads of any size; complete
events come out. Handled as the standard says: UTF-8 decoded incrementally
with U+FFFD for invalid sequences (a multi-byte character split across reads
is joined, not replaced), one leading BOM dropped, CRLF / LF / CR line ends
(a CR at the end of one read followed by LF at the start of the next is one
line end), comments, `event` / `data` / `id` / `retry` fields, multi-line
data, and events whose data buffer is empty are not dispatched.

Line splitting is done on CR and LF only (as the standard says, and as
httpx-sse does), never with `str.splitlines`, which would also split on
U+2028/U+2029 and other characters that may legally sit inside a JSON string.

Why the stream core has its own decoder rather than httpx-sse's: this one is
pushed the raw reads of the response body, one `feed` per read as the stream
worker gets it (`StreamClient._read_events` in client.py). So every event it
completes keeps the arrival stamp of the read that brought it, and the very same
bytes, read for read (a key a server echoed back masked), go into the recording
(recording.py) that a replay later feeds back through this decoder. httpx-sse
pulls lines of decoded text from a response (`EventSource.iter_sse`), which hides
where one read ended and the next began. Both decode the same events from the
same valid streams: tests/test_sse_vs_httpx_sse.py checks that on generated
streams cut into arbitrary reads.

Pure: imports only the standard library.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class SSEEvent:
    """One dispatched event: its type (default `message`), data, and the last event id."""

    event: str
    data: str
    id: str | None = None


class SSEDecoder:
    """Turns a byte stream into `SSEEvent`s; keep one instance per response."""

    __slots__ = (
        "_bom_checked",
        "_data",
        "_decoder",
        "_event",
        "_last_id",
        "_pending",
        "_skip_lf",
        "retry_ms",
    )

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []  # text of the current, unterminated line
        self._skip_lf = False  # the previous read ended in CR: a leading LF is part of it
        self._bom_checked = False
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume one read from the network; return the events it completed."""
        text = self._decoder.decode(chunk)
        return self._feed_text(text) if text else []

    def close(self) -> list[SSEEvent]:
        """End of stream: flush the decoder. An unterminated event is discarded (standard)."""
        text = self._decoder.decode(b"", final=True)
        events = self._feed_text(text) if text else []
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if not self._bom_checked:
            self._bom_checked = True
            if text.startswith("\ufeff"):
                text = text[1:]
                if not text:
                    return []
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if "\r" in text:
            self._skip_lf = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            if text:
                self._pending.append(text)
            return []
        if self._pending:
            self._pending.append(text)
            text = "".join(self._pending)
            self._pending.clear()
        lines = text.split("\n")
        tail = lines.pop()
        if tail:
            self._pending.append(tail)
        events: list[SSEEvent] = []
        data = self._data
        # The hot path, inlined (a method call per line costs as much as the parse):
        # nearly every line of a completion stream is `data: {...}` or the blank line.
        for line in lines:
            if not line:
                if data:
                    events.append(
                        SSEEvent(self._event or "message", "\n".join(data), self._last_id)
                    )
                    data = self._data = []
                self._event = ""
            elif line.startswith("data:"):
                data.append(line[6:] if line.startswith(" ", 5) else line[5:])
            else:
                self._process_line(line)
        return events

    def _process_line(self, line: str) -> None:
        """Every other line: never blank and never `data:` (the loop above takes those)."""
        if line[0] == ":":
            return  # comment / keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
