"""One cache-stable conversation with DeepSeek (DESIGN §3, issue 4).

A :class:`Session` owns a frozen :class:`~sessions.prefix.Prefix`, an append-only :class:`~sessions.log.MessageLog`
and a :class:`~sessions.journal.Journal`. :meth:`Session.send` runs one user turn: send, stream, repair and run the
tool calls, append the results, repeat until the model stops calling tools or a limit is hit.

Every request body is the cached head for its model + the stored system bytes + the stored bytes of every message, so
consecutive requests of a turn are byte-for-byte extensions of each other. The only rewrite is compaction.

The parts are in their own modules: building and rebuilding from the journal in :mod:`sessions.resume`, running a
reply's tool calls in :mod:`sessions.tool_batch`, usage and cost in :mod:`sessions.ledger`, compaction in
:mod:`sessions.compaction`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Self

import trio
from pydantic import BaseModel, ConfigDict, Field

from sessions import compaction, ledger, tokens
from sessions import resume as resuming
from sessions.compaction import DIGEST_FINGERPRINT
from sessions.diagnostics import CacheTracker
from sessions.errors import DeepSeekError
from sessions.events import RequestStarted, SessionEvent, StreamUpdate, TurnFinished
from sessions.journal import INTERRUPTED_WHILE_RUNNING, NOT_RUN_RESULT, Journal
from sessions.log import MessageLog
from sessions.prefix import Prefix
from sessions.prices import PriceBook, default_price_book
from sessions.repair.flatten import FlatMap, flatten_schema
from sessions.repair.prepare import prepare_calls
from sessions.repair.storm import StormGuard
from sessions.reply import ChatClient, ReplyRequest, ReplySource, RequestGate, stream_reply
from sessions.stream import (
    Completed,
    ContentDelta,
    ReasoningDelta,
    Reply,
    StreamEvent,
    StreamRestarted,
    ToolCallArgumentsDelta,
)
from sessions.tail import TailBlock, compose_user_turn
from sessions.tool_batch import ToolBatch
from sessions.tools.base import RESULT_MAX_CHARS, ToolContext
from sessions.tools.registry import ToolRegistry
from sessions.wire import (
    ChatRequest,
    Message,
    ReasoningEffort,
    Thinking,
    ToolSchema,
    Usage,
    UserMessage,
    request_head,
)

TurnStatus = Literal["done", "request_limit", "storm", "empty", "length", "content_filter"]
"""How a turn ended. ``length``: the reply was cut at the output limit (``finish_reason: length``), whatever it held;
``empty``: the model stopped with neither an answer nor a tool call."""
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
    tool_result_max_chars: int = Field(default=RESULT_MAX_CHARS, ge=1_000)
    read_only: bool = False
    retry_when_cut: bool = False
    """A reply cut at the output limit (without tool calls) is asked for once more with ``max_tokens`` at
    :attr:`output_limit_tokens` (only that request's head differs: its bytes after ``max_tokens`` miss the cache)."""
    output_limit_tokens: int = Field(default=OUTPUT_LIMIT_TOKENS, ge=1, le=OUTPUT_LIMIT_TOKENS)


class TurnResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    status: TurnStatus
    text: str
    requests: int
    failures: int
    usage: Usage
    cost_usd: float
    reply: Reply | None = None


def _is_api_error(exc: BaseException) -> bool:
    """A DeepSeek error (bare or a group of them): the server answered, with an error, not a reply to bill."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_api_error(inner) for inner in exc.exceptions)
    return isinstance(exc, DeepSeekError)


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
        self.request_gate = request_gate  # asked before every request this session sends (sessions/reply.py)
        self._release: Callable[[], None] | None = None  # the gate's release for the request admitted, not ended
        self.client = client
        self.prefix = prefix
        self.registry = registry
        # One bound on results: the tools cut their own windows under the session's cap (issue 11 item 3).
        self.tool_context = dataclasses.replace(
            tool_context, limits=tool_context.limits.within(settings.tool_result_max_chars)
        )
        self.settings = settings
        self.journal = journal
        self.log = log or MessageLog()
        self.on_event = on_event
        self.price_book = price_book or default_price_book()
        self.clock = clock or (lambda: datetime.now(UTC))
        self.reply_source: ReplySource = reply_source or stream_reply
        self.tracker = CacheTracker()
        self.flatmaps: dict[str, FlatMap | None] = {t.function.name: None for t in prefix.tools}
        for tool in registry:
            self.flatmaps[tool.name] = flatten_schema(tool.schema())[1]
        self.storm = StormGuard(mutating=frozenset(t.name for t in registry if not t.read_only))
        self.usage = Usage()
        self.cost_usd = 0.0
        self.requests = 0
        self.turn_failures = 0
        self._heads: dict[str, bytes] = {}
        self._last_prompt_tokens = 0
        self._unsent_tokens = 0
        self._last_epoch_sent = self.log.epoch
        self._in_flight: tuple[str, bytes] | None = None
        """The model and body of a request sent whose usage is not accounted yet."""
        self._streamed: list[str] = []
        self.tool_batch = ToolBatch(self)
        """Runs the replies' tool calls and shapes their results (:mod:`sessions.tool_batch`); it remembers the
        results shown, for unchanged re-reads."""

    # ------------------------------------------------------------------------------------------- construction

    @staticmethod
    def schemas_for(registry: ToolRegistry, extra: Sequence[ToolSchema] = ()) -> list[ToolSchema]:
        """The tool schemas as the model sees them (flattened where DESIGN §5 says so)."""
        return [flatten_schema(s)[0] for s in (*registry.schemas(), *extra)]

    @classmethod
    def start(cls, *, journal_path: Path | None, **kwargs: Any) -> Self:
        """A new session; with ``journal_path``, a new journal whose header holds the prefix bytes."""
        return resuming.start(cls, journal_path=journal_path, **kwargs)

    @classmethod
    def resume(cls, *, journal_path: Path, prefix: Prefix, **kwargs: Any) -> Self:
        """Rebuild a session from its journal: the same prefix bytes, the same message bytes.

        ``prefix`` is the one built now (its tool list drives dispatch); the bytes sent are the journal's, so an edited
        memory file or a reordered tool list cannot change what a resumed conversation sends. A turn cut off mid-way
        may have left tool calls without results; they get a result appended (appending keeps the cache): "not run"
        for a call that never started, "interrupted while running, check the state" for one that had. Corrupt lines
        in the middle of the journal are skipped and reported (:class:`~sessions.events.JournalRecovered`); if
        they leave the conversation ill formed, it is mended in place and journaled as a rewrite.
        """
        return resuming.resume(cls, journal_path=journal_path, prefix=prefix, **kwargs)

    # --------------------------------------------------------------------------------------------------- bytes

    def _head(self, model: str, max_tokens: int | None = None) -> bytes:
        if max_tokens is not None:  # a retry of a cut reply: not the conversation's usual head, not kept
            return request_head(self._request(model, max_tokens), self.prefix.tools_bytes) + self.prefix.system_bytes
        head = self._heads.get(model)
        if head is None:
            head = request_head(self._request(model), self.prefix.tools_bytes) + self.prefix.system_bytes
            self._heads[model] = head
        return head

    def _request(self, model: str, max_tokens: int | None = None) -> ChatRequest:
        thinking = self.settings.thinking
        return ChatRequest(
            model=model,
            messages=(),
            tools=self.prefix.tools,
            stream=True,
            thinking=Thinking(type="enabled" if thinking else "disabled"),
            reasoning_effort=self.settings.reasoning_effort if thinking else None,
            max_tokens=max_tokens,
        )

    def body(self, model: str | None = None, max_tokens: int | None = None) -> bytes:
        """The exact bytes of the next request: head + system + every stored message."""
        model = model or self.settings.model
        head = self._head(model, max_tokens)
        encoded = self.log.encoded
        if not encoded:
            return head + b"]}"
        # One join, one copy: the harness cost of a request is joining the stored bytes (DESIGN §7).
        return b",".join(itertools.chain((head,), encoded[:-1], (encoded[-1] + b"]}",)))

    # ------------------------------------------------------------------------------------------------- events

    def emit(self, event: SessionEvent) -> None:
        if self.journal is not None and not isinstance(event, StreamUpdate):
            self.journal.write_event(event.model_dump(mode="json"))
        if self.on_event is not None:
            self.on_event(event)

    def _append(self, message: Message) -> None:
        entry = self.log.append(message)
        if self.journal is not None:
            self.journal.write_message(entry.data)

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
        content = compose_user_turn(text, tail)
        ledger.admit(self, model or self.settings.model, extra_tokens=(added := tokens.count(content)))
        self._append(UserMessage(content=content))
        self._unsent_tokens += added
        self.storm.reset_turn()
        self.turn_failures = failures
        limit = min(max_requests or self.settings.max_requests_per_turn, self.settings.max_requests_per_turn)
        turn_usage = Usage()
        turn_cost = 0.0
        requests = 0
        nudged = False
        cut_retried = False
        max_tokens: int | None = None
        last: Reply | None = None
        status: TurnStatus = "done"
        try:
            while True:
                if requests >= limit:
                    status = "request_limit"
                    break
                await self._maybe_compact()
                reply, cost = await self.request(model or self.settings.model, max_tokens=max_tokens)
                requests += 1
                last = reply
                turn_cost += cost
                if reply.usage is not None:
                    turn_usage = turn_usage + reply.usage
                max_tokens = None
                if self._retry_cut(reply, retried=cut_retried, room=requests < limit):
                    cut_retried = True
                    max_tokens = self.settings.output_limit_tokens
                    continue
                self._append(reply.message)
                batch = prepare_calls(reply.message, reply.finish_reason, known_tools=self.flatmaps, storm=self.storm)
                self.tool_batch.report_repairs(batch)
                if reply.message.tool_calls:
                    closed = await self.tool_batch.run(batch)
                    if batch.end_turn:
                        status = "storm"
                        break
                    if closed:  # a tool's result ends the turn: no request for closing words (DESIGN §5)
                        break
                    continue
                if batch.scavenged or batch.scavenged_results:
                    closed = await self.tool_batch.run_scavenged(batch)
                    if batch.end_turn:
                        status = "storm"
                        break
                    if closed:
                        break
                    continue
                if batch.empty_reply and reply.finish_reason == "stop" and not nudged:
                    nudged = True
                    self.turn_failures += 1
                    self._append(
                        UserMessage(
                            content="Your last reply had reasoning but no answer and no tool call. "
                            "Continue: call a tool, or give your answer."
                        )
                    )
                    continue
                if reply.finish_reason == "length":  # cut, whatever it held: not "empty" (issue 11 item 1)
                    status = "length"
                elif batch.empty_reply:
                    status = "empty"
                elif reply.finish_reason == "content_filter":
                    status = "content_filter"
                break
        finally:
            ledger.release(self)
            if self.journal is not None:
                with trio.CancelScope(shield=True):
                    await self.journal.sync()
        text_out = (last.message.content or "") if last is not None else ""
        if status == "storm" and self.storm.turn_ended:
            text_out = self.storm.summary()
        result = TurnResult(
            status=status,
            text=text_out,
            requests=requests,
            failures=self.turn_failures,
            usage=turn_usage,
            cost_usd=turn_cost,
            reply=last,
        )
        self.emit(
            TurnFinished(
                session=self.name,
                status=status,
                text=text_out,
                requests=requests,
                failures=self.turn_failures,
                cost_usd=turn_cost,
            )
        )
        if self.journal is not None:
            await self.journal.sync()
        return result

    def _retry_cut(self, reply: Reply, *, retried: bool, room: bool) -> bool:
        """Whether to ask once more for a reply cut at the output limit (see :attr:`SessionSettings.retry_when_cut`);
        if so, say that the cut reply is void."""
        if reply.finish_reason != "length" or reply.message.tool_calls or retried or not room:
            return False
        if not self.settings.retry_when_cut:
            return False
        reason = (
            "the reply was cut at the output limit; asking once more with "
            f"max_tokens={self.settings.output_limit_tokens}"
        )
        self.emit(StreamUpdate(session=self.name, event=StreamRestarted(attempt=2, reason=reason, discarded_events=1)))
        return True

    def _started(self, model: str, body: bytes) -> None:
        self._in_flight = (model, body)
        self._streamed.clear()
        self.emit(
            RequestStarted(
                session=self.name,
                request_index=self.requests + 1,
                model=model,
                body_bytes=len(body),
                prefix_fingerprint=self.prefix.fingerprint,
                messages=len(self.log) + 1,
            )
        )

    async def request(self, model: str, *, max_tokens: int | None = None) -> tuple[Reply, float]:
        """Send the current log once and account for the reply. Does not append it.

        A request cut off by a cancellation is accounted too (its input was sent); the gate is asked first."""
        ledger.admit(self, model, max_tokens=max_tokens)
        body = self.body(model, max_tokens)
        request = self._request(model, max_tokens)
        self._started(model, body)

        def body_for(other: str) -> bytes:
            return self.body(other, max_tokens)

        call = ReplyRequest(
            session=self.name,
            request=request,
            body=body,
            client=self.client,
            failures=self.turn_failures,
            body_for=body_for,
            account_estimate=self._account_estimate,
            started=lambda other: ledger.restarted(self, other, max_tokens, body_for(other)),
        )
        try:
            reply = await self.reply_source(call, self._emit_stream)
        except BaseException as exc:
            if self._in_flight is not None and not _is_api_error(exc):
                ledger.account_interrupted(self, *self._in_flight)
            raise
        finally:
            self._in_flight = None
            ledger.release(self)  # nothing runs before the account below: the charge follows at once
        # A reply source may answer with another model (escalation); the reply names the model that was billed.
        cost = self.account(reply.usage, reply.model or model)
        return reply, cost

    def account(self, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True) -> float:
        """Add one request's usage and cost to the session; emit usage and, for a request of the conversation itself
        (``diagnose``) whose usage the server reported, cache diagnostics (:func:`sessions.ledger.account`)."""
        return ledger.account(self, usage, model, estimated=estimated, diagnose=diagnose)

    def _account_estimate(self, usage: Usage, model: str) -> float:
        return self.account(usage, model, estimated=True)

    def _emit_stream(self, event: StreamEvent) -> None:
        if isinstance(event, Completed):
            return
        if isinstance(event, ReasoningDelta | ContentDelta | ToolCallArgumentsDelta):
            self._streamed.append(event.text)
        self.emit(StreamUpdate(session=self.name, event=event))

    # ----------------------------------------------------------------------------------------------- compaction

    def context_tokens(self) -> int:
        """Tokens the next request will carry, from the last reported usage plus what was appended since."""
        return self._last_prompt_tokens + self._unsent_tokens

    async def _maybe_compact(self) -> None:
        threshold = self.settings.context_window * self.settings.compaction_ratio
        before = self.context_tokens()
        if before <= threshold or len(self.log) < 4:
            return
        await self.compact(
            reason=f"context at {before} tokens passed {self.settings.compaction_ratio:.0%} of the window"
        )

    async def compact(self, *, reason: str) -> bool:
        """Fold the older part of the log into a digest (:func:`sessions.compaction.compact`); False when there is
        nothing to fold."""
        return await compaction.compact(self, reason=reason)
