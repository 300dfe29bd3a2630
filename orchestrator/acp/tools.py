"""The agent's tools through the editor, when the client offers them: ``read_file`` through ``fs/read_text_file`` (so
the model reads the editor's open buffer, unsaved changes included) and ``bash`` through ``terminal/create`` (so the
command runs in a terminal the editor shows). Each wraps the session's own tool and keeps its schema byte for byte
(:meth:`~sessions.tools.ToolRegistry.replace` checks), so the prefix, and the cache, do not depend on the client.

* A read asks the client for the whole text of the file (inside the workspace only: a path that leaves it, through
  ``..`` or a link, is the own tool's to refuse) and renders it with the own tool, numbered and windowed the same way;
  when the client cannot read it, the own tool reads the disk.
* A command is first allowed by the rules and the permission gate (dispatch asks them before any tool runs), then
  wrapped by the session's sandbox exactly as the own ``bash`` would run it, and that command line is what the editor's
  terminal runs. Its output is bounded by ``outputByteLimit``; at the timeout the terminal is killed; the terminal is
  always released, on cancellation too. A call the wrapper does not know how to run (arguments beyond ``command`` and
  ``timeout_s``) runs in the own tool.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
from pydantic import BaseModel

from orchestrator.acp.rpc import Connection, RpcError
from sessions.sandbox import release
from sessions.tools import Tool, ToolContext, ToolResult

RELEASE_TIMEOUT_S = 10.0


@dataclass
class EditorLink:
    """What the wrapped tools need of the ACP session: the connection, the session id, and where to show a
    terminal (``show_terminal(tool, terminal_id)`` adds it to the open call of that tool)."""

    rpc: Connection
    session_id: Callable[[], str]
    show_terminal: Callable[[str, str], None]


def _inside(root: Path, raw: str) -> Path | None:
    try:
        path = (root / raw).resolve()
        base = root.resolve()
    except (OSError, RuntimeError):
        return None
    return path if path.is_relative_to(base) and path != base else None


def _scratch_copy(content: str, rel: Path) -> tempfile.TemporaryDirectory[str]:
    """A directory holding ``content`` at ``rel``: the own tool renders the buffer as it renders a file."""
    scratch = tempfile.TemporaryDirectory(prefix="reasonix-acp-read-")
    copy = Path(scratch.name) / rel
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(content, encoding="utf-8", newline="")
    return scratch


class EditorReadFile(Tool[Any]):
    """``read_file`` on the editor's buffers."""

    name = "read_file"
    description = "(the wrapped tool's)"
    read_only = True
    parallel_safe = True

    def __init__(self, inner: Tool[Any], link: EditorLink) -> None:
        self.inner = inner
        self.link = link
        self.args_model = inner.args_model

    def schema(self) -> Any:
        return self.inner.schema()

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        raw = str(getattr(args, "path", ""))
        path = _inside(ctx.root, raw)
        if path is None:
            return await self.inner.run(args, ctx)
        try:
            answer = await self.link.rpc.request(
                "fs/read_text_file", {"sessionId": self.link.session_id(), "path": str(path)}
            )
        except RpcError:
            return await self.inner.run(args, ctx)  # not open in the editor, or it cannot read it: the disk
        content = answer.get("content") if isinstance(answer, dict) else None
        if not isinstance(content, str):
            return await self.inner.run(args, ctx)
        scratch = await trio.to_thread.run_sync(_scratch_copy, content, path.relative_to(ctx.root.resolve()))
        try:
            return await self.inner.run(args, dataclasses.replace(ctx, root=Path(scratch.name)))
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(scratch.cleanup)


def _status(exit_code: int | None, signal: str | None, timed_out: bool, timeout: float) -> str:
    if timed_out:
        return f"[timed out after {timeout:g}s; the editor's terminal was killed]"
    if exit_code is None:
        return f"[killed by signal {signal or 'unknown'}]"
    return f"[exit code {exit_code}]"


class EditorBash(Tool[Any]):
    """``bash`` in a terminal of the editor, under the session's sandbox."""

    name = "bash"
    description = "(the wrapped tool's)"
    read_only = False
    parallel_safe = False
    sandboxed = True

    def __init__(self, inner: Tool[Any], link: EditorLink) -> None:
        self.inner = inner
        self.link = link
        self.args_model = inner.args_model

    def schema(self) -> Any:
        return self.inner.schema()

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        given = args.model_dump()
        extra = {k for k, v in given.items() if v not in (None, False) and k not in ("command", "timeout_s")}
        bash = shutil.which("bash")
        if extra or bash is None:
            return await self.inner.run(args, ctx)
        limits = ctx.limits
        timeout = min(float(given.get("timeout_s") or limits.bash_timeout_s), limits.bash_max_timeout_s)
        argv = [bash, "-c", str(given["command"])]
        launch = ctx.sandbox.wrap(argv, workspace=ctx.root, cwd=ctx.root, env=ctx.env)
        sid = self.link.session_id()
        rpc = self.link.rpc
        try:
            created = await rpc.request(
                "terminal/create",
                {
                    "sessionId": sid,
                    "command": launch.argv[0],
                    "args": list(launch.argv[1:]),
                    "env": [{"name": k, "value": v} for k, v in sorted(launch.env.items())],
                    "cwd": str(ctx.root),
                    "outputByteLimit": limits.bash_head_bytes + limits.bash_tail_bytes,
                },
            )
        except BaseException:
            release(launch.bounds)
            raise
        terminal = {"sessionId": sid, "terminalId": str(created["terminalId"])}
        try:
            self.link.show_terminal(self.name, terminal["terminalId"])
            with trio.move_on_after(timeout) as deadline:
                await rpc.request("terminal/wait_for_exit", terminal)
            if deadline.cancelled_caught:
                await rpc.request("terminal/kill", terminal)
            output = await rpc.request("terminal/output", terminal)
        finally:
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(RELEASE_TIMEOUT_S),
                contextlib.suppress(RpcError),  # the editor forgot it already: nothing of ours is left
            ):
                await rpc.request("terminal/release", terminal)
            release(launch.bounds)
        text = str(output.get("output", ""))
        if output.get("truncated"):
            text = "[… the start of the output was cut]\n" + text
        status = output.get("exitStatus") or {}
        code, signal = status.get("exitCode"), status.get("signal")
        timed_out = deadline.cancelled_caught
        line = _status(code, signal, timed_out, timeout)
        body = text + ("" if not text or text.endswith("\n") else "\n") + line
        return ToolResult(
            content=body,
            is_error=timed_out or code != 0,
            data={"exit_code": code, "timed_out": timed_out, "output_bytes": len(text.encode())},
        )
