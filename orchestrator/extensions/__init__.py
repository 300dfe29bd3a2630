"""Markdown extensions a project keeps beside its code: custom slash commands (``.reasonix/commands/NAME.md``,
``.claude/commands/NAME.md``) and skills (``.reasonix/skills/``, ``.claude/skills/NAME/SKILL.md``), each a Markdown
body under an optional front matter. Neither runs a program: a command's body becomes a user message, a skill's body
a tool result, so what they add is appended bytes and never moves a running session's prefix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.extensions.custom_commands import CustomCommand, find_custom_commands
    from orchestrator.extensions.front_matter import parse_front_matter

__all__ = ["CustomCommand", "find_custom_commands", "parse_front_matter"]

_HOME = {
    "CustomCommand": "custom_commands",
    "find_custom_commands": "custom_commands",
    "parse_front_matter": "front_matter",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
