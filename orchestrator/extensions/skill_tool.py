"""The ``skill`` tool: returns a skill's body (a tool result: appended bytes). It and the index join a session only
when there is at least one skill (:func:`with_skills`), so without skills the prefix is as before.

The body is read from disk when called, so an edit to a skill reaches the next call; a skill added mid-session can be
loaded by name at once (the index shows it from the next session on).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field

from orchestrator.extensions.skills import find_skills, skills_index
from sessions.tools import Tool, ToolArgs, ToolContext, ToolError, ToolRegistry, ToolResult


class SkillArgs(ToolArgs):
    name: str = Field(min_length=1, max_length=64, description="The skill's name, as the index lists it.")


class SkillTool(Tool[SkillArgs]):
    name = "skill"
    description = "Read a skill (instructions kept for a kind of task) by its name from the index of skills."
    args_model = SkillArgs
    read_only: ClassVar[bool] = True
    parallel_safe: ClassVar[bool] = True

    def __init__(self, workspace: Path, config_dir: Path | None) -> None:
        self.workspace = workspace
        self.config_dir = config_dir

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolResult:
        skills = find_skills(self.workspace, self.config_dir)
        skill = skills.get(args.name)
        if skill is None:
            known = ", ".join(skills) or "none"
            raise ToolError(f"no skill named {args.name!r}; the skills are: {known}")
        note = ""
        if skill.run_as == "subagent":
            note = (
                f'\n\n(This skill runs as a subagent: call the task tool with agent "{skill.name}" and a '
                "self-contained task, or follow it yourself.)"
            )
        return ToolResult(content=f'<skill name="{skill.name}" source="{skill.source}">\n{skill.body}\n</skill>{note}')


def with_skills(
    system_prompt: str, registry: ToolRegistry, workspace: Path, config_dir: Path | None
) -> tuple[str, ToolRegistry]:
    """The system prompt with the skills' index and the registry with the ``skill`` tool, or both unchanged when
    there are no skills."""
    index = skills_index(find_skills(workspace, config_dir))
    if not index or registry.get(SkillTool.name) is not None:
        return system_prompt, registry
    return f"{system_prompt.rstrip()}\n\n{index}", ToolRegistry([*registry, SkillTool(workspace, config_dir)])
