"""One cache-stable conversation with DeepSeek (DESIGN §3, issue 4).

A :class:`Session` owns a frozen :class:`~sessions.prompt.prefix.Prefix`, an append-only
:class:`~sessions.log.MessageLog` and a :class:`~sessions.journal.jsonl.Journal`. :meth:`Session.send` runs one user
turn: send, stream, repair and run the tool calls, append the results, repeat until the model stops calling tools or
a limit is hit.

Every request body is the cached head for its model + the stored system bytes + the stored bytes of every message, so
consecutive requests of a turn are byte-for-byte extensions of each other. The only rewrites are compaction and,
with tiers on, a snip or a force (DESIGN §3.6).

Each piece of state has one owner, and the session hands each what it needs: the log of messages
(:class:`~sessions.log.MessageLog`), the totals and cache diagnostics (:class:`~sessions.usage_ledger.UsageLedger`),
the context-size estimate (:class:`~sessions.accounting.context_estimate.ContextEstimate`), a reply's tool calls
(:class:`~sessions.tool_batch.ToolBatch`). Reading a journal back is :mod:`sessions.journal.resume`; where to cut and
what to ask for a compaction, :mod:`sessions.compaction`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import trio
from pydantic import BaseModel, ConfigDict, Field, model_validator

from sessions import compaction
from sessions.accounting.context_estimate import ContextEstimate
from sessions.accounting.prices import PriceBook, default_price_book
from sessions.compaction import DIGEST_FINGERPRINT
from sessions.events import SHOWN_ONLY, SessionEvent, StreamUpdate
from sessions.in_flight import InFlight
from sessions.journal import resume
from sessions.journal.jsonl import INTERRUPTED_WHILE_RUNNING, NOT_RUN_RESULT, Journal, read_journal
from sessions.journal.kept_output import outputs_folder
from sessions.log import LogEntry, MessageLog
from sessions.prompt.prefix import Prefix
from sessions.prompt.tail import TailBlock, compose_user_turn
from sessions.repair.flatten import FlatMap, flatten_schema
from sessions.repair.prepare import MAX_SCAVENGED_CALLS, prepare_calls
from sessions.repair.storm import StormGuard
from sessions.request_bytes import RequestBytes
from sessions.tiers.ladder import ladder_for
from sessions.tool_batch import ToolBatch
from sessions.tools.base import RESULT_MAX_CHARS, ToolContext
from sessions.tools.registry import ToolRegistry
from sessions.turn import TurnResult, TurnStatus, TurnTally, final_status
from sessions.usage_ledger import CacheKey, UsageLedger
from sessions.wire.messages import (
    Message,
    ReasoningEffort,
    ToolSchema,
    Usage,
    UserMessage,
)
from sessions.wire.reply import ChatClient, ReplyRequest, ReplySource, RequestGate, stream_reply
from sessions.wire.stream import (
    Reply,
    StreamRestarted,
)

OUTPUT_LIMIT_TOKENS = 393_216
"""The most ``max_tokens`` DeepSeek V4 accepts: a reply cut at the output limit is retried with this (once)."""
INTERRUPTED_RESULT = NOT_RUN_RESULT
"""What a tool call that never started is told on resume (:data:`INTERRUPTED_WHILE_RUNNING` for one that had)."""
__all__ = ["DIGEST_FINGERPRINT", "INTERRUPTED_RESULT", "INTERRUPTED_WHILE_RUNNING"]


class SessionSettings(BaseModel):
    """What stays fixed for the life of a session (DESIGN §3.7): model, thinking, effort, limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    model: str = "deepseek-v4-flash"
    thinking: bool = True
    reasoning_effort: ReasoningEffort | None = "high"
    max_requests_per_turn: int = Field(default=60, ge=1)
    context_window: int = Field(default=1_000_000, gt=0)
    compaction_ratio: float = Field(default=0.8, gt=0, le=1)
    compaction_keep_ratio: float = Field(default=0.25, gt=0, lt=1)
    tiers: bool = False
    """The tiers of DESIGN §3.6: snip at :attr:`snip_ratio` (when it pays), compact at :attr:`compaction_ratio`, force
    at :attr:`force_ratio`, originals archived and the ``recall`` tool in the registry. Off: one tier, compaction, and
    the bytes sent are what they always were."""
    snip_ratio: float = Field(default=0.6, gt=0, le=1)
    force_ratio: float = Field(default=0.9, gt=0, le=1)
    tool_result_max_chars: int = Field(default=RESULT_MAX_CHARS, ge=1_000)
    read_only: bool = False
    retry_when_cut: bool = False
    """A reply cut at the output limit (without tool calls) is asked for once more with ``max_tokens`` at
    :attr:`output_limit_tokens` (only that request's head differs: its bytes after ``max_tokens`` miss the cache)."""
    output_limit_tokens: int = Field(default=OUTPUT_LIMIT_TOKENS, ge=1, le=OUTPUT_LIMIT_TOKENS)
    max_output: dict[str, int] = Field(default_factory=dict)
    """The most ``max_tokens`` per model id (a ``[[providers]]`` entry's ``max_output``): every request to such a
    model carries ``max_tokens`` bounded by it, the digest of a compaction too, and a cut reply is not asked for
    again (it already had its most). Empty (no providers): no request carries ``max_tokens`` unless retried."""
    max_text_calls: int = Field(default=MAX_SCAVENGED_CALLS, ge=0, le=20)
    """The most tool calls taken from one reply's text (reasoning or content) when it made none the real way."""

    @model_validator(mode="after")
    def _tiers_in_order(self) -> SessionSettings:
        if self.tiers and not self.snip_ratio <= self.compaction_ratio <= self.force_ratio:
            raise ValueError(
                f"the tiers must come in order: snip_ratio {self.snip_ratio} <= compaction_ratio "
                f"{self.compaction_ratio} <= force_ratio {self.force_ratio}"
            )
        return self


def cut_retry_reason(reply: Reply, settings: SessionSettings, model: str | None = None) -> str | None:
    """Why a reply cut at the output limit is asked for once more (see :attr:`SessionSettings.retry_when_cut`), or
    None when it is not (also when ``model`` has a ``max_output``: the request already asked for its most)."""
    if reply.finish_reason != "length" or reply.message.tool_calls or not settings.retry_when_cut:
        return None
    if (model or settings.model) in settings.max_output:
        return None
    return f"the reply was cut at the output limit; asking once more with max_tokens={settings.output_limit_tokens}"


class Session:
    """One conversation. Build it with :meth:`start` (a new journal) or :meth:`resume` (from a journal)."""

    def __init__(
        self,
        *,
        name: str,
        client: ChatClient,
        prefix: Prefix,
        registry: ToolRegistry,
        tool_context: ToolContext,
        settings: SessionSettings,
        journal: Journal | None = None,
        log: MessageLog | None = None,
        on_event: Callable[[SessionEvent], None] | None = None,
        price_book: PriceBook | None = None,
        clock: Callable[[], datetime] | None = None,
        reply_source: ReplySource | None = None,
        request_gate: RequestGate | None = None,
    ) -> None:
        self.name = name
        self.client = client
        self.prefix = prefix
        self.registry = registry
        self.tool_context = dataclasses.replace(
            tool_context,
            limits=tool_context.limits.within(settings.tool_result_max_chars),  # the tools cut under the session's cap
            outputs=outputs_folder(journal.path) if journal is not None else tool_context.outputs,
        )
        self.settings = settings
        self.journal = journal
        self.log = log or MessageLog()
        self.on_event = on_event
        self.ledger = UsageLedger(
            session=name,
            price_book=price_book or default_price_book(),
            clock=clock or (lambda: datetime.now(UTC)),
            emit=self.emit,
        )
        self.context = ContextEstimate()
        self.reply_source: ReplySource = reply_source or stream_reply
        self.task_state: Callable[[], str] | None = None
        """What the harness knows of the task (a goal's objective, plan, changes): restated first after a compaction."""
        self.flatmaps: dict[str, FlatMap | None] = {t.function.name: None for t in prefix.tools}
        for tool in registry:
            self.flatmaps[tool.name] = flatten_schema(tool.schema())[1]
        self.storm = StormGuard(mutating=frozenset(t.name for t in registry if not t.read_only))
        self.turn_failures = 0
        self.bytes = RequestBytes.for_session(settings, client)
        self.in_flight = InFlight(
            session=name, ledger=self.ledger, context=self.context, emit=self.emit, cache_key=self._cache_key
        )
        self.in_flight.gate = request_gate  # asked before every request (sessions/wire/reply.py): a goal's budget
        self.expected_requests: Callable[[], int] | None = None  # the snip rule's remaining requests (DESIGN §3.6)
        self.tiers = ladder_for(registry, settings, self.ledger, lambda: self.expected_requests)
        self.tool_batch = ToolBatch(
            session=name,
            registry=registry,
            tool_context=self.tool_context,
            log=self.log,
            journal=journal,
            emit=self.emit,
            append=self.append,
            max_chars=settings.tool_result_max_chars,
        )

    @property
    def requests(self) -> int:
        return self.ledger.requests

    @property
    def usage(self) -> Usage:
        return self.ledger.usage

    @property
    def cost_usd(self) -> float:
        return self.ledger.cost_usd

    # ------------------------------------------------------------------------------------------- construction

    @staticmethod
    def schemas_for(registry: ToolRegistry, extra: Sequence[ToolSchema] = ()) -> list[ToolSchema]:
        """The tool schemas as the model sees them (flattened where DESIGN §5 says so)."""
        return [flatten_schema(s)[0] for s in (*registry.schemas(), *extra)]

    @classmethod
    def start(cls, *, journal_path: Path | None, **kwargs: Any) -> Self:
        """A new session; with ``journal_path``, a new journal whose header holds the prefix bytes."""
        journal = Journal(journal_path) if journal_path is not None else None
        session = cls(journal=journal, **kwargs)
        if journal is not None:
            journal.write_header(resume.header_for(session.name, session.settings.model, session.prefix))
            journal.sync_now()
        return session

    @classmethod
    def resume(cls, *, journal_path: Path, prefix: Prefix, **kwargs: Any) -> Self:
        """Rebuild a session from its journal: the same prefix bytes, the same message bytes.

        ``prefix`` is the one built now (its tool list drives dispatch); the bytes sent are the journal's. Calls a
        cut-off turn left open are answered, and corrupt lines skipped and mended (:mod:`sessions.journal.resume`).
        """
        state = read_journal(journal_path)
        log = resume.stored_log(state)
        journal = Journal(journal_path)
        session = cls(journal=journal, log=log, prefix=resume.stored_prefix(state, prefix), **kwargs)
        session.ledger.restore(state.events)
        mending = resume.mending(log, state, journal_path)
        for message in mending.append:
            session.append(message)
        if mending.rewrite is not None:
            session.rewrite(mending.rewrite, resume.CORRUPT_REWRITE_REASON)
        if mending.notice is not None:
            session.emit(mending.recovered(session.name, state))
        journal.sync_now()
        return session

    def body(self, model: str | None = None, max_tokens: int | None = None) -> bytes:
        """The exact bytes of the next request: head + system + every stored message."""
        return self.bytes.body(self.prefix, self.log, model or self.settings.model, max_tokens)

    def emit(self, event: SessionEvent) -> None:
        if self.journal is not None and not isinstance(event, StreamUpdate):
            self.journal.write_event(event.model_dump(mode="json", exclude=SHOWN_ONLY))
        if self.on_event is not None:
            self.on_event(event)

    def append(self, message: Message, counted: str | None = None) -> None:
        """Append ``message`` to the log and the journal; ``counted`` is its text the context estimate adds."""
        entry = self.log.append(message)
        if self.journal is not None:
            self.journal.write_message(entry.data)
        if counted is not None:
            self.context.appended(counted)

    def rewrite(self, messages: Sequence[Message | LogEntry], reason: str) -> None:
        """Replace the whole log (compaction or a tier, DESIGN §3.6), journaled; the next request misses once."""
        self.log.rewrite(messages, reason)
        if self.journal is not None:
            self.journal.write_rewrite(reason, list(self.log.encoded))
        self.context.rewritten(self.log.encoded)

    # -------------------------------------------------------------------------------------------------- turns

    async def send(
        self,
        text: str,
        *,
        tail: Sequence[TailBlock] = (),
        model: str | None = None,
        max_requests: int | None = None,
        failures: int = 0,
    ) -> TurnResult:
        """Run one user turn to its end. Cancellation leaves the journal consistent and the session resumable.

        ``failures`` starts the turn's failure counter (the supervisor passes failed verifications of a retried step).
        """
        content = compose_user_turn(text, [*tail, *self.tool_batch.job_notes()])
        first = model or self.settings.model
        self.in_flight.admit(first, lambda: self.body(first), extra=content)  # before the message: refused, none
        self.append(UserMessage(content=content), counted=content)
        self.storm.reset_turn()
        self.turn_failures = failures
        limit = min(max_requests or self.settings.max_requests_per_turn, self.settings.max_requests_per_turn)
        tally = TurnTally()
        nudged = cut_retried = False
        max_tokens: int | None = None
        status: TurnStatus = "done"
        try:
            while True:
                if tally.requests >= limit:
                    status = "request_limit"
                    break
                await self._maybe_compact()
                reply = tally.add(*await self.request(model or self.settings.model, max_tokens=max_tokens))
                max_tokens = None
                retry = not cut_retried and tally.requests < limit and cut_retry_reason(reply, self.settings, first)
                if retry:
                    self.emit(
                        StreamUpdate(
                            session=self.name, event=StreamRestarted(attempt=2, reason=retry, discarded_events=1)
                        )
                    )
                    cut_retried = True
                    max_tokens = self.settings.output_limit_tokens
                    continue
                self.append(reply.message)
                batch = prepare_calls(
                    reply.message,
                    reply.finish_reason,
                    known_tools=self.flatmaps,
                    storm=self.storm,
                    tools=self.registry,
                    max_scavenged=self.settings.max_text_calls,
                )
                outcome = await self.tool_batch.handle(batch, reply.message, read_only=self.settings.read_only)
                if outcome is not None:
                    self.turn_failures += outcome.failures
                    if batch.end_turn:
                        status = "storm"
                        break
                    if outcome.closed:  # a tool's result ends the turn: no request for closing words (DESIGN §5)
                        break
                    continue
                if batch.empty_reply and reply.finish_reason == "stop" and not nudged:
                    nudged = True
                    self.turn_failures += 1
                    self.append(
                        UserMessage(
                            content="Your last reply had reasoning but no answer and no tool call. "
                            "Continue: call a tool, or give your answer."
                        )
                    )
                    continue
                status = final_status(reply, empty=batch.empty_reply)
                break
        finally:
            self.in_flight.release()
            if self.journal is not None:
                with trio.CancelScope(shield=True):
                    await self.journal.sync()
        summary = self.storm.summary() if status == "storm" and self.storm.turn_ended else None
        result = tally.result(status, failures=self.turn_failures, text=summary)
        self.emit(result.finished(self.name))
        if self.journal is not None:
            await self.journal.sync()
        return result

    async def request(self, model: str, *, max_tokens: int | None = None) -> tuple[Reply, float]:
        """Send the current log once and account for the reply. Does not append it.

        A request cut off by a cancellation is accounted too (its input was sent): an estimate, marked as one."""
        flight = self.in_flight
        flight.admit(model, lambda: self.body(model), max_tokens=self.bytes.max_tokens(model, max_tokens))
        body = self.body(model, max_tokens)
        request = self.bytes.request(self.prefix, model, max_tokens)
        flight.started(model, body, messages=len(self.log) + 1)

        def body_for(other: str) -> bytes:
            return self.body(other, max_tokens)

        call = ReplyRequest(
            session=self.name,
            request=request,
            body=body,
            client=self.client,
            failures=self.turn_failures,
            body_for=body_for,
            account_estimate=flight.estimated,
            started=lambda other: flight.restarted(
                other, body_for(other), max_tokens=self.bytes.max_tokens(other, max_tokens), messages=len(self.log) + 1
            ),
        )
        try:
            reply = await self.reply_source(call, flight.streamed)
        except BaseException as exc:
            flight.failed(exc)
            raise
        finally:
            flight.release()  # nothing runs before the account below: the charge follows at once
        return reply, flight.account_reply(reply, model, body)

    def account(self, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True) -> float:
        """Add one request's usage and cost to the session (:meth:`InFlight.account`)."""
        return self.in_flight.account(usage, model, estimated=estimated, diagnose=diagnose)

    def _cache_key(self) -> CacheKey:
        return CacheKey(
            fingerprint=self.prefix.fingerprint, epoch=self.log.epoch, rewrite_reason=self.log.rewrite_reason
        )

    # ----------------------------------------------------------------------------------------------- compaction

    def context_tokens(self) -> int:
        """Tokens the next request will carry, from the last reported usage plus what was appended since."""
        return self.context.tokens

    async def _maybe_compact(self) -> None:
        bound, n, cfg = self.context.at_most(), len(self.log), self.settings  # a bound: counts nothing (issue 49)
        if self.tiers is not None:
            if self.tiers.tier(bound) is not None:  # both are thresholds: below on the bound, below exactly too
                await self.tiers.step(self, lambda reason: self.compact(reason=reason))
        elif compaction.due(bound, n, cfg) and (reason := compaction.due(self.context_tokens(), n, cfg)):
            await self.compact(reason=reason)

    before_compact: Callable[[str], Awaitable[None]] | None = None
    """Awaited with the reason before a compaction (the orchestrator's ``pre_compact`` hooks); None: nothing."""

    async def compact(self, *, reason: str) -> bool:
        """Fold the older part of the log into a digest (:func:`sessions.compaction.compact`); False when there is
        nothing to fold."""
        if self.before_compact is not None:
            await self.before_compact(reason)
        keep = int(self.settings.context_window * self.settings.compaction_keep_ratio)
        task = self.task_state() if self.task_state is not None else ""
        index = self.tiers.fold_index(self.log.epoch + 1) if self.tiers is not None else None
        return await compaction.compact(
            self, reason=reason, keep_tokens=keep, model=self.settings.model, task=task, index=index
        )
