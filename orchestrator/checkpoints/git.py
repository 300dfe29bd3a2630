"""The shadow repository: Reasonix's own git directory and index, outside the workspace; the workspace as work tree.

Where it lives: ``$XDG_STATE_HOME/reasonix/checkpoints/<name>-<hash of the workspace's real path>/`` (by default
under ``~/.local/state``), with the ledger beside it. Nothing in the workspace is part of it: the model's file tools
(confined to the workspace) and its sandboxed commands (which see the home read-only) cannot write it, and a
repository cannot ship one. Its ``config``, ``info/attributes`` and ``info/exclude`` are Reasonix's own, compared
byte for byte and rewritten before every use, whatever changed them.

Every call goes through :meth:`ShadowRepo.git`: a subprocess (``trio.run_process``) with an environment built from
scratch: ``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_INDEX_FILE`` point at the shadow store, no system or global config
or attributes (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM``), and :data:`SAFE_FLAGS`
(no hooks, no fsmonitor, no global attributes file, no transport), a fixed author and committer. The store's
``info/attributes`` unsets ``filter``, ``text``, ``eol``, ``diff``, ``merge``, ``ident`` and
``working-tree-encoding`` for every path, and it outranks the workspace's ``.gitattributes``: a repository cannot
name a filter or driver, and files are stored byte for byte. The user's ``.git``, index, stash and branches are
never read or written. The index persists between checkpoints, so git's stat cache re-hashes only the files that
changed.

The workspace's ignore rules apply (its ``.gitignore`` files, and its ``.git/info/exclude`` copied into the shadow's
``info/exclude``); ``.reasonix/``, ``.git/``, ``reasonix.local.toml`` (the user's saved permission answers) and tools'
caches (``__pycache__`` and the like: :mod:`caches`) are always left out.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from orchestrator.checkpoints.caches import CACHE_EXCLUDES
from orchestrator.errors import ReasonixError

STORES_DIR = Path("reasonix") / "checkpoints"
"""Under the user's state directory: one store per workspace."""
AUTHOR = "Reasonix checkpoints"
EMAIL = "checkpoints@reasonix.invalid"
HEAD_REF = "refs/reasonix/head"
"""Every checkpoint commit has the previous one as parent, so this one ref keeps them all reachable."""
PERMISSION_FILES = ("/reasonix.local.toml",)
"""The user's own decisions (an "always" answer is saved there): never a step's or a turn's change, so never
snapshotted, and never taken back by an undo or a rewind. Commands see it read-only (the sandbox); a file tool's write
to it (which asks first) is not taken back either."""
ALWAYS_EXCLUDED = ("/.reasonix/", ".git", *PERMISSION_FILES, *CACHE_EXCLUDES)
EXCLUDE_MAX_BYTES = 1024 * 1024
SETTINGS = {
    "core.repositoryformatversion": "0",
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.symlinks": "true",
    "core.filemode": "true",
    "core.quotePath": "false",
    "core.untrackedCache": "true",
    "core.fsmonitor": "false",
    "core.bare": "false",
    "core.logAllRefUpdates": "false",
    "gc.auto": "0",
    "core.looseCompression": "1",
    "commit.gpgSign": "false",
    "advice.addEmbeddedRepo": "false",
    "advice.detachedHead": "false",
}
"""The store's whole ``config``: nothing else is ever in it."""
ATTRIBUTES = "* -text -crlf -eol -filter -diff -merge -ident -working-tree-encoding\n"
"""The store's ``info/attributes``: outranks every ``.gitattributes``, so no path has a filter, a driver or a
conversion, whatever the workspace says."""
SAFE_FLAGS = (
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "core.fsmonitor=false",
    "-c",
    f"core.attributesFile={os.devnull}",
    "-c",
    "protocol.allow=never",
)
"""Given to every git call for the store (and its worktrees), whatever a config file says."""


def config_text(settings: Mapping[str, str] = SETTINGS) -> str:
    """``settings`` as a git config file, one section per prefix, in a fixed order."""
    sections: dict[str, list[str]] = {}
    for key, value in settings.items():
        section, _, name = key.rpartition(".")
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    return "".join(f"[{section}]\n" + "".join(lines) for section, lines in sections.items())


def state_home(env: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME`` (when absolute, as the spec says), else ``~/.local/state``."""
    xdg = env.get("XDG_STATE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg)
    return Path(env.get("HOME") or Path.home()) / ".local" / "state"


def store_for(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The store of ``workspace``: named for its real path (the same directory reached by a symlink shares it)."""
    real = workspace.resolve()
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", real.name)[:40] or "root"
    return state_home(os.environ if env is None else env) / STORES_DIR / f"{name}-{digest}"


def write_if_changed(path: Path, text: str) -> None:
    """Make ``path`` hold exactly ``text`` (replaced atomically, never written through a symlink)."""
    data = text.encode("utf-8")
    try:
        if not path.is_symlink() and path.read_bytes() == data:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.reasonix-tmp")
    tmp.unlink(missing_ok=True)
    tmp.write_bytes(data)
    os.replace(tmp, path)


class CheckpointError(ReasonixError):
    """A checkpoint could not be taken or restored: git failed on the shadow store (the message has git's words)."""


class GitUnavailableError(CheckpointError):
    """The machine has no ``git``: goals run without checkpoints, and undo cannot work."""


def scratch_env(git_dir: Path, work_tree: Path, index_file: Path, *, home: Path) -> dict[str, str]:
    """The environment of a git call on a Reasonix-owned git directory: built from scratch (none of the caller's
    ``GIT_*`` variables), no system or global config or attributes, ``home`` as ``HOME``, a fixed identity."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LC_ALL": "C",
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work_tree),
        "GIT_INDEX_FILE": str(index_file),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": AUTHOR,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_COMMITTER_NAME": AUTHOR,
        "GIT_COMMITTER_EMAIL": EMAIL,
    }
    for name in ("SYSTEMROOT", "TMPDIR"):  # what git itself may need on some systems
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def find_git() -> str | None:
    return shutil.which("git")


@dataclass(frozen=True)
class ShadowRepo:
    workspace: Path
    store_dir: Path = field(init=False)
    """Where the store lives (see the module docstring): computed from the workspace and the environment."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "store_dir", store_for(self.workspace))

    @property
    def git_dir(self) -> Path:
        return self.store_dir / "git"

    @property
    def index_file(self) -> Path:
        return self.store_dir / "index"

    def env(self) -> dict[str, str]:
        return scratch_env(self.git_dir, self.workspace, self.index_file, home=self.store_dir)

    async def git(self, *args: str, stdin: bytes = b"", ok_codes: Sequence[int] = (0,)) -> bytes:
        """Run ``git ARGS`` on the shadow store; its stdout. Raises :class:`CheckpointError` with git's stderr."""
        exe = find_git()
        if exe is None:
            raise GitUnavailableError("git is not installed (or not on PATH): checkpoints and undo need it")
        proc = await trio.run_process(
            [exe, *SAFE_FLAGS, *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=self.env(),
            cwd=str(self.workspace),
        )
        if proc.returncode not in ok_codes:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            raise CheckpointError(f"git {args[0]} failed on the checkpoint store {self.git_dir}: {err}")
        out: bytes = proc.stdout
        return out

    async def ensure(self) -> None:
        """Create the shadow store on first use; make its config, attributes and excludes Reasonix's own again."""
        try:
            self.store_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not (self.git_dir / "HEAD").is_file():
                await self.git("init", "--quiet", "--template=")
            write_if_changed(self.store_dir / "workspace", f"{self.workspace.resolve()}\n")
            write_if_changed(self.git_dir / "config", config_text())
            write_if_changed(self.git_dir / "info" / "attributes", ATTRIBUTES)
            write_if_changed(self.git_dir / "info" / "exclude", self._excludes())
        except OSError as exc:
            raise CheckpointError(f"cannot prepare the checkpoint store {self.store_dir}: {exc}") from exc

    def _excludes(self) -> str:
        lines = ["# written by reasonix: the workspace's own excludes, and its state", *ALWAYS_EXCLUDED]
        # Read through the gateway (.git is entered on purpose here): a link out of the workspace is no exclude file.
        # Imported here: sessions.tools loads every tool, which `reasonix checkpoints` and `undo` never call.
        from sessions.tools.gateway import GatewayRoot

        user = GatewayRoot(self.workspace, refused=frozenset()).try_read(".git/info/exclude", limit=EXCLUDE_MAX_BYTES)
        if user is not None:
            lines.append(user.data.decode("utf-8", errors="replace"))
        return "\n".join(lines) + "\n"

    async def head(self) -> str | None:
        out = await self.git("rev-parse", "--verify", "--quiet", HEAD_REF, ok_codes=(0, 1))
        return out.decode().strip() or None


def split_nul(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def join_nul(paths: Sequence[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
