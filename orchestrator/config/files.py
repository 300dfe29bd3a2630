"""Reading configuration files and combining their dotted keys: TOML in, plain nested dicts out."""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.errors import ConfigError, ConfigProblem


def _fail(path: Path, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(str(path), None, message)])


CONFIG_MAX_BYTES = 1024 * 1024
"""No configuration file is larger; a bigger one (or ``/dev/zero`` behind a link) is refused, not read whole."""


def read_config_bytes(path: Path, *, within: Path | None = None) -> bytes:
    """The bytes of the configuration file ``path``: a regular file of at most :data:`CONFIG_MAX_BYTES`, opened without
    blocking (a FIFO a repository ships never hangs a start) and checked on the handle it is read from. Raises
    ``FileNotFoundError`` when there is none, another ``OSError`` for anything else that cannot be read.

    ``within``: the workspace that holds ``path`` (a file a repository can ship). It is then read through the gateway
    (:mod:`sessions.tools.gateway`): a symlink is followed only while it stays beneath ``within``, so a
    ``reasonix.toml`` linked to the user's own config file or ``/proc/self/environ`` is refused, never read."""
    if within is not None:
        return _read_beneath(within, path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        data = handle.read(CONFIG_MAX_BYTES + 1)
    if len(data) > CONFIG_MAX_BYTES:
        raise OSError(errno.EFBIG, f"larger than {CONFIG_MAX_BYTES // 1024} KiB")
    return data


STATE_MAX_BYTES = 1024 * 1024
"""A pointer file of Reasonix's own under ``.reasonix/`` (``headless.json``, ``repl.json``) is far smaller."""


def read_state_bytes(workspace: Path, path: Path, *, limit: int = STATE_MAX_BYTES) -> bytes:
    """A small file of Reasonix's own run state under ``workspace/.reasonix/``, read through the gateway as
    :func:`read_config_bytes` reads a workspace's config: a repository can ship ``.reasonix/``, so a link out of the
    workspace, a FIFO or ``/dev/zero`` there is refused (``OSError``), never followed, waited on or read whole."""
    return _read_beneath(workspace, path, limit=limit, refused=frozenset({".git"}))


def _read_beneath(
    root: Path, path: Path, *, limit: int = CONFIG_MAX_BYTES, refused: frozenset[str] | None = None
) -> bytes:
    from sessions.tools import ToolError, WorkspaceEscapeError
    from sessions.tools.gateway import RESERVED, GatewayRoot

    if not root.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such workspace", str(root))
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        raise OSError(errno.EXDEV, "not inside the workspace") from None
    try:
        found = GatewayRoot(root, refused=RESERVED if refused is None else refused).read(rel, limit=limit + 1)
    except WorkspaceEscapeError:
        raise OSError(errno.EXDEV, "a symlink that leads outside the workspace, which is never followed") from None
    except ToolError as exc:
        if exc.message.startswith("not found"):
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path)) from None
        raise OSError(errno.EINVAL, "not a regular file") from None
    if len(found.data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit // 1024} KiB")
    return found.data


def read_toml(path: Path, *, within: Path | None = None) -> dict[str, Any] | None:
    """The table in ``path``, or ``None`` when there is no such file. Unreadable or invalid TOML is a ConfigError.
    ``within``: the workspace holding it (:func:`read_config_bytes`)."""
    try:
        raw = read_config_bytes(path, within=within)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _fail(path, f"cannot read the file ({reason}); fix or remove it") from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _fail(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"invalid TOML: {exc}") from exc


def lookup_dotted(data: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """Whether ``data`` holds the dotted key (``agents.max_requests``), and its value."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``; tables merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            out[key] = deep_merge(below, value)
        else:
            out[key] = value
    return out


def flatten(data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The dotted paths of the leaves of a nested table (an empty table has none)."""
    keys: list[str] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            keys.extend(flatten(value, path + "."))
        else:
            keys.append(path)
    return keys


def unflatten(values: Mapping[str, object]) -> dict[str, Any]:
    """``{"client.deadline_s": 5}`` -> ``{"client": {"deadline_s": 5}}``."""
    out: dict[str, Any] = {}
    for dotted, value in values.items():
        *parents, leaf = dotted.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out
