"""Subagents: profiles in ``.reasonix/agents/NAME.md`` (and Claude Code's ``.claude/agents/NAME.md``) and the ``task``
tool that runs one as an isolated sub-session and returns its final report as the tool result.

Cache: with no profile anywhere, nothing is added (no index, no tool). With profiles, the main session's prefix gains
their index and the tool once, at its start; a subagent's prefix (its profile's text, its tools, the standing memory)
is fixed when it starts and is the same bytes for every subagent of that profile, so the second and later ones hit
the cache on all of it. The task itself is the sub-session's first user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.subagents.profiles import Profile, find_profiles
    from orchestrator.subagents.task_tool import TaskTool, subagent_figures, with_agents

__all__ = ["Profile", "TaskTool", "find_profiles", "subagent_figures", "with_agents"]

_HOME = {
    "Profile": "profiles",
    "find_profiles": "profiles",
    "TaskTool": "task_tool",
    "subagent_figures": "task_tool",
    "with_agents": "task_tool",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
