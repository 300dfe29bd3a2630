"""``reasonix acp``: an Agent Client Protocol agent over standard input and output, for editors (Zed, JetBrains, the
VS Code ACP extensions).

Each ACP session is an ordinary headless conversation (:class:`~orchestrator.headless.conversation.
HeadlessConversation`) on the session's ``cwd``: the executor of ``reasonix run``, the same prefix whatever the client,
so the cache behaves as it does on the command line. Its events stream as ``session/update`` notifications
(:mod:`orchestrator.acp.updates`). Permission questions go to the editor (``session/request_permission``) after the
workspace's rules had their say; the modes ask, auto and plan are ACP session modes (``session/set_mode``), ask and
auto told to the model in a ``<mode>`` tail block as ``reasonix code`` does, while a prompt in plan mode runs the
goal's planner and shows its plan as plan entries (:mod:`orchestrator.acp.planning`). What the client offers changes
where tools act, never their schemas (:mod:`orchestrator.acp.tools`): with ``fs.readTextFile`` reads (and the text an
edit starts from) come from the editor's buffers, with ``terminal`` commands run in the editor's terminals under our
sandbox, and with ``fs.writeTextFile`` the text of every file an edit wrote is handed to it. ``session/load`` reopens
a journaled conversation (its messages are replayed as updates) and ``session/cancel`` cancels the running turn (the
journal is mended and the next prompt goes on from it).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from orchestrator.acp.planning import PlanTurn
from orchestrator.acp.protocol import (
    MODES,
    PERMISSION_OPTIONS,
    PROTOCOL_VERSION,
    STOP_REASONS,
    ClientCapabilities,
    InitializeParams,
    LoadSessionParams,
    NewSessionParams,
    PromptParams,
    SessionParams,
    SetModeParams,
    update,
)
from orchestrator.acp.rpc import INVALID_PARAMS, METHOD_NOT_FOUND, Connection, RpcError
from orchestrator.acp.tools import EditorBash, EditorEditFile, EditorLink, EditorReadFile
from orchestrator.acp.updates import UpdateMaker, replayed
from orchestrator.config.mcp import SERVER_NAME, McpServerConfig
from orchestrator.errors import ReasonixError
from orchestrator.headless.conversation import HeadlessConversation, HeadlessOptions, check_resume
from orchestrator.headless.events import StreamJsonEvent
from orchestrator.launch import ConversationLaunch, open_conversation
from orchestrator.policy.commands import CommandSetup
from orchestrator.policy.workspace_rule import check_workspace
from orchestrator.repl.modes import Mode, apply_mode, mode_block
from sessions.permissions import Answer, Question
from sessions.prompt import TailBlock
from sessions.wire import DeepSeekError

AGENT_ERROR = -32000


@dataclass
class AcpSession:
    workspace: Path
    commands: CommandSetup
    maker: UpdateMaker
    conversation: HeadlessConversation | None = None
    mode: Mode = "ask"
    sent_mode: Mode | None = None
    scope: trio.CancelScope | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class AcpAgent:
    """The methods of the agent; :meth:`handle` is the connection's handler."""

    def __init__(self, *, env: Mapping[str, str], base_url: str | None, nursery: trio.Nursery) -> None:
        self.env = dict(env)
        self.base_url = base_url
        self.nursery = nursery
        """Where each session's conversation is held open (its client, its MCP servers) until the agent ends."""
        self.rpc: Connection | None = None
        self.client_caps = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    async def handle(self, method: str, params: Any) -> Any:
        params = params if isinstance(params, dict) else {}
        if method == "initialize":
            return self.initialize(InitializeParams.model_validate(params))
        if method == "session/new":
            return await self.new_session(NewSessionParams.model_validate(params))
        if method == "session/load":
            return await self.load_session(LoadSessionParams.model_validate(params))
        if method == "session/prompt":
            return await self.prompt(PromptParams.model_validate(params))
        if method == "session/cancel":
            self.cancel(SessionParams.model_validate(params))
            return None
        if method == "session/set_mode":
            return self.set_mode(SetModeParams.model_validate(params))
        if method == "authenticate":
            return {}
        raise RpcError(METHOD_NOT_FOUND, f"reasonix acp does not implement {method}")

    # ------------------------------------------------------------------------------------------------ methods

    def initialize(self, params: InitializeParams) -> dict[str, Any]:
        self.client_caps = params.client_capabilities
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            },
            "authMethods": [],
            "agentInfo": {"name": "reasonix", "title": "Reasonix", "version": _version()},
        }

    async def new_session(self, params: NewSessionParams, resume: str | None = None) -> dict[str, Any]:
        session = await self._open(params.cwd, resume, editor_servers(params.mcp_servers))
        assert session.conversation is not None
        sid = session.conversation.session_id
        self.sessions[sid] = session
        return {"sessionId": sid, "modes": {"currentModeId": session.mode, "availableModes": MODES}}

    async def load_session(self, params: LoadSessionParams) -> dict[str, Any]:
        """The journaled conversation, replayed as the editor saw it live: the user's words (without the blocks
        Reasonix put in front of them), thoughts, answers, and each tool call with its result."""
        result = await self.new_session(params, resume=params.session_id)
        session = self.sessions[result["sessionId"]]
        conversation = session.conversation
        assert conversation is not None and self.rpc is not None
        maker = UpdateMaker(session.workspace)
        for message in conversation.session.log.messages:
            for body in replayed(message, maker):
                self.rpc.notify("session/update", update(params.session_id, body))
        return {"modes": result["modes"]}

    async def prompt(self, params: PromptParams) -> dict[str, Any]:
        session = self._session(params.session_id)
        if session.scope is not None:
            raise RpcError(AGENT_ERROR, "a prompt is already running in this session; cancel it or wait")
        conversation = session.conversation
        assert conversation is not None
        if session.mode == "plan":
            return await self._plan_turn(session, params.text())
        tail = [mode_block(session.mode)] if session.sent_mode != session.mode else []
        tail += session.extra.pop("tail", [])
        with trio.CancelScope() as scope:
            session.scope = scope
            try:
                result = await conversation.send(params.text(), tail=tail)
            finally:
                session.scope = None
        if scope.cancelled_caught:
            assert self.rpc is not None
            for body in session.maker.cancel_open():
                self.rpc.notify("session/update", update(params.session_id, body))
            self._reopen(session)
            return {"stopReason": "cancelled"}
        session.sent_mode = session.mode
        if result.status == "error":
            raise RpcError(AGENT_ERROR, result.result)
        return {"stopReason": STOP_REASONS.get(result.status, "end_turn")}

    async def _plan_turn(self, session: AcpSession, text: str) -> dict[str, Any]:
        """Plan mode: the planner answers, the editor reviews, then the steps (:mod:`~orchestrator.acp.planning`)."""
        from orchestrator.launch import GoalLaunch

        rpc, conversation = self.rpc, session.conversation
        assert rpc is not None and conversation is not None
        sid, maker = conversation.session_id, UpdateMaker(session.workspace)

        def send(body: dict[str, Any]) -> None:
            rpc.notify("session/update", update(sid, body))

        def approved() -> None:  # running the plan leaves plan mode, as the editor's mode menu should show
            self.set_mode(SetModeParams.model_validate({"sessionId": sid, "modeId": "ask"}))
            send({"sessionUpdate": "current_mode_update", "currentModeId": "ask"})

        async def ask(question: Question) -> Answer:
            return await self._ask(session, question, maker)

        turn = PlanTurn(
            session_id=sid,
            send=send,
            request=rpc.request,
            on_line=lambda event: self._updates(session, event, maker),
            ask=ask,
            on_approved=approved,
        )
        with trio.CancelScope() as scope:
            session.scope = scope
            try:
                launch = GoalLaunch(
                    workspace=session.workspace, objective=text, base_url=self.base_url, permissions="ask"
                )
                await turn.run(launch=launch, env=self.env)
                session.extra["tail"] = [TailBlock(tag="plan-run", body=turn.report)]
            except (ReasonixError, DeepSeekError) as exc:
                raise RpcError(AGENT_ERROR, str(exc)) from None
            finally:
                session.scope = None
        return {"stopReason": "cancelled" if scope.cancelled_caught else "end_turn"}

    def cancel(self, params: SessionParams) -> None:
        session = self.sessions.get(params.session_id)
        if session is not None and session.scope is not None:
            session.scope.cancel()

    def set_mode(self, params: SetModeParams) -> dict[str, Any]:
        session = self._session(params.session_id)
        if params.mode_id not in ("ask", "auto", "plan"):
            raise RpcError(INVALID_PARAMS, f"no mode {params.mode_id!r}; the modes are ask, auto and plan")
        session.mode = params.mode_id  # type: ignore[assignment]
        assert session.conversation is not None
        apply_mode(session.conversation.session, session.commands.gate, session.mode)
        return {}

    # ------------------------------------------------------------------------------------------------ sessions

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(INVALID_PARAMS, f"no session {session_id!r}; create one with session/new")
        return session

    async def _open(self, cwd: str, resume: str | None, servers: dict[str, McpServerConfig]) -> AcpSession:
        holder: list[AcpSession] = []

        async def asker(question: Question) -> Answer:
            return await self._ask(holder[0], question)

        try:
            workspace = check_workspace(Path(cwd), "open a project folder instead")
            if resume is not None:
                check_resume(workspace, resume)
            conversation = open_conversation(
                ConversationLaunch(
                    workspace=workspace,
                    permissions="ask",
                    base_url=self.base_url,
                    resume=resume,
                    mcp_servers=servers,
                ),
                env=self.env,
                asker=asker,
                on_notice=lambda text: print(f"reasonix acp: {text}", file=sys.stderr, flush=True),
            )
        except ReasonixError as exc:
            raise RpcError(AGENT_ERROR, str(exc)) from None
        if conversation.resolved.notice:  # what the workspace's untrusted file may not set: never the protocol
            print(f"reasonix acp: {conversation.resolved.notice}", file=sys.stderr, flush=True)
        session = AcpSession(workspace=workspace, commands=conversation.commands, maker=UpdateMaker(workspace))
        holder.append(session)

        async def hold(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            """The conversation open (a task of its own: the MCP servers' nursery lives in it) until the agent ends."""
            async with conversation.client, conversation.opened():
                task_status.started()
                await trio.sleep_forever()

        try:
            await self.nursery.start(hold)
        except ReasonixError as exc:
            raise RpcError(AGENT_ERROR, str(exc)) from None

        def on_event(event: StreamJsonEvent) -> None:
            self._updates(session, event)

        session.conversation = HeadlessConversation(
            conversation, on_event=on_event, options=HeadlessOptions(permission_mode="ask")
        )
        self._dress(session)
        return session

    def _dress(self, session: AcpSession) -> None:
        """The session's mode, and the editor's reads and terminals in place of ours where it offers them."""
        assert session.conversation is not None and self.rpc is not None
        apply_mode(session.conversation.session, session.commands.gate, session.mode)
        editor_tools(session, self.rpc, self.client_caps)

    def _reopen(self, session: AcpSession) -> None:
        """After a cancelled turn: the session again from its journal (which mends what was cut off)."""
        assert session.conversation is not None
        session.conversation.conversation.reopen(keep_totals=True)
        self._dress(session)

    def _updates(self, session: AcpSession, event: StreamJsonEvent, maker: UpdateMaker | None = None) -> None:
        rpc, conversation, maker = self.rpc, session.conversation, maker or session.maker
        assert rpc is not None
        sid = conversation.session_id if conversation is not None else event.session_id
        for body in maker(event):
            rpc.notify("session/update", update(sid, body))
        written = maker.take_written()
        if not self.client_caps.fs.write_text_file:
            return
        for path, text in written:
            params = {"sessionId": sid, "path": str(path), "content": text}

            async def write(params: dict[str, Any] = params) -> None:
                try:
                    await rpc.request("fs/write_text_file", params)
                except RpcError as exc:  # the file is written in the workspace anyway; the buffer may lag
                    print(f"reasonix acp: the client did not take {params['path']}: {exc.message}", flush=True)

            rpc.start_soon(write)

    async def _ask(self, session: AcpSession, question: Question, maker: UpdateMaker | None = None) -> Answer:
        assert self.rpc is not None and session.conversation is not None
        call = (maker or session.maker).pending_call(question.tool)
        call["rawInput"] = {"subject": question.subject, "cwd": question.cwd, "sandbox": question.sandbox}
        try:
            result = await self.rpc.request(
                "session/request_permission",
                {"sessionId": session.conversation.session_id, "toolCall": call, "options": PERMISSION_OPTIONS},
            )
        except RpcError as exc:
            # The editor could not ask: a no, so the call gets its error result and the turn goes on (a call left
            # unanswered would make DeepSeek refuse every later request of the session with a 400).
            print(f"reasonix acp: the client failed a permission request: {exc.message}", flush=True)
            return Answer(
                allow=False,
                note=f"nothing ran: the editor could not ask the user ({exc.message}); try again or ask the user",
            )
        outcome = result.get("outcome", {}) if isinstance(result, dict) else {}
        chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
        if chosen in ("allow_once", "allow_always"):
            return Answer(allow=True, always=chosen == "allow_always")
        return Answer(allow=False, note="the user declined in the editor")


def editor_servers(servers: list[dict[str, Any]]) -> dict[str, McpServerConfig]:
    """The MCP servers an editor passes in ``session/new`` (ACP's shape: ``env`` and ``headers`` as lists of
    ``{name, value}``), as configured servers; they run sandboxed like any workspace's server. A server that does
    not parse is refused with the reason."""
    out: dict[str, McpServerConfig] = {}
    for entry in servers:
        name = str(entry.get("name", ""))
        if not re.fullmatch(SERVER_NAME, name):
            raise RpcError(INVALID_PARAMS, f"mcpServers: name a server with letters, digits, _ and - (got {name!r})")
        pairs = {k: {str(p.get("name")): str(p.get("value")) for p in entry.get(k) or []} for k in ("env", "headers")}
        fields: dict[str, Any] = {"url": entry["url"], "headers": pairs["headers"]} if "url" in entry else {}
        if not fields:
            fields = {"command": entry.get("command"), "args": list(entry.get("args") or []), "env": pairs["env"]}
        try:
            out[name] = McpServerConfig.model_validate(fields)
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"mcpServers: the server {name!r} does not parse: {exc}") from None
    return out


def editor_tools(session: AcpSession, rpc: Connection, caps: ClientCapabilities) -> None:
    """The client's reads and terminals in place of our own, when it offers them (the schemas stay ours)."""
    assert session.conversation is not None
    conversation = session.conversation

    def show_terminal(tool: str, terminal_id: str) -> None:
        call = session.maker.pending_call(tool)
        body = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call["toolCallId"],
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": terminal_id}],
        }
        rpc.notify("session/update", update(conversation.session_id, body))

    link = EditorLink(rpc=rpc, session_id=lambda: conversation.session_id, show_terminal=show_terminal)
    registry = conversation.session.registry
    read, edit, bash = registry.get("read_file"), registry.get("edit_file"), registry.get("bash")
    if caps.fs.read_text_file and read is not None:
        registry.replace(EditorReadFile(read, link))
    if caps.fs.read_text_file and edit is not None:
        registry.replace(EditorEditFile(edit, link))
    if caps.terminal and bash is not None:
        registry.replace(EditorBash(bash, link))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("reasonix")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(*, env: Mapping[str, str], base_url: str | None) -> None:
    """Serve ACP on this process's standard input and output until the client closes standard input. Standard
    output carries only the protocol: anything else printed goes to standard error."""
    receive = trio.lowlevel.FdStream(os.dup(0))
    send = trio.lowlevel.FdStream(os.dup(1))
    os.dup2(2, 1)
    async with trio.open_nursery() as nursery:
        agent = AcpAgent(env=env, base_url=base_url, nursery=nursery)
        agent.rpc = Connection(receive, send, agent.handle)
        await agent.rpc.serve()
        nursery.cancel_scope.cancel()  # the sessions' conversations close: journals, jobs, MCP servers
