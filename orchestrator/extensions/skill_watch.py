"""Which skills a running session's index holds, and the ones added since: announced in a ``<skills-update>`` tail
block in front of the next message, never by touching the prefix."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.extensions.skills import find_skills
from sessions.prompt import TailBlock, user_config_dir


@dataclass
class SkillWatch:
    """The skills a session started with, to announce the ones added since."""

    workspace: Path
    config_dir: Path | None
    known: frozenset[str] = field(default_factory=frozenset)

    def reset(self) -> None:
        """A session starts: its index holds what is there now."""
        self.known = frozenset(find_skills(self.workspace, self.config_dir))

    def news(self) -> list[TailBlock]:
        skills = find_skills(self.workspace, self.config_dir)
        added = [s for name, s in skills.items() if name not in self.known]
        if not added:
            return []
        self.known = self.known | {s.name for s in added}
        lines = "\n".join(f"- {s.name}: {s.description}" for s in added)
        return [
            TailBlock(
                tag="skills-update",
                body="New skills were added (load one with the skill tool when a task matches it):\n" + lines,
            )
        ]


def watch_for(workspace: Path) -> SkillWatch:
    return SkillWatch(workspace, user_config_dir())
