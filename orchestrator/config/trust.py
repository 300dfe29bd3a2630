"""Trusted configuration: a workspace's own files cannot redirect requests, pick the key, open the network, drop the
sandbox or allow commands until the user trusts that workspace; without trust they can only tighten.

A cloned repository's ``reasonix.toml`` is written by whoever wrote the repository. Until ``reasonix trust`` records
the file's SHA-256 in the user's configuration directory (``trusted.json``), the keys below are refused there, with a
message naming the key, why, and the command to run; a changed file is untrusted again. The user's own file, the
environment (``DEEPSEEK_BASE_URL``) and flags are always the user's.

Without trust, the rest of such a file merges by what each field declares
(:mod:`orchestrator.config.field_trust`): a cosmetic field replaces, a field it may only tighten counts where it is
tighter (rule lists and hidden paths are added, ``deny = []`` removes nothing; a mode wins only when it is stricter;
a smaller limit wins; ``network = false`` wins), and a field it may not set at all (prices, model ids, ``[jobs]
enabled``, ``writable``, ``env``, …) is ignored; what was ignored is said once (:func:`ignored_notice`). With trust,
the file merges as the user's own would: its values replace (:func:`orchestrator.config.files.deep_merge`).

A trust record is a file's hash as the user accepted it, or as Reasonix itself last wrote it (:func:`record_hash`,
after an "always" answer): nothing else extends it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.config.files import lookup_dotted, read_config_bytes
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
    "providers": (lambda v: bool(v), "a provider decides where requests and an API key are sent"),
}


def bytes_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_INSTEAD = {"mcp.servers": "define the server", "hooks": "define the hook", "providers": "define the provider"}
"""What to do in the user's own config instead, where "set the key" does not fit."""


def file_hash(path: Path) -> str:
    """The hash of a workspace file (read beneath its folder: a symlink out is refused, never hashed)."""
    return bytes_hash(read_config_bytes(path, within=path.parent))


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


def trust_copy(store: Path, source: Path, copy: Path) -> bool:
    """Trust ``copy`` when its bytes are exactly what the user trusted at ``source`` (a batch goal's copy of a
    trusted workspace file: the same bytes at a new path). A copy that differs, or a source never trusted, is left
    untrusted. Whether it was trusted."""
    try:
        data = read_config_bytes(copy)
    except OSError:
        return False
    if not is_trusted_content(store, source, data):
        return False
    record_hash(store, {copy: bytes_hash(data)})
    return True


def record_trust(store: Path, paths: list[Path]) -> None:
    """Trust these files as they are now (the user's ``reasonix trust``)."""
    record_hash(store, {path: file_hash(path) for path in paths})


def guarded_keys(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The keys of ``data`` that need trust, with why."""
    found = []
    for key, (dangerous, why) in _GUARDED.items():
        present, value = lookup_dotted(data, key)
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


def ignored_notice(ignored: Mapping[str, list[str]], workspace: Path) -> str | None:
    """The one sentence a user reads about what untrusted workspace files set and did not get: ``ignored`` maps each
    file to its keys that did not take effect. ``None`` when there are none."""
    named = {path: keys for path, keys in ignored.items() if keys}
    if not named:
        return None
    files = "; ".join(f"{Path(path).name}: {', '.join(keys)}" for path, keys in named.items())
    return (
        f"ignored what an untrusted workspace file may not set or loosen ({files}); your own settings hold. Check "
        f"the file, then run `{TRUST_COMMAND} --workspace {workspace}` if it should count"
    )
