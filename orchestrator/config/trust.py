"""Trusted configuration: a workspace's own files cannot redirect requests, pick the key, open the network, drop the
sandbox or allow commands until the user trusts that workspace; without trust they can only tighten.

A cloned repository's ``reasonix.toml`` is written by whoever wrote the repository. Until ``reasonix trust`` records
the file's SHA-256 in the user's configuration directory (``trusted.json``), the keys below are refused there, with a
message naming the key, why, and the command to run; a changed file is untrusted again. The user's own file, the
environment (``DEEPSEEK_BASE_URL``) and flags are always the user's.

Without trust, the rest of such a file merges *only tighter* (:func:`tighten`): rule lists and hidden paths are added
to what is below (``deny = []`` removes nothing), a mode wins only when it is stricter (``read-only`` over
``workspace-write`` over ``full-access``; ``read-only`` over ``ask`` over ``auto``), ``network = false`` wins, and
``writable`` / ``env`` are left as they are below. With trust, the file merges as the user's own would: its values
replace (:func:`orchestrator.config.files.deep_merge`).

A trust record is a file's hash as the user accepted it, or as Reasonix itself last wrote it (:func:`record_hash`,
after an "always" answer): nothing else extends it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.config.files import deep_merge
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
    "sandbox.env": (lambda v: bool(v), "it passes your environment variables to commands"),
    "permissions.allow": (lambda v: bool(v), "allow rules let commands run without asking"),
    "permissions.mode": (lambda v: v == "auto", "auto runs commands without asking"),
    "goal.notify_cmd": (lambda v: bool(v), "it runs a program on your machine when a goal ends"),
    "mcp.servers": (
        lambda v: bool(v),
        "an MCP server starts a program on your machine or receives your workspace's data",
    ),
    "hooks": (lambda v: bool(v), "a hook runs a program on your machine at every event it names"),
}


#: dotted key -> how an untrusted value combines with the one below it (only ever the tighter of the two).
_STRICTER_FIRST = {
    "sandbox.mode": ("read-only", "workspace-write", "full-access"),
    "permissions.mode": ("read-only", "ask", "auto", None),
}
_UNION = ("permissions.allow", "permissions.ask", "permissions.deny", "sandbox.forbid_read")
_BOUNDS = ("sandbox.tmp_mb", "sandbox.max_processes", "sandbox.memory_mb")
"""Resource bounds of a command: the smaller wins, and 0 (no bound) is the loosest of all."""
_KEPT = ("sandbox.writable", "sandbox.env")
"""Never widened without trust: a non-empty value is refused (above), an empty one is ignored."""


def bytes_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_INSTEAD = {"mcp.servers": "define the server", "hooks": "define the hook"}
"""What to do in the user's own config instead, where "set the key" does not fit."""


def file_hash(path: Path) -> str:
    return bytes_hash(path.read_bytes())


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


def is_trusted_content(store: Path, path: Path, data: bytes) -> bool:
    """True when ``data`` is exactly what the user trusted (or Reasonix last wrote) at ``path``."""
    return trusted_hashes(store).get(str(path.resolve())) == bytes_hash(data)


def record_hash(store: Path, hashes: Mapping[Path, str]) -> None:
    """Trust each path with exactly this content hash (atomically rewrites ``trusted.json``)."""
    data = trusted_hashes(store)
    for path, digest in hashes.items():
        data[str(path.resolve())] = digest
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = store.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(store)


def record_trust(store: Path, paths: list[Path]) -> None:
    """Trust these files as they are now (the user's ``reasonix trust``)."""
    record_hash(store, {path: file_hash(path) for path in paths})


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


def replacing_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of ``data`` that merge only tighter while it is untrusted, and replace the user's once trusted."""
    return [key for key in _SPECIAL if _lookup(data, key)[0]]


_SPECIAL = (*_STRICTER_FIRST, *_UNION, "sandbox.network", *_BOUNDS, *_KEPT)


def _stricter(order: tuple[object, ...], below: object, top: object) -> object:
    rank = {value: i for i, value in enumerate(order)}
    return top if rank.get(top, len(order)) < rank.get(below, len(order)) else below


def _tightened(key: str, below: Any, top: Any) -> Any:
    if key in _STRICTER_FIRST:
        return _stricter(_STRICTER_FIRST[key], below, top)
    if key in _UNION:
        return list(dict.fromkeys([*(below or []), *top]))
    if key == "sandbox.network":
        return bool(below) and bool(top)
    if key in _BOUNDS:
        bounded = [v for v in (below, top) if isinstance(v, int) and v > 0]
        return min(bounded) if bounded else 0
    return below  # _KEPT


def _drop(data: Mapping[str, Any], dotted: str) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    out = dict(data)
    if head in out:
        if rest and isinstance(out[head], Mapping):
            out[head] = _drop(out[head], rest)
        elif not rest:
            del out[head]
    return out


def _put(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for part in parents:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[leaf] = value


def tighten(below: Mapping[str, Any], top: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``top``, an untrusted workspace file, over ``below``: the keys that confine commands only ever tighten (see
    the module docstring); any other key replaces as usual. ``defaults`` gives the value below a key nobody set."""
    rest: Mapping[str, Any] = top
    for key in _SPECIAL:
        rest = _drop(rest, key)
    out = deep_merge(below, rest)
    for key in _SPECIAL:
        present, value = _lookup(top, key)
        if not present:
            continue
        found, under = _lookup(below, key)
        if not found:
            under = _lookup(defaults, key)[1]
        _put(out, key, _tightened(key, under, value))
    return out
