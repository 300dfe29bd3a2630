"""The tool interface: a name, a description, pydantic arguments (→ a lean JSON schema), and an async ``run``.

``read_only`` tools never change the workspace (the planner and plan mode may call them); ``parallel_safe`` tools may
run concurrently with their neighbours in one batch of calls; ``storm_exempt`` tools poll, and the storm guard leaves
them alone. ``run`` must honour trio cancellation: anything it
starts (threads, processes) is stopped or awaited before the cancellation propagates.

Results are deterministic text: no clocks, no absolute temp paths (paths are relative to the workspace), because every
result is re-sent in every later request of the conversation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from sessions.sandbox.base import Sandbox
from sessions.sandbox.none import NoSandbox
from sessions.tools.read_memory import FileView, FileWrite
from sessions.tools.schema import lean_schema
from sessions.wire.messages import FunctionSchema, ToolSchema

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class ToolArgs(BaseModel):
    """Base for argument models: immutable, and unknown argument names are an error the model gets to see."""

    model_config = ConfigDict(frozen=True, extra="forbid")


RESULT_MAX_CHARS = 24_000
"""The one bound on a tool result the model sees (the session's default cap). Tools that cut their own output stay
under it, so the session never cuts them again and their "read on from here" hints stay true (issue 11 item 3)."""
RESULT_MARGIN_CHARS = 1_000
"""Room under the cap for what follows a tool's window: its continuation line, a repair note."""


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """Bounds on what one call may read, run or return. Defaults match the numbers the tool descriptions state."""

    read_max_lines: int = 400
    read_max_chars: int = RESULT_MAX_CHARS - RESULT_MARGIN_CHARS
    line_max_chars: int = 2_000
    list_max_entries: int = 400
    glob_max_results: int = 400
    grep_max_matches: int = 200
    grep_line_max_chars: int = 300
    grep_timeout_s: float = 20.0
    """CPU seconds the Python fallback of grep may spend (ripgrep needs no such bound: its regexes never backtrack)."""
    match_timeout_s: float = 20.0
    """Seconds one glob or grep call may spend matching path patterns: the glob, grep's glob, ``.gitignore`` lines."""
    bash_timeout_s: float = 120.0
    bash_max_timeout_s: float = 600.0
    bash_head_bytes: int = 11_000
    bash_tail_bytes: int = 11_000
    bash_full_text_bytes: int = 4_000_000
    bash_exit_grace_s: float = 1.0
    fold_test_runs: bool = True
    """A pytest or unittest run's passing progress is folded into one line (DESIGN §5 "Re-reads")."""

    def within(self, result_max_chars: int) -> ToolLimits:
        """These limits with every self-cut window under a result cap of ``result_max_chars``."""
        budget = result_max_chars - min(RESULT_MARGIN_CHARS, result_max_chars // 4)
        return replace(
            self,
            read_max_chars=min(self.read_max_chars, budget),
            line_max_chars=min(self.line_max_chars, budget // 2),
            bash_head_bytes=min(self.bash_head_bytes, (budget - 500) // 2),
            bash_tail_bytes=min(self.bash_tail_bytes, (budget - 500) // 2),
        )


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Where and how tools run: the workspace root, environment overrides for processes, limits, the sandbox that
    confines commands, and the permission gate consulted before each call (``None``: every call may run)."""

    root: Path
    env: Mapping[str, str] = field(default_factory=dict)
    limits: ToolLimits = field(default_factory=ToolLimits)
    sandbox: Sandbox = field(default_factory=NoSandbox)
    gate: Gate | None = None
    outputs: Path | None = None
    """The folder of full outputs the session keeps beside its journal; ``read_file`` reads them as
    ``~outputs/NAME``."""


class ToolResult(BaseModel):
    """What a call returns. ``content`` goes to the model; ``full_text`` keeps the unbounded text when ``content`` was
    cut (for the journal); ``data`` holds structured extras such as ``exit_code``. ``ends_turn`` says this result
    closes the turn: the session appends it and returns without another request (a protocol tool that succeeded, whose
    reply could only be closing words); the next turn's user message follows it (DESIGN §5 "Turn boundaries")."""

    model_config = ConfigDict(frozen=True)

    content: str
    is_error: bool = False
    data: dict[str, Any] | None = None
    full_text: str | None = None
    ends_turn: bool = False
    unchanged_key: str | None = None
    """What this result shows, e.g. a file and a line range. A later result with the same key and exactly the same
    content, while the earlier one is still in the conversation (no compaction since), is sent as a short note naming
    the earlier call instead of a second copy (DESIGN §5 "Unchanged re-reads")."""
    view: FileView | None = None
    """The file a read showed, for the session's memory of what the conversation holds (DESIGN §5 "Re-reads")."""
    wrote: FileWrite | None = None
    """The file a write changed, from which bytes to which."""

    @classmethod
    def error(cls, message: str, *, data: dict[str, Any] | None = None) -> ToolResult:
        return cls(content=message, is_error=True, data=data)


class Gate(Protocol):
    """Decides, before a call runs, whether it may: ``None`` to go ahead, or the refusal text the model reads."""

    async def check(self, tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> str | None: ...


class Tool(ABC, Generic[ArgsT]):
    """One tool. Subclasses set the class attributes and implement :meth:`run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    args_model: type[ArgsT]
    read_only: ClassVar[bool]
    parallel_safe: ClassVar[bool]
    sandboxed: ClassVar[bool] = False
    """Runs through ``ctx.sandbox``: in a read-only session it may run when the sandbox enforces read-only mode."""
    storm_exempt: ClassVar[bool] = False
    """A polling tool (a background job's output, a status check): calling it again with the same arguments is what
    it is for, so the storm guard never suppresses it and its calls do not count toward a storm of the others."""

    def schema(self) -> ToolSchema:
        """The function schema sent in the request prefix: the same bytes every time."""
        return ToolSchema(
            function=FunctionSchema(
                name=self.name, description=self.description, parameters=lean_schema(self.args_model)
            )
        )

    def writes(self, args: ArgsT, ctx: ToolContext) -> tuple[str, ...] | None:
        """What a call may write in ``ctx.root``, told before it runs: ``()`` for nothing, the paths (relative to
        the root, where the gateway resolves them) for a tool that writes only files it names, None for a tool that
        may write anything (a command, a server's tool). A turn whose calls all name their paths is checkpointed by
        storing those paths only."""
        return () if self.read_only else None

    @abstractmethod
    async def run(self, args: ArgsT, ctx: ToolContext) -> ToolResult:
        """Do the work. Raise :class:`~sessions.tools.errors.ToolError` for a failure the model should read."""
