"""The hooks of one invocation: which ones an event matches, what they are told, and their combined answer.

Every hook of an event runs, in configuration order (the user's, then the workspace's), one at a time; the strictest
decision wins and their contexts are joined (:meth:`HookAnswer.then`). The JSON on stdin carries Claude Code's keys
(``session_id``, ``hook_event_name``, ``cwd``, ``tool_name``, ``tool_input``, ``tool_response``, ``prompt``,
``stop_hook_active``) and ours (``event``, ``workspace``, ``run_id``), so a Claude Code hook script ports unchanged.

A hook runs in the sandbox commands run in (the workspace writable, no network), unless the user's own config says
``sandbox = false`` for it. A hook that runs past its ``timeout_s`` is killed and the user is told; one that fails is
reported and the session goes on.

Besides the configured commands, the program driving Reasonix may register hooks of its own (:class:`CallerHook`:
the Claude Agent SDKs' hook callbacks, registered in ``initialize``). They run after the configured ones, through
:attr:`Hooks.caller`, which puts the same JSON to the caller and reads its answer the same way.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from orchestrator.config.hooks import CLAUDE_EVENT_NAMES, TOOL_EVENTS, HookConfig
from orchestrator.hooks.answer import HookAnswer, read_answer
from orchestrator.hooks.process import run_hook_command
from sessions.sandbox import NoSandbox, Sandbox

_CLAUDE_NAME = {ours: theirs for theirs, ours in CLAUDE_EVENT_NAMES.items()}
_PLAIN_CONTEXT = ("session_start", "user_prompt")
"""Events whose plain stdout (not JSON) is context for the model, as in Claude Code."""


def _label(hook: HookConfig) -> str:
    command = " ".join(hook.command.split())
    return f"`{command[:60]}{'…' if len(command) > 60 else ''}` ({hook.event})"


@dataclass(frozen=True)
class CallerHook:
    """A hook the caller registered (a Claude Agent SDK callback): its ``event`` (ours), the ``matcher`` over tool
    names (a regular expression the whole name must match, in Reasonix's spelling or one of ``aliases[name]``,
    Claude Code's names for that tool; None: every tool), the caller's ``key`` for it, how long its answer may take,
    and whether a failed or missing answer blocks (``block_on_failure``) or is only reported."""

    event: str
    matcher: str | None
    key: str
    timeout_s: float = 60.0
    block_on_failure: bool = False
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    claude_event: str = ""
    """The caller's name for the event. At ``post_tool`` it says which results the hook hears, as in Claude Code:
    ``PostToolUseFailure`` a failed call's only (with its ``error``), any other name a successful call's."""

    def hears(self, fields: Mapping[str, Any]) -> bool:
        """Whether this hook is asked about an event with these ``fields`` (the outcome of a call, above)."""
        if self.event != "post_tool":
            return True
        response = fields.get("tool_response")
        failed = isinstance(response, Mapping) and bool(response.get("is_error"))
        return failed == (self.claude_event == FAILURE_EVENT)

    def payload(self, shared: dict[str, Any]) -> dict[str, Any]:
        """The JSON this hook is sent: the event's, named as the caller named the event."""
        if self.claude_event != FAILURE_EVENT:
            return shared
        response = shared.get("tool_response")
        error = response.get("content", "") if isinstance(response, Mapping) else ""
        return {**shared, "hook_event_name": FAILURE_EVENT, "error": error}

    def matches(self, tool: str | None) -> bool:
        if self.matcher in (None, "", "*") or tool is None:
            return True
        try:
            return any(re.fullmatch(self.matcher, name) for name in (tool, *self.aliases.get(tool, ())))
        except re.error:  # a matcher that is not a regular expression is a name
            return self.matcher in (tool, *self.aliases.get(tool, ()))


FAILURE_EVENT = "PostToolUseFailure"
"""Claude Code's event after a call that failed: our ``post_tool``, for a caller's hook registered under it."""

AnyHook = HookConfig | CallerHook
CallerAsk = Callable[[CallerHook, dict[str, Any]], Awaitable[HookAnswer]]
"""Puts a :class:`CallerHook`'s JSON to the caller; its answer (a notice, or a block, when none came)."""


@dataclass
class Hooks:
    """The configured hooks and where they run. ``on_notice`` hears what the user must be told. ``callers``: hooks
    the caller registered, run through ``caller``; ``on_halt`` hears a hook's ``continue: false`` (the front end
    stops the turn)."""

    hooks: Sequence[HookConfig]
    workspace: Path
    sandbox: Sandbox = field(default_factory=NoSandbox)
    session_id: str = ""
    run_id: str = ""
    on_notice: Callable[[str], None] | None = None
    callers: list[CallerHook] = field(default_factory=list)
    caller: CallerAsk | None = None
    on_halt: Callable[[str], None] | None = None
    transcript_path: str = ""
    permission_mode: str = ""

    def __bool__(self) -> bool:
        return bool(self.hooks) or bool(self.callers)

    def _all(self) -> list[AnyHook]:
        return [*self.hooks, *self.callers] if self.caller is not None else list(self.hooks)

    def matching(self, event: str, tool: str | None = None) -> list[AnyHook]:
        return [h for h in self._all() if h.event == event and h.matches(tool)]

    def has(self, event: str) -> bool:
        return any(h.event == event for h in self._all())

    def payload(self, event: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        mode = {"permission_mode": self.permission_mode} if self.permission_mode else {}
        return {
            "session_id": self.session_id or self.run_id,
            "hook_event_name": _CLAUDE_NAME.get(event, event),
            "event": event,
            "cwd": str(self.workspace),
            "transcript_path": self.transcript_path,
            **mode,
            "workspace": str(self.workspace),
            "run_id": self.run_id,
            **fields,
        }

    def _sandbox_for(self, hook: HookConfig) -> Sandbox:
        if hook.sandbox:
            return self.sandbox
        return NoSandbox(replace(self.sandbox.policy, mode="full-access"))

    async def fire(self, event: str, fields: Mapping[str, Any] | None = None, *, tool: str | None = None) -> HookAnswer:
        """Run every hook ``event`` (and ``tool``) matches; their combined answer (an empty one when none ran)."""
        answer = HookAnswer()
        chosen = [h for h in self.matching(event, tool) if not isinstance(h, CallerHook) or h.hears(fields or {})]
        if not chosen:
            return answer
        payload = self.payload(event, fields or {})
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        for hook in chosen:
            if isinstance(hook, CallerHook):
                assert self.caller is not None  # _all() lists callers only with one to ask
                answer = answer.then(await self.caller(hook, hook.payload(json.loads(data))))
            else:
                answer = answer.then(await self._one(hook, data))
        for notice in answer.notices:
            if self.on_notice is not None:
                self.on_notice(notice)
        if answer.halt and event in TOOL_EVENTS and self.on_halt is not None:  # elsewhere blocking is the stop
            self.on_halt(answer.reason or f"a {event} hook asked to stop")
        return answer

    async def _one(self, hook: HookConfig, data: bytes) -> HookAnswer:
        label = _label(hook)
        bash = shutil.which("bash")
        if bash is None:
            return HookAnswer(notices=(f"the hook {label} cannot run: bash is not installed",))
        try:
            ran = await run_hook_command(
                bash,
                hook.command,
                data,
                workspace=self.workspace,
                sandbox=self._sandbox_for(hook),
                timeout_s=hook.timeout_s,
                env={},
            )
        except OSError as exc:
            return HookAnswer(notices=(f"the hook {label} cannot start: {exc.strerror or exc}",))
        if ran.exit_code is None:
            return HookAnswer(
                notices=(f"the hook {label} ran past its timeout_s ({hook.timeout_s:g}s) and was killed; going on",)
            )
        return read_answer(label, ran.exit_code, ran.stdout, ran.stderr, plain_context=hook.event in _PLAIN_CONTEXT)
