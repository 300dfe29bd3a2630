"""How one user turn of a session ended, and what its requests added up to."""

from __future__ import annotations

import dataclasses
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sessions.events import TurnFinished
from sessions.wire.messages import Usage
from sessions.wire.stream import Reply

TurnStatus = Literal["done", "request_limit", "storm", "empty", "length", "content_filter"]
"""How a turn ended. ``length``: the reply was cut at the output limit (``finish_reason: length``), whatever it held;
``empty``: the model stopped with neither an answer nor a tool call."""


class TurnResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    status: TurnStatus
    text: str
    requests: int
    failures: int
    usage: Usage
    cost_usd: float
    reply: Reply | None = None

    def finished(self, session: str) -> TurnFinished:
        """The event that says how the turn ended."""
        return TurnFinished(
            session=session,
            status=self.status,
            text=self.text,
            requests=self.requests,
            failures=self.failures,
            cost_usd=self.cost_usd,
        )


def final_status(reply: Reply, *, empty: bool) -> TurnStatus:
    """How a turn ends on a reply that called no tool."""
    if reply.finish_reason == "length":  # cut, whatever it held: not "empty" (issue 11 item 1)
        return "length"
    if empty:
        return "empty"
    return "content_filter" if reply.finish_reason == "content_filter" else "done"


@dataclasses.dataclass
class TurnTally:
    """What one turn's requests added up to."""

    requests: int = 0
    usage: Usage = dataclasses.field(default_factory=Usage)
    cost_usd: float = 0.0
    last: Reply | None = None

    def add(self, reply: Reply, cost: float) -> Reply:
        self.requests += 1
        self.last = reply
        self.cost_usd += cost
        if reply.usage is not None:
            self.usage = self.usage + reply.usage
        return reply

    def result(self, status: TurnStatus, *, failures: int, text: str | None = None) -> TurnResult:
        """The turn's result; its text is the last reply's content unless ``text`` is given."""
        if text is None:
            text = (self.last.message.content or "") if self.last is not None else ""
        return TurnResult(
            status=status,
            text=text,
            requests=self.requests,
            failures=failures,
            usage=self.usage,
            cost_usd=self.cost_usd,
            reply=self.last,
        )
