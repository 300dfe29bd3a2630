"""Saving an "always" answer: one rule added to ``[permissions] allow`` in ``<workspace>/reasonix.local.toml``.

Trust is extended only to what Reasonix itself writes (DESIGN, Trust). The file is changed only when it is absent or
exactly what the user trusted (or Reasonix last wrote, recorded in ``trusted.json``): anything else there was written
by someone else — a repository's script, a command, the model — and answering "always" must not make it trusted. Such
a file is left alone, and :class:`RuleFileError` says so and what to do; the rule then holds for this session only.

The file is written with a real TOML writer (``tomlkit``: the rest of the file, comments included, stays as it was),
read back with ``tomllib`` and compared with what was meant before it replaces the old one atomically; the hash
recorded as trusted is that of the bytes written here, never of whatever is on disk afterwards.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from orchestrator.config.files import read_config_bytes
from orchestrator.config.model import LOCAL_FILE
from orchestrator.config.trust import TRUST_COMMAND, bytes_hash, is_trusted_content, record_hash
from orchestrator.errors import ReasonixError


class RuleFileError(ReasonixError):
    """An "always" rule was not saved (the file is not Reasonix's to change, or could not be written)."""


def _current(path: Path) -> bytes | None:
    """The file's bytes, ``None`` when absent; a symlink or anything but a regular file is refused."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise RuleFileError(f"{path} is not a regular file (a symlink?); remove it, Reasonix writes its rules there")
    try:  # through the gateway, bounded: swapped for a link or a FIFO since the lstat, it is refused, not followed
        return read_config_bytes(path, within=path.parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RuleFileError(f"{path} cannot be read ({exc.strerror or exc}); fix or remove it") from exc


def _untrusted(path: Path) -> RuleFileError:
    return RuleFileError(
        f"{path} was not written by Reasonix, or has changed since you trusted it, so it was left as it is; "
        f"check it, run `{TRUST_COMMAND} --workspace {path.parent}` if you accept it, then answer always again "
        "(or add the rule to [permissions] allow in your own config)"
    )


def _with_rule(text: str, rule: str, path: Path) -> tuple[str, dict[str, Any]]:
    """The new text (tomlkit, layout kept) and the table it must parse to (tomllib)."""
    try:
        expected = tomllib.loads(text)
        doc = tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, TOMLKitError) as exc:
        raise RuleFileError(f"{path} is not valid TOML ({exc}); fix or remove it") from exc
    permissions = expected.setdefault("permissions", {})
    allow = permissions.setdefault("allow", []) if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        raise RuleFileError(f"{path}: [permissions] allow is not a list of rules; fix it by hand")
    if rule in allow:
        return text, expected
    allow.append(rule)
    if "permissions" not in doc:
        doc["permissions"] = tomlkit.table()
    table: Any = doc["permissions"]
    if "allow" not in table:
        table["allow"] = tomlkit.array()
    table["allow"].append(rule)
    return tomlkit.dumps(doc), expected


def _replace(path: Path, data: bytes, expected: dict[str, Any], mode: int) -> None:
    """Write ``data`` beside ``path``, read it back, and only then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w+b") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            out.seek(0)
            back = out.read()
        if back != data or tomllib.loads(back.decode("utf-8")) != expected:
            raise RuleFileError(f"writing {path} did not read back as written; it was left as it was")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remember_rule(workspace: Path, rule: str, store: Path) -> Path:
    """Add ``rule`` to ``[permissions] allow`` in the workspace's rule file and trust what was written (``store``
    is ``trusted.json``). Returns the file. Raises :class:`RuleFileError` when the file is not Reasonix's to change
    (see the module docstring) or cannot be written; nothing is changed then."""
    path = workspace / LOCAL_FILE
    old = _current(path)
    if old is not None and not is_trusted_content(store, path, old):
        raise _untrusted(path)
    try:
        text, expected = _with_rule(old.decode("utf-8") if old is not None else "", rule, path)
    except UnicodeDecodeError as exc:
        raise RuleFileError(f"{path} is not UTF-8 text; fix or remove it") from exc
    data = text.encode("utf-8")
    mode = stat.S_IMODE(path.stat().st_mode) if old is not None else 0o644
    try:
        if data != old:
            _replace(path, data, expected, mode)
        record_hash(store, {path: bytes_hash(data)})
    except OSError as exc:
        raise RuleFileError(f"could not write {path} ({exc.strerror or exc}); the rule holds for this session") from exc
    return path
