"""What a running goal reports to the batch's progress display (:class:`Progress`): small, typed, and the same on
this machine and from a Ray worker (there it travels to the driver through the batch's actor)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

ProgressKind = Literal["started", "state", "step", "cost", "ended"]


class Progress(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    goal_id: str
    kind: ProgressKind
    text: str = ""
    cost_usd: float = 0.0
    """The goal's spend so far."""
    requests: int = 0
    node: str = "local"
