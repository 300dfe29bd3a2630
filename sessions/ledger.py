"""What a session's requests used and cost (DESIGN §3.8): one usage event per request, priced, with cache diagnostics.

Plain functions over a :class:`~sessions.session.Session`: they add to its totals (``requests``, ``usage``,
``cost_usd``), emit :class:`~sessions.events.UsageReported` (and :class:`~sessions.events.DiagnosticsReported` for a
request of the conversation itself), and estimate what a request cut off mid-way cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions import tokens
from sessions.events import DiagnosticsReported, UsageReported
from sessions.wire import Usage

if TYPE_CHECKING:
    from sessions.session import Session


def account(
    session: Session, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True
) -> float:
    """Add one request's usage and cost to the session; emit usage and, for a request of the conversation itself
    (``diagnose``) whose usage the server reported, cache diagnostics."""
    s = session
    s._in_flight = None
    if usage is None:
        usage = Usage()  # every request is one usage event, even one the server sent no figures for
        estimated = True
    cost = float(s.price_book.cost(usage, model, s.clock()).total)
    s.requests += 1
    s.usage = s.usage + usage
    s.cost_usd += cost
    s.emit(
        UsageReported(
            session=s.name,
            model=model,
            usage=usage,
            cost_usd=cost,
            session_cost_usd=s.cost_usd,
            estimated=estimated,
        )
    )
    if diagnose and not estimated:
        diag = s.tracker.observe(
            model=model,
            fingerprint=s.prefix.fingerprint,
            epoch=s.log.epoch,
            rewrite_reason=s.log.rewrite_reason,
            usage=usage,
            request_index=s.requests,
        )
        s.emit(DiagnosticsReported(session=s.name, diagnostics=diag))
        s._last_prompt_tokens = usage.prompt_tokens + usage.completion_tokens
        s._unsent_tokens = 0
    return cost


def account_interrupted(session: Session, model: str, body: bytes) -> None:
    """What a request cut off mid-way cost, by our own count: its input (the part the last request on this model sent
    assumed cached) and what had streamed."""
    s = session
    if s._last_prompt_tokens:
        prompt = s.context_tokens()
    else:
        prompt = tokens.count(body.decode("utf-8", "replace")) if len(body) < 2_000_000 else len(body) // 4
    hit = min(prompt, s.tracker.expected_hit(model, s.prefix.fingerprint, s.log.epoch))
    completion = tokens.count("".join(s._streamed)) if s._streamed else 0
    usage = Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_cache_hit_tokens=hit,
        prompt_cache_miss_tokens=prompt - hit,
    )
    s.account(usage, model, estimated=True)
