"""Outages waited out (``reasonix goal --unattended``): a reply source around the goal's escalator that, when
DeepSeek is overloaded, rate-limiting, failing or out of reach past the client's own retries, waits with a growing
backoff and sends the same request again, until it is answered or the run is cancelled (Ctrl-C, or the unattended
run's maximum runtime).

Waiting at the request, rather than ending the turn and resuming the run, keeps everything as it stood: the turn, the
step's attempt, the session's log (no second copy of the turn's message), and the bytes of the request, so the answer
that finally comes hits the cache the outage left. Each wait is told to ``on_wait`` (the goal emits and journals it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import trio
from pydantic import BaseModel, ConfigDict, Field

from sessions.wire import DeepSeekError, Reply, ReplyRequest, ReplySource, RetriesExhaustedError, StreamEvent, is_outage


class Backoff(BaseModel):
    """Waits that grow by ``factor`` from ``initial_s`` up to ``max_s``: an outage of minutes costs a few requests,
    one of hours a request every ``max_s``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    initial_s: float = Field(15.0, gt=0)
    factor: float = Field(2.0, ge=1)
    max_s: float = Field(300.0, gt=0)

    def wait_s(self, attempt: int) -> float:
        """The wait before try number ``attempt + 1`` (``attempt`` counts the failures in a row, from 1)."""
        grown = self.initial_s
        for _ in range(max(0, attempt - 1)):  # by steps, stopping at the ceiling: a power of a long outage overflows
            if grown >= self.max_s or self.factor == 1:
                break
            grown *= self.factor
        return min(self.max_s, grown)


def outage_in(exc: BaseException) -> DeepSeekError | None:
    """The outage ``exc`` is, bare or as the only kind of leaf of an exception group (it passed a nursery)."""
    if isinstance(exc, BaseExceptionGroup):
        leaves = [outage_in(inner) for inner in exc.exceptions]
        return leaves[0] if leaves and all(leaf is not None for leaf in leaves) else None
    return exc if isinstance(exc, DeepSeekError) and is_outage(exc) else None


def describe(error: DeepSeekError) -> str:
    """What the wait is for, in one line (the client's "gave up after N attempts" advice does not apply here)."""
    if isinstance(error, RetriesExhaustedError):
        return f"{error.last} ({error.attempts} attempts)"
    return str(error)


@dataclass
class OutageWaits:
    """The reply source that waits outages out (see the module's docstring)."""

    inner: ReplySource
    on_wait: Callable[[str, float, int], None]
    """Told ``(reason, wait_s, attempt)`` before each wait."""
    backoff: Backoff = field(default_factory=Backoff)
    waits: int = 0
    waited_s: float = 0.0

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
        failures = 0
        while True:
            try:
                return await self.inner(call, emit)
            except BaseException as exc:
                error = outage_in(exc)
                if error is None:
                    raise
            failures += 1
            wait = self.backoff.wait_s(failures)
            self.on_wait(describe(error), wait, failures)
            start = trio.current_time()
            try:
                await trio.sleep(wait)
            finally:
                self.waits += 1
                self.waited_s += trio.current_time() - start
