"""Run a turn's tool calls: validate, refuse what the mode forbids, batch the parallel-safe ones, keep call order.

* An unknown tool, arguments that fail the tool's model, and a non-read-only tool in read-only mode each give an error
  result; the other calls still run and the turn goes on. Schemas never change with the mode (DESIGN §3.4).
* In read-only mode a sandboxed tool (``bash``) may still run when the sandbox confines it: it runs in the sandbox's
  ``read-only`` mode, the workspace mounted read-only. Without a sandbox it is refused as before.
* The context's permission gate (rules, approval mode) is consulted before each call; a refusal is an error result
  like any other, appended to the conversation. A gate with an ``after`` method also sees each result and may add
  to it (post-tool hooks).
* Any exception a tool raises becomes an error result (:func:`run_one`); only cancellation and other
  BaseExceptions end the turn.
* Consecutive calls to parallel-safe tools run concurrently in one nursery; any other call is a barrier that waits for
  the batch before it and runs alone. Results come back in call order whatever order they finish in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import trio
from pydantic import BaseModel, ValidationError

from sessions.tools.base import Tool, ToolContext, ToolResult
from sessions.tools.errors import ToolError
from sessions.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A tool call ready to run: arguments already parsed (and repaired) from the model's raw string."""

    id: str
    name: str
    args: dict[str, Any]


CALL_ID: ContextVar[str] = ContextVar("sessions_tool_call_id", default="")
"""The id of the call the gate is deciding on or the tool is running (the model's ``tool_call_id``), for a gate that
reports it (a hook's ``tool_use_id``); set by :func:`dispatch` in the task that runs the call."""


def current_call_id() -> str:
    """The id of the call being gated or run in this task ("" outside :func:`dispatch`)."""
    return CALL_ID.get()


OnStart = Callable[[PreparedCall], None]
OnFinish = Callable[[PreparedCall, ToolResult], None]


@dataclass(frozen=True, slots=True)
class _Runnable:
    tool: Tool[Any]
    args: BaseModel
    ctx: ToolContext | None = None
    """A narrower context for this call (the read-only sandbox)."""


def refusal(tool_name: str) -> str:
    return (
        f"refused: {tool_name} can change the workspace and this session is read-only (plan mode); "
        "use the read-only tools, and describe the change in your plan instead"
    )


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """A compact, deterministic rendering (no pydantic URLs or versions) of why the arguments were rejected."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {tool_name}: " + "; ".join(problems) + ". Fix the arguments and call again."


def _read_only_context(tool: Tool[Any], ctx: ToolContext) -> ToolContext | None:
    """The context a mutating tool may run in within a read-only session, or None when it must be refused."""
    sandbox = ctx.sandbox
    if tool.sandboxed and sandbox.confines and sandbox.policy.mode != "full-access":
        return replace(ctx, sandbox=sandbox.with_mode("read-only"))
    return None


def _prepare(
    registry: ToolRegistry, call: PreparedCall, *, read_only: bool, ctx: ToolContext | None = None
) -> _Runnable | ToolResult:
    tool = registry.get(call.name)
    if tool is None:
        valid = ", ".join(registry.names())
        return ToolResult.error(f"unknown tool {call.name!r}; the valid tools are: {valid}")
    narrowed = None
    if read_only and not tool.read_only:
        narrowed = _read_only_context(tool, ctx) if ctx is not None else None
        if narrowed is None:
            return ToolResult.error(refusal(tool.name), data={"refused": "read_only"})
    try:
        args = tool.args_model.model_validate(call.args)
    except ValidationError as exc:
        return ToolResult.error(format_validation_error(tool.name, exc))
    return _Runnable(tool, args, narrowed)


async def _gated(item: _Runnable, ctx: ToolContext) -> ToolResult:
    ctx = item.ctx or ctx
    if ctx.gate is not None:
        refused = await ctx.gate.check(item.tool, item.args, ctx)
        if refused is not None:
            return ToolResult.error(refused, data={"refused": "permission"})
    result = await run_one(item.tool, item.args, ctx)
    after = getattr(ctx.gate, "after", None)  # a gate may also see the result (post-tool hooks) and add to it
    return result if after is None else await after(item.tool, item.args, result, ctx)


async def run_one(tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> ToolResult:
    """Run a validated call; a :class:`ToolError`, an OS error or any other exception (a tool's bug) becomes an error
    result the model reads, never the end of the session. Cancellation (and any BaseException that is not an
    Exception: KeyboardInterrupt, a group holding a Cancelled) propagates."""
    try:
        return await tool.run(args, ctx)
    except Exception as caught:  # noqa: BLE001 — a tool's bug must never end the session; Cancelled is no Exception
        exc = sole(caught)
        if isinstance(exc, ToolError):
            failure = {"failure": type(exc).__name__} if exc.counts_as_failure else None
            return ToolResult.error(exc.message, data=failure)
        if isinstance(exc, OSError):
            # str(exc) would carry the absolute file name; the reason alone is stable.
            return ToolResult.error(f"{tool.name} failed: {exc.strerror or type(exc).__name__}")
        return ToolResult.error(unexpected(tool.name, exc), data={"failure": type(exc).__name__})


def sole(exc: Exception) -> Exception:
    """The one exception a nursery wrapped (a tool's own ToolError raised inside its nursery), else ``exc``."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def unexpected(tool_name: str, exc: Exception) -> str:
    """What the model reads when a tool failed in a way it does not report itself (a bug, or input no check
    foresaw): the kind of error, a bounded line of it, and what to do next."""
    detail = " ".join(str(exc).split())[:200]
    said = f": {detail}" if detail else ""
    return (
        f"{tool_name} failed unexpectedly ({type(exc).__name__}{said}); the session goes on. "
        "Try different arguments or another tool"
    )


async def dispatch(
    registry: ToolRegistry,
    calls: Sequence[PreparedCall],
    ctx: ToolContext,
    *,
    read_only: bool,
    on_start: OnStart | None = None,
    on_finish: OnFinish | None = None,
) -> list[ToolResult]:
    """Run ``calls`` and return one result per call, in call order."""
    results: list[ToolResult | None] = [None] * len(calls)
    prepared = [_prepare(registry, call, read_only=read_only, ctx=ctx) for call in calls]

    def started(index: int) -> None:
        if on_start is not None:
            on_start(calls[index])

    async def execute(index: int) -> None:
        call, item = calls[index], prepared[index]
        token = CALL_ID.set(call.id)
        try:
            result = item if isinstance(item, ToolResult) else await _gated(item, ctx)
        finally:
            CALL_ID.reset(token)
        results[index] = result
        if on_finish is not None:
            on_finish(call, result)

    batch: list[int] = []

    async def flush() -> None:
        # on_start fires in call order before the batch starts: trio may schedule the tasks in any order.
        for index in batch:
            started(index)
        if len(batch) == 1:
            await execute(batch[0])
        elif batch:
            async with trio.open_nursery() as nursery:
                for index in batch:
                    nursery.start_soon(execute, index)
        batch.clear()

    for index, item in enumerate(prepared):
        if isinstance(item, ToolResult) or item.tool.parallel_safe:
            batch.append(index)
            continue
        await flush()
        started(index)
        await execute(index)
    await flush()
    return [result for result in results if result is not None]
