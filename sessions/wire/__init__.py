"""The wire: how a session talks to DeepSeek's chat API. The wire types and their deterministic encoding
(``messages``), the streaming client with its retries, deadlines and stall timers, the SSE parser, stream assembly
into a reply, the API's typed errors, and the seam through which a session's request becomes a reply (``reply``).
Nothing here knows what a conversation is; DESIGN §3 says which bytes it must never move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.lazy import lazy_names

if TYPE_CHECKING:
    from sessions.wire.balance import Balance
    from sessions.wire.client import ClientSettings, DeepSeekClient
    from sessions.wire.errors import AuthenticationError, DeepSeekError, RetriesExhaustedError, is_outage
    from sessions.wire.messages import (
        AssistantMessage,
        ChatCompletion,
        ChatRequest,
        FunctionSchema,
        Message,
        ReasoningEffort,
        ToolSchema,
        Usage,
        UserMessage,
    )
    from sessions.wire.provider import DEEPSEEK, Provider, ProviderKind, cache_reported, read_usage
    from sessions.wire.reply import ReplyRequest, ReplySource, RequestEstimate, RequestGate, stream_reply
    from sessions.wire.sse import SseData, SseParser
    from sessions.wire.stream import (
        Completed,
        ContentDelta,
        ReasoningDelta,
        Reply,
        StreamAssembler,
        StreamEvent,
        StreamRestarted,
        ToolCallArgumentsDelta,
        ToolCallStarted,
        decode_chunk,
        reply_from_completion,
    )

__all__ = [
    "DEEPSEEK",
    "AssistantMessage",
    "AuthenticationError",
    "Balance",
    "ChatCompletion",
    "ChatRequest",
    "ClientSettings",
    "Completed",
    "ContentDelta",
    "DeepSeekClient",
    "DeepSeekError",
    "FunctionSchema",
    "Message",
    "Provider",
    "ProviderKind",
    "ReasoningDelta",
    "ReasoningEffort",
    "Reply",
    "ReplyRequest",
    "ReplySource",
    "RequestEstimate",
    "RequestGate",
    "RetriesExhaustedError",
    "SseData",
    "SseParser",
    "StreamAssembler",
    "StreamEvent",
    "StreamRestarted",
    "ToolCallArgumentsDelta",
    "ToolCallStarted",
    "ToolSchema",
    "Usage",
    "UserMessage",
    "cache_reported",
    "decode_chunk",
    "is_outage",
    "read_usage",
    "reply_from_completion",
    "stream_reply",
]

_HOME = {
    "DEEPSEEK": "provider",
    "Provider": "provider",
    "ProviderKind": "provider",
    "cache_reported": "provider",
    "read_usage": "provider",
    "AssistantMessage": "messages",
    "AuthenticationError": "errors",
    "Balance": "balance",
    "ChatCompletion": "messages",
    "ChatRequest": "messages",
    "ClientSettings": "client",
    "Completed": "stream",
    "ContentDelta": "stream",
    "DeepSeekClient": "client",
    "DeepSeekError": "errors",
    "RetriesExhaustedError": "errors",
    "is_outage": "errors",
    "FunctionSchema": "messages",
    "Message": "messages",
    "ReasoningDelta": "stream",
    "ReasoningEffort": "messages",
    "Reply": "stream",
    "ReplyRequest": "reply",
    "ReplySource": "reply",
    "RequestEstimate": "reply",
    "RequestGate": "reply",
    "SseData": "sse",
    "SseParser": "sse",
    "StreamAssembler": "stream",
    "StreamEvent": "stream",
    "StreamRestarted": "stream",
    "ToolCallArgumentsDelta": "stream",
    "ToolCallStarted": "stream",
    "ToolSchema": "messages",
    "Usage": "messages",
    "UserMessage": "messages",
    "decode_chunk": "stream",
    "reply_from_completion": "stream",
    "stream_reply": "reply",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
