"""Streamed replies: the events a caller sees while a reply streams, and the pure assembler that builds them.

:class:`StreamAssembler` does no IO: feed it :class:`~sessions.wire.messages.StreamChunk` objects (from the client, from
a recorded ``.sse`` file, from the emulator) and it returns the events each chunk produced;
:meth:`StreamAssembler.finish` gives the whole :class:`Reply`. The reply's assistant message is exactly what the server
sent: ``reasoning_content`` as streamed (None if the field never carried a string), and every tool call's ``arguments``
as the concatenation of its fragments, never re-serialized (DESIGN §3.2).

Every event has a ``kind`` so a stream of them can be written as JSON lines and read back with :data:`EVENT_ADAPTER`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from sessions.wire.errors import ProtocolError, ReplyTooLargeError, ServerError, StreamBrokenError
from sessions.wire.messages import (
    AssistantMessage,
    ChatCompletion,
    FinishReason,
    FunctionCall,
    StreamChunk,
    ToolCall,
    Usage,
)
from sessions.wire.provider import ServerTimings, read_usage, timings_of
from sessions.wire.sse import SseComment, SseData, SseDone, SseItem, parse_sse


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReasoningDelta(_Event):
    kind: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class ContentDelta(_Event):
    kind: Literal["content_delta"] = "content_delta"
    text: str


class ToolCallStarted(_Event):
    kind: Literal["tool_call_started"] = "tool_call_started"
    index: int
    id: str
    name: str


class ToolCallArgumentsDelta(_Event):
    kind: Literal["tool_call_arguments_delta"] = "tool_call_arguments_delta"
    index: int
    text: str


class KeepAlive(_Event):
    """The server is alive but has no data yet (a ``: keep-alive`` comment)."""

    kind: Literal["keep_alive"] = "keep_alive"


class StreamRestarted(_Event):
    """A retry begins. Whatever this request showed before is void: a renderer discards it."""

    kind: Literal["stream_restarted"] = "stream_restarted"
    attempt: int
    """The attempt that starts now (2 for the first retry)."""
    reason: str
    discarded_events: int = 0
    """How many delta events of the failed attempt(s) the caller had already received."""


class Reply(BaseModel):
    """One whole assistant reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    message: AssistantMessage
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    model: str = ""
    id: str = ""
    system_fingerprint: str | None = None


class Completed(_Event):
    kind: Literal["completed"] = "completed"
    reply: Reply


DeltaEvent = ReasoningDelta | ContentDelta | ToolCallStarted | ToolCallArgumentsDelta
"""What the assembler produces from chunks: the reply's content as it streams."""

StreamEvent = Annotated[
    ReasoningDelta | ContentDelta | ToolCallStarted | ToolCallArgumentsDelta | KeepAlive | StreamRestarted | Completed,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)

KEEP_ALIVE = KeepAlive()


def decode_chunk(payload: str | bytes, provider: str = "DeepSeek") -> StreamChunk:
    """One ``data:`` payload → a chunk. Raises :class:`ProtocolError` on anything that is not a chunk."""
    try:
        chunk = StreamChunk.model_validate_json(payload)
    except ValidationError as exc:
        preview = payload[:200] if isinstance(payload, str) else payload[:200].decode("utf-8", "replace")
        raise ProtocolError(
            f"the server sent a stream chunk that does not parse: {preview!r} "
            f"({exc.error_count()} errors, first: {exc.errors()[0]['msg']})"
        ) from exc
    extra = chunk.model_extra
    if extra and "error" in extra:
        error = extra["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ServerError(
            f"{provider} reported an error in the middle of the stream: {message}", server_message=str(message)
        )
    return chunk


class _ToolCallParts:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, id: str, name: str) -> None:
        self.id = id
        self.name = name
        self.arguments: list[str] = []


class StreamAssembler:
    """Builds one reply from its chunks. Pure: no IO, no clock.

    ``max_chars`` bounds the reply: once its content, reasoning and tool-call arguments together pass it,
    :meth:`feed` raises :class:`ReplyTooLargeError` (the chunk that passed it yields no events).
    """

    __slots__ = (
        "_chars",
        "_content",
        "_finish_reason",
        "_id",
        "_max_chars",
        "_model",
        "_reasoning",
        "_system_fingerprint",
        "_timings",
        "_tool_calls",
        "_usage",
        "chunks_seen",
    )

    def __init__(self, *, max_chars: int | None = None) -> None:
        self._max_chars = max_chars
        self._chars = 0
        self._reasoning: list[str] | None = None
        self._content: list[str] | None = None
        self._tool_calls: dict[int, _ToolCallParts] = {}
        self._usage: Usage | None = None
        self._timings: ServerTimings | None = None
        self._finish_reason: FinishReason | None = None
        self._model = ""
        self._id = ""
        self._system_fingerprint: str | None = None
        self.chunks_seen = 0

    @property
    def finished(self) -> bool:
        """A finish reason has been seen: the reply is whole."""
        return self._finish_reason is not None

    @property
    def complete(self) -> bool:
        """Finished and its usage received: nothing more is expected but ``[DONE]``."""
        return self._finish_reason is not None and self._usage is not None

    def _count(self, text: str) -> None:
        self._chars += len(text)
        if self._max_chars is not None and self._chars > self._max_chars:
            raise ReplyTooLargeError.over(self._max_chars, f"after {self.chunks_seen:,} chunks")

    def feed(self, chunk: StreamChunk) -> list[DeltaEvent]:
        self.chunks_seen += 1
        if chunk.id and not self._id:
            self._id = chunk.id
        if chunk.model and not self._model:
            self._model = chunk.model
        if chunk.system_fingerprint and self._system_fingerprint is None:
            self._system_fingerprint = chunk.system_fingerprint
        if chunk.usage is not None:
            self._usage = chunk.usage
        if chunk.model_extra and (timings := timings_of(chunk.model_extra)) is not None:
            self._timings = timings
        events: list[DeltaEvent] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue  # n > 1 is never requested; ignore extra choices rather than mix them in
            delta = choice.delta
            if delta.reasoning_content is not None:
                if self._reasoning is None:
                    self._reasoning = []
                if delta.reasoning_content:
                    self._count(delta.reasoning_content)
                    self._reasoning.append(delta.reasoning_content)
                    events.append(ReasoningDelta(text=delta.reasoning_content))
            if delta.content is not None:
                if self._content is None:
                    self._content = []
                if delta.content:
                    self._count(delta.content)
                    self._content.append(delta.content)
                    events.append(ContentDelta(text=delta.content))
            if delta.tool_calls:
                for call in delta.tool_calls:
                    parts = self._tool_calls.get(call.index)
                    fn = call.function
                    if parts is None:
                        name = fn.name if fn is not None else None
                        if not call.id or not name:
                            raise ProtocolError(
                                f"the first fragment of tool call {call.index} carries no id or function name: "
                                f"{call.model_dump_json()}"
                            )
                        parts = self._tool_calls[call.index] = _ToolCallParts(call.id, name)
                        events.append(ToolCallStarted(index=call.index, id=call.id, name=name))
                    if fn is not None and fn.arguments:
                        self._count(fn.arguments)
                        parts.arguments.append(fn.arguments)
                        events.append(ToolCallArgumentsDelta(index=call.index, text=fn.arguments))
            if choice.finish_reason is not None:
                self._finish_reason = choice.finish_reason
        return events

    def message(self) -> AssistantMessage:
        """The message as assembled so far (whole only once :attr:`finished`)."""
        return AssistantMessage(
            content="".join(self._content) if self._content is not None else None,
            reasoning_content="".join(self._reasoning) if self._reasoning is not None else None,
            tool_calls=tuple(
                ToolCall(id=p.id, function=FunctionCall(name=p.name, arguments="".join(p.arguments)))
                for _, p in sorted(self._tool_calls.items())
            ),
        )

    def finish(self) -> Reply:
        if self._finish_reason is None:
            raise StreamBrokenError(
                f"the stream ended after {self.chunks_seen} chunks without a finish reason: the reply is incomplete"
            )
        return Reply(
            message=self.message(),
            usage=read_usage(self._usage, self._timings),
            finish_reason=self._finish_reason,
            model=self._model,
            id=self._id,
            system_fingerprint=self._system_fingerprint,
        )


def reply_from_completion(completion: ChatCompletion) -> Reply:
    """A non-streamed reply → the same :class:`Reply` the stream path would build."""
    if not completion.choices:
        raise ProtocolError(f"the reply {completion.id!r} has no choices")
    choice = next((c for c in completion.choices if c.index == 0), completion.choices[0])
    return Reply(
        message=choice.message.to_assistant(),
        usage=read_usage(completion.usage, timings_of(completion.model_extra)),
        finish_reason=choice.finish_reason,
        model=completion.model,
        id=completion.id,
        system_fingerprint=completion.system_fingerprint,
    )


def reply_chars(reply: Reply) -> int:
    """What a reply's size cap counts: content, reasoning and tool-call arguments."""
    msg = reply.message
    arguments = sum(len(call.function.arguments) for call in msg.tool_calls)
    return len(msg.content or "") + len(msg.reasoning_content or "") + arguments


def events_of_reply(reply: Reply) -> list[DeltaEvent]:
    """The delta events a whole reply amounts to (for the non-streamed path, so callers see one event shape)."""
    events: list[DeltaEvent] = []
    msg = reply.message
    if msg.reasoning_content:
        events.append(ReasoningDelta(text=msg.reasoning_content))
    if msg.content:
        events.append(ContentDelta(text=msg.content))
    for index, call in enumerate(msg.tool_calls):
        events.append(ToolCallStarted(index=index, id=call.id, name=call.function.name))
        if call.function.arguments:
            events.append(ToolCallArgumentsDelta(index=index, text=call.function.arguments))
    return events


def assemble_items(items: list[SseItem]) -> tuple[list[StreamEvent], Reply]:
    """Recorded SSE items → (events including KeepAlive and the final Completed, reply)."""
    assembler = StreamAssembler()
    events: list[StreamEvent] = []
    for item in items:
        if isinstance(item, SseData):
            events.extend(assembler.feed(decode_chunk(item.payload)))
        elif isinstance(item, SseComment):
            events.append(KEEP_ALIVE)
        elif isinstance(item, SseDone):
            break
    reply = assembler.finish()
    events.append(Completed(reply=reply))
    return events, reply


def assemble_sse(data: bytes) -> tuple[list[StreamEvent], Reply]:
    """A whole recorded SSE body (e.g. a ``.sse`` file's bytes) → (events, reply)."""
    return assemble_items(parse_sse(data))
