"""Trusted configuration: a workspace's own files cannot redirect requests, pick the key, open the network, drop the
sandbox or allow commands until the user trusts that workspace.

A cloned repository's ``reasonix.toml`` is written by whoever wrote the repository. Until ``reasonix trust`` records
the file's SHA-256 in the user's configuration directory (``trusted.json``), the keys below are refused there, with a
message naming the key, why, and the command to run; a changed file is untrusted again. The user's own file, the
environment (``DEEPSEEK_BASE_URL``) and flags are always the user's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.errors import ConfigProblem

TRUST_FILE = "trusted.json"
TRUST_COMMAND = "reasonix trust"

#: dotted key -> (is this value dangerous?, why it needs trust)
_GUARDED: dict[str, tuple[Any, str]] = {
    "base_url": (lambda v: True, "it decides where requests and the API key are sent"),
    "api_key_env": (lambda v: True, "it decides which of your environment variables is sent as the API key"),
    "sandbox.network": (lambda v: v is True, "it gives commands network access"),
    "sandbox.mode": (lambda v: v == "full-access", "full-access runs commands without a sandbox"),
    "sandbox.writable": (lambda v: bool(v), "it lets commands write outside the workspace"),
    "sandbox.forbid_read": (lambda v: True, "it changes which of your files commands may read"),
    "sandbox.env": (lambda v: bool(v), "it passes your environment variables to commands"),
    "permissions.allow": (lambda v: bool(v), "allow rules let commands run without asking"),
    "permissions.mode": (lambda v: v == "auto", "auto runs commands without asking"),
    "mcp.servers": (
        lambda v: bool(v),
        "an MCP server starts a program on your machine or receives your workspace's data",
    ),
}


_INSTEAD = {"mcp.servers": "define the server"}
"""What to do in the user's own config instead, where "set the key" does not fit."""


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trust_path(user_config_file: Path) -> Path:
    return user_config_file.parent / TRUST_FILE


def trusted_hashes(store: Path) -> dict[str, str]:
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def is_trusted(store: Path, path: Path) -> bool:
    known = trusted_hashes(store).get(str(path.resolve()))
    return known is not None and path.exists() and known == file_hash(path)


def record_trust(store: Path, paths: list[Path]) -> None:
    """Trust these files as they are now (atomically rewrites ``trusted.json``)."""
    data = trusted_hashes(store)
    for path in paths:
        data[str(path.resolve())] = file_hash(path)
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(store)


def _lookup(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def guarded_keys(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The keys of ``data`` that need trust, with why."""
    found = []
    for key, (dangerous, why) in _GUARDED.items():
        present, value = _lookup(data, key)
        if present and dangerous(value):
            found.append((key, why))
    return found


def untrusted_problems(path: Path, data: Mapping[str, Any], store: Path) -> list[ConfigProblem]:
    """One problem per guarded key of a workspace file that the user has not trusted (as it is now)."""
    keys = guarded_keys(data)
    if not keys or is_trusted(store, path):
        return []
    changed = str(path.resolve()) in trusted_hashes(store)
    state = "has changed since you trusted it" if changed else "is not trusted"
    workspace = path.parent
    return [
        ConfigProblem(
            str(path),
            key,
            f"refused: this workspace file {state}, and {why}; check the file, then run "
            f"`{TRUST_COMMAND} --workspace {workspace}` to accept it (or {_INSTEAD.get(key, 'set the key')} in your "
            "own config)",
        )
        for key, why in keys
    ]
