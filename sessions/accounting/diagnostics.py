"""Cache diagnostics for every request (DESIGN §3.8): prefix hash, whether it changed and why, hit and miss tokens,
per-turn and cumulative hit ratios, and whether a miss is explained. A miss that nothing explains is a bug.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from sessions.wire.messages import Usage
from sessions.wire.provider import cache_reported

CACHE_UNIT_TOKENS = 128  # observed V4 hit granularity (DESIGN §4)
CACHE_NOT_REPORTED = "cache not reported by the server"


class RequestDiagnostics(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: str = "diagnostics"
    request_index: int
    model: str
    prefix_fingerprint: str
    log_epoch: int
    prefix_changed: bool
    change_reason: str | None
    prompt_tokens: int
    hit_tokens: int
    miss_tokens: int
    completion_tokens: int
    hit_ratio: float
    cumulative_hit_ratio: float
    expected_hit_tokens: int
    unexplained_miss: bool


@dataclass
class _ModelState:
    fingerprint: str
    epoch: int
    prompt_tokens: int


class CacheTracker:
    """Follows one session's requests and explains each one's cache behaviour."""

    def __init__(self, unit: int = CACHE_UNIT_TOKENS) -> None:
        self.unit = unit
        self.requests = 0
        self.prompt_tokens = 0
        self.hit_tokens = 0
        self._last: dict[str, _ModelState] = {}
        self._last_fingerprint: str | None = None
        self._last_epoch = 0  # pragma: no mutate (read only once _last_fingerprint is set, which sets it too)
        self._first_reason = "first request of the session"

    def restore(self, earlier: RequestDiagnostics) -> None:
        """Count a request of this session made before a resume (from its journal): the numbering and the cumulative
        ratio go on from there. What the server still caches is not assumed: the first request after the resume
        explains its misses as such."""
        self.requests = max(self.requests, earlier.request_index)
        self.prompt_tokens += earlier.prompt_tokens
        self.hit_tokens += earlier.hit_tokens
        self._first_reason = "first request since the session was resumed (the server may have dropped its cache)"

    def expected_hit(self, model: str, fingerprint: str, epoch: int) -> int:
        """The hit tokens an append-only request on ``model`` can expect from the last one (0 if none is known)."""
        prev = self._last.get(model)
        if prev is None or prev.fingerprint != fingerprint or prev.epoch != epoch:
            return 0
        return (prev.prompt_tokens // self.unit) * self.unit

    @property
    def hit_ratio(self) -> float:
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def observe(
        self,
        *,
        model: str,
        fingerprint: str,
        epoch: int,
        rewrite_reason: str | None,
        usage: Usage,
        request_index: int | None = None,
    ) -> RequestDiagnostics:
        """Explain one request; ``request_index`` numbers it (default: the count of requests observed)."""
        self.requests = request_index if request_index is not None else self.requests + 1
        prev = self._last.get(model)
        reason: str | None = None
        changed = False
        expected = 0
        if self._last_fingerprint is None:
            reason = self._first_reason
            changed = True
        elif fingerprint != self._last_fingerprint:
            reason = "prefix changed (system prompt or tool schemas)"
            changed = True
        elif epoch != self._last_epoch:
            reason = f"log rewritten: {rewrite_reason or 'compaction'}"
            changed = True
        elif prev is None:
            reason = f"first request on {model} (each model has its own cache)"
        else:
            # An append-only request re-sends at least everything the last request on this model sent.
            expected = (prev.prompt_tokens // self.unit) * self.unit
        hit = usage.prompt_cache_hit_tokens
        if not cache_reported(usage):  # nothing to compare: an OpenAI-style server that does not say
            reason, expected = reason or CACHE_NOT_REPORTED, 0
        unexplained = reason is None and hit < expected
        self._last[model] = _ModelState(fingerprint, epoch, usage.prompt_tokens)
        self._last_fingerprint = fingerprint
        self._last_epoch = epoch
        self.prompt_tokens += usage.prompt_tokens
        self.hit_tokens += hit
        return RequestDiagnostics(
            request_index=self.requests,
            model=model,
            prefix_fingerprint=fingerprint,
            log_epoch=epoch,
            prefix_changed=changed,
            change_reason=reason if reason else ("unexplained cache miss" if unexplained else None),
            prompt_tokens=usage.prompt_tokens,
            hit_tokens=hit,
            miss_tokens=usage.prompt_cache_miss_tokens,
            completion_tokens=usage.completion_tokens,
            hit_ratio=hit / usage.prompt_tokens if usage.prompt_tokens else 0.0,
            cumulative_hit_ratio=self.hit_ratio,
            expected_hit_tokens=expected,
            unexplained_miss=unexplained,
        )
