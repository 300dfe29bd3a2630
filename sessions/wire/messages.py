"""Wire types for DeepSeek's OpenAI-compatible chat API, and their deterministic encoding.

Two rules hold everything here together (DESIGN §3):

* An equal message always encodes to equal bytes: a fixed field order, compact separators, UTF-8 kept as is.
* An assistant message goes back exactly as it arrived: ``reasoning_content`` and every tool call's raw
  ``arguments`` string are kept as received and never re-serialized.

The request body puts ``messages`` last, so the body of a request that only appends messages starts with the bytes
of the previous body minus its closing ``]}``: byte-for-byte comparison of consecutive requests is then a prefix test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "insufficient_system_resource"]
FINISH_REASONS: tuple[str, ...] = ("stop", "length", "tool_calls", "content_filter", "insufficient_system_resource")

ReasoningEffort = Literal["low", "medium", "high", "max"]


def dumps(value: Any) -> str:
    """The one JSON dialect of this project on the wire: compact, UTF-8 kept, key order as given."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical_dumps(value: Any) -> str:
    """Compact JSON with sorted keys: for things whose key order we do not control (tool schemas)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------------------------------- messages


class FunctionCall(_Frozen):
    name: str
    arguments: str
    """The raw argument string exactly as the model produced it. Never re-dumped."""


class ToolCall(_Frozen):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "function": {"name": self.function.name, "arguments": self.function.arguments},
        }


class SystemMessage(_Frozen):
    role: Literal["system"] = "system"
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "system", "content": self.content}


class UserMessage(_Frozen):
    role: Literal["user"] = "user"
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "user", "content": self.content}


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content is not None:
            out["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        return out

    def with_reasoning_round_trip(self) -> AssistantMessage:
        """DESIGN §4: with tools in the request, every assistant message carries ``reasoning_content`` (``""``)."""
        if self.reasoning_content is not None:
            return self
        return self.model_copy(update={"reasoning_content": ""})


class ToolMessage(_Frozen):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.tool_call_id, "content": self.content}


Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]


def encode_message(message: Message) -> bytes:
    """The bytes of one message inside ``messages``. Equal messages give equal bytes."""
    return dumps(message.to_wire()).encode("utf-8")


# ------------------------------------------------------------------------------------------------ tool schemas


class FunctionSchema(_Frozen):
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class ToolSchema(_Frozen):
    type: Literal["function"] = "function"
    function: FunctionSchema

    def to_wire(self) -> dict[str, Any]:
        fn: dict[str, Any] = {
            "name": self.function.name,
            "description": self.function.description,
            "parameters": self.function.parameters,
        }
        if self.function.strict is not None:
            fn["strict"] = self.function.strict
        return {"type": "function", "function": fn}


def encode_tools(tools: Sequence[ToolSchema]) -> bytes:
    """Canonical bytes of a tool list: tools sorted by name, every object's keys sorted. Done once per session."""
    ordered = sorted(tools, key=lambda t: t.function.name)
    return canonical_dumps([t.to_wire() for t in ordered]).encode("utf-8")


# ----------------------------------------------------------------------------------------------------- request


class Thinking(_Frozen):
    type: Literal["enabled", "disabled"] = "enabled"


ToolChoice = Literal["auto", "none", "required"] | dict[str, Any]


class ChatRequest(_Frozen):
    """One chat completion request. Encoded by :func:`encode_request`, messages last."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    tool_choice: ToolChoice | None = None
    stream: bool = True
    thinking: Thinking | None = None
    reasoning_effort: ReasoningEffort | None = None
    max_tokens: int | None = None
    temperature: float | None = None

    @property
    def thinking_enabled(self) -> bool:
        # DeepSeek: thinking mode is on by default when the field is absent.
        return self.thinking is None or self.thinking.type == "enabled"


def request_head(request: ChatRequest, tools_bytes: bytes | None = None) -> bytes:
    """Everything of the body before the messages array: ``{"model":...,"messages":[``."""
    parts: list[str] = ['"model":' + dumps(request.model)]
    parts.append('"stream":' + dumps(request.stream))
    if request.stream:
        parts.append('"stream_options":{"include_usage":true}')
    if request.thinking is not None:
        parts.append('"thinking":' + dumps({"type": request.thinking.type}))
    if request.reasoning_effort is not None:
        parts.append('"reasoning_effort":' + dumps(request.reasoning_effort))
    if request.max_tokens is not None:
        parts.append('"max_tokens":' + dumps(request.max_tokens))
    if request.temperature is not None:
        parts.append('"temperature":' + dumps(request.temperature))
    head = "{" + ",".join(parts)
    out = head.encode("utf-8")
    if request.tools:
        out += b',"tools":' + (tools_bytes if tools_bytes is not None else encode_tools(request.tools))
    if request.tool_choice is not None:
        out += b',"tool_choice":' + dumps(request.tool_choice).encode("utf-8")
    return out + b',"messages":['


def encode_request(
    request: ChatRequest,
    *,
    encoded_messages: Sequence[bytes] | None = None,
    tools_bytes: bytes | None = None,
) -> bytes:
    """The request body. Pass pre-encoded messages (and tools) to join stored bytes instead of re-encoding.

    The reasoning_content round-trip rule is applied here when the request carries tools.
    """
    if encoded_messages is None:
        msgs = request.messages
        if request.tools:
            msgs = tuple(m.with_reasoning_round_trip() if isinstance(m, AssistantMessage) else m for m in msgs)
        encoded_messages = [encode_message(m) for m in msgs]
    return request_head(request, tools_bytes) + b",".join(encoded_messages) + b"]}"


# -------------------------------------------------------------------------------------------------------- usage


class PromptTokensDetails(BaseModel):
    model_config = ConfigDict(extra="allow")
    cached_tokens: int = 0


class CompletionTokensDetails(BaseModel):
    model_config = ConfigDict(extra="allow")
    reasoning_tokens: int = 0


class Usage(BaseModel):
    """Token usage as DeepSeek reports it. ``hit + miss == prompt_tokens``."""

    model_config = ConfigDict(extra="allow")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_cache_hit_tokens: int = 0
    prompt_cache_miss_tokens: int = 0
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None

    @classmethod
    def counted(cls, prompt: int, hit: int, completion: int) -> Usage:
        """A usage counted here rather than reported (a reply cut off before its usage arrived): ``hit`` of the
        ``prompt`` tokens from the cache, the rest missed."""
        return cls(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            prompt_cache_hit_tokens=hit,
            prompt_cache_miss_tokens=prompt - hit,
        )

    @property
    def reasoning_tokens(self) -> int:
        return self.completion_tokens_details.reasoning_tokens if self.completion_tokens_details else 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            prompt_cache_hit_tokens=self.prompt_cache_hit_tokens + other.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens=self.prompt_cache_miss_tokens + other.prompt_cache_miss_tokens,
            prompt_tokens_details=PromptTokensDetails(
                cached_tokens=(self.prompt_tokens_details.cached_tokens if self.prompt_tokens_details else 0)
                + (other.prompt_tokens_details.cached_tokens if other.prompt_tokens_details else 0)
            ),
            completion_tokens_details=CompletionTokensDetails(
                reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens
            ),
        )


# ------------------------------------------------------------------------------------------------ stream chunks


class DeltaFunction(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str | None = None
    arguments: str | None = None


class DeltaToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int
    id: str | None = None
    type: Literal["function"] | None = None
    function: DeltaFunction | None = None


class Delta(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["assistant"] | None = None
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[DeltaToolCall] | None = None


class ChunkChoice(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int = 0
    delta: Delta = Field(default_factory=Delta)
    finish_reason: FinishReason | None = None


class StreamChunk(BaseModel):
    """One ``data:`` line of a streamed reply."""

    model_config = ConfigDict(extra="allow")
    id: str = ""
    object: str = "chat.completion.chunk"
    created: int = 0
    model: str = ""
    system_fingerprint: str | None = None
    choices: list[ChunkChoice] = Field(default_factory=list)
    usage: Usage | None = None


class ResponseToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int | None = None
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ResponseMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ResponseToolCall] | None = None

    def to_assistant(self) -> AssistantMessage:
        return AssistantMessage(
            content=self.content,
            reasoning_content=self.reasoning_content,
            tool_calls=tuple(ToolCall(id=c.id, function=c.function) for c in self.tool_calls or ()),
        )


class CompletionChoice(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int = 0
    message: ResponseMessage
    finish_reason: FinishReason | None = None


class ChatCompletion(BaseModel):
    """A non-streamed reply."""

    model_config = ConfigDict(extra="allow")
    id: str = ""
    object: str = "chat.completion"
    created: int = 0
    model: str = ""
    system_fingerprint: str | None = None
    choices: list[CompletionChoice]
    usage: Usage | None = None


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")
    message: str
    type: str | None = None
    param: str | None = None
    code: str | int | None = None


class ErrorBody(BaseModel):
    """DeepSeek's error shape: ``{"error": {"message", "type", "param", "code"}}``."""

    model_config = ConfigDict(extra="allow")
    error: ErrorDetail
