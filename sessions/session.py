"""One cache-stable conversation with DeepSeek (DESIGN §3, issue 4).

A :class:`Session` owns a frozen :class:`~sessions.prefix.Prefix`, an append-only :class:`~sessions.log.MessageLog`
and a :class:`~sessions.journal.Journal`. :meth:`Session.send` runs one user turn: send, stream, repair and run the
tool calls, append the results, repeat until the model stops calling tools or a limit is hit.

Every request body is the cached head for its model + the stored system bytes + the stored bytes of every message, so
consecutive requests of a turn are byte-for-byte extensions of each other. The only rewrite is compaction.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import trio
from pydantic import BaseModel, ConfigDict, Field

from sessions import tokens
from sessions.compaction import bound_text, choose_cut, compacted_messages, digest_request_messages
from sessions.diagnostics import CacheTracker
from sessions.errors import DeepSeekError
from sessions.events import (
    Compacted,
    DiagnosticsReported,
    JournalRecovered,
    RepairApplied,
    RequestStarted,
    SessionEvent,
    StreamUpdate,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageReported,
)
from sessions.journal import (
    INTERRUPTED_WHILE_RUNNING,
    NOT_RUN_RESULT,
    Journal,
    JournalHeader,
    JournalState,
    mend,
    read_journal,
)
from sessions.kept_output import keep_output
from sessions.log import MessageLog
from sessions.prefix import Prefix, prefix_hash
from sessions.prices import PriceBook, default_price_book
from sessions.repair.flatten import FlatMap, flatten_schema
from sessions.repair.prepare import ImmediateResult, PreparedBatch, RepairedCall, prepare_calls, repair_note
from sessions.repair.storm import StormGuard
from sessions.reply import ChatClient, ReplyRequest, ReplySource, stream_reply
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
from sessions.tools.base import RESULT_MAX_CHARS, ToolContext, ToolResult
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.tools.registry import ToolRegistry
from sessions.wire import (
    ChatRequest,
    Message,
    ReasoningEffort,
    Thinking,
    ToolMessage,
    ToolSchema,
    Usage,
    UserMessage,
    encode_request,
    request_head,
)

TurnStatus = Literal["done", "request_limit", "storm", "empty", "length", "content_filter"]
"""How a turn ended. ``length``: the reply was cut at the output limit (``finish_reason: length``), whatever it held;
``empty``: the model stopped with neither an answer nor a tool call."""
OUTPUT_LIMIT_TOKENS = 393_216
"""The most ``max_tokens`` DeepSeek V4 accepts: a reply cut at the output limit is retried with this (once)."""
DIGEST_FINGERPRINT = "compaction-digest"
"""The ``prefix_fingerprint`` of a compaction's digest request: a side request outside the conversation's prefix."""
INTERRUPTED_RESULT = NOT_RUN_RESULT
"""What a tool call that never started is told on resume (:data:`INTERRUPTED_WHILE_RUNNING` for one that had)."""
__all__ = ["INTERRUPTED_RESULT", "INTERRUPTED_WHILE_RUNNING"]


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


def _preview(text: str, limit: int = 160) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


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
    ) -> None:
        self.name = name
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
        # Results already in the conversation, by ToolResult.unchanged_key: (call id, content hash, log epoch). Not
        # rebuilt on resume: a resumed session sends a re-read once in full (DESIGN §5 "Unchanged re-reads").
        self._shown: dict[str, tuple[str, str, int]] = {}

    # ------------------------------------------------------------------------------------------- construction

    @staticmethod
    def schemas_for(registry: ToolRegistry, extra: Sequence[ToolSchema] = ()) -> list[ToolSchema]:
        """The tool schemas as the model sees them (flattened where DESIGN §5 says so)."""
        return [flatten_schema(s)[0] for s in (*registry.schemas(), *extra)]

    @classmethod
    def start(cls, *, journal_path: Path | None, **kwargs: Any) -> Session:
        journal = Journal(journal_path) if journal_path is not None else None
        session = cls(journal=journal, **kwargs)
        if journal is not None:
            journal.write_header(
                JournalHeader(
                    session=session.name,
                    model=session.settings.model,
                    system=session.prefix.system_bytes.decode("utf-8"),
                    tools=session.prefix.tools_bytes.decode("utf-8"),
                )
            )
            journal.sync_now()
        return session

    @classmethod
    def resume(cls, *, journal_path: Path, prefix: Prefix, **kwargs: Any) -> Session:
        """Rebuild a session from its journal: the same prefix bytes, the same message bytes.

        ``prefix`` is the one built now (its tool list drives dispatch); the bytes sent are the journal's, so an edited
        memory file or a reordered tool list cannot change what a resumed conversation sends. A turn cut off mid-way
        may have left tool calls without results; they get a result appended (appending keeps the cache): "not run"
        for a call that never started, "interrupted while running, check the state" for one that had. Corrupt lines
        in the middle of the journal are skipped and reported (:class:`JournalRecovered`); if they leave the
        conversation ill formed, it is mended in place and journaled as a rewrite.
        """
        state = read_journal(journal_path)
        system_bytes = state.header.system.encode("utf-8")
        tools_bytes = state.header.tools.encode("utf-8")
        stored = dataclasses.replace(
            prefix,
            system=state.system,
            system_bytes=system_bytes,
            tools_bytes=tools_bytes,
            system_hash=prefix_hash(system_bytes),
            tools_hash=prefix_hash(tools_bytes),
        )
        log = MessageLog()
        for message, data in state.messages:
            log.append(message, data=data)
        log.epoch = state.epoch
        journal = Journal(journal_path)
        session = cls(journal=journal, log=log, prefix=stored, **kwargs)
        session._restore_totals(state.events)
        session._mend(state, journal_path)
        return session

    def _restore_totals(self, events: Sequence[dict[str, Any]]) -> None:
        """Requests, usage and cost from the journal's events, so the figures a resumed session reports (the
        footer's session cost, the summary) cover the whole session, not only this process. A request is one
        ``usage`` event (every request has exactly one, aborted or not); the cache diagnostics go on from theirs."""
        for event in events:
            kind = event.get("kind")
            if kind == "usage":
                used = UsageReported.model_validate(event)
                self.requests += 1
                self.usage = self.usage + used.usage
                self.cost_usd += used.cost_usd
            elif kind == "cache":
                self.tracker.restore(DiagnosticsReported.model_validate(event).diagnostics)

    def _mend(self, state: JournalState, path: Path) -> None:
        """Answer the calls a cut-off turn left open; after a corrupt line, make the conversation well formed."""
        mended = mend(self.log.messages, state.started)
        if mended.appended_only:
            for message in mended.messages[len(self.log) :]:
                self._append(message)
        else:
            reason = "the journal had corrupt lines: tool calls and results that lost their pair were mended"
            self.log.rewrite(mended.messages, reason)
            if self.journal is not None:
                self.journal.write_rewrite(reason, list(self.log.encoded))
        notice = state.corruption_notice(path)
        if notice is not None:
            self.emit(
                JournalRecovered(
                    session=self.name,
                    message=notice,
                    corrupt_lines=state.corrupt_lines,
                    mended=not mended.appended_only,
                )
            )
        if self.journal is not None:
            self.journal.sync_now()

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
        self._append(UserMessage(content=content))
        self._unsent_tokens += tokens.count(content)
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
                self._report_repairs(batch)
                if reply.message.tool_calls:
                    closed = await self._run_batch(batch)
                    if batch.end_turn:
                        status = "storm"
                        break
                    if closed:  # a tool's result ends the turn: no request for closing words (DESIGN §5)
                        break
                    continue
                if batch.scavenged or batch.scavenged_results:
                    closed = await self._run_scavenged(batch)
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

        A request cut off by a cancellation is accounted too (its input was sent): an estimate, marked as one."""
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
            started=lambda other: self._started(other, body_for(other)),
        )
        try:
            reply = await self.reply_source(call, self._emit_stream)
        except BaseException as exc:
            if self._in_flight is not None and not _is_api_error(exc):
                self._account_interrupted(*self._in_flight)
            raise
        finally:
            self._in_flight = None
        # A reply source may answer with another model (escalation); the reply names the model that was billed.
        cost = self.account(reply.usage, reply.model or model)
        return reply, cost

    def _account_interrupted(self, model: str, body: bytes) -> None:
        """What a request cut off mid-way cost, by our own count: its input (the part the last request on this
        model sent assumed cached) and what had streamed."""
        if self._last_prompt_tokens:
            prompt = self.context_tokens()
        else:
            prompt = tokens.count(body.decode("utf-8", "replace")) if len(body) < 2_000_000 else len(body) // 4
        hit = min(prompt, self.tracker.expected_hit(model, self.prefix.fingerprint, self.log.epoch))
        completion = tokens.count("".join(self._streamed)) if self._streamed else 0
        usage = Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            prompt_cache_hit_tokens=hit,
            prompt_cache_miss_tokens=prompt - hit,
        )
        self.account(usage, model, estimated=True)

    def account(self, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True) -> float:
        """Add one request's usage and cost to the session; emit usage and, for a request of the conversation itself
        (``diagnose``) whose usage the server reported, cache diagnostics."""
        self._in_flight = None
        if usage is None:
            usage = Usage()  # every request is one usage event, even one the server sent no figures for
            estimated = True
        cost = float(self.price_book.cost(usage, model, self.clock()).total)
        self.requests += 1
        self.usage = self.usage + usage
        self.cost_usd += cost
        self.emit(
            UsageReported(
                session=self.name,
                model=model,
                usage=usage,
                cost_usd=cost,
                session_cost_usd=self.cost_usd,
                estimated=estimated,
            )
        )
        if diagnose and not estimated:
            diag = self.tracker.observe(
                model=model,
                fingerprint=self.prefix.fingerprint,
                epoch=self.log.epoch,
                rewrite_reason=self.log.rewrite_reason,
                usage=usage,
                request_index=self.requests,
            )
            self.emit(DiagnosticsReported(session=self.name, diagnostics=diag))
            self._last_prompt_tokens = usage.prompt_tokens + usage.completion_tokens
            self._unsent_tokens = 0
        return cost

    def _account_estimate(self, usage: Usage, model: str) -> float:
        return self.account(usage, model, estimated=True)

    def _emit_stream(self, event: StreamEvent) -> None:
        if isinstance(event, Completed):
            return
        if isinstance(event, ReasoningDelta | ContentDelta | ToolCallArgumentsDelta):
            self._streamed.append(event.text)
        self.emit(StreamUpdate(session=self.name, event=event))

    # -------------------------------------------------------------------------------------------- tool calls

    def _report_repairs(self, batch: PreparedBatch) -> None:
        self.turn_failures += batch.failures
        for ev in batch.events:
            self.emit(
                RepairApplied(
                    session=self.name, repair=str(ev.kind), call_id=ev.call_id, tool=ev.tool, detail=ev.detail
                )
            )

    async def _execute(self, calls: Sequence[RepairedCall]) -> dict[str, ToolResult]:
        prepared = [PreparedCall(id=c.id, name=c.name, args=c.args) for c in calls]

        def started(call: PreparedCall) -> None:
            preview = _preview(json.dumps(call.args, ensure_ascii=False, sort_keys=True))
            self.emit(
                ToolStarted(session=self.name, call_id=call.id, name=call.name, args_preview=preview, args=call.args)
            )

        results = await dispatch(
            self.registry,
            prepared,
            self.tool_context,
            read_only=self.settings.read_only,
            on_start=started,
        )
        return {c.id: r for c, r in zip(calls, results, strict=True)}

    def _unchanged(self, call_id: str, name: str, result: ToolResult) -> ToolResult:
        """A result the conversation already holds, byte for byte and since the last compaction, becomes a note
        naming the earlier call; any other result is remembered and returned as it is."""
        key = result.unchanged_key
        if key is None or result.is_error:
            return result
        digest = hashlib.sha256(result.content.encode("utf-8", errors="surrogatepass")).hexdigest()
        earlier = self._shown.get(key)
        if earlier is not None and earlier[1] == digest and earlier[2] == self.log.epoch:
            return ToolResult(
                content=f"Unchanged: {key} is exactly what the {name} call {earlier[0]} returned, and that result is "
                "still above in this conversation. Use it from there."
            )
        self._shown[key] = (call_id, digest, self.log.epoch)
        return result

    def _result_text(self, call_id: str, name: str, result: ToolResult, repairs: Sequence[Any] = ()) -> str:
        result = self._unchanged(call_id, name, result)
        note = repair_note(tuple(repairs))
        content = f"{note}\n{result.content}" if note else result.content
        bounded, was_cut = bound_text(content, self.settings.tool_result_max_chars)
        full = result.full_text or (content if was_cut else None)
        if full is not None and self.journal is not None:  # the journal keeps what the model saw, and a pointer
            kept = keep_output(self.journal.path, call_id, full)
            self.journal.write_event({"kind": "tool_full_text", "call_id": call_id, "path": kept, "chars": len(full)})
        self.emit(
            ToolFinished(
                session=self.name,
                call_id=call_id,
                name=name,
                is_error=result.is_error,
                preview=_preview(result.content),
                chars=len(bounded),
                bounded=was_cut,
            )
        )
        return bounded

    async def _run_batch(self, batch: PreparedBatch) -> bool:
        """Run a reply's calls and append every result in order; True when a result that succeeded ends the turn."""
        calls = batch.calls
        results = await self._execute(calls) if calls else {}
        closed = False
        names = {c.id: c.function.name for c in self.log[-1].message.tool_calls}  # type: ignore[union-attr]
        for item in batch.items:
            if isinstance(item, ImmediateResult):
                text = self._result_text(
                    item.call_id, names.get(item.call_id, "?"), ToolResult(content=item.content, is_error=item.is_error)
                )
                call_id = item.call_id
            else:
                result = results[item.id]
                if result.data and result.data.get("failure"):
                    self.turn_failures += 1  # an edit mismatch and its kind feed the escalation counter
                text = self._result_text(item.id, item.name, result, item.repairs)
                call_id = item.id
                closed = closed or (result.ends_turn and not result.is_error)
            self._append(ToolMessage(tool_call_id=call_id, content=text))
            self._unsent_tokens += tokens.count(text)
        return closed

    async def _run_scavenged(self, batch: PreparedBatch) -> bool:
        """Calls written into reasoning or content: run them, and report their results in a user turn. True when a
        result that succeeded ends the turn."""
        results = await self._execute(batch.scavenged) if batch.scavenged else {}
        parts = []
        closed = False
        for call in batch.scavenged:
            result = results[call.id]
            closed = closed or (result.ends_turn and not result.is_error)
            text = self._result_text(call.id, call.name, result, call.repairs)
            parts.append(f'<result call="{call.name}" id="{call.id}">\n{text}\n</result>')
        for item in batch.scavenged_results:
            parts.append(f'<result id="{item.call_id}">\n{item.content}\n</result>')
        block = TailBlock(
            tag="tool-results",
            body="You wrote tool calls in your text instead of calling the tools. They were run; "
            "next time use the tool-calling interface.\n" + "\n".join(parts),
        )
        self._append(UserMessage(content=compose_user_turn("That ends your turn." if closed else "Continue.", [block])))
        return closed

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
        messages = self.log.messages
        counts = tokens.count_many([entry.data.decode("utf-8") for entry in self.log])
        keep = int(self.settings.context_window * self.settings.compaction_keep_ratio)
        cut = choose_cut(messages, counts, keep)
        if cut is None or cut <= 1:
            return False
        older, tail = messages[:cut], messages[cut:]
        digest_request = ChatRequest(
            model=self.settings.model,
            messages=digest_request_messages(older),
            stream=True,
            thinking=Thinking(type="disabled"),
        )
        digest_body = encode_request(digest_request)
        # a request like any other: counted (by its usage), priced, journaled
        self.emit(
            RequestStarted(
                session=self.name,
                request_index=self.requests + 1,
                model=self.settings.model,
                body_bytes=len(digest_body),
                prefix_fingerprint=DIGEST_FINGERPRINT,
                messages=len(digest_request.messages),
            )
        )
        reply = await self.client.complete(digest_request, body=digest_body)
        self.account(reply.usage, self.settings.model, diagnose=False)  # not the conversation: no cache diagnostics
        digest = reply.message.content or ""
        new = compacted_messages(older, tail, digest)
        tokens_before = self.context_tokens()
        self.log.rewrite(new, reason)
        if self.journal is not None:
            self.journal.write_rewrite(reason, list(self.log.encoded))
            await self.journal.sync()
        self._last_prompt_tokens = 0
        self._unsent_tokens = sum(tokens.count_many([d.decode("utf-8") for d in self.log.encoded]))
        self.emit(
            Compacted(
                session=self.name,
                reason=reason,
                tokens_before=tokens_before,
                messages_before=len(messages),
                messages_after=len(new),
                digest_chars=len(digest),
            )
        )
        return True
