"""How long the client waits before retrying a request: the server's ``Retry-After`` when it gave one (bounded),
else exponential backoff with jitter, as a tenacity ``wait`` callable."""

from __future__ import annotations

import random
from typing import Protocol

from tenacity import RetryCallState

from sessions.wire.errors import DeepSeekError


class WaitSettings(Protocol):
    """The client settings the wait reads (``ClientSettings`` has them)."""

    @property
    def backoff_initial_s(self) -> float: ...
    @property
    def backoff_max_s(self) -> float: ...
    @property
    def backoff_jitter_s(self) -> float: ...
    @property
    def retry_after_max_s(self) -> float: ...


class RetryWait:
    """Tenacity wait: the server's ``Retry-After`` when it gave one, else exponential backoff plus jitter."""

    def __init__(self, settings: WaitSettings, rng: random.Random) -> None:
        self._settings = settings
        self._rng = rng

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, DeepSeekError) and exc.retry_after is not None:
            return min(exc.retry_after, self._settings.retry_after_max_s)
        s = self._settings
        base = min(s.backoff_max_s, s.backoff_initial_s * 2.0 ** (state.attempt_number - 1))
        jitter = self._rng.uniform(0.0, s.backoff_jitter_s) if s.backoff_jitter_s else 0.0
        return base + jitter
