"""An editor's side of ACP on the official SDK (``agent-client-protocol``): the one file of the repository that uses
asyncio, because the SDK's transport is asyncio only. The product never imports it; the tests run this file as a
separate process (``python tests/support/acp_sdk_client.py SCENARIO.json``) under trio and read what it prints.

The scenario (JSON) names the agent's command line, the capabilities this client offers, how it answers permission
requests, the buffers it holds open, and the steps to take (``initialize``, ``new_session``, ``load_session``,
``set_mode``, ``prompt``). The client spawns the agent with the SDK's ``spawn_agent_process``, takes the steps in
order and prints one JSON transcript on standard output: everything the agent sent, in the order received
(``session/update`` bodies as the SDK parsed them, permission requests, ``fs/*`` and ``terminal/*`` requests), each
step's result or error, and anything the SDK logged as an error (a message it could not parse).

Permission answers (``permissions``, by tool-call kind): an option id (``allow_once``, ``allow_always``,
``reject_once``), or ``cancel``: the client sends ``session/cancel`` and answers ``cancelled``, as an editor does when
the user presses stop while asked. With ``fs`` offered, ``read_text_file`` answers from ``buffers`` (path → text, the
editor's unsaved buffers) or the disk, and ``write_text_file`` stores into the buffer. With ``terminal`` offered, a
terminal is a real subprocess of this client; ``cancel_after: "terminal/create"`` sends ``session/cancel`` as soon
as a terminal was created. ``slow_sandbox_start: true`` plays a loaded machine on which the editor's kill lands
while bubblewrap starts: the first child the terminal's process forks (bubblewrap's, before its mounts, where it
has not armed ``--die-with-parent`` yet) is stopped until the terminal is killed, then let go on.
``remove_before_first_terminal: PATH`` plays another program removing its socket (or the socket's folder) while a
command starts: after the agent built the launch (listing the host's sockets), before the first terminal's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import acp
from acp import schema

Transcript = list[dict[str, Any]]


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _dump(model: Any) -> Any:
    if isinstance(model, schema.BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(model, list):
        return [_dump(item) for item in model]
    return model


class _Terminal:
    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        self.limit = limit
        self.output = b""
        self.reader = asyncio.ensure_future(self._read())
        self.held: list[int] = []

    def hold_first_child(self) -> None:
        """Stop the first process the terminal's process forks, as soon as it exists (a busy wait of a few
        milliseconds: bubblewrap forks at once)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.returncode is None:
            with contextlib.suppress(OSError):
                found = children.read_text().split()
                if found:
                    os.kill(int(found[0]), signal.SIGSTOP)
                    self.held.append(int(found[0]))
                    return

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        for pid in self.held:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self.held.clear()

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.output += chunk

    def status(self) -> schema.TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        return schema.TerminalExitStatus(exit_code=code if code >= 0 else None, signal=None if code >= 0 else "KILL")


class ScriptedClient:
    """The ``acp.Client`` of the scenario: answers the agent's requests and keeps the transcript."""

    def __init__(self, scenario: dict[str, Any], transcript: Transcript) -> None:
        self.scenario = scenario
        self.log = transcript
        self.buffers: dict[str, str] = dict(scenario.get("buffers", {}))
        self.permissions: dict[str, str] = scenario.get("permissions", {})
        self.terminals: dict[str, _Terminal] = {}
        self.later: list[asyncio.Future[None]] = []
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.log.append({"kind": "update", "sessionId": session_id, "update": _dump(update)})

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        call = _dump(tool_call)
        self.log.append({"kind": "permission", "sessionId": session_id, "toolCall": call, "options": _dump(options)})
        answer = self.permissions.get(str(call.get("kind")), self.permissions.get("*", "allow_once"))
        if answer == "cancel":
            await self.conn.cancel(session_id=session_id)
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> schema.ReadTextFileResponse:
        self.log.append({"kind": "fs/read_text_file", "path": path, "line": line, "limit": limit})
        text = self.buffers[path] if path in self.buffers else Path(path).read_text(encoding="utf-8")  # noqa: ASYNC240
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start : None if limit is None else start + limit])
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        self.log.append({"kind": "fs/write_text_file", "sessionId": session_id, "path": path, "content": content})
        self.buffers[path] = content
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> schema.CreateTerminalResponse:
        variables = {v.name: v.value for v in env or []}
        doomed = self.scenario.get("remove_before_first_terminal")
        if doomed and not self.terminals and not any(e["kind"] == "terminal/create" for e in self.log):
            _remove(doomed)
        self.log.append(
            {
                "kind": "terminal/create",
                "command": command,
                "args": args,
                "cwd": cwd,
                "env": sorted(variables),
                "outputByteLimit": output_byte_limit,
            }
        )
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=variables or None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = _Terminal(process, output_byte_limit)
        if self.scenario.get("slow_sandbox_start"):
            self.terminals[terminal_id].hold_first_child()
        if self.scenario.get("cancel_after") == "terminal/create":  # the user presses stop while it runs
            self.later.append(asyncio.ensure_future(self.conn.cancel(session_id=session_id)))
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.TerminalOutputResponse:
        self.log.append({"kind": "terminal/output", "terminalId": terminal_id})
        term = self.terminals[terminal_id]
        if term.process.returncode is not None:
            await term.reader
        data, truncated = term.output, False
        if term.limit is not None and len(data) > term.limit:
            data, truncated = data[-term.limit :], True
        text = data.decode("utf-8", errors="replace")
        return schema.TerminalOutputResponse(output=text, truncated=truncated, exit_status=term.status())

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        self.log.append({"kind": "terminal/wait_for_exit", "terminalId": terminal_id})
        term = self.terminals[terminal_id]
        await term.process.wait()
        await term.reader
        status = term.status()
        assert status is not None
        return schema.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.KillTerminalResponse:
        self.log.append({"kind": "terminal/kill", "terminalId": terminal_id})
        self.terminals[terminal_id].kill()
        return schema.KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.ReleaseTerminalResponse:
        self.log.append({"kind": "terminal/release", "terminalId": terminal_id})
        term = self.terminals.pop(terminal_id)
        term.kill()
        await term.process.wait()
        return schema.ReleaseTerminalResponse()


class _Errors(logging.Handler):
    """What the SDK logs at ERROR (a notification it could not validate, a handler that raised)."""

    def __init__(self, transcript: Transcript) -> None:
        super().__init__(logging.ERROR)
        self.transcript = transcript

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]!r}"
        self.transcript.append({"kind": "sdk_error", "message": text})


async def _step(conn: Any, step: dict[str, Any], state: dict[str, Any], scenario: dict[str, Any]) -> Any:
    op = step["op"]
    sid = step.get("sessionId", state.get("sessionId"))
    if op == "initialize":
        offered = scenario.get("capabilities", {})
        caps = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(
                read_text_file=bool(offered.get("readTextFile")), write_text_file=bool(offered.get("writeTextFile"))
            ),
            terminal=bool(offered.get("terminal")),
        )
        return await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=caps,
            client_info=schema.Implementation(name="acp-sdk-test-client", version="1"),
        )
    if op == "new_session":
        result = await conn.new_session(cwd=step["cwd"], mcp_servers=[])
        state["sessionId"] = result.session_id
        return result
    if op == "load_session":
        return await conn.load_session(cwd=step["cwd"], session_id=sid, mcp_servers=[])
    if op == "set_mode":
        return await conn.set_session_mode(session_id=sid, mode_id=step["mode"])
    if op == "prompt":
        return await conn.prompt(session_id=sid, prompt=[acp.text_block(step["text"])])
    raise ValueError(f"unknown step {op!r}")


async def run(scenario: dict[str, Any]) -> Transcript:
    transcript: Transcript = []
    logging.getLogger().addHandler(_Errors(transcript))
    client = ScriptedClient(scenario, transcript)
    command, *args = scenario["agent"]
    state: dict[str, Any] = {}
    async with acp.spawn_agent_process(
        client,
        command,
        *args,
        env=scenario.get("env"),
        cwd=scenario.get("cwd"),
        transport_kwargs={"stderr": None, "limit": 64 * 1024 * 1024},
    ) as (conn, _process):
        for step in scenario["steps"]:
            try:
                result = await asyncio.wait_for(_step(conn, step, state, scenario), scenario.get("timeout", 120))
            except acp.RequestError as exc:
                transcript.append({"kind": "error", "op": step["op"], "code": exc.code, "message": str(exc)})
                continue
            transcript.append({"kind": "result", "op": step["op"], "result": _dump(result)})
    return transcript


def main() -> None:
    scenario = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    transcript = asyncio.run(run(scenario))
    json.dump(transcript, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
