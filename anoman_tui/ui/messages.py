"""Messages the compare screen's parts post: one class per thing that happened."""

from __future__ import annotations

from textual.message import Message

from anoman_tui.streaming import ModelInfo, StreamResult


class PromptSubmitted(Message):
    """The user pressed the send key in the prompt box."""

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt


class PaneStreamFinished(Message):
    """A pane's stream ended (completed, failed or cancelled)."""

    def __init__(self, pane: int, prompt: str, result: StreamResult) -> None:
        super().__init__()
        self.pane = pane
        self.prompt = prompt
        self.result = result


class GatewayReady(Message):
    """Where requests go is known and its model list has been read."""

    def __init__(self, base_url: str, label: str, models: list[ModelInfo]) -> None:
        super().__init__()
        self.base_url = base_url
        self.label = label
        self.models = models


class GatewayConnecting(Message):
    """The app (re)connects: to a new address, with a new key, or when asked to."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label


class GatewayUnavailable(Message):
    """The gateway could not be started or reached; `reason` is one sentence.

    `retry_in_s` is when the app tries again by itself; None when it will not (the
    address or the key is wrong, not down), until asked to reconnect.
    """

    def __init__(self, reason: str, retry_in_s: float | None = None) -> None:
        super().__init__()
        self.reason = reason
        self.retry_in_s = retry_in_s


class PaneStatusChanged(Message):
    """A pane moved between idle / waiting / streaming / done / failed / cancelled."""

    def __init__(self, pane: int, status: str) -> None:
        super().__init__()
        self.pane = pane
        self.status = status
