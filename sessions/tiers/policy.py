"""The ladder of tiers and the rule that decides whether a snip pays (DESIGN §3.6 "Tiers").

Before each request the context (our estimate of the tokens it carries) is held against three shares of the window:
``snip_ratio`` (0.6), ``compaction_ratio`` (0.8) and ``force_ratio`` (0.9). The highest share passed names the tier.

A snip rewrites the log: the first request after it misses the cache on every token from the first snipped result to
the end. It pays when what it saves over the rest of the session is worth more than that miss::

    saved_tokens × remaining_requests × hit_price  >  miss_tokens × (miss_price − hit_price)

The saved tokens are priced as hits: they sit in the cached part of every later request, so each request that no
longer carries them saves their hit price, not their miss price. The miss costs the difference of the two prices on
tokens that would have hit. :func:`choose_snip` tries each candidate as the first snipped result (everything stale
and large from there on is snipped with it, for the same miss) and keeps the one that gains most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sessions.accounting.prices import PriceBook
from sessions.wire.messages import Usage

Tier = Literal["snip", "compact", "force"]
SNIP_MIN_TOKENS = 1_000
"""A stale tool result is a snip candidate when it carries at least this many tokens."""
_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class TokenPrices:
    """What one input token costs on a model at a time, in USD."""

    hit: float
    miss: float

    @classmethod
    def of(cls, book: PriceBook, model: str, at: datetime) -> TokenPrices:
        hit = Usage(prompt_tokens=_MILLION, total_tokens=_MILLION, prompt_cache_hit_tokens=_MILLION)
        miss = Usage(prompt_tokens=_MILLION, total_tokens=_MILLION, prompt_cache_miss_tokens=_MILLION)
        return cls(
            hit=float(book.cost(hit, model, at).total) / _MILLION,
            miss=float(book.cost(miss, model, at).total) / _MILLION,
        )


def tier_for(context_tokens: int, window: int, *, snip: float, compact: float, force: float) -> Tier | None:
    """The tier the context has passed, or None below ``snip`` of the window."""
    if context_tokens > window * force:
        return "force"
    if context_tokens > window * compact:
        return "compact"
    if context_tokens > window * snip:
        return "snip"
    return None


def guess_remaining(requests_so_far: int) -> int:
    """The requests a session is expected to make still, when the harness does not say: half as many as it made so
    far. "As many again" (a session that ran long runs long) snipped too late in a session and cost more than not
    snipping at all in ``bench/compaction_bench.py``; half of it did better (DESIGN §3.6)."""
    return max(1, requests_so_far // 2)


@dataclass(frozen=True, slots=True)
class SnipCandidate:
    index: int
    """The tool result's place in the log."""
    tokens_after: int
    """Its tokens once snipped."""


@dataclass(frozen=True, slots=True)
class SnipChoice:
    """The best snip found and its arithmetic."""

    indices: tuple[int, ...]
    saved_tokens: int
    """Tokens every later request carries fewer."""
    miss_tokens: int
    """Tokens of the new log from the first snipped result on: the next request misses them once."""
    remaining_requests: int
    gain_usd: float
    """``saved_tokens × remaining_requests × hit price``."""
    miss_usd: float
    """``miss_tokens × (miss price − hit price)``."""

    @property
    def pays(self) -> bool:
        return self.gain_usd > self.miss_usd

    def describe(self) -> str:
        verdict = "pays" if self.pays else "does not pay"
        return (
            f"{len(self.indices)} stale tool results, {self.saved_tokens} tokens saved × {self.remaining_requests} "
            f"requests = ${self.gain_usd:.6f} against a miss of {self.miss_tokens} tokens = ${self.miss_usd:.6f}: "
            f"{verdict}"
        )


def choose_snip(
    counts: Sequence[int], candidates: Sequence[SnipCandidate], remaining_requests: int, prices: TokenPrices
) -> SnipChoice | None:
    """The snip that gains most (it may not pay: see :attr:`SnipChoice.pays`), or None with no candidate.

    ``counts`` are the tokens of every log message as it is; ``candidates`` in log order."""
    if not candidates:
        return None
    after = list(counts)
    for c in candidates:
        after[c.index] = c.tokens_after
    suffix = [0] * (len(after) + 1)
    for i in range(len(after) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + after[i]
    best: SnipChoice | None = None
    saved_from = 0
    for k in range(len(candidates) - 1, -1, -1):  # candidates[k:] snipped, the first of them at candidates[k]
        c = candidates[k]
        saved_from += counts[c.index] - c.tokens_after
        miss = suffix[c.index]
        choice = SnipChoice(
            indices=tuple(x.index for x in candidates[k:]),
            saved_tokens=saved_from,
            miss_tokens=miss,
            remaining_requests=remaining_requests,
            gain_usd=saved_from * remaining_requests * prices.hit,
            miss_usd=miss * (prices.miss - prices.hit),
        )
        if best is None or choice.gain_usd - choice.miss_usd > best.gain_usd - best.miss_usd:
            best = choice
    return best
