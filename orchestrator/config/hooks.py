"""Hooks in the configuration: ``[[hooks]]`` tables in ``reasonix.toml``, ``reasonix.local.toml`` and the user's
``config.toml``.

Each table names an ``event``, an optional ``matcher`` (a regular expression the whole tool name must match, for the
tool events; empty or ``*`` matches every tool), the ``command`` (run with ``bash -c``) and ``timeout_s``. Claude
Code's event names (``PreToolUse``, ``UserPromptSubmit``, ...) are accepted and mean the same events.

Unlike other tables, hooks do not replace one another from file to file: the user's hooks run, then the workspace's
(:func:`collect_hooks`), each remembered with the file it came from (``reasonix hooks list``). A workspace file that
defines a hook needs trust (:mod:`orchestrator.config.trust`): a hook is a program it would run on your machine.
``sandbox = false`` (run the hook outside the sandbox) counts only in the user's own file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.config.field_trust import nothing
from orchestrator.errors import ConfigProblem

HookEvent = Literal[
    "session_start",
    "user_prompt",
    "pre_tool",
    "post_tool",
    "pre_compact",
    "stop",
    "step_start",
    "step_verified",
    "goal_end",
]
HOOK_EVENTS: tuple[str, ...] = HookEvent.__args__  # type: ignore[attr-defined]
TOOL_EVENTS = ("pre_tool", "post_tool")

CLAUDE_EVENT_NAMES = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt",
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "PreCompact": "pre_compact",
    "Stop": "stop",
}
"""Claude Code's names for the same events: a ported hook keeps its name."""


class HookConfig(BaseModel):
    """One ``[[hooks]]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    event: HookEvent = Field(json_schema_extra=nothing())
    matcher: str | None = Field(None, json_schema_extra=nothing())
    """For ``pre_tool`` / ``post_tool``: a regular expression the whole tool name must match (``bash``,
    ``write_file|edit_file``, ``mcp__.*``); unset, empty or ``*``: every tool."""
    command: str = Field(min_length=1, json_schema_extra=nothing())
    timeout_s: float = Field(60.0, gt=0, le=3600, allow_inf_nan=False, json_schema_extra=nothing())
    """A hook still running after this many seconds is killed, and the session says so."""
    sandbox: bool = Field(True, json_schema_extra=nothing())
    """Run the hook in the sandbox commands run in (``false``: as it is; your user config only)."""

    @field_validator("event", mode="before")
    @classmethod
    def _claude_names(cls, value: object) -> object:
        return CLAUDE_EVENT_NAMES.get(value, value) if isinstance(value, str) else value

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value in (None, "", "*"):
            return None
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"expected a regular expression over tool names such as bash|edit_file: {exc}") from exc
        return value

    def matches(self, tool: str | None) -> bool:
        if self.matcher is None or tool is None:
            return True
        return re.fullmatch(self.matcher, tool) is not None


def collect_hooks(
    layers: list[tuple[str, dict[str, Any]]], user_file: str
) -> tuple[list[dict[str, Any]], list[str], list[ConfigProblem]]:
    """Take ``hooks`` out of every layer (in place): the hooks of all of them, lowest precedence first, the file each
    came from, and the problems (a workspace file that tries ``sandbox = false``)."""
    hooks: list[dict[str, Any]] = []
    origins: list[str] = []
    problems: list[ConfigProblem] = []
    for index, (source, data) in enumerate(layers):
        found = data.get("hooks")
        if found is None:
            continue
        rest = {k: v for k, v in data.items() if k != "hooks"}
        layers[index] = (source, rest)
        if not isinstance(found, list):
            problems.append(ConfigProblem(source, "hooks", "expected [[hooks]] tables (an array of tables)"))
            continue
        for n, entry in enumerate(found):
            if isinstance(entry, Mapping) and "sandbox" in entry and source != user_file:
                problems.append(
                    ConfigProblem(
                        source, f"hooks.{n}.sandbox", f"only your user config ({user_file}) can run a hook unsandboxed"
                    )
                )
            hooks.append(dict(entry) if isinstance(entry, Mapping) else {"event": entry})
            origins.append(source)
    return hooks, origins, problems
