"""Standing memory: REASONIX.md, REASONIX.local.md and AGENTS.md, folded into the prefix once per session.

Files are looked for in the workspace root and each directory above it, and in the user's config directory. They are
read once, when a session starts, each directory a root of the gateway (``sessions.tools.gateway``), so a memory file
that is a symlink out of its directory, a FIFO or a device is skipped and no more than 64 KiB is read; a later
edit reaches the model as a ``<memory-update>`` tail block, never by touching
the frozen prefix (DESIGN §3).

Each file is labelled by a path relative to the workspace (``AGENTS.md``, ``../AGENTS.md``) or ``~config/…`` for the
user's config directory: never an absolute path, so a second run from another checkout or temp directory of the same
project produces the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from sessions.tools.gateway.names import GIT_DIR
from sessions.tools.gateway.root import GatewayRoot

MEMORY_FILE_NAMES: tuple[str, ...] = ("REASONIX.md", "REASONIX.local.md", "AGENTS.md")
MAX_MEMORY_FILE_BYTES = 64 * 1024


class MemoryFile(BaseModel):
    model_config = ConfigDict(frozen=True)
    label: str
    text: str
    truncated: bool = False


class StandingMemory(BaseModel):
    model_config = ConfigDict(frozen=True)
    files: tuple[MemoryFile, ...] = ()

    def render(self) -> str:
        """The memory as one block of text for the system prompt; empty when there is none."""
        if not self.files:
            return ""
        parts = []
        for f in self.files:
            note = "\n[truncated: file larger than 64 KiB]" if f.truncated else ""
            parts.append(f'<memory file="{f.label}">\n{f.text.rstrip()}{note}\n</memory>')
        return "\n\n".join(parts)


def _read(root: GatewayRoot, name: str, label: str) -> MemoryFile | None:
    """``name`` in ``root`` through the gateway: a symlink out of the directory (``AGENTS.md -> /dev/zero``,
    ``-> ~/.ssh/id_rsa``), a FIFO or a device is no memory file, and at most 64 KiB are read."""
    found = root.try_read(name, limit=MAX_MEMORY_FILE_BYTES)
    if found is None:
        return None
    text = found.data.decode("utf-8", errors="replace")
    return MemoryFile(label=label, text=text.replace("\r\n", "\n"), truncated=found.truncated)


def user_config_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "reasonix"


def load_standing_memory(
    workspace: Path, *, config_dir: Path | None = None, stop_at: Path | None = None
) -> StandingMemory:
    """Collect memory files: the user's config directory first, then from the outermost directory down to the workspace.

    The order is general → specific, so the workspace's own instructions come last and read as the most specific.
    ``stop_at`` bounds the upward search (defaults to the filesystem root; a directory holding ``.git`` also ends it,
    since a repository's memory does not leak in from whatever directory it was cloned into).
    """
    root = workspace.resolve()
    chain: list[Path] = []
    current = root
    while True:
        chain.append(current)
        if (current / ".git").exists() or current == stop_at or current.parent == current:
            break
        current = current.parent
    files: list[MemoryFile] = []
    if config_dir is not None:
        config_root = GatewayRoot(config_dir, refused=frozenset({GIT_DIR}), what="the config directory")
        for name in MEMORY_FILE_NAMES:
            found = _read(config_root, name, f"~config/{name}")
            if found is not None:
                files.append(found)
    for depth, directory in reversed(list(enumerate(chain))):
        prefix = "../" * depth
        here = GatewayRoot(directory, refused=frozenset({GIT_DIR}))
        for name in MEMORY_FILE_NAMES:
            found = _read(here, name, f"{prefix}{name}")
            if found is not None:
                files.append(found)
    return StandingMemory(files=tuple(files))
