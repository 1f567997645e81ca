"""The base model every wire model derives from: tolerant of what it does not know."""

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """Keeps unknown fields (reachable through `model_extra`) instead of failing on them.

    A gateway that adds a field must never break a client, and whatever it
    sent must survive a round trip (exports show the block as sent).
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
