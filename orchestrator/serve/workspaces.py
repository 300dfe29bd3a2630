"""The workspaces the service knows: those given with ``--workspace`` and every one a goal was started in, remembered
in ``workspaces.json`` under the state directory (``--state-dir``; default ``$XDG_STATE_HOME/reasonix/serve``), so a
restarted service lists their runs again."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from plans.storage import write_atomic

STATE_FILE = "workspaces.json"


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
