"""Counters per model and per session, served by ``GET /emulator/stats``.

``ideal_hit_tokens`` is what a perfect cache could have hit (the longest prefix shared with anything sent or
generated before, unrounded), so ``hit_tokens / ideal_hit_tokens`` is a client's cache efficiency.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Counters:
    requests: int = 0
    prompt_tokens: int = 0
    hit_tokens: int = 0
    miss_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    ideal_hit_tokens: int = 0
    faults: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "hit_tokens": self.hit_tokens,
            "miss_tokens": self.miss_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "ideal_hit_tokens": self.ideal_hit_tokens,
            "hit_ratio": round(self.hit_tokens / self.prompt_tokens, 6) if self.prompt_tokens else None,
            "efficiency": round(self.hit_tokens / self.ideal_hit_tokens, 6) if self.ideal_hit_tokens else None,
            "faults_injected": dict(sorted(self.faults.items())),
        }


@dataclass(slots=True)
class Stats:
    total: Counters = field(default_factory=Counters)
    models: dict[str, Counters] = field(default_factory=dict)
    sessions: dict[str, Counters] = field(default_factory=dict)

    def _all(self, model: str, session: str) -> tuple[Counters, ...]:
        return (
            self.total,
            self.models.setdefault(model, Counters()),
            self.sessions.setdefault(session, Counters()),
        )

    def request(self, model: str, session: str) -> None:
        for c in self._all(model, session):
            c.requests += 1

    def fault(self, model: str, session: str, kind: str) -> None:
        for c in self._all(model, session):
            c.faults[kind] += 1

    def usage(
        self, model: str, session: str, *, prompt: int, hit: int, ideal: int, completion: int, reasoning: int
    ) -> None:
        for c in self._all(model, session):
            c.prompt_tokens += prompt
            c.hit_tokens += hit
            c.miss_tokens += prompt - hit
            c.ideal_hit_tokens += ideal
            c.completion_tokens += completion
            c.reasoning_tokens += reasoning

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total.to_json(),
            "models": {k: v.to_json() for k, v in sorted(self.models.items())},
            "sessions": {k: v.to_json() for k, v in sorted(self.sessions.items())},
        }
