"""The agent's tools through the editor, when the client offers them: ``read_file`` through ``fs/read_text_file`` (so
the model reads the editor's open buffer, unsaved changes included) and ``bash`` through ``terminal/create`` (so the
command runs in a terminal the editor shows). Each wraps the session's own tool and keeps its schema byte for byte
(:meth:`~sessions.tools.ToolRegistry.replace` checks), so the prefix, and the cache, do not depend on the client.

* A read asks the client for the whole text of the file (inside the workspace only: a path that leaves it, through
  ``..`` or a link, is the own tool's to refuse) and renders it with the own tool, numbered and windowed the same way;
  when the client cannot read it, the own tool reads the disk.
* An edit first writes the editor's text of the file to the file, when it differs (unsaved changes: the model read
  them and its ``old`` text matches them), then the own tool edits it.
* A command is first allowed by the rules and the permission gate (dispatch asks them before any tool runs), then
  wrapped by the session's sandbox exactly as the own ``bash`` would run it, and that command line is what the editor's
  terminal runs. Its output is bounded by ``outputByteLimit``; at the timeout the terminal is killed; the terminal is
  always released, on cancellation too, and then what is left of the launch is killed by its marker (the editor's
  kill reaches only the process it started, :func:`~sessions.sandbox.reaper.kill_launch`). A call the wrapper does
  not know how to run (arguments beyond ``command`` and ``timeout_s``) runs in the own tool.
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
from sessions.sandbox import Launch, kill_launch, release
from sessions.tools import Tool, ToolContext, ToolError, ToolResult
from sessions.tools.gateway import GatewayRoot

RELEASE_TIMEOUT_S = 10.0
SYNC_MAX_BYTES = 32 * 1024 * 1024
CREATE_TIMEOUT_S = 30.0


@dataclass
class EditorLink:
    """What the wrapped tools need of the ACP session: the connection, the session id, and where to show a
    terminal (``show_terminal(tool, terminal_id)`` adds it to the open call of that tool)."""

    rpc: Connection
    session_id: Callable[[], str]
    show_terminal: Callable[[str, str], None]


def _inside(root: Path, raw: str) -> Path | None:
    """Where ``raw`` leads inside the workspace, through the gateway (None: outside, refused, or the root itself)."""
    try:
        located = GatewayRoot(root).locate(raw)
    except ToolError:
        return None
    return None if located.real == "." else root.resolve() / located.real


def _scratch_copy(content: str, rel: Path) -> tempfile.TemporaryDirectory[str]:
    """A directory holding ``content`` at ``rel``: the own tool renders the buffer as it renders a file."""
    scratch = tempfile.TemporaryDirectory(prefix="reasonix-acp-read-")
    copy = Path(scratch.name) / rel
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(content, encoding="utf-8", newline="")
    return scratch


class _EditorTool(Tool[Any]):
    """A built-in tool the editor serves: the wrapped tool's name, arguments and schema, byte for byte (the prefix does
    not depend on the client), and its own ``run`` as the fallback."""

    description = "(the wrapped tool's)"

    def __init__(self, inner: Tool[Any], link: EditorLink) -> None:
        self.inner = inner
        self.link = link
        self.args_model = inner.args_model

    def schema(self) -> Any:
        return self.inner.schema()

    def writes(self, args: Any, ctx: ToolContext) -> tuple[str, ...] | None:
        return self.inner.writes(args, ctx)  # the editor writes where the own tool would


class EditorReadFile(_EditorTool):
    """``read_file`` on the editor's buffers."""

    name = "read_file"
    read_only = True
    parallel_safe = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        raw = str(getattr(args, "path", ""))
        path = _inside(ctx.root, raw)
        if path is None:
            return await self.inner.run(args, ctx)
        content = await _buffer(self.link, path)
        if content is None:
            return await self.inner.run(args, ctx)  # the editor cannot give it: the own tool reads the disk
        scratch = await trio.to_thread.run_sync(_scratch_copy, content, path.relative_to(ctx.root.resolve()))
        try:
            return await self.inner.run(args, dataclasses.replace(ctx, root=Path(scratch.name)))
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(scratch.cleanup)


async def _buffer(link: EditorLink, path: Path) -> str | None:
    """The client's text of ``path`` (its open buffer, or the file), or None when it cannot give it."""
    try:
        answer = await link.rpc.request("fs/read_text_file", {"sessionId": link.session_id(), "path": str(path)})
    except RpcError:
        return None
    content = answer.get("content") if isinstance(answer, dict) else None
    return content if isinstance(content, str) else None


def _sync(root: Path, rel: str, text: str) -> None:
    """Write the editor's ``text`` of ``rel`` to the file when it differs, through the gateway."""
    gateway = GatewayRoot(root)
    try:
        found = gateway.read(rel, limit=SYNC_MAX_BYTES + 1)
        if found.truncated or found.data.decode("utf-8") == text:
            return
        gateway.write(rel, text.encode("utf-8"))
    except (ToolError, UnicodeDecodeError):
        return  # not a text file we could edit anyway: the own tool says what is wrong


class EditorEditFile(_EditorTool):
    """``edit_file`` on what the model read: the editor's buffer is first written to the file (its unsaved changes
    are the text the model saw and matches against), then the own tool edits the file, and the new text goes back
    to the editor through ``fs/write_text_file`` as every edit's does."""

    name = "edit_file"
    read_only = False
    parallel_safe = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        raw = str(getattr(args, "path", ""))
        path = _inside(ctx.root, raw)
        text = await _buffer(self.link, path) if path is not None and path.is_file() else None
        if path is not None and text is not None:
            await trio.to_thread.run_sync(_sync, ctx.root, raw, text)
        return await self.inner.run(args, ctx)


def _status(exit_code: int | None, signal: str | None, timed_out: bool, timeout: float) -> str:
    if timed_out:
        return f"[timed out after {timeout:g}s; the editor's terminal was killed]"
    if exit_code is None:
        return f"[killed by signal {signal or 'unknown'}]"
    return f"[exit code {exit_code}]"


def _exit_code(output: dict[str, Any]) -> int | None:
    status = output.get("exitStatus") or {}
    code = status.get("exitCode") if isinstance(status, dict) else None
    return code if isinstance(code, int) else None


async def _end(launch: Launch) -> None:
    """After the editor's terminal is released (or never was made): kill what is left of the launch, whatever the
    editor's kill reached. The editor kills the process it started; a kill that lands while bubblewrap starts, before
    its child armed ``--die-with-parent`` (a cancel right after ``terminal/create``), leaves that child and then the
    command running with no parent, as does an editor that never kills on release."""
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(kill_launch, launch.marker)
    release(launch.bounds)


class EditorBash(_EditorTool):
    """``bash`` in a terminal of the editor, under the session's sandbox."""

    name = "bash"
    read_only = False
    parallel_safe = False
    sandboxed = True

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
        output, timed_out = await self._in_terminal(launch, ctx, timeout)
        if launch.stopped_on_a_gone_mount(_exit_code(output), str(output.get("output", ""))):
            # bubblewrap stopped before the command ran (a path it masks went away): built again, started once more
            launch = ctx.sandbox.wrap(argv, workspace=ctx.root, cwd=ctx.root, env=ctx.env)
            output, timed_out = await self._in_terminal(launch, ctx, timeout)
        text = str(output.get("output", ""))
        if output.get("truncated"):
            text = "[… the start of the output was cut]\n" + text
        status = output.get("exitStatus") or {}
        code, signal = status.get("exitCode"), status.get("signal")
        line = _status(code, signal, timed_out, timeout)
        body = text + ("" if not text or text.endswith("\n") else "\n") + line
        return ToolResult(
            content=body,
            is_error=timed_out or code != 0,
            data={"exit_code": code, "timed_out": timed_out, "output_bytes": len(text.encode())},
        )

    async def _in_terminal(self, launch: Launch, ctx: ToolContext, kill_after_s: float) -> tuple[dict[str, Any], bool]:
        """``launch`` run in a new terminal of the editor, killed after ``kill_after_s``: its ``terminal/output``
        answer, and whether it was killed so."""
        sid = self.link.session_id()
        rpc = self.link.rpc
        try:
            with trio.CancelScope(shield=True):  # a cancel now must not lose the id of a terminal the editor made
                terminal_id = await self._create(rpc, sid, launch, ctx)
        except RpcError as exc:
            await _end(launch)
            raise ToolError(f"the editor could not run the command in a terminal: {exc.message}") from None
        except BaseException:
            await _end(launch)
            raise
        terminal = {"sessionId": sid, "terminalId": terminal_id}
        try:
            self.link.show_terminal(self.name, terminal["terminalId"])
            with trio.move_on_after(kill_after_s) as deadline:
                await rpc.request("terminal/wait_for_exit", terminal)
            if deadline.cancelled_caught:
                await rpc.request("terminal/kill", terminal)
            output = await rpc.request("terminal/output", terminal)
        except RpcError as exc:
            raise ToolError(f"the editor's terminal failed: {exc.message}") from None
        finally:
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(RELEASE_TIMEOUT_S),
                contextlib.suppress(RpcError),  # the editor forgot it already: nothing of ours is left
            ):
                await rpc.request("terminal/release", terminal)
            await _end(launch)
        return (output if isinstance(output, dict) else {}), deadline.cancelled_caught

    async def _create(self, rpc: Connection, sid: str, launch: Launch, ctx: ToolContext) -> str:
        limits = ctx.limits
        with trio.move_on_after(CREATE_TIMEOUT_S):
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
            if isinstance(created, dict) and isinstance(created.get("terminalId"), str):
                return str(created["terminalId"])
            raise ToolError(f"the editor answered terminal/create without a terminalId ({created!r}); run it again")
        raise ToolError(f"the editor did not create a terminal within {CREATE_TIMEOUT_S:g}s; the command did not run")
