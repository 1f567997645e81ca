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


class GatewayUnavailable(Message):
    """The gateway could not be started or reached; `reason` is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class PaneStatusChanged(Message):
    """A pane moved between idle / waiting / streaming / done / failed / cancelled."""

    def __init__(self, pane: int, status: str) -> None:
        super().__init__()
        self.pane = pane
        self.status = status
