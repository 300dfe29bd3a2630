"""The events of a headless run, as ``reasonix -p --output-format stream-json`` prints them (one object a line) and as
the Python API (:mod:`orchestrator.api`) yields them: one definition serves both.

The shapes follow Claude Code's stream-json where the concept is the same, so a script written for one reads the
other: ``system``/``init`` first (model, tools, workspace), ``stream_event`` for text and thinking deltas,
``assistant`` for each reply (its text, thinking and ``tool_use`` blocks, with that request's usage), ``user`` for the
``tool_result`` of each call, ``system`` notices (compaction, repair, escalation, a goal's events), and ``result`` last
(``total_cost_usd``, summed ``usage``, ``num_turns``, ``duration_ms``, ``session_id``). DeepSeek's cache figures are
given both ways: ``cache_read_input_tokens`` (hits) and ``input_tokens`` (misses, as Claude counts uncached input),
and ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens`` as DeepSeek names them. ``docs/stream-json.md``
documents every field; ``docs/stream-json.schema.json`` is generated from these models (:func:`json_schema`).
``SCHEMA_VERSION`` goes up when a field is renamed or removed.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal
from uuid import uuid4

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

from sessions.wire import Usage

SCHEMA_VERSION = 1

USD_DECIMALS = 12
"""Costs are sums of per-token prices (a few significant digits each); summing floats adds noise in the 17th digit
(``7.6434000000001e-05``). Rounded to 12 decimals, a cost keeps every digit it really has and prints as it is."""
Usd = Annotated[float, AfterValidator(lambda value: round(value, USD_DECIMALS))]


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    session_id: str
    """The conversation's id: ``reasonix -p --resume ID`` continues it (the run directory's name)."""
    uuid: str = Field(default_factory=lambda: str(uuid4()))
    """This line's own id (the Claude Agent SDKs require one on every message)."""


class CacheCreation(BaseModel):
    """Always zero: DeepSeek's cache is automatic and bills no writes (Anthropic's ``usage.cache_creation``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    ephemeral_1h_input_tokens: int = 0
    ephemeral_5m_input_tokens: int = 0


class ServerToolUse(BaseModel):
    """Always zero: DeepSeek runs no server-side tools (Anthropic's ``usage.server_tool_use``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    web_fetch_requests: int = 0
    web_search_requests: int = 0


class OutputTokensDetails(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    thinking_tokens: int


class TokenUsage(BaseModel):
    """Token counts of one request (on ``assistant``) or of the whole run (on ``result``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    input_tokens: int
    """Prompt tokens that missed the cache (Claude Code's uncached input)."""
    cache_read_input_tokens: int
    """Prompt tokens served from DeepSeek's prefix cache."""
    cache_creation_input_tokens: int = 0
    """Always 0: DeepSeek's cache is automatic and bills no writes."""
    output_tokens: int
    prompt_tokens: int
    prompt_cache_hit_tokens: int
    prompt_cache_miss_tokens: int
    reasoning_tokens: int = 0
    cache_creation: CacheCreation = CacheCreation()
    server_tool_use: ServerToolUse = ServerToolUse()
    output_tokens_details: OutputTokensDetails | None = None
    """``thinking_tokens``: the reasoning part of ``output_tokens``."""
    service_tier: Literal["standard"] = "standard"
    speed: Literal["standard"] = "standard"
    inference_geo: str = ""
    """Not reported by DeepSeek: empty."""
    iterations: list[dict[str, Any]] = []
    fallback_credit: None = None

    @classmethod
    def of(cls, usage: Usage) -> TokenUsage:
        return cls(
            input_tokens=usage.prompt_cache_miss_tokens,
            cache_read_input_tokens=usage.prompt_cache_hit_tokens,
            output_tokens=usage.completion_tokens,
            prompt_tokens=usage.prompt_tokens,
            prompt_cache_hit_tokens=usage.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens=usage.prompt_cache_miss_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            output_tokens_details=OutputTokensDetails(thinking_tokens=usage.reasoning_tokens),
        )


class ModelUsage(BaseModel):
    """One model's figures in a ``result`` (``modelUsage``, keyed by model, Claude Code's camelCase names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int = 0
    webSearchRequests: int = 0
    costUSD: float
    contextWindow: int
    maxOutputTokens: int


class McpServerInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    status: str


class SystemInit(_Line):
    """The first line: what the run works with."""

    type: Literal["system"] = "system"
    subtype: Literal["init"] = "init"
    schema_version: int = SCHEMA_VERSION
    cwd: str
    """The workspace."""
    model: str
    tools: list[str]
    permission_mode: str = Field(alias="permissionMode")
    """Claude Code's name for the approval mode: ``default`` (Reasonix's ``ask``), ``auto``, ``plan`` (``read-only``)
    or ``dontAsk`` (``ask`` with nobody to ask)."""
    approval_mode: str = "auto"
    """Reasonix's own word: ``ask``, ``auto`` or ``read-only``."""
    resumed: bool = False
    """A conversation continued from its journal (``--resume`` / ``--continue``)."""
    journal: str
    claude_code_version: str = ""
    """Reasonix's version (the SDKs read the field; Reasonix is not Claude Code)."""
    api_key_source: Literal["none"] = Field("none", alias="apiKeySource")
    """Always ``none``: no Anthropic credential is used (DeepSeek's key comes from Reasonix's config)."""
    mcp_servers: list[McpServerInfo] = []
    slash_commands: list[str] = []
    output_style: str = "default"
    skills: list[str] = []
    plugins: list[dict[str, str]] = []
    agents: list[str] = []
    ignored: list[str] = []
    """Flags and options the caller gave that this run accepted and does not honour (docs/stream-json.md)."""


class TextBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["text"] = "text"
    text: str
    citations: None = None


def reasonix_version() -> str:
    """The installed Reasonix's version (the ``init`` line's ``claude_code_version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reasonix")
    except PackageNotFoundError:
        return "0.0.0"


def signature_of(thinking: str) -> str:
    """A thinking block's ``signature``: a stable digest of its text (DeepSeek signs nothing; the SDKs require one)."""
    return hashlib.sha256(thinking.encode("utf-8")).hexdigest()


class ThinkingBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""
    """:func:`signature_of` the thinking."""


class ToolUseBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    """The arguments as the model sent them (``{"_raw": "..."}`` when they were not a JSON object)."""


class AssistantLineMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    model: str
    content: list[Annotated[TextBlock | ThinkingBlock | ToolUseBlock, Field(discriminator="type")]]
    usage: TokenUsage
    cost_usd: Usd
    """What this request cost (Reasonix's addition)."""
    stop_reason: Literal["end_turn", "tool_use"] | None = None
    """``tool_use`` when the reply calls tools, ``end_turn`` otherwise."""
    stop_sequence: None = None
    container: None = None
    context_management: None = None
    diagnostics: None = None
    stop_details: None = None


class AssistantLine(_Line):
    """One reply of the model (one request), once it has streamed in full."""

    type: Literal["assistant"] = "assistant"
    message: AssistantLineMessage
    parent_tool_use_id: None = None


class ToolResultBlock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool


class UserLineMessage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["user"] = "user"
    content: list[ToolResultBlock]


class UserLine(_Line):
    """What a tool call returned, as the model reads it."""

    type: Literal["user"] = "user"
    message: UserLineMessage
    parent_tool_use_id: None = None


class TextDelta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDelta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["thinking_delta"] = "thinking_delta"
    thinking: str
    estimated_tokens: None = None


class ContentBlockDelta(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["content_block_delta"] = "content_block_delta"
    index: int = 0
    """The block of the reply the piece belongs to (its thinking, then its text)."""
    delta: Annotated[TextDelta | ThinkingDelta, Field(discriminator="type")]


class StreamEventLine(_Line):
    """A piece of the reply as it streams (text or thinking); ``reasonix -p`` writes these only with
    ``--include-partial-messages``."""

    type: Literal["stream_event"] = "stream_event"
    event: ContentBlockDelta
    parent_tool_use_id: None = None


NoticeKind = Literal["compaction", "repair", "stream_restarted", "journal_recovered", "escalation", "goal_event"]


class SystemNotice(_Line):
    """Something the run did that is neither a reply nor a tool result: a compaction, a repaired tool call, a
    restarted stream, a recovered journal, an escalation to pro, or one of a goal's events (``data`` holds it as
    ``reasonix goal --json`` prints it)."""

    type: Literal["system"] = "system"
    subtype: NoticeKind
    message: str
    data: dict[str, Any] = {}


ResultSubtype = Literal["success", "error_max_turns", "error_max_budget_usd", "error_during_execution"]


class ResultLine(_Line):
    """The last line (the only one with ``--output-format json``): how the run ended and what it cost."""

    type: Literal["result"] = "result"
    subtype: ResultSubtype
    schema_version: int = SCHEMA_VERSION
    is_error: bool
    result: str
    """The final answer (an error's message when there is none)."""
    status: str
    """Reasonix's own word for the end: ``done``, ``request_limit``, ``budget``, ``error``, ``cancelled`` …"""
    duration_ms: int
    duration_api_ms: int
    num_turns: int
    """Requests to the model (each an ``assistant`` line)."""
    total_cost_usd: Usd
    usage: TokenUsage
    cache_hit_ratio: float | None
    model: str
    journal: str
    permission_denials: list[dict[str, Any]] = []
    """The calls refused this turn by the caller's permission callback or rules: ``tool_name``, ``tool_use_id``,
    ``tool_input`` (the refusal also reached the model as the call's result)."""
    stop_reason: str | None = None
    modelUsage: dict[str, ModelUsage] = {}
    errors: list[str] = []
    """On an error result: what went wrong (the same text as ``result``)."""


StreamJsonEvent = SystemInit | SystemNotice | AssistantLine | UserLine | StreamEventLine | ResultLine
"""Any line of ``--output-format stream-json``."""

_ADAPTER: TypeAdapter[StreamJsonEvent] = TypeAdapter(StreamJsonEvent)


def parse_event(data: dict[str, Any]) -> StreamJsonEvent:
    """One stream-json line, read back into its model (for a program reading ``reasonix -p`` output)."""
    return _ADAPTER.validate_python(data)


def dump(event: BaseModel) -> dict[str, Any]:
    """The JSON object of an event, with Claude Code's field names (``permissionMode``)."""
    return event.model_dump(mode="json", by_alias=True)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one stream-json line (``docs/stream-json.schema.json`` is this, written out)."""
    schema: dict[str, Any] = _ADAPTER.json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "reasonix stream-json line",
        "description": f"One line of `reasonix -p --output-format stream-json`, schema_version {SCHEMA_VERSION}.",
        "schema_version": SCHEMA_VERSION,
        **schema,
    }
