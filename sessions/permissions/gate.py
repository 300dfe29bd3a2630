"""The permission gate: before a call runs, its rules and the approval mode decide allow, ask or deny.

Approval modes (``--permissions``): ``auto`` runs what is not denied (commands sandboxed; without a sandbox every
command asks), ``ask`` asks for every command, write and MCP call no rule allows, ``read-only`` is the session's
read-only mode; ``plan`` (the conversation's plan mode, never a setting) asks for what ``ask`` asks except a command
the read-only sandbox confines, so a tool that claims to be read-only is asked for in plan mode as in ask mode. An MCP
tool's ``readOnlyHint`` is the server's claim: it decides what the planner is offered, never
whether a call asks (in ``read-only`` a hinted call asks instead of being refused). Paths are matched as the file tools
resolve them, both as written and through symlinks (``deny`` when either matches, ``allow`` when the file actually
opened is allowed); "always" saves the rule for that file.
An answer "always" adds a rule through ``remember``, unless an ``ask`` rule asked (it outranks any allow rule: the
call would ask again all the same, so "always" allows it once). Without someone to ask, ``ask`` refuses with the rule
to add. A refusal is an ordinary error result: appended to the conversation, the prefix untouched.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel

from sessions.permissions.rules import PathCandidates, Rules, Verdict, canonical
from sessions.sandbox.base import describe
from sessions.tools.errors import ToolInputError, WorkspaceEscapeError
from sessions.tools.paths import display, resolve

ApprovalMode = Literal["ask", "auto", "read-only", "plan"]
_WRITE_TOOLS = frozenset({"write_file", "edit_file"})
_READ_TOOLS = frozenset({"read_file", "list_dir", "grep", "glob"})


@dataclass(frozen=True, slots=True)
class Question:
    tool: str
    subject: str
    """The whole command, the path, or an MCP tool (``server.tool``) with its arguments."""
    cwd: str
    sandbox: str
    """What confines it: ``bubblewrap · workspace-write · no network`` or ``no sandbox available``."""
    rule: str
    """The rule that "always" would add: ``bash(git push)``, ``write(src/app.py)``; with ``can_save`` false, what
    asks every time instead (an ask rule, a line that cannot be read, a hook)."""
    can_save: bool = True
    """False when an "always" could never take effect (an ask rule or an unreadable line outranks every allow
    rule): then only yes once or no is offered."""


@dataclass(frozen=True, slots=True)
class Answer:
    allow: bool
    always: bool = False
    note: str = ""
    """With a no: what the user wants the model to know."""


Asker = Callable[[Question], Awaitable[Answer]]


def workspace_paths(root: Path) -> PathCandidates:
    """Where a path leads in ``root``, as the file tools resolve it: as written (normalised) and through symlinks."""

    def candidates(raw: str) -> tuple[str, ...] | None:
        try:
            found = resolve(root, raw)
        except (ToolInputError, WorkspaceEscapeError):
            return None
        return tuple(dict.fromkeys((found.rel, display(root.resolve(), found.path))))

    return candidates


def _subject(tool: str, args: BaseModel) -> tuple[str, str] | None:
    """(rule kind, subject) for the calls rules govern."""
    data: dict[str, Any] = args.model_dump()
    if tool == "bash":
        return "bash", str(data.get("command", ""))  # pragma: no mutate (its arguments require a command)
    if tool in _WRITE_TOOLS and "path" in data:
        return "write", str(data["path"])
    if tool in _READ_TOOLS and isinstance(data.get("path"), str):
        return "read", str(data["path"])
    if tool == "web_fetch" and isinstance(data.get("url"), str):
        return "web", (urlsplit(data["url"]).hostname or "").lower()  # pragma: no mutate (its url has a host)
    return None


def _denied(verdict: Verdict) -> str:
    return f"refused by the rule {verdict.rule!r} in [permissions] deny; do not retry it, find another way"


@dataclass
class PermissionGate:
    rules: Rules
    mode: ApprovalMode = "auto"
    asker: Asker | None = None
    remember: Callable[[str], None] | None = None
    """Saves an "always" rule (to ``reasonix.local.toml``)."""

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        found = getattr(tool, "rule_subject", None) or _subject(tool.name, args)
        if found is None:
            return None
        kind, subject = found
        paths = workspace_paths(Path(ctx.root))
        if kind == "write" and paths(subject) is None:
            return None  # outside the workspace: the tool itself refuses it (no rule matches a read there: it runs)
        verdict: Verdict = (
            self.rules.for_command(subject, paths) if kind == "bash" else self.rules.for_path(kind, subject, paths)
        )
        if kind == "bash":
            rule = f"bash({canonical(subject)})"
        elif kind in ("mcp", "web"):
            rule = f"{kind}({subject})"
        else:
            rule = f"{kind}({(paths(subject) or (subject,))[-1]})"  # the file actually opened
        if verdict.decision == "deny":
            return _denied(verdict)
        if self.mode == "read-only" and kind != "read" and not (kind == "mcp" and tool.read_only):
            if kind == "bash" and ctx.sandbox.confines and ctx.sandbox.policy.mode == "read-only":
                return None
            does = "reaches the network" if kind == "web" else "can change the workspace"
            return f"refused: {tool.name} {does} and approvals are read-only (--permissions read-only)"
        if verdict.decision == "allow":
            return None
        if verdict.decision is None and self._default_allows(kind, ctx):
            return None
        shown = f"{subject} {json.dumps(args.model_dump(), sort_keys=True)[:1000]}" if kind == "mcp" else subject
        return await self._ask(tool.name, subject, rule, verdict, ctx, shown=shown)

    def deny_refusal(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        """The refusal of a ``deny`` rule for this call, or None: what still holds for a call a hook allowed."""
        found = getattr(tool, "rule_subject", None) or _subject(tool.name, args)
        if found is None:
            return None
        kind, subject = found
        paths = workspace_paths(Path(ctx.root))  # a path outside the workspace matches no rule
        rules = self.rules
        verdict = rules.for_command(subject, paths) if kind == "bash" else rules.for_path(kind, subject, paths)
        return _denied(verdict) if verdict.decision == "deny" else None

    def _default_allows(self, kind: str, ctx: Any) -> bool:
        if kind == "read":
            return True
        if kind == "web":
            return False  # a host no rule allows asks, in every mode
        if kind == "mcp":
            return self.mode == "auto"  # whatever the server claims (readOnlyHint): auto runs it, ask asks
        if self.mode == "plan":
            # Plan mode asks for what ask asks: only a command the read-only sandbox confines (it can change
            # nothing) runs unasked, as it did before.
            return kind == "bash" and bool(ctx.sandbox.confines) and ctx.sandbox.policy.mode == "read-only"
        if self.mode == "auto":
            # A sandbox confines it, or the user chose full-access explicitly; an unavailable sandbox asks.
            return kind == "write" or bool(ctx.sandbox.confines) or ctx.sandbox.policy.mode == "full-access"
        return False

    async def _ask(self, tool: str, subject: str, rule: str, verdict: Verdict, ctx: Any, *, shown: str) -> str | None:
        if self.asker is None:
            return _no_terminal(tool, subject, rule, verdict)
        held = None
        if verdict.decision is not None:  # an ask rule, or a line that cannot be read: asked every time
            unreadable = verdict.rule == "unparseable"
            held = "it cannot be parsed into simple commands" if unreadable else f"the ask rule {verdict.rule}"
        answer = await self.asker(
            Question(
                tool=tool,
                subject=shown,
                cwd=str(ctx.root),
                sandbox=describe(ctx.sandbox),
                rule=rule if held is None else held,
                can_save=held is None,
            )
        )
        if answer.allow:
            # Saved only when no rule asked: an ask rule (or a line that cannot be read) outranks any allow rule.
            if answer.always and self.remember is not None and verdict.decision is None:
                self.remember(rule)
                self.rules = Rules(
                    allow=(*self.rules.allow, *Rules.parse(allow=[rule]).allow),
                    ask=self.rules.ask,
                    deny=self.rules.deny,
                )
            return None
        note = f" The user says: {answer.note}" if answer.note.strip() else ""
        return f"refused: the user declined {tool} `{subject}`.{note}"


def _no_terminal(tool: str, subject: str, rule: str, verdict: Verdict) -> str:
    """The refusal of a call that needs approval when nobody can be asked, with the one way out that works: an
    allow rule cannot outrank an ask rule or a line that cannot be read, so those get other advice."""
    head = f"refused: {tool} `{subject}` needs approval"
    tail = "and there is no terminal to ask"
    if verdict.rule == "unparseable":
        return (
            f"{head} (it cannot be parsed into simple commands) {tail}; write it as simple commands, or run it "
            "where a terminal can approve it"
        )
    if verdict.decision == "ask":
        return (
            f"{head} (the rule {verdict.rule!r} in [permissions] ask asks for it) {tail}; run it where a terminal "
            "can approve it, or remove that rule if it should run unasked"
        )
    return f"{head} {tail}; the user can allow it by adding {rule!r} to [permissions] allow in reasonix.toml"
