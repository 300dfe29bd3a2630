"""The request a session has in flight, and accounting for every request (DESIGN §3.8).

:class:`InFlight` is told when a request starts (its event, what it sent) and what streams back; it accounts each
request exactly once into the session's :class:`~sessions.usage_ledger.UsageLedger`, and a request of the
conversation whose usage the server reported resets the :class:`~sessions.context_estimate.ContextEstimate`. A request
cut off mid-way (Ctrl-C, a deadline) is accounted by our own count of what it sent and what had streamed, marked as an
estimate: its input was sent, so it is never free.
"""

from __future__ import annotations

from collections.abc import Callable

from sessions.context_estimate import ContextEstimate
from sessions.events import RequestStarted, SessionEvent, StreamUpdate
from sessions.stream import Completed, ContentDelta, ReasoningDelta, StreamEvent, ToolCallArgumentsDelta
from sessions.usage_ledger import CacheKey, UsageLedger
from sessions.wire import Usage


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

    def estimated(self, usage: Usage, model: str) -> float:
        """Account a request by an estimate someone else made (an escalation's aborted flash call)."""
        return self.account(usage, model, estimated=True)

    def cut_off(self) -> None:
        """The request in flight (if any) ended without a reply: account our own count of it."""
        if self._sent is None:
            return
        model, body = self._sent
        prompt = self.context.tokens if self.context.reported else None
        usage = self.ledger.interrupted_usage(model, self._cache_key(), body, prompt, "".join(self._streamed))
        self.account(usage, model, estimated=True)

    def done(self) -> None:
        """The request ended; whatever happened was accounted."""
        self._sent = None
