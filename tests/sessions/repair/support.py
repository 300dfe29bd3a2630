"""The session's tools as the repair tests offer them: the built-ins plus a polling tool that is storm-exempt."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from sessions.events import SessionEvent
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.repair import FlatMap, PreparedBatch, StormGuard, flatten_schema, prepare_calls
from sessions.session import Session, SessionSettings
from sessions.tools import Tool, ToolArgs, ToolContext, ToolRegistry, ToolResult, default_registry
from sessions.wire.client import DeepSeekClient
from sessions.wire.messages import AssistantMessage, FunctionCall, ToolCall
from tests.sessions.session_support import BodyRecorder


class JobOutputArgs(ToolArgs):
    job_id: str = Field(min_length=1, description="The background job to read.")


class JobOutputTool(Tool[JobOutputArgs]):
    """A background job's output so far: polling it with the same arguments is what it is for."""

    name: ClassVar[str] = "job_output"
    description: ClassVar[str] = "Output of a background job so far."
    args_model = JobOutputArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = True
    storm_exempt: ClassVar[bool] = True

    async def run(self, args: JobOutputArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(content=f"job {args.job_id}: running")


def registry() -> ToolRegistry:
    out = default_registry(use_ripgrep=False)
    out.register(JobOutputTool())
    return out


REGISTRY = registry()
FLATMAPS: dict[str, FlatMap | None] = {tool.name: flatten_schema(tool.schema())[1] for tool in REGISTRY}


def message(*calls: tuple[str, str], content: str | None = "", reasoning: str | None = "") -> AssistantMessage:
    return AssistantMessage(
        content=content,
        reasoning_content=reasoning,
        tool_calls=tuple(
            ToolCall(id=f"call_{i:02d}", function=FunctionCall(name=n, arguments=a)) for i, (n, a) in enumerate(calls)
        ),
    )


def prepare(
    msg: AssistantMessage, finish: str | None = "stop", *, storm: StormGuard | None = None, **kwargs: Any
) -> PreparedBatch:
    return prepare_calls(msg, finish, known_tools=FLATMAPS, storm=storm or StormGuard(), tools=REGISTRY, **kwargs)


def taken(reasoning: str | None = None, content: str | None = "") -> list[tuple[str, dict[str, Any]]]:
    """The calls taken from a reply with no tool_calls: (name, executed arguments)."""
    batch = prepare(message(content=content, reasoning=reasoning))
    return [(c.name, c.args) for c in batch.scavenged]


SYSTEM = "You are the executor of a coding agent. Work in the workspace with the tools. [executor]"


def repair_session(
    client: DeepSeekClient,
    ws: Path,
    recorder: BodyRecorder,
    events: list[SessionEvent],
    settings: SessionSettings | None = None,
) -> Session:
    tools = registry()
    prefix = build_prefix(SYSTEM, Session.schemas_for(tools), load_standing_memory(ws, stop_at=ws))
    return Session.start(
        journal_path=None,
        prefix=prefix,
        name="executor",
        client=client,
        registry=tools,
        tool_context=ToolContext(root=ws),
        settings=settings or SessionSettings(),
        on_event=events.append,
        reply_source=recorder,
    )


def is_append(prev: bytes, new: bytes) -> bool:
    return new.startswith(prev[:-2] + b",") and new.endswith(b"]}")
