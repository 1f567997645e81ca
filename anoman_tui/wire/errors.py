"""Error shapes: HTTP error bodies (before the stream) and the in-stream error frame (after)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from anoman_tui.wire.anoman import AnomanBlock, AnomanFailureInfo
from anoman_tui.wire.base import WireModel


def _text_or_none(value: Any) -> Any:
    # Some servers send numeric codes or nested objects; keep a readable string.
    if value is None or isinstance(value, str):
        return value
    return str(value)


LooseText = Annotated[str | None, BeforeValidator(_text_or_none)]


class ErrorDetail(WireModel):
    type: LooseText = None
    code: LooseText = None
    message: LooseText = None
    param: LooseText = None
    anoman: AnomanBlock | None = Field(default=None, alias="_anoman")


class ErrorBody(WireModel):
    """A JSON error body of a pre-stream HTTP failure (docs/wire-contract.md §3).

    A 403 guardrail block carries `_anoman.guardrails`; we accept the block at
    the top level or inside `error`, since the page does not pin it down.
    """

    error: ErrorDetail = Field(default_factory=ErrorDetail)
    anoman: AnomanBlock | None = Field(default=None, alias="_anoman")

    @field_validator("error", mode="before")
    @classmethod
    def _error_as_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"message": value}
        return value

    @property
    def guardrails(self) -> AnomanBlock | None:
        return self.anoman or self.error.anoman


class StreamErrorDetail(WireModel):
    type: LooseText = None
    code: LooseText = None
    message: LooseText = None
    anoman: AnomanFailureInfo | None = Field(default=None, alias="_anoman")


class StreamErrorFrame(WireModel):
    """`data: {"error": {...}}` after the stream opened: the response failed."""

    error: StreamErrorDetail = Field(default_factory=StreamErrorDetail)

    @field_validator("error", mode="before")
    @classmethod
    def _error_as_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"message": value}
        return value
