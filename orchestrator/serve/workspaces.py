"""The workspaces the service knows: those given with ``--workspace`` and every one a goal was started in, remembered
in ``workspaces.json`` under the state directory (``--state-dir``; default ``$XDG_STATE_HOME/reasonix/serve``), so a
restarted service lists their runs again; and which directories a client may start a goal in
(:func:`api_workspace`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from orchestrator.policy.workspace_rule import workspace_refusal
from orchestrator.serve.errors import InvalidRequestError
from plans import write_atomic

STATE_FILE = "workspaces.json"


WORKSPACE_HINT = (
    "send the absolute path of an existing project directory (not /, not a system directory, not your home)"
)


def api_workspace(text: str, roots: Iterable[Path] = ()) -> Path:
    """The workspace a client named, resolved, or :class:`InvalidRequestError`: it must be an absolute path (never
    resolved against the service's own working directory) of an existing directory that is not ``/``, not a
    top-level directory (``/etc``, ``/home``, ``/tmp`` …), nor inside a system tree, nor ``$HOME`` or what holds it
    (:func:`~orchestrator.policy.workspace_rule.workspace_refusal`); with
    ``roots`` (``--workspace-root``), it must lie under one of them."""
    given = Path(text)
    if not given.is_absolute():
        raise InvalidRequestError(
            f"workspace {text!r} is not an absolute path; the service resolves no relative path", WORKSPACE_HINT
        )
    path = given.resolve()
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise InvalidRequestError(f"workspace {text!r} {what}", WORKSPACE_HINT)
    reason = workspace_refusal(path)  # /, system directories, $HOME and what holds it: as in every front end
    if reason is not None:
        raise InvalidRequestError(f"workspace {text!r} {reason}; goals never run there", WORKSPACE_HINT)
    allowed = [r.expanduser().resolve() for r in roots]
    if allowed and not any(path.is_relative_to(r) for r in allowed):
        listed = ", ".join(str(r) for r in allowed)
        raise InvalidRequestError(
            f"workspace {text!r} is outside the service's workspace roots ({listed})",
            "send a directory under one of them; the service was started with --workspace-root",
        )
    return path


def default_state_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".local" / "state")
    return Path(base) / "reasonix" / "serve"


class KnownWorkspaces:
    """An ordered set of workspace paths (resolved), persisted on every addition."""

    def __init__(self, state_dir: Path, given: Iterable[Path] = ()) -> None:
        self.path = state_dir / STATE_FILE
        self._paths: dict[Path, None] = {}
        self._stored = self._read()
        """The workspaces in the state file: those goals were started in (``--workspace`` ones are not stored)."""
        for p in self._stored:
            self._paths[p] = None
        for p in given:
            self._paths[p.expanduser().resolve()] = None

    def _read(self) -> list[Path]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        items = data.get("workspaces", []) if isinstance(data, dict) else []
        return [Path(p) for p in items if isinstance(p, str)]

    def add(self, workspace: Path) -> None:
        """A goal was started in ``workspace``: remember it (also across restarts)."""
        self._paths[workspace] = None
        if workspace in self._stored:
            return
        self._stored.append(workspace)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        write_atomic(self.path, json.dumps({"workspaces": [str(p) for p in self._stored]}, indent=2) + "\n")

    def all(self) -> list[Path]:
        """Every known workspace that is still a directory."""
        return [p for p in self._paths if p.is_dir()]
