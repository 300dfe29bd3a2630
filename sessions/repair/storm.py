"""Suppress storms of identical tool calls (DESIGN §5).

A model stuck in a loop sends the same call with the same arguments again and again. :class:`StormGuard` keeps the
last :attr:`~StormGuard.window` calls of the turn; the :attr:`~StormGuard.threshold`-th identical call (same name,
same canonicalized arguments) within that window is not run: its result is a stub that tells the model to change
approach. A second storm in the same turn ends the turn, with a summary for the user and the model.

A call to a tool that changes the workspace (``mutating``) with arguments not seen in the window is progress: the
window starts over, since repeating an earlier call may now give a different result. So an edit → test → edit → test
loop is never a storm, while the same edit or the same test run three times in a row is.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

StormKind = Literal["allow", "suppress", "end_turn"]


@dataclass(frozen=True, slots=True)
class StormVerdict:
    kind: StormKind
    summary: str = ""
    """Empty for ``allow``; the stub tool result for ``suppress``; the turn's storm summary for ``end_turn``."""


def call_key(name: str, args: Mapping[str, Any]) -> str:
    """Identity of a call for storm detection: the name and the canonical JSON of the executed arguments."""
    return name + "\x00" + json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


class StormGuard:
    """Per-session guard, reset at each user turn with :meth:`reset_turn`. Deterministic: no clock involved."""

    def __init__(
        self, *, window: int = 6, threshold: int = 3, storms_per_turn: int = 2, mutating: frozenset[str] = frozenset()
    ) -> None:
        if window < 1 or threshold < 2 or storms_per_turn < 1:
            raise ValueError("StormGuard needs window >= 1, threshold >= 2 and storms_per_turn >= 1")
        self.window = window
        self.threshold = threshold
        self.storms_per_turn = storms_per_turn
        self.mutating = mutating
        self._recent: deque[str] = deque(maxlen=window)
        self._storms: list[str] = []
        self._ended = False

    @property
    def storms(self) -> int:
        """Storms seen in this turn."""
        return len(self._storms)

    @property
    def turn_ended(self) -> bool:
        return self._ended

    def reset_turn(self) -> None:
        """A new user turn: forget the window and the storms."""
        self._recent.clear()
        self._storms.clear()
        self._ended = False

    def check(self, name: str, args: Mapping[str, Any]) -> StormVerdict:
        """Record one call about to run and say whether it may run."""
        key = call_key(name, args)
        if name in self.mutating and key not in self._recent:
            self._recent.clear()  # a new change to the workspace: earlier calls may now give other results
        self._recent.append(key)
        count = sum(1 for k in self._recent if k == key)
        if self._ended:
            return StormVerdict("end_turn", self.summary())
        if count < self.threshold:
            return StormVerdict("allow")
        self._storms.append(key)
        if len(self._storms) >= self.storms_per_turn:
            self._ended = True
            return StormVerdict("end_turn", self.summary())
        return StormVerdict(
            "suppress",
            f"Not run: this is call number {count} to {name} with exactly the same arguments within the last "
            f"{self.window} tool calls, so its result would not change. Change approach: use the results you already "
            "have, try different arguments or a different tool, or say what is blocking you. Another storm of "
            "repeated calls ends this turn.",
        )

    def summary(self) -> str:
        """What the storms of this turn were: the text of an ``end_turn`` verdict."""
        described = []
        for key in dict.fromkeys(self._storms):  # first-seen order, duplicates dropped
            name, _, args = key.partition("\x00")
            shown = args if len(args) <= 120 else args[:117] + "..."
            described.append(f"{name} {shown}")
        return (
            f"Turn ended by the storm guard: {len(self._storms)} storms of identical tool calls in this turn "
            f"(the same call {self.threshold} times within {self.window} calls), the last one after a warning. "
            "Repeated calls: " + "; ".join(described) + ". The calls were not run again."
        )
