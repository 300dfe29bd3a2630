"""A custom command's ``allowed-tools``: during the turn the command starts, a call to a tool outside the list is
refused with a reason the model reads (an error tool result). The tool list sent never changes (DESIGN §3.4): the
limit is a permission gate in front of the conversation's own, so the prefix does not move.

Claude Code's names map to ours, and its specifiers to our permission rules where there is one:

| Claude Code | Reasonix |
| --- | --- |
| ``Bash``, ``Bash(git status:*)``, ``Bash(npm test)`` | ``bash``; with a specifier, what ``bash(…)`` allows |
| ``Read``, ``Read(src/**)`` | ``read_file`` (and ``Read(glob)`` as ``read(glob)``) |
| ``Write``, ``Edit``, ``MultiEdit`` (each with an optional glob) | ``write_file``, ``edit_file`` (``write(glob)``) |
| ``Glob``, ``Grep``, ``LS`` | ``glob``, ``grep``, ``list_dir`` |
| ``BashOutput``, ``KillShell`` / ``KillBash`` | ``job_output``, ``job_kill`` |
| ``Task`` | ``task`` |
| our own names (``read_file``, ``bash(git status:*)``), ``mcp__server__tool`` as ``server.tool`` | as written |

A name that maps to nothing (``WebSearch``, ``TodoWrite``) allows nothing. A command without ``allowed-tools`` limits
nothing; the permission rules and the sandbox hold either way, since the list only narrows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sessions.permissions import Rules
from sessions.tools import Gate

_ENTRY = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$")
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "bash": ("bash",),
    "read": ("read_file",),
    "write": ("write_file",),
    "edit": ("edit_file",),
    "multiedit": ("edit_file",),
    "glob": ("glob",),
    "grep": ("grep",),
    "ls": ("list_dir",),
    "bashoutput": ("job_output",),
    "killshell": ("job_kill",),
    "killbash": ("job_kill",),
    "task": ("task",),
}
_PATH_KIND = {"read_file": "read", "write_file": "write", "edit_file": "write"}


def split_entries(raw: str | list[str]) -> list[str]:
    """The entries of ``allowed-tools``: a list, or one string separated by commas or spaces outside brackets."""
    if isinstance(raw, list):
        return [entry.strip() for entry in raw if entry.strip()]
    entries, depth, current = [], 0, ""
    for char in raw:
        depth += (char == "(") - (char == ")")
        if depth == 0 and char in ", ":
            if current.strip():
                entries.append(current.strip())
            current = ""
        else:
            current += char
    return [*entries, current.strip()] if current.strip() else entries


@dataclass(frozen=True)
class AllowedList:
    """What one command allows: tool names, some limited by rules of our permission syntax."""

    entries: tuple[str, ...]
    tools: frozenset[str] = frozenset()
    rules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """tool name → the allow rules a call must pass (empty: any call of that tool)."""

    @classmethod
    def parse(cls, raw: str | list[str]) -> AllowedList:
        entries = split_entries(raw)
        tools: set[str] = set()
        rules: dict[str, list[str]] = {}
        unlimited: set[str] = set()
        for entry in entries:
            found = _ENTRY.match(entry)
            if found is None:
                continue
            name, spec = found.group(1), (found.group(2) or "").strip()
            if name.startswith("mcp__"):
                name = name.removeprefix("mcp__").replace("__", ".", 1)
            for tool in CLAUDE_NAMES.get(name.lower(), (name,)) if name[:1].isupper() else (name,):
                tools.add(tool)
                if not spec or spec in ("*", "**"):
                    unlimited.add(tool)
                elif tool == "bash":
                    rules.setdefault(tool, []).append(f"bash({spec})")
                elif tool in _PATH_KIND:
                    rules.setdefault(tool, []).append(f"{_PATH_KIND[tool]}({spec})")
                else:
                    unlimited.add(tool)
        limited = {tool: tuple(found) for tool, found in rules.items() if tool not in unlimited}
        return cls(entries=tuple(entries), tools=frozenset(tools), rules=limited)

    def refusal(self, tool: str, args: BaseModel, root: Path) -> str | None:
        listed = ", ".join(self.entries)
        if tool not in self.tools:
            return f"refused: {tool} is not among this command's allowed-tools ({listed}); use one of those"
        rules = self.rules.get(tool)
        if not rules:
            return None
        data: dict[str, Any] = args.model_dump()
        try:
            parsed = Rules.parse(allow=rules)
        except ValueError:
            return f"refused: this command's allowed-tools ({listed}) cannot be read for {tool}"
        if tool == "bash":
            verdict = parsed.for_command(str(data.get("command", "")))
        else:
            kind = _PATH_KIND[tool]
            verdict = parsed.for_path(kind, str(data.get("path", "")))
        if verdict.decision == "allow":
            return None
        return f"refused: this command's allowed-tools ({listed}) do not allow that {tool} call; stay within them"


@dataclass
class CommandTools:
    """A permission gate in front of the conversation's: while ``limit`` is set (the turn of a custom command with
    ``allowed-tools``) it refuses what the list does not allow; otherwise every call goes on to ``inner``."""

    inner: Gate | None
    limit: AllowedList | None = None

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        if self.limit is not None:
            refused = self.limit.refusal(tool.name, args, Path(ctx.root))
            if refused is not None:
                return refused
        return await self.inner.check(tool, args, ctx) if self.inner is not None else None

    def __getattr__(self, name: str) -> Any:
        # The inner gate's other parts (post-tool hooks' ``after``, the approval mode) stay reachable.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
