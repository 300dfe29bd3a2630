"""The request a session has in flight: asking its gate, accounting it (DESIGN §3.8).

:class:`InFlight` is told when a request starts (its event, what it sent) and what streams back; it accounts each
request exactly once into the session's :class:`~sessions.usage_ledger.UsageLedger`, and a request of the
conversation whose usage the server reported resets the :class:`~sessions.accounting.context_estimate.ContextEstimate`.
A request cut off mid-way (Ctrl-C, a deadline) is accounted by our own count of what it sent and what had streamed,
marked as an estimate: its input was sent, so it is never free.

Before a request goes out, the session's :class:`~sessions.wire.reply.RequestGate` (when it has one: a goal's budget) is
asked with what the request may cost at most; it raises to refuse, or admits and is told when the request has ended.
A turn's first request is admitted before the turn's message is logged, so a refused turn leaves no trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sessions.accounting import tokens
from sessions.accounting.context_estimate import ContextEstimate
from sessions.events import RequestStarted, SessionEvent, StreamUpdate
from sessions.usage_ledger import CacheKey, UsageLedger
from sessions.wire.errors import DeepSeekError
from sessions.wire.messages import Usage
from sessions.wire.reply import RequestGate
from sessions.wire.stream import Completed, ContentDelta, ReasoningDelta, Reply, StreamEvent, ToolCallArgumentsDelta


def _is_api_error(exc: BaseException) -> bool:
    """A DeepSeek error (bare or a group of them): the server answered, with an error, not a reply to bill."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_api_error(inner) for inner in exc.exceptions)
    return isinstance(exc, DeepSeekError)


class InFlight:
    """One session's request in flight: started, streamed, accounted."""

    def __init__(
        self,
        *,
        session: str,
        ledger: UsageLedger,
        context: ContextEstimate,
        emit: Callable[[SessionEvent], None],
        cache_key: Callable[[], CacheKey],
    ) -> None:
        self.session = session
        self.ledger = ledger
        self.context = context
        self._emit = emit
        self._cache_key = cache_key
        self._sent: tuple[str, bytes] | None = None
        """The model and body of a request sent whose usage is not accounted yet."""
        self._streamed: list[str] = []
        self.gate: RequestGate | None = None
        """Asked before every request the session sends (:mod:`sessions.wire.reply`)."""
        self._release: Callable[[], None] | None = None
        """The gate's release for the request admitted and not ended yet."""

    def admit(self, model: str, body: Callable[[], bytes], *, max_tokens: int | None = None, extra: str = "") -> None:
        """Ask the gate for the next request (once until :meth:`release`); the gate raises to refuse it. Its prompt:
        the context as the last usage left it plus what was appended since, or else ``body`` counted, plus the
        tokens of ``extra``, the text about to be appended. Without a gate nothing is counted."""
        if self.gate is None or self._release is not None:
            return
        if self.context.reported:
            prompt = self.context.tokens
        else:  # no usage yet: the body itself, once
            data = body()
            prompt = tokens.count(data.decode("utf-8", "replace")) if len(data) < 2_000_000 else len(data)
        self._release = self.gate.admit(self.ledger.estimate(model, prompt + tokens.count(extra), max_tokens))

    def release(self) -> None:
        """The request has ended (a reply or a failure, accounted or about to be): tell the gate."""
        self._sent = None
        done, self._release = self._release, None
        if done is not None:
            done()

    def restarted(self, model: str, body: bytes, *, max_tokens: int | None, messages: int) -> None:
        """A reply source sends a second request for one (pro after an aborted flash call, which is accounted): the
        first is over; the second is admitted and reported as a request of its own."""
        self.release()
        self.admit(model, lambda: body, max_tokens=max_tokens)
        self.started(model, body, messages=messages)

    @contextmanager
    def side_request(self, model: str, prompt_tokens: int) -> Iterator[None]:
        """Admit a request outside the conversation (a compaction digest) for as long as the block runs."""
        release = self.gate.admit(self.ledger.estimate(model, prompt_tokens, None)) if self.gate else None
        try:
            yield
        finally:
            if release is not None:
                release()

    def started(self, model: str, body: bytes, *, messages: int) -> None:
        """A request of the conversation goes out (again, on another model, when a turn escalates)."""
        self._sent = (model, body)
        self._streamed.clear()
        self._emit(
            RequestStarted(
                session=self.session,
                request_index=self.ledger.requests + 1,
                model=model,
                body_bytes=len(body),
                prefix_fingerprint=self._cache_key().fingerprint,
                messages=messages,
            )
        )

    def streamed(self, event: StreamEvent) -> None:
        if isinstance(event, Completed):
            return
        if isinstance(event, ReasoningDelta | ContentDelta | ToolCallArgumentsDelta):
            self._streamed.append(event.text)
        self._emit(StreamUpdate(session=self.session, event=event))

    def account(self, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True) -> float:
        """Account one request; with ``diagnose`` (a request of the conversation itself, not a side request) and
        figures the server reported, its cache diagnostics too, and the context estimate starts again from them."""
        self._sent = None
        cache = self._cache_key() if diagnose else None
        cost = self.ledger.account(usage, model, estimated=estimated or usage is None, cache=cache)
        if cache is not None and usage is not None and not estimated:
            self.context.report(usage)
        return cost

    def account_reply(self, reply: Reply, model: str, body: bytes) -> float:
        """Account a whole reply to a request for ``model`` that sent ``body``. A reply source may answer with another
        model (escalation): the reply names the model billed, unless the prices do not know that name (an
        OpenAI-compatible server's own name for what it runs). A reply without usage (a server that reports none)
        is accounted by our own count, the cache not reported, marked as an estimate."""
        billed = reply.model if reply.model and self.ledger.price_book.knows(reply.model) else model
        if reply.usage is None:
            prompt = self.context.tokens if self.context.reported else None
            return self.account(self.ledger.uncounted_usage(body, prompt, reply), billed, estimated=True)
        return self.account(reply.usage, billed)

    def estimated(self, usage: Usage, model: str) -> float:
        """Account a request by an estimate someone else made (an escalation's aborted flash call)."""
        return self.account(usage, model, estimated=True)

    def failed(self, exc: BaseException) -> None:
        """The request in flight ended without a reply: unless the server answered it with an error (nothing to
        bill), account our own count of it (cut off by a cancellation, a deadline, a dropped connection)."""
        if self._sent is None or _is_api_error(exc):
            return
        model, body = self._sent
        prompt = self.context.tokens if self.context.reported else None
        usage = self.ledger.interrupted_usage(model, self._cache_key(), body, prompt, "".join(self._streamed))
        self.account(usage, model, estimated=True)
