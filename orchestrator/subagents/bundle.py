"""The extensions a session gets, in one place: the ``remember`` tool (``[memory] remember``), background jobs
(``[jobs] enabled``), the skills' index and ``skill`` tool, and the subagents' index and ``task`` tool. ``reasonix
run`` and ``reasonix code`` build their executor through it (:func:`orchestrator.build.build_executor`), and a goal its
executor and each fork of it (``GoalContext.extend``), so every session that gets them gets the same bytes; a goal's
planner gets the subagents alone, in the read-only flavour (``agents_only``, ``read_only``).

Cache: applied once, before the session's prefix is built; each family adds nothing when it is not configured, so a
session with none of them sends the same bytes as before. Whatever they return later is a tool result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.extensions.skill_tool import with_skills
from orchestrator.memory.tool import with_memory_tools
from orchestrator.subagents.task_tool import with_agents
from sessions.tools import ToolRegistry
from sessions.tools.shell import JobTable, with_jobs
from sessions.wire import ReplySource, RequestGate

if TYPE_CHECKING:
    from orchestrator.config.model import Config
    from orchestrator.policy.escalation import Escalator


@dataclass(frozen=True)
class SessionExtensions:
    """What :meth:`apply` adds to a session, from the configuration of ``workspace`` (and the user's ``config_dir``)."""

    config: Config
    workspace: Path
    config_dir: Path | None = None
    jobs: bool = True
    """Background jobs too (``[jobs] enabled``): a goal's executor has none (their notes have no turn to ride in
    between steps)."""

    def apply(
        self,
        system_prompt: str,
        registry: ToolRegistry,
        *,
        builder: Callable[..., Any],
        journal_path: Path | None,
        read_only: bool = False,
        request_gate: RequestGate | None = None,
        on_event: Callable[[Any], None] | None = None,
        root: Path | None = None,
        copies: bool = True,
        parent: str = "",
        agents_only: bool = False,
        replies: ReplySource | None = None,
        escalator: Escalator | None = None,
    ) -> tuple[str, ToolRegistry]:
        """The system prompt and registry with every configured extension (both unchanged with none). ``root``: where
        the session's tools work (a goal branch's copy; default the workspace); ``copies``: writing subagents work in
        copies of it merged back (False: in place, as in a branch that is itself a copy); ``parent``: the session's
        name when it is not the main one (its subagents' names and journals say it); ``agents_only``: the subagents
        alone, no memory, jobs or skills (a goal's planner: with ``read_only``, its read-only ``task`` flavour)."""
        config = self.config
        tools = registry
        if not agents_only:
            tools = with_memory_tools(tools, config.memory)
            if self.jobs and config.jobs.enabled:
                tools = with_jobs(tools, JobTable(max_running=config.jobs.max_running))
            system_prompt, tools = with_skills(system_prompt, tools, self.workspace, self.config_dir)
        return with_agents(
            system_prompt,
            tools,
            self.workspace,
            builder=builder,
            config=config,
            journal_path=journal_path,
            read_only=read_only,
            request_gate=request_gate,
            on_event=on_event,
            config_dir=self.config_dir,
            root=root,
            copies=copies,
            parent=parent,
            replies=replies,
            escalator=escalator,
        )
