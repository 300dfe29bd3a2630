"""Standard input of ``reasonix -p --input-format stream-json`` as the Claude Agent SDKs use it: user messages, and
Claude Code's control protocol both ways.

The SDKs start ``reasonix`` with ``--input-format stream-json`` and write, one JSON object a line:

* ``{"type": "user", ...}``: a turn (queued: turns run one after another);
* ``{"type": "control_request", "request_id", "request": {"subtype": ...}}``: ``initialize`` (answered with what
  this run offers; the hook callbacks it registers become :class:`~orchestrator.hooks.hooks.CallerHook` s,
  :func:`registered_hooks`), ``interrupt`` (the running turn is cancelled; its ``result`` says so),
  ``set_permission_mode``, ``set_model``, ``mcp_status``; any other subtype gets an error ``control_response`` naming
  it, and the run goes on;
* ``{"type": "control_response", ...}``: the answer to a request of ours: a ``can_use_tool`` permission prompt
  (:class:`PermissionPrompt`) sent when ``--permission-prompt-tool stdio`` was given, or a ``hook_callback``
  (:class:`HookCallbacks`) at an event the caller registered a hook for.

``keep_alive``, ``update_environment_variables`` and ``control_cancel_request`` lines are read and ignored; any other
line ends the run with exit status 2, naming the line (as before).
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio
from pydantic import BaseModel

from orchestrator.errors import ReasonixError, UsageError
from orchestrator.headless.events import AssistantLine, StreamJsonEvent, ToolUseBlock, UserLine
from orchestrator.headless.output import parse_input_line
from orchestrator.hooks.answer import HookAnswer, from_json
from orchestrator.hooks.hooks import CallerHook
from orchestrator.text import json_nesting
from sessions.permissions import Answer, Question

PERMISSION_WAIT_SECONDS = 3600.0
"""How long a ``can_use_tool`` prompt waits for the caller's answer before the call is refused."""

MCP_WAIT_SECONDS = 3600.0
"""The bound on one message to a caller's MCP server (a call's own deadline, ``[mcp] call_timeout_s``, ends it
first)."""

IGNORED_TYPES = frozenset({"keep_alive", "update_environment_variables", "control_cancel_request"})


class ControlRefusedError(ReasonixError):
    """A control request this run cannot honour: its text goes back in an error ``control_response``."""


@dataclass
class ControlHandlers:
    """What the command does for each control request the run understands."""

    initialize: Callable[[dict[str, Any]], dict[str, Any]]
    interrupt: Callable[[], None]
    set_permission_mode: Callable[[str], None]
    mcp_status: Callable[[], dict[str, Any]]
    set_model: Callable[[str | None], None]


@dataclass
class ControlChannel:
    """Reads standard input (one line a call of ``readline``), answers control requests through ``write`` (a line
    of standard output), queues user messages for :meth:`messages`, and sends control requests of its own."""

    write: Callable[[dict[str, Any]], None]
    handlers: ControlHandlers
    error: UsageError | None = None
    """The line that was not a message of the protocol, once read: the run ends with it."""
    _pending: dict[str, tuple[trio.Event, list[dict[str, Any]]]] = field(default_factory=dict)
    _count: int = 0
    _closed: bool = False
    """Standard input ended: nobody can answer a request any more."""

    def __post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[str](math.inf)

    async def read(self, readline: Callable[[], Awaitable[str]]) -> None:
        """Until standard input ends (or a line is wrong): route each line."""
        number = 0
        async with self._send:
            while raw := await readline():
                number += 1
                try:
                    await self._route(raw, number)
                except UsageError as exc:
                    self.error = exc
                    return
        self._closed = True
        for event, answer in self._pending.values():  # nobody is left to answer: refuse what waits
            answer.append({"subtype": "error", "error": "standard input closed"})
            event.set()

    def messages(self) -> trio.MemoryReceiveChannel[str]:
        """The user messages, in order; ends when standard input does."""
        return self._receive

    async def _route(self, raw: str, number: int) -> None:
        if not raw.strip():
            return
        try:
            data: Any = json_nesting.loads(raw)
        except ValueError:
            data = None
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "control_request" and isinstance(data.get("request"), dict):
            self._answer(str(data.get("request_id", "")), data["request"])
        elif kind == "control_response" and isinstance(data.get("response"), dict):
            response = data["response"]
            waiting = self._pending.pop(str(response.get("request_id", "")), None)
            if waiting is not None:
                waiting[1].append(response)
                waiting[0].set()
        elif kind in IGNORED_TYPES:
            return
        else:
            text = parse_input_line(raw, number)  # a user message, or the UsageError that names the line
            if text is not None:
                await self._send.send(text)

    def _answer(self, request_id: str, request: dict[str, Any]) -> None:
        subtype = request.get("subtype")
        handlers = self.handlers
        body: dict[str, Any]
        response: dict[str, Any]
        try:
            if subtype == "initialize":
                body = handlers.initialize(request)
            elif subtype == "interrupt":
                handlers.interrupt()
                body = {}
            elif subtype == "set_permission_mode":
                handlers.set_permission_mode(str(request.get("mode", "")))
                body = {}
            elif subtype == "mcp_status":
                body = handlers.mcp_status()
            elif subtype == "set_model":
                model = request.get("model")
                handlers.set_model(model if isinstance(model, str) and model else None)
                body = {}
            else:
                raise ControlRefusedError(
                    f"reasonix -p does not support the control request {subtype!r}; it supports initialize, "
                    "interrupt, set_permission_mode, set_model, mcp_status, and sends can_use_tool and hook_callback "
                    "requests (docs/stream-json.md)"
                )
        except ControlRefusedError as exc:
            response = {"subtype": "error", "request_id": request_id, "error": str(exc)}
        else:
            response = {"subtype": "success", "request_id": request_id, "response": body}
        self.write({"type": "control_response", "response": response})

    async def request(self, body: dict[str, Any], *, wait_seconds: float) -> dict[str, Any]:
        """Send a control request to the caller and wait at most ``wait_seconds`` for its answer: the response
        (``subtype`` ``success`` or ``error``); an error response when none came."""
        if self._closed:
            return {"subtype": "error", "error": "standard input closed"}
        self._count += 1
        request_id = f"reasonix_{self._count}"
        event, answer = trio.Event(), list[dict[str, Any]]()
        self._pending[request_id] = (event, answer)
        self.write({"type": "control_request", "request_id": request_id, "request": body})
        with trio.move_on_after(wait_seconds):
            await event.wait()
        self._pending.pop(request_id, None)
        return answer[0] if answer else {"subtype": "error", "error": f"no answer within {wait_seconds:g} seconds"}

    async def mcp_message(self, server: str, message: dict[str, Any]) -> dict[str, Any]:
        """A JSON-RPC message to the caller's own MCP server ``server`` (an ``mcp_message`` request); its answer.
        Raises :class:`~orchestrator.mcp.caller.CallerServerError` when the caller answered with an error."""
        from orchestrator.mcp.caller import CallerServerError

        body = {"subtype": "mcp_message", "server_name": server, "message": message}
        response = await self.request(body, wait_seconds=MCP_WAIT_SECONDS)  # the call's own deadline is shorter
        answer = response.get("response")
        found = answer.get("mcp_response") if isinstance(answer, dict) else None
        if response.get("subtype") != "success" or not isinstance(found, dict):
            raise CallerServerError(f"the caller's MCP server {server} failed: {response.get('error', 'no answer')}")
        return found


HOOK_WAIT_SECONDS = 60.0
"""How long a hook callback's answer may take when its matcher names no ``timeout`` (Claude Code's default)."""


def registered_hooks(
    hooks: Any, names: dict[str, str], aliases: dict[str, tuple[str, ...]]
) -> tuple[list[CallerHook], list[str]]:
    """The hook callbacks an ``initialize`` request registers, ``{"PreToolUse": [{"matcher", "hookCallbackIds",
    "timeout", "onFailure"}], ...}`` (``names``: Claude Code's event names and ours): one :class:`CallerHook` each, in
    order; and the events named that Reasonix never reaches (their callbacks are never called)."""
    found: list[CallerHook] = []
    never: list[str] = []
    if not isinstance(hooks, dict):
        return found, never
    for claude_event, matchers in hooks.items():
        event = names.get(str(claude_event))
        if event is None:
            never.append(str(claude_event))
            continue
        for matcher in matchers if isinstance(matchers, list) else []:
            if not isinstance(matcher, dict):
                continue
            timeout = matcher.get("timeout")
            seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else HOOK_WAIT_SECONDS
            pattern = matcher.get("matcher")
            for key in matcher.get("hookCallbackIds") or []:
                found.append(
                    CallerHook(
                        event=event,
                        matcher=pattern if isinstance(pattern, str) else None,
                        key=str(key),
                        timeout_s=seconds,
                        block_on_failure=matcher.get("onFailure") not in (None, "continue"),
                        aliases=aliases,
                        claude_event=str(claude_event),
                    )
                )
    return found, never


@dataclass
class HookCallbacks:
    """The caller's hooks are asked over the control protocol: a ``hook_callback`` request with the hook's JSON (the
    same Claude Code keys a configured hook reads on stdin), answered with Claude Code's hook output, read the way a
    configured hook's JSON is (:func:`orchestrator.hooks.answer.from_json`). An error answer, or none within the
    matcher's ``timeout``, is reported and the run goes on, unless the matcher said ``onFailure: "block"``: then what
    the hook was asked about is blocked."""

    channel: ControlChannel

    async def ask(self, hook: CallerHook, payload: dict[str, Any]) -> HookAnswer:
        body: dict[str, Any] = {"subtype": "hook_callback", "callback_id": hook.key, "input": payload}
        if payload.get("tool_use_id"):
            body["tool_use_id"] = payload["tool_use_id"]
        response = await self.channel.request(body, wait_seconds=hook.timeout_s)
        answer = response.get("response")
        if response.get("subtype") == "success":
            return from_json(answer if isinstance(answer, dict) else {})
        failed = f"the caller's {payload.get('hook_event_name', hook.event)} hook {hook.key} failed: "
        failed += str(response.get("error") or "no answer")
        if hook.block_on_failure:
            return HookAnswer(decision="block", reason=failed, notices=(f"{failed}; blocked (onFailure: block)",))
        return HookAnswer(notices=(f"{failed}; going on",))


_CALL: contextvars.ContextVar[tuple[str, dict[str, Any]]] = contextvars.ContextVar("reasonix_headless_call")
"""The call a gate is deciding on (tool name, arguments), for :class:`PermissionPrompt`, which the permission gate
asks with a :class:`~sessions.permissions.Question` only."""


@dataclass
class CallNoted:
    """A gate in front of ``inner`` that notes the call it checks (:data:`_CALL`), so the prompt can send its
    input and ``tool_use_id``."""

    inner: Any

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        _CALL.set((tool.name, args.model_dump(mode="json")))
        if self.inner is None:
            return None
        refusal: str | None = await self.inner.check(tool, args, ctx)
        return refusal

    def __getattr__(self, name: str) -> Any:  # ``after`` (post-tool hooks), ``deny_refusal``, ``mode`` …
        return getattr(self.inner, name)


@dataclass
class PermissionPrompt:
    """The asker of the permission gate under ``--permission-prompt-tool stdio``: a call the rules would ask about
    is put to the caller as a ``can_use_tool`` control request (the SDK's ``canUseTool`` callback answers). A deny
    (or an error answer, or none) refuses the call with the caller's message: the model reads it as the call's
    result, and the turn's ``result`` lists it under ``permission_denials``."""

    channel: ControlChannel
    denials: list[dict[str, Any]] = field(default_factory=list)
    """The refusals since the last ``result``."""
    _calls: list[ToolUseBlock] = field(default_factory=list)
    _asked: set[str] = field(default_factory=set)

    def observe(self, event: StreamJsonEvent) -> None:
        """Every line written: the tool calls of each reply are remembered until their result."""
        if isinstance(event, AssistantLine):
            self._calls += [b for b in event.message.content if isinstance(b, ToolUseBlock)]
        elif isinstance(event, UserLine):
            done = {block.tool_use_id for block in event.message.content}
            self._calls = [call for call in self._calls if call.id not in done]

    def _block(self, name: str, args: dict[str, Any]) -> ToolUseBlock | None:
        """The reply's call this is: the first of that tool not asked about yet whose input agrees with the
        arguments (validation may have added defaults), else the first of that tool not asked about yet."""
        waiting = [call for call in self._calls if call.name == name and call.id not in self._asked]
        agrees = [call for call in waiting if all(args.get(k) == v for k, v in call.input.items())]
        if not (agrees or waiting):
            return None
        found = (agrees or waiting)[0]
        self._asked.add(found.id)
        return found

    async def ask(self, question: Question) -> Answer:
        name, args = _CALL.get((question.tool, {}))
        block = self._block(name, args)
        tool_use_id = block.id if block is not None else ""
        tool_input = block.input if block is not None else args
        body: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": name,
            "input": tool_input,
            "tool_use_id": tool_use_id,
            "permission_suggestions": [],
            "decision_reason": f"{question.subject} ({question.sandbox}); a rule {question.rule} would allow it",
            "title": f"{name}: {question.subject}"[:200],
        }
        response = await self.channel.request(body, wait_seconds=PERMISSION_WAIT_SECONDS)
        answer = response.get("response") if response.get("subtype") == "success" else None
        if isinstance(answer, dict) and answer.get("behavior") == "allow":
            return Answer(allow=True)
        if isinstance(answer, dict):
            note = str(answer.get("message") or "")
        else:
            note = f"the permission prompt failed: {response.get('error', 'no answer')}"
        self.denials.append({"tool_name": name, "tool_use_id": tool_use_id, "tool_input": tool_input})
        return Answer(allow=False, note=note)

    def take_denials(self) -> list[dict[str, Any]]:
        denials, self.denials = self.denials, []
        return denials


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)
