"""What a session's requests used and cost (DESIGN §3.8): one usage event per request, priced, with cache diagnostics.

A :class:`UsageLedger` owns a session's totals (requests, usage, dollars) and its :class:`CacheTracker`. Every request
of the session is accounted here exactly once, whether the server reported its usage, it was cut off mid-way (an
estimate, marked as one) or it was a side request such as a compaction digest (no cache diagnostics). A resumed
session's ledger is restored from the journal's events, so its figures cover the whole session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sessions.accounting import tokens
from sessions.accounting.diagnostics import CacheTracker
from sessions.accounting.prices import PriceBook
from sessions.events import DiagnosticsReported, SessionEvent, UsageReported
from sessions.wire.messages import Usage
from sessions.wire.reply import RequestEstimate
from sessions.wire.stream import Reply


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What a request of the conversation was sent under: the prefix, and the log's rewrite epoch and reason."""

    fingerprint: str
    epoch: int
    rewrite_reason: str | None


class UsageLedger:
    """A session's requests, usage and cost, and the cache diagnostics of its conversation's requests."""

    def __init__(
        self,
        *,
        session: str,
        price_book: PriceBook,
        clock: Callable[[], datetime],
        emit: Callable[[SessionEvent], None],
    ) -> None:
        self.session = session
        self.price_book = price_book
        self.clock = clock
        """Read when a request is priced (peak and off-peak rates); a replay pins it."""
        self._emit = emit
        self.tracker = CacheTracker()
        self.requests = 0
        self.usage = Usage()
        self.cost_usd = 0.0

    def account(self, usage: Usage | None, model: str, *, estimated: bool, cache: CacheKey | None) -> float:
        """Add one request and emit its usage; with ``cache`` (a request of the conversation itself) and figures the
        server reported, its cache diagnostics too. Returns the request's cost."""
        if usage is None:
            usage = Usage()  # every request is one usage event, even one the server sent no figures for
            estimated = True
        cost = float(self.price_book.cost(usage, model, self.clock()).total)
        self.requests += 1
        self.usage = self.usage + usage
        self.cost_usd += cost
        self._emit(
            UsageReported(
                session=self.session,
                model=model,
                usage=usage,
                cost_usd=cost,
                session_cost_usd=self.cost_usd,
                estimated=estimated,
            )
        )
        if cache is not None and not estimated:
            diag = self.tracker.observe(
                model=model,
                fingerprint=cache.fingerprint,
                epoch=cache.epoch,
                rewrite_reason=cache.rewrite_reason,
                usage=usage,
                request_index=self.requests,
            )
            self._emit(DiagnosticsReported(session=self.session, diagnostics=diag))
        return cost

    def interrupted_usage(
        self, model: str, cache: CacheKey, body: bytes, prompt_tokens: int | None, streamed: str
    ) -> Usage:
        """Our own count of a request cut off mid-way: its input (``prompt_tokens`` when the context estimate knows
        it, else counted from ``body``; the part the last request on this model left cached assumed hit) and what
        had streamed."""
        if prompt_tokens is None:
            big = len(body) >= 2_000_000
            prompt_tokens = len(body) // 4 if big else tokens.count(body.decode("utf-8", "replace"))
        hit = min(prompt_tokens, self.tracker.expected_hit(model, cache.fingerprint, cache.epoch))
        completion = tokens.count(streamed) if streamed else 0
        return Usage.counted(prompt_tokens, hit, completion)

    def uncounted_usage(self, body: bytes, prompt_tokens: int | None, reply: Reply) -> Usage:
        """Our own count of a whole reply the server sent no usage for: its input (``prompt_tokens`` when the context
        estimate knows it, else counted from ``body``) with no hit/miss split (the cache is not reported, so it is
        priced as missed), and the reply's text."""
        if prompt_tokens is None:
            prompt_tokens = len(body) // 4 if len(body) >= 2_000_000 else tokens.count(body.decode("utf-8", "replace"))
        m = reply.message
        text = (m.reasoning_content or "") + (m.content or "") + "".join(c.function.arguments for c in m.tool_calls)
        completion = tokens.count(text) if text else 0
        return Usage(prompt_tokens=prompt_tokens, completion_tokens=completion, total_tokens=prompt_tokens + completion)

    def restore(self, events: Sequence[dict[str, Any]]) -> None:
        """Requests, usage and cost from a journal's events, so a resumed session reports the whole session, not
        only this process. A request is one ``usage`` event (every request has exactly one, aborted or not); the
        cache diagnostics go on from theirs."""
        for event in events:
            kind = event.get("kind")
            if kind == "usage":
                used = UsageReported.model_validate(event)
                self.requests += 1
                self.usage = self.usage + used.usage
                self.cost_usd += used.cost_usd
            elif kind == "cache":
                self.tracker.restore(DiagnosticsReported.model_validate(event).diagnostics)

    def estimate(self, model: str, prompt_tokens: int, max_tokens: int | None) -> RequestEstimate:
        """What a request about to be sent may cost at most: ``prompt_tokens`` priced as cache misses (an upper bound
        on the input's cost), and the output's unit price."""
        at = self.clock()
        missed = Usage(prompt_tokens=prompt_tokens, total_tokens=prompt_tokens, prompt_cache_miss_tokens=prompt_tokens)
        per_million = Usage(completion_tokens=1_000_000, total_tokens=1_000_000)
        return RequestEstimate(
            session=self.session,
            model=model,
            prompt_tokens=prompt_tokens,
            prompt_usd=float(self.price_book.cost(missed, model, at).total),
            output_usd_per_token=float(self.price_book.cost(per_million, model, at).total) / 1_000_000,
            max_output_tokens=max_tokens,
        )
