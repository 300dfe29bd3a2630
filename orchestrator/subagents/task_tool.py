"""The ``task`` tool: runs a subagent of a named profile on a described task and returns its final report as the
tool result (appended bytes). It and the profiles' index join a session only when at least one profile exists
(:func:`with_agents`), so without profiles the prefix is as before. Skills with ``run_as = subagent`` count as
profiles: the ``skill`` tool points the model to this tool for them.

The tool is ``parallel_safe``: the task calls of one reply run at once, bounded by the runner (up to
``max_parallel``; a writing one in its own copy of the workspace, merged back when it reports). A read-only parent
(the planner, plan mode) gets the read-only flavour, which offers only the read-only profiles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from orchestrator.subagents.profiles import Profile, agents_index, find_profiles, skill_profiles
from orchestrator.subagents.runner import SharedRequests, SubagentRunner
from sessions import Session
from sessions.tools import Tool, ToolArgs, ToolContext, ToolError, ToolRegistry, ToolResult
from sessions.wire import ReplySource, RequestGate, Usage

if TYPE_CHECKING:
    from orchestrator.config.model import Config
    from orchestrator.policy.escalation import Escalator


class TaskArgs(ToolArgs):
    agent: str = Field(min_length=1, max_length=64, description="The subagent's profile, as the index names it.")
    task: str = Field(
        min_length=1,
        max_length=20_000,
        description="What it should do, self-contained: it sees nothing of this conversation.",
    )


class TaskTool(Tool[TaskArgs]):
    name = "task"
    description = (
        "Run a subagent (a profile from the index of subagents) on a task in its own conversation; returns its "
        "report. Calls in one reply run at once."
    )
    args_model = TaskArgs
    read_only: ClassVar[bool] = False
    parallel_safe: ClassVar[bool] = True
    storm_exempt: ClassVar[bool] = True

    def __init__(self, profiles: dict[str, Profile], runner: SubagentRunner) -> None:
        self.profiles = profiles
        self.runner = runner

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        profile = self.profiles.get(args.agent)
        if profile is None:
            known = ", ".join(self.profiles) or "none"
            raise ToolError(f"no subagent profile named {args.agent!r}; the profiles are: {known}")
        return await self.runner.run(profile, args.task)


class ReadOnlyTaskTool(TaskTool):
    """The flavour for a read-only session (a goal's planner, ``run --read-only``): only read-only profiles are in
    its index and run; a writing profile asked for by name is refused with what the model can do instead."""

    read_only: ClassVar[bool] = True

    def __init__(self, profiles: dict[str, Profile], runner: SubagentRunner, writing: Iterable[str] = ()) -> None:
        super().__init__(profiles, runner)
        self.writing = frozenset(writing)

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        if args.agent in self.writing:
            known = ", ".join(self.profiles)
            raise ToolError(
                f"the subagent {args.agent!r} may change files, and this session only reads: it can start only the "
                f"read-only subagents ({known}). Ask one of those to find out what you need, and leave the change "
                "itself to a session that writes (in a goal's plan: a step for the executor)."
            )
        return await super().run(args, ctx)


def with_agents(
    system_prompt: str,
    registry: ToolRegistry,
    workspace: Path,
    *,
    builder: Callable[..., Session],
    config: Config,
    journal_path: Path | None,
    read_only: bool = False,
    request_gate: RequestGate | None = None,
    on_event: Callable[[Any], None] | None = None,
    config_dir: Path | None = None,
    root: Path | None = None,
    copies: bool = True,
    parent: str = "",
    replies: ReplySource | None = None,
    escalator: Escalator | None = None,
) -> tuple[str, ToolRegistry]:
    """The system prompt with the profiles' index and the registry with the ``task`` tool, or both unchanged when
    there are no profiles (none that a read-only session may use). Subagents get the tools of ``registry`` as it was
    (no ``task`` tool: one level deep); their journals go to ``agents/`` beside ``journal_path``. The profiles come
    from ``workspace``; the subagents work in ``root`` (default: the workspace), a writing one in a copy of it merged
    back, or with ``copies`` false in ``root`` itself, one at a time. ``parent``: the parent's name when it is not the
    main session (``planner``): its subagents are ``agent:NAME#N@planner`` and journaled in ``agents/planner/``."""
    found = skill_profiles(workspace, config_dir) | find_profiles(workspace)  # a profile file wins over a skill
    profiles = {n: p for n, p in sorted(found.items()) if p.read_only or not read_only}
    if not profiles or registry.get(TaskTool.name) is not None:
        return system_prompt, registry
    agents = journal_path.parent / "agents" if journal_path is not None else None
    runner = SubagentRunner(
        builder=builder,
        config=config,
        tools=registry,
        journal_dir=agents / parent if agents is not None and parent else agents,
        workspace=(root or workspace) if copies else None,
        root=root,
        max_parallel=config.agents.max_parallel,
        gate=SharedRequests(limit=config.agents.max_requests, parent=request_gate),
        on_event=on_event,
        parent=parent,
        replies=replies,
        escalator=escalator,
    )
    writing = [n for n, p in found.items() if not p.read_only]
    tool = ReadOnlyTaskTool(profiles, runner, writing) if read_only else TaskTool(profiles, runner)
    return f"{system_prompt.rstrip()}\n\n{agents_index(profiles)}", ToolRegistry([*registry, tool])


def subagent_figures(registry: ToolRegistry) -> dict[str, tuple[int, Usage, float]]:
    """Requests, usage and cost of every subagent a session's ``task`` tool ran, by session name (``agent:NAME#N``),
    for its summary."""
    tool = registry.get(TaskTool.name)
    if not isinstance(tool, TaskTool):
        return {}
    return {s.name: (s.requests, s.usage, s.cost_usd) for s in tool.runner.sessions}


def charge_to(registry: ToolRegistry, session: Session) -> None:
    """The subagents of ``registry``'s ``task`` tool ask ``session``'s request gate, as it is at each request, besides
    their own bound (unless built with a parent gate already): a budget the front end installs on the session after
    building it (``-p --max-budget-usd``) bounds them too."""
    tool = registry.get(TaskTool.name)
    if isinstance(tool, TaskTool) and tool.runner.gate.parent is None:
        tool.runner.gate.follow = lambda: session.in_flight.gate
