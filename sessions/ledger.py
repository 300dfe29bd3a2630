"""What a session's requests used and cost (DESIGN §3.8): one usage event per request, priced, with cache diagnostics;
and asking the session's request gate before each request (:func:`admit`, :func:`release`).

Plain functions over a :class:`~sessions.session.Session`: they add to its totals (``requests``, ``usage``,
``cost_usd``), emit :class:`~sessions.events.UsageReported` (and :class:`~sessions.events.DiagnosticsReported` for a
request of the conversation itself), and estimate what a request cut off mid-way cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions import tokens
from sessions.events import DiagnosticsReported, UsageReported
from sessions.reply import RequestEstimate
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


def admit(session: Session, model: str, *, max_tokens: int | None = None, extra_tokens: int = 0) -> None:
    """Ask the session's request gate for its next request (once: a turn's first request is admitted before its
    message is logged, so a refused turn leaves no trace); the gate raises to refuse it."""
    s = session
    if s.request_gate is None or s._release is not None:
        return
    if s._last_prompt_tokens:  # the context as the last usage left it, plus what was appended since
        prompt = s.context_tokens()
    else:  # no usage yet: the body itself, once
        body = s.body(model)
        prompt = tokens.count(body.decode("utf-8", "replace")) if len(body) < 2_000_000 else len(body)
    s._release = s.request_gate.admit(estimate(s, model, prompt + extra_tokens, max_tokens))


def restarted(session: Session, model: str, max_tokens: int | None, body: bytes) -> None:
    """A reply source sends a second request for one (pro after an aborted flash call, which is accounted): the first
    is over; the second is admitted and reported as a request of its own."""
    release(session)
    admit(session, model, max_tokens=max_tokens)
    session._started(model, body)


def release(session: Session) -> None:
    """The admitted request has ended (its usage is accounted): tell the gate."""
    done, session._release = session._release, None
    if done is not None:
        done()


def estimate(session: Session, model: str, prompt_tokens: int, max_tokens: int | None) -> RequestEstimate:
    """``prompt_tokens`` priced as cache misses (an upper bound on the input's cost), and the output's unit price."""
    s = session
    at = s.clock()
    missed = Usage(prompt_tokens=prompt_tokens, total_tokens=prompt_tokens, prompt_cache_miss_tokens=prompt_tokens)
    per_million = Usage(completion_tokens=1_000_000, total_tokens=1_000_000)
    return RequestEstimate(
        session=s.name,
        model=model,
        prompt_tokens=prompt_tokens,
        prompt_usd=float(s.price_book.cost(missed, model, at).total),
        output_usd_per_token=float(s.price_book.cost(per_million, model, at).total) / 1_000_000,
        max_output_tokens=max_tokens,
    )


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
