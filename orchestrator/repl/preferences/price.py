"""The price on screen: the turn's and the conversation's cost in the status line, yellow and red past the
thresholds of ``[conversation]`` (``turn_warn_usd`` $0.05 / ``turn_alert_usd`` $0.20 a turn; ``session_warn_usd`` /
``session_alert_usd`` for the total), and what ``/cost`` adds: the conversation's cost without the cache."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from orchestrator.config.model import ConversationConfig
from orchestrator.text.wording import usd
from sessions import UsageReported
from sessions.accounting import PriceBook

WARN = "ansiyellow"
ALERT = "bold ansired"


def cost_style(usd: float, warn: float, alert: float) -> str:
    """The prompt_toolkit style of an amount: plain, yellow past ``warn``, red past ``alert``."""
    if usd > alert:
        return ALERT
    if usd > warn:
        return WARN
    return ""


def price_parts(turn_usd: float, total_usd: float, talk: ConversationConfig) -> list[tuple[str, str]]:
    """`` · turn $0.0123 · $0.4567``, each amount in its colour."""
    return [
        ("", " · turn "),
        (cost_style(turn_usd, talk.turn_warn_usd, talk.turn_alert_usd), usd(turn_usd)),
        ("", " · "),
        (cost_style(total_usd, talk.session_warn_usd, talk.session_alert_usd), usd(total_usd)),
    ]


@dataclass(frozen=True)
class CacheSavings:
    paid_usd: float
    uncached_usd: float
    """The same requests with every input token priced as a cache miss (at today's rates)."""

    @property
    def saved_usd(self) -> float:
        return self.uncached_usd - self.paid_usd

    def line(self) -> str:
        if self.uncached_usd <= 0:
            return "without the cache: nothing yet"
        share = self.saved_usd / self.uncached_usd * 100
        return (
            f"without the cache this conversation would have cost ${self.uncached_usd:.4f}: "
            f"the cache saved ${self.saved_usd:.4f} ({share:.0f}%)"
        )


def cache_savings(events: Iterable[dict[str, Any]], book: PriceBook, at: datetime) -> CacheSavings:
    """From a session journal's events: what its requests cost, and what they would have cost without the cache."""
    paid = uncached = 0.0
    for event in events:
        if event.get("kind") != "usage":
            continue
        used = UsageReported.model_validate(event)
        u = used.usage
        inputs = u.prompt_cache_hit_tokens + u.prompt_cache_miss_tokens or u.prompt_tokens
        missed = u.model_copy(update={"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": inputs})
        paid += used.cost_usd
        uncached += float(book.cost(missed, used.model, at).total)
    return CacheSavings(paid_usd=paid, uncached_usd=max(uncached, paid))
