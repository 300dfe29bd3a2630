"""MCP servers in the configuration: ``[mcp.servers.NAME]`` in ``reasonix.toml`` and the ``.mcp.json`` users already
keep in their workspace (``{"mcpServers": {"NAME": {...}}}``).

A server is either a process spoken to over stdio (``command``, ``args``, ``env``, ``cwd``) or a streamable-HTTP
endpoint (``url``, ``headers``). ``.mcp.json`` is read as one more layer below ``reasonix.toml`` (a server named in
both is the TOML one); its ``type`` key is checked and other keys other clients use are ignored. A workspace file that
names a server needs trust (:mod:`orchestrator.config.trust`): a server starts a program or receives your data.

A stdio server runs in the sandbox (:mod:`orchestrator.mcp.connection`). What loosens that sandbox for one server
(``sandbox = false``, ``network = true``, ``writable = [...]``) is read from the user's own file only, and only for a
server the user's file defines (:func:`sandbox_key_problems`): no workspace file, trusted or not, can set it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from orchestrator.config.field_trust import nothing, tighter
from orchestrator.config.files import read_config_bytes
from orchestrator.errors import ConfigError, ConfigProblem

MCP_FILE = ".mcp.json"
SERVER_NAME = r"^[A-Za-z0-9_-]{1,32}$"
_STDIO_KEYS = ("command", "args", "env", "cwd")
SANDBOX_KEYS = ("sandbox", "network", "writable")
_HTTP_KEYS = ("url", "headers")
_HTTP_TYPES = ("http", "streamable-http", "streamableHttp")


class McpServerConfig(BaseModel):
    """One server: ``command`` (stdio) or ``url`` (streamable HTTP), not both."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    command: str | None = Field(None, min_length=1, json_schema_extra=nothing())
    args: list[str] = Field(default_factory=list, json_schema_extra=nothing())
    env: dict[str, str] = Field(default_factory=dict, json_schema_extra=nothing())
    """Variables added to the SDK's minimal default environment (your API key is never passed)."""
    cwd: str | None = Field(None, json_schema_extra=nothing())
    """The server's working directory, relative to the workspace (``"."``: the workspace itself). Unset, it starts
    in an empty directory of its own, so nothing the workspace holds is imported or run by it."""
    sandbox: bool = Field(True, json_schema_extra=nothing())
    """Run the server in the sandbox (user config only)."""
    network: bool = Field(False, json_schema_extra=nothing())
    """Give the sandboxed server the network (user config only)."""
    writable: list[str] = Field(default_factory=list, json_schema_extra=nothing())
    """Paths the sandboxed server may write besides the workspace (``~`` is your home; user config only)."""
    url: str | None = Field(None, json_schema_extra=nothing())
    headers: dict[str, str] = Field(default_factory=dict, json_schema_extra=nothing())

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected an http(s) URL such as http://127.0.0.1:8000/mcp, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program spoken to over stdio) or url (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a command; an url server takes headers only")
        if self.url is not None and (not self.sandbox or self.network or self.writable):
            raise ValueError("sandbox, network and writable are for a command; an url server runs nothing here")
        if self.command is not None and self.headers:
            raise ValueError("headers are for an url server; a command takes args, env and cwd")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpConfig(BaseModel):
    """``[mcp]``: the servers, and how long a server may take to start and a call to answer."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    servers: dict[str, McpServerConfig] = Field(default_factory=dict, json_schema_extra=nothing())
    start_timeout_s: float = Field(30.0, gt=0, allow_inf_nan=False, json_schema_extra=tighter("smaller"))
    call_timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False, json_schema_extra=tighter("smaller"))

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not re.fullmatch(SERVER_NAME, name):
                raise ValueError(f"server name {name!r}: use letters, digits, _ and - (at most 32)")
        return value


def _problem(path: Path, key: str | None, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(str(path), key, message)])


def _server_entry(path: Path, name: str, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise _problem(path, f"mcpServers.{name}", "expected an object with command or url")
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    if kind == "sse":
        raise _problem(path, f"mcpServers.{name}.type", "the SSE transport is not supported; serve streamable HTTP")
    if kind not in ("stdio", *_HTTP_TYPES):
        raise _problem(path, f"mcpServers.{name}.type", f"expected stdio or http, got {kind!r}")
    for key in SANDBOX_KEYS:
        if key in entry:
            raise _problem(
                path,
                f"mcpServers.{name}.{key}",
                "a workspace file cannot loosen a server's sandbox; set it in your "
                f"user config ([mcp.servers.{name}] {key} = ...)",
            )
    keys = _STDIO_KEYS if kind == "stdio" else _HTTP_KEYS
    return {k: entry[k] for k in keys if k in entry}


def sandbox_key_problems(sources: Mapping[str, str], user_file: str) -> list[ConfigProblem]:
    """``sandbox``, ``network`` and ``writable`` of a server count only from the user's file, and only for a server
    whose command that file names too (else a workspace could reuse the name of a server the user unsandboxed)."""
    problems = []
    for dotted, source in sources.items():
        parts = dotted.split(".")
        if len(parts) != 4 or parts[:2] != ["mcp", "servers"] or parts[3] not in SANDBOX_KEYS:
            continue
        name, key = parts[2], parts[3]
        if source != user_file:
            problems.append(
                ConfigProblem(source, dotted, f"only your user config ({user_file}) can loosen a server's sandbox")
            )
        elif sources.get(f"mcp.servers.{name}.command", user_file) != user_file:
            problems.append(
                ConfigProblem(
                    sources[f"mcp.servers.{name}.command"],
                    f"mcp.servers.{name}.command",
                    f"{key} for this server is in your user config, but its command comes from here: define the "
                    "whole server in your user config, or rename one of them",
                )
            )
    return problems


def read_mcp_json(path: Path) -> dict[str, Any] | None:
    """``.mcp.json`` as a configuration layer (``{"mcp": {"servers": ...}}``), or None when there is no file. Always a
    workspace file: read beneath its folder (a symlink out is refused)."""
    try:
        raw = read_config_bytes(path, within=path.parent).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _problem(path, None, f"cannot read the file ({exc}); fix or remove it") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise _problem(path, None, f"not valid JSON ({exc})") from exc
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise _problem(path, "mcpServers", 'expected {"mcpServers": {"NAME": {"command": ...}}}')
    if not servers:
        return None
    return {"mcp": {"servers": {name: _server_entry(path, name, entry) for name, entry in servers.items()}}}


def caller_servers(values: list[str], workspace: Path) -> tuple[dict[str, McpServerConfig], list[str]]:
    """The servers of Claude Code's ``--mcp-config`` (each value JSON text or a file's path, ``{"mcpServers": {...}}``
    as in ``.mcp.json``), checked as ``.mcp.json``'s are: nothing here loosens a server's sandbox. Also the names of
    the servers given of a kind Reasonix cannot run: the Claude Agent SDKs' in-process ``"type": "sdk"`` servers.
    A file inside ``workspace`` is read through the gateway. Raises :class:`ConfigError` naming what is wrong."""
    servers: dict[str, McpServerConfig] = {}
    unsupported: list[str] = []
    for value in values:
        text, where = value, Path("--mcp-config")
        if not value.lstrip().startswith("{"):
            where = Path(value).expanduser()
            path = where if where.is_absolute() else workspace / where
            inside = path.resolve().is_relative_to(workspace.resolve())
            try:
                text = read_config_bytes(path, within=workspace if inside else None).decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise _problem(where, None, f"cannot read the file ({exc}); give JSON text or a readable file") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _problem(where, None, f"not valid JSON ({exc})") from exc
        found = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(found, dict):
            raise _problem(where, "mcpServers", 'expected {"mcpServers": {"NAME": {"command": ...}}}')
        for name, entry in found.items():
            if not re.fullmatch(SERVER_NAME, name):
                raise _problem(where, f"mcpServers.{name}", "name a server with letters, digits, _ and - (at most 32)")
            if isinstance(entry, dict) and entry.get("type") == "sdk":
                unsupported.append(name)
                continue
            fields = _server_entry(where, name, entry)
            try:
                servers[name] = McpServerConfig.model_validate(fields)
            except ValidationError as exc:
                said = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'it'}: {e['msg']}" for e in exc.errors())
                raise _problem(where, f"mcpServers.{name}", said) from None
    return servers, unsupported
