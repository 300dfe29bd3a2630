"""Git objects of the shadow store written and read in process: what a turn that only wrote through the file tools
stores, without a git process reading the whole index (at 50,000 files every such process pays about 10 ms for it).

A tree with a few paths changed is built from the stored tree it changes: only the trees on those paths are read and
written again (:func:`tree_with`). Objects are the store's loose objects (``objects/ab/cdef…``, zlib, as git writes
them, the store's ``core.looseCompression``); the store never packs them (``gc.auto=0``), and one that is not loose
all the same is read through ``git cat-file``. The ref is moved under git's own lock file (``<ref>.lock``), only
from the commit it was read at, so a concurrent ``git update-ref`` of another process is never overwritten.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.checkpoints.git import AUTHOR, EMAIL, HEAD_REF, CheckpointError, ShadowRepo

TREE_MODE = b"40000"
LOOSE_LEVEL = 1
"""The store's ``core.looseCompression``."""


@dataclass(frozen=True)
class StoredFile:
    """A path as stored: its git mode (``100644``, ``100755``, ``120000``) and blob."""

    mode: bytes
    sha: str


def object_path(git_dir: Path, sha: str) -> Path:
    return git_dir / "objects" / sha[:2] / sha[2:]


def write_object(git_dir: Path, kind: str, body: bytes) -> str:
    """Store ``body`` as a loose object of ``kind`` (unless it is there already); its id."""
    data = f"{kind} {len(body)}\0".encode() + body
    sha = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    path = object_path(git_dir, sha)
    if path.exists():
        return sha
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f"tmp_obj_reasonix_{os.getpid()}_{sha[2:10]}"
        tmp.write_bytes(zlib.compress(data, LOOSE_LEVEL))
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except OSError as exc:
        raise CheckpointError(f"cannot write to the checkpoint store {git_dir}: {exc}") from exc
    return sha


async def read_object(repo: ShadowRepo, sha: str, kind: str) -> bytes:
    """The body of object ``sha`` (a loose one read here, any other through ``git cat-file``)."""
    try:
        raw = zlib.decompress(object_path(repo.git_dir, sha).read_bytes())
    except FileNotFoundError:
        return await repo.git("cat-file", kind, sha)
    except (OSError, zlib.error) as exc:
        raise CheckpointError(f"cannot read object {sha} of the checkpoint store {repo.git_dir}: {exc}") from exc
    header, _, body = raw.partition(b"\0")
    if not header.startswith(kind.encode() + b" "):
        raise CheckpointError(f"object {sha} of the checkpoint store is not a {kind}")
    return body


def parse_tree(body: bytes) -> dict[bytes, tuple[bytes, str]]:
    """name -> (mode, id) of a tree object."""
    entries: dict[bytes, tuple[bytes, str]] = {}
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        entries[body[space + 1 : nul]] = (body[at:space], body[nul + 1 : nul + 21].hex())
        at = nul + 21
    return entries


def _sort_key(item: tuple[bytes, tuple[bytes, str]]) -> bytes:
    name, (mode, _) = item
    return name + b"/" if mode == TREE_MODE else name  # git orders a tree as if its name ended in a slash


def format_tree(entries: Mapping[bytes, tuple[bytes, str]]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + bytes.fromhex(sha) for name, (mode, sha) in sorted(
        entries.items(), key=_sort_key
    ))  # fmt: skip


async def tree_with(repo: ShadowRepo, tree: str, changes: Mapping[str, StoredFile | None]) -> str:
    """``tree`` with each path of ``changes`` set to its entry (None: taken out; a directory left empty goes too).
    A path whose parent is stored as a file or symlink replaces it (as ``git update-index --replace`` does)."""
    nested: dict[bytes, dict[str, StoredFile | None]] = {}
    here: dict[bytes, StoredFile | None] = {}
    for path, entry in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(os.fsencode(head), {})[rest] = entry
        else:
            here[os.fsencode(head)] = entry
    entries = parse_tree(await read_object(repo, tree, "tree")) if tree != EMPTY_TREE else {}
    for name, entry in here.items():
        if entry is None:
            entries.pop(name, None)
        else:
            entries[name] = (entry.mode, entry.sha)
    for name, inner in nested.items():
        mode, sha = entries.get(name, (TREE_MODE, EMPTY_TREE))
        sub = await tree_with(repo, sha if mode == TREE_MODE else EMPTY_TREE, inner)
        if sub == EMPTY_TREE:
            if mode == TREE_MODE:
                entries.pop(name, None)
        else:
            entries[name] = (TREE_MODE, sub)
    return write_object(repo.git_dir, "tree", format_tree(entries))


async def entry_at(repo: ShadowRepo, tree: str, path: str) -> StoredFile | None:
    """What ``tree`` holds at ``path`` (None: nothing, or a directory)."""
    *dirs, name = path.split("/")
    for part in dirs:
        found = parse_tree(await read_object(repo, tree, "tree")).get(os.fsencode(part))
        if found is None or found[0] != TREE_MODE:
            return None
        tree = found[1]
    found = parse_tree(await read_object(repo, tree, "tree")).get(os.fsencode(name))
    return None if found is None or found[0] == TREE_MODE else StoredFile(mode=found[0], sha=found[1])


def store_file(git_dir: Path, workspace: Path, rel: str, st: os.stat_result, limit: int) -> StoredFile | None:
    """The file or symlink ``rel`` of ``workspace`` (``st``: its ``lstat``) as a blob of the store; None when it is no
    longer a regular file of the workspace. The file is read through the gateway: what the model's commands made of
    it (a link out of the workspace swapped in after the ``lstat``, a FIFO) is never followed or waited on."""
    from sessions.tools import ToolError  # lazily: the tools package loads trio and pydantic
    from sessions.tools.gateway import GatewayRoot

    if stat.S_ISLNK(st.st_mode):
        return StoredFile(mode=b"120000", sha=write_object(git_dir, "blob", os.fsencode(os.readlink(workspace / rel))))
    try:
        found = GatewayRoot(workspace, refused=frozenset()).read(rel, limit=limit + 1)
    except ToolError:
        return None
    if found.truncated:
        return None
    mode = b"100755" if st.st_mode & stat.S_IXUSR else b"100644"
    return StoredFile(mode=mode, sha=write_object(git_dir, "blob", found.data))


def commit(git_dir: Path, tree: str, parent: str | None, message: str) -> str:
    """A commit of ``tree`` (as ``git commit-tree`` makes it, with the store's fixed identity)."""
    when = f"{int(datetime.now(UTC).timestamp())} +0000"
    lines = [f"tree {tree}", *([f"parent {parent}"] if parent else [])]
    lines += [f"author {AUTHOR} <{EMAIL}> {when}", f"committer {AUTHOR} <{EMAIL}> {when}", "", message]
    return write_object(git_dir, "commit", ("\n".join(lines) + "\n").encode())


async def read_head(repo: ShadowRepo) -> str | None:
    """The commit the store's head names (its loose ref read here; through git when it is not loose)."""
    try:
        return (repo.git_dir / HEAD_REF).read_text().strip() or None
    except FileNotFoundError:
        return await repo.head() if (repo.git_dir / "HEAD").is_file() else None
    except OSError as exc:
        raise CheckpointError(f"cannot read the checkpoint store's head in {repo.git_dir}: {exc}") from exc


async def move_head(repo: ShadowRepo, new: str, old: str | None) -> None:
    """Point the store's head at ``new``, only from ``old`` (what it was read as): git's lock file, then a rename."""
    ref = repo.git_dir / HEAD_REF
    lock = ref.with_name(ref.name + ".lock")
    try:
        ref.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        raise CheckpointError(f"the checkpoint store {repo.git_dir} is busy ({exc.strerror}); try again") from exc
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(new + "\n")
        if await read_head(repo) != old:
            raise CheckpointError("another process moved the checkpoint store's head meanwhile")
        os.replace(lock, ref)
    finally:
        lock.unlink(missing_ok=True)


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
