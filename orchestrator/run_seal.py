"""Run directories a repository cannot forge: each one Reasonix makes carries a seal, an HMAC under a key of this
user's, and a run directory without a valid seal is never listed, resumed or continued.

A repository can ship ``.reasonix/runs/<id>/`` (a ``goal.json`` paused with its plan approved, a conversation's
journal) and ``.reasonix/headless.json`` / ``repl.json`` naming it. The run directory stays where it is (the journals,
plans and events keep their layout); what a repository cannot make is ``seal``: ``HMAC-SHA256(key, workspace's real
path, run id)``, where the key is 32 random bytes in ``$XDG_STATE_HOME/reasonix/run-key`` (made 0600 on first use,
outside every workspace). The seal binds a run to this user and this workspace: a run moved to another directory or
made by another user is not theirs here. Inside a session nothing can add a seal either: commands see ``.reasonix/``
read-only and the file tools refuse it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from orchestrator.checkpoints.git import state_home
from orchestrator.errors import ReasonixError

KEY_FILE = "run-key"
SEAL_FILE = "seal"
_KEY_BYTES = 32


class RunKeyError(ReasonixError):
    """The user's run key cannot be read or made."""


class ForgedRunError(ReasonixError):
    """A run directory that this user's Reasonix did not make (no valid seal): it is not resumed or continued."""


def key_path(env: Mapping[str, str] | None = None) -> Path:
    return state_home(os.environ if env is None else env) / "reasonix" / KEY_FILE


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunKeyError(f"cannot read {path} ({exc.strerror}); remove it and run again") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise RunKeyError(
                f"{path} is not a file only you can read: remove it and run again (a new key is made; runs sealed with "
                "the old one are no longer listed)"
            )
        data = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != _KEY_BYTES:
        raise RunKeyError(f"{path} is not a key Reasonix made: remove it and run again")
    return data


def user_key(env: Mapping[str, str] | None = None) -> bytes:
    """This user's run key, made (0600, atomically, never through a link) on first use."""
    path = key_path(env)
    found = _read_key(path)
    if found is not None:
        return found
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise RunKeyError(
            f"cannot make {path} ({exc.strerror}), the key that marks runs as yours: make its directory writable "
            "(or set XDG_STATE_HOME to one that is) and run again"
        ) from exc
    try:
        os.write(fd, secrets.token_bytes(_KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another process made it first: theirs is the key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    key = _read_key(path)
    if key is None:
        raise RunKeyError(f"{path} vanished as it was made; run again")
    return key


def _seal(workspace: Path, run_id: str, env: Mapping[str, str] | None) -> str:
    message = b"reasonix run\0" + os.fsencode(workspace.resolve()) + b"\0" + run_id.encode()
    return hmac.new(user_key(env), message, hashlib.sha256).hexdigest()


def seal_run(workspace: Path, run_id: str, env: Mapping[str, str] | None = None) -> None:
    """Seal ``<workspace>/.reasonix/runs/<run_id>`` as this user's (the directory exists; Reasonix just made it)."""
    path = workspace / ".reasonix" / "runs" / run_id / SEAL_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(_seal(workspace, run_id, env) + "\n")


def is_sealed(workspace: Path, run_id: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether the run directory carries this user's seal for this workspace."""
    path = workspace / ".reasonix" / "runs" / run_id / SEAL_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        found = os.read(fd, 200).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return hmac.compare_digest(found, _seal(workspace, run_id, env))


def check_sealed(workspace: Path, run_id: str) -> None:
    """:class:`ForgedRunError` with why, unless the run is this user's."""
    if not is_sealed(workspace, run_id):
        raise ForgedRunError(
            f"run {run_id} in {workspace} was not made by you here (it has no seal signed with your key, "
            f"{key_path()}): a run or conversation that came with the repository, or from another user or directory, "
            "is never resumed or continued as yours; start a new one"
        )
