"""What a session reports while it works. A renderer, the journal and ``--json`` all consume these same events.

Every event carries ``kind`` and the ``session`` name, so events of the planner and the executor can share one stream.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from sessions.accounting.diagnostics import RequestDiagnostics
from sessions.wire.messages import Usage
from sessions.wire.stream import StreamEvent


class _SessionEvent(BaseModel):
    model_config = ConfigDict(frozen=True)
    session: str
    step_id: str | None = None
    """The plan step whose parallel branch (a fork of the session) reported it; left out of the JSON when unset."""

    @model_serializer(mode="wrap")
    def _without_unset_step(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and data.get("step_id") is None:
            data.pop("step_id", None)
        return data


class RequestStarted(_SessionEvent):
    kind: Literal["request_started"] = "request_started"
    request_index: int
    model: str
    body_bytes: int
    prefix_fingerprint: str
    messages: int


class StreamUpdate(_SessionEvent):
    """One event of the streaming reply (reasoning, content, tool-call fragments, restarts)."""

    kind: Literal["stream"] = "stream"
    event: StreamEvent


class UsageReported(_SessionEvent):
    kind: Literal["usage"] = "usage"
    model: str
    usage: Usage
    cost_usd: float
    session_cost_usd: float
    estimated: bool = False
    """True when the server sent no usage and the figures are our own estimate."""


class DiagnosticsReported(_SessionEvent):
    kind: Literal["cache"] = "cache"
    diagnostics: RequestDiagnostics


class ToolStarted(_SessionEvent):
    kind: Literal["tool_started"] = "tool_started"
    call_id: str
    name: str
    args_preview: str
    args_shown: dict[str, Any] = Field(default_factory=dict)
    """The arguments with every text bounded (``sessions.tool_batch.bounded_args``: a long one keeps its first lines
    and ends in a line ``…``), for a front end that reads the JSON event to show an edit as a diff and a command
    whole (the dashboard)."""
    args: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    """The arguments in full, for a terminal to show them as a person reads them; left out of the JSON event."""


class ToolFinished(_SessionEvent):
    kind: Literal["tool_finished"] = "tool_finished"
    call_id: str
    name: str
    is_error: bool
    preview: str
    chars: int
    bounded: bool = False
    tail: str = ""
    """The result's last lines (at most ``sessions.tool_batch.TAIL_LINES``, each cut to ``TAIL_LINE_CHARS``), for a
    front end that reads the JSON event to show a command's or a file's output as lines (the dashboard)."""
    lines: int = 0
    """How many lines the whole result has (the full output of a command whose result was bounded for the model)."""
    text: str = Field(default="", exclude=True, repr=False)
    """The result as the tool returned it, for a terminal to show its tail (``/output`` all of it); left out of the
    JSON event and the journal."""


SHOWN_ONLY = {"args_shown", "tail"}
"""The fields only a front end shows (the journal leaves them out: the conversation holds the calls and results)."""


class RepairApplied(_SessionEvent):
    kind: Literal["repair"] = "repair"
    repair: str
    call_id: str
    tool: str
    detail: str


class Compacted(_SessionEvent):
    kind: Literal["compaction"] = "compaction"
    reason: str
    tokens_before: int
    messages_before: int
    messages_after: int
    digest_chars: int


class JournalRecovered(_SessionEvent):
    """On resume: the journal had unreadable lines in the middle. They were skipped, the lines after them kept, and the
    conversation mended where they had left a tool call without its result."""

    kind: Literal["journal_recovered"] = "journal_recovered"
    message: str
    """``line N of <journal> is corrupt and was skipped; K later lines kept``."""
    corrupt_lines: list[int]
    mended: bool = False
    """Messages were added or dropped in the middle (a rewrite: the next request misses the cache from there)."""


class TurnFinished(_SessionEvent):
    kind: Literal["turn_finished"] = "turn_finished"
    status: str
    text: str
    requests: int
    failures: int
    cost_usd: float


SessionEvent = Annotated[
    RequestStarted
    | StreamUpdate
    | UsageReported
    | DiagnosticsReported
    | ToolStarted
    | ToolFinished
    | RepairApplied
    | Compacted
    | JournalRecovered
    | TurnFinished,
    Field(discriminator="kind"),
]
