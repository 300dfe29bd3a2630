"""The part of the Agent Client Protocol (version 1) that ``reasonix acp`` speaks, as pydantic models of what the
client sends (camelCase on the wire, as the protocol names it), and the shapes of what the agent sends back.

Client → agent: ``initialize``, ``session/new``, ``session/load``, ``session/prompt``, ``session/set_mode`` and the
``session/cancel`` notification. Agent → client: ``session/update`` notifications (chunks, tool calls, plans, the
current mode), ``session/request_permission``, and what the client offers in ``clientCapabilities``:
``fs/read_text_file`` (``fs.readTextFile``), ``fs/write_text_file`` (``fs.writeTextFile``), and ``terminal/create``,
``terminal/output``, ``terminal/wait_for_exit``, ``terminal/kill``, ``terminal/release`` (``terminal``). The field
names are the protocol's as the official SDK (``agent-client-protocol``) spells them; its client parses every message
in the tests.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL_VERSION = 1


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class FsCapabilities(_In):
    read_text_file: bool = Field(False, alias="readTextFile")
    write_text_file: bool = Field(False, alias="writeTextFile")


class ClientCapabilities(_In):
    fs: FsCapabilities = FsCapabilities()
    terminal: bool = False


class InitializeParams(_In):
    protocol_version: int = Field(alias="protocolVersion")
    client_capabilities: ClientCapabilities = Field(ClientCapabilities(), alias="clientCapabilities")


class NewSessionParams(_In):
    cwd: str
    mcp_servers: list[dict[str, Any]] = Field([], alias="mcpServers")


class LoadSessionParams(NewSessionParams):
    session_id: str = Field(alias="sessionId")


class ContentBlock(_In):
    type: str
    text: str = ""
    resource: dict[str, Any] | None = None
    uri: str | None = None


class PromptParams(_In):
    session_id: str = Field(alias="sessionId")
    prompt: list[ContentBlock]

    def text(self) -> str:
        """The prompt as one user message: text blocks as they are, an embedded resource as a ``<file>`` block, a
        link as its URI."""
        parts: list[str] = []
        for block in self.prompt:
            if block.type == "text":
                parts.append(block.text)
            elif block.type == "resource" and block.resource is not None and "text" in block.resource:
                parts.append(f'<file path="{block.resource.get("uri", "")}">\n{block.resource["text"]}\n</file>')
            elif block.type == "resource_link" and block.uri:
                parts.append(block.uri)
        return "\n\n".join(p for p in parts if p)


class SessionParams(_In):
    session_id: str = Field(alias="sessionId")


class SetModeParams(SessionParams):
    mode_id: str = Field(alias="modeId")


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

STOP_REASONS: dict[str, StopReason] = {
    "done": "end_turn",
    "length": "max_tokens",
    "request_limit": "max_turn_requests",
    "budget": "max_turn_requests",
    "content_filter": "refusal",
    "cancelled": "cancelled",
}

MODES = [
    {"id": "ask", "name": "Ask", "description": "every command and write asks first"},
    {"id": "auto", "name": "Auto", "description": "commands run in the sandbox without asking"},
    {"id": "plan", "name": "Plan", "description": "the read-only planner proposes a plan; you decide whether it runs"},
]

TOOL_KINDS = {
    "read_file": "read",
    "list_dir": "read",
    "grep": "search",
    "glob": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "bash": "execute",
}

PERMISSION_OPTIONS = [
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
]


def text_content(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def update(session_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """The params of a ``session/update`` notification."""
    return {"sessionId": session_id, "update": body}
