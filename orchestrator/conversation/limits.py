"""The limits a headless run takes as flags: ``--max-budget-usd`` (a request gate) and ``--allowed-tools`` (a
permission gate in front of the configured one). Both refuse at the request or the call, never by changing what is
sent: the tool list and the prefix stay those of ``reasonix run`` (DESIGN §3), so a limit moves no cached byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from orchestrator.errors import ReasonixError
from sessions.tools import Gate
from sessions.wire import RequestEstimate


class MaxBudgetReachedError(ReasonixError):
    """The run reached ``--max-budget-usd``: the next request was not sent."""


@dataclass
class BudgetCap:
    """A request gate: refuses a request when what this run has spent (its subagents' requests included) plus the
    prompts of the requests admitted and still in flight (subagents run at once) plus this request's prompt (priced as
    if nothing hit the cache, an upper bound) would pass ``cap_usd``."""

    cap_usd: float
    spent: Callable[[], float]
    in_flight_usd: float = 0.0

    def admit(self, estimate: RequestEstimate) -> Callable[[], None]:
        spent = self.spent() + self.in_flight_usd
        if spent + estimate.prompt_usd > self.cap_usd:
            raise MaxBudgetReachedError(
                f"the run has spent ${spent:.4f} and the next request could cost ${estimate.prompt_usd:.4f}, over "
                f"--max-budget-usd {self.cap_usd:g}; continue with a higher cap (reasonix -p --resume ID)"
            )
        self.in_flight_usd += estimate.prompt_usd
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.in_flight_usd -= estimate.prompt_usd

        return release


def parse_allowed(values: Iterable[str]) -> frozenset[str]:
    """``--allowed-tools read_file,grep --allowed-tools bash``: tool names, comma or space separated."""
    return frozenset(name for value in values for name in value.replace(",", " ").split() if name)


@dataclass
class AllowedTools:
    """A permission gate: a call to a tool outside ``allowed`` is refused (an ordinary error result the model reads);
    the others go on to ``inner`` (the configured rules and approval mode)."""

    allowed: frozenset[str]
    inner: Gate | None

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        if tool.name not in self.allowed:
            names = ", ".join(sorted(self.allowed))
            return f"refused: {tool.name} is not among the allowed tools of this run ({names}); use one of those"
        return await self.inner.check(tool, args, ctx) if self.inner is not None else None


CLAUDE_TOOL_NAMES = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "NotebookEdit": "edit_file",
    "LS": "list_dir",
    "Glob": "glob",
    "Grep": "grep",
    "Bash": "bash",
    "BashOutput": "job_output",
    "KillBash": "job_kill",
    "KillShell": "job_kill",
    "WebFetch": "web_fetch",
    "Task": "task",
    "Agent": "task",
}
"""Claude Code's tool names and Reasonix's for the same tool (``--allowedTools Read`` is ``read_file``)."""


def claude_tool_names(values: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``--allowedTools "Read,Bash(git log:*)"``: (the tools named alone, the tools named with a pattern), in Reasonix's
    names. A name in Claude Code's spelling maps to Reasonix's; any other is taken as it is (``bash``, an MCP tool)."""
    names: set[str] = set()
    patterns: set[str] = set()
    for value in values:
        depth, word, words = 0, "", []
        for char in value:  # commas and spaces split rules, except inside a pattern's parentheses
            depth += (char == "(") - (char == ")")
            if depth == 0 and char in ", ":
                words.append(word)
                word = ""
            else:
                word += char
        words.append(word)
        for rule in filter(None, (w.strip() for w in words)):
            name, _, pattern = rule.partition("(")
            (patterns if pattern else names).add(CLAUDE_TOOL_NAMES.get(name, name))
    return frozenset(names), frozenset(patterns)


@dataclass
class ToolRules:
    """Claude Code's ``--allowedTools`` / ``--disallowedTools`` as a permission gate: a disallowed tool is refused
    (the tool list, the cached prefix, stays whole); an allowed one runs without asking, only the configured deny
    rules still hold; the rest goes on to ``inner``. A rule with a pattern (``Bash(git log:*)``) allows nothing
    (the whole tool would be more than it says) and disallows its whole tool (the safe reading)."""

    allowed: frozenset[str]
    disallowed: frozenset[str]
    inner: Any

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        if tool.name in self.disallowed:
            return f"refused: {tool.name} is among the disallowed tools of this run (--disallowedTools); do without it"
        if tool.name in self.allowed:
            deny = getattr(self.inner, "deny_refusal", None)
            return deny(tool, args, ctx) if deny is not None else None
        refusal: str | None = await self.inner.check(tool, args, ctx) if self.inner is not None else None
        return refusal

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
