"""What a turn did to the workspace, told by the conversation's gate before each call runs (:class:`TurnGate`), and
what its checkpoints then store (:class:`Turn`; the rule is in :mod:`~orchestrator.checkpoints.turns`)."""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio
from pydantic import BaseModel

from orchestrator.checkpoints.git import CheckpointError, ShadowRepo, join_nul
from orchestrator.checkpoints.objects import (
    StoredFile,
    entry_at,
    move_head,
    read_head,
    read_object,
    store_file,
    tree_with,
)
from orchestrator.checkpoints.objects import (
    commit as make_commit,
)
from orchestrator.checkpoints.snapshot import MAX_FILE_BYTES, Tree


class TurnOwner(Protocol):
    """The turn checkpoints of a conversation (:class:`~orchestrator.checkpoints.turns.TurnCheckpoints`)."""

    repo: ShadowRepo
    workspace: Path
    """Its real path."""

    @property
    def off(self) -> bool: ...

    def failed(self, exc: CheckpointError) -> None: ...

    async def store(self, message: str) -> Tree: ...


@dataclass
class Turn:
    """What one turn did to the workspace, as far as its checkpoints need it. Told of each call before it runs
    (:meth:`allow`); :meth:`TurnCheckpoints.finish` stores what it says when the turn ends.

    Until the first call that may write anything (a command), the turn's ``before`` is the last stored tree with
    each file the turn wrote as it was just before the turn's first write to it (``found``): nothing is walked. At
    that call the whole workspace is stored (``scanned``), and the ``before`` is that tree with the files written
    until then as ``found`` holds them; the ``after`` is then the whole workspace stored again. A turn whose writes
    all named their files has as its ``after`` its ``before`` with those files as they are at its end."""

    owner: TurnOwner
    found: dict[str, StoredFile | None] = field(default_factory=dict)
    """Each file written before the workspace was stored in this turn, as it was then (None: there was none)."""
    written: set[str] = field(default_factory=set)
    """Every file the file tools wrote in this turn."""
    scanned: Tree | None = None
    commands: bool = False
    """A call that may write anything ran (its writes are found by storing the whole workspace at the end)."""
    skipped: set[str] = field(default_factory=set)
    lock: trio.Lock = field(default_factory=trio.Lock)

    @property
    def repo(self) -> ShadowRepo:
        return self.owner.repo

    async def scan(self) -> None:
        """A call that may write anything is about to run (or the turn runs commands outside its calls): the whole
        workspace is stored now, once a turn."""
        async with self.lock:
            self.commands = True
            if self.scanned is None and not self.owner.off:
                await self._scan()

    async def _scan(self) -> None:
        try:
            self.scanned = await self.owner.store("before a command of the turn")
        except CheckpointError as exc:
            self.owner.failed(exc)

    async def allow(self, tool: Any, args: BaseModel, ctx: Any) -> None:
        """``tool`` is about to run with ``args`` in ``ctx``: keep what its write would change as it is now."""
        if self.owner.off or self.commands or tool.read_only:
            return
        paths = _named(self.owner.workspace, tool, args, ctx)
        if paths == ():
            return
        if paths is None:
            await self.scan()
            return
        async with self.lock:
            if self.owner.off or self.commands:
                return
            try:
                if self.scanned is None and not self.written:
                    await self.repo.ensure()  # the store's own config and excludes, before anything is stored
                    if await read_head(self.repo) is None:  # nothing stored yet: the first store is the whole
                        await self._scan()
                await trio.to_thread.run_sync(self._keep, paths)
            except CheckpointError as exc:
                self.owner.failed(exc)

    def _keep(self, paths: tuple[str, ...]) -> None:
        for rel in paths:
            if self.scanned is None and rel not in self.found and rel not in self.written:
                self.found[rel] = self._entry(rel)
            self.written.add(rel)

    def _entry(self, rel: str) -> StoredFile | None:
        """``rel`` as a blob of the store (None: missing, not a file, or too large to keep)."""
        path = self.owner.workspace / rel
        try:
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_size > MAX_FILE_BYTES:
                self.skipped.add(rel)
                return None
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                return None
            return store_file(self.repo.git_dir, self.owner.workspace, rel, st, MAX_FILE_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise CheckpointError(f"cannot store {rel} in the checkpoint store: {exc}") from exc

    async def stored(self, number: int) -> tuple[Tree, Tree] | None:
        """The turn's ``before`` and ``after`` as stored (None: it wrote nothing that is kept)."""
        if self.scanned is None and not self.written:
            return None  # a turn that only read: nothing is stored
        head = await read_head(self.repo)
        if self.scanned is not None:
            base_tree, base_commit = self.scanned.tree, self.scanned.commit
        elif head is not None:
            base_tree, base_commit = await _tree_of(self.repo, head), head
        else:
            return None
        kept = await self._kept(base_tree, set(self.found) if self.commands else self.written)
        before_tree = await tree_with(self.repo, base_tree, {p: e for p, e in self.found.items() if p in kept})
        before_commit = base_commit
        if before_tree != base_tree:
            before_commit = make_commit(self.repo.git_dir, before_tree, head, f"before turn {number}")
        if self.commands:
            if before_commit != head:
                await move_head(self.repo, before_commit, head)
            now = await self.owner.store(f"after turn {number}")
            return Tree(commit=before_commit, tree=before_tree), now
        left = await trio.to_thread.run_sync(lambda: {p: self._entry(p) for p in sorted(kept)})
        after_tree = await tree_with(self.repo, before_tree, left)
        if after_tree == before_tree:
            return None
        after_commit = make_commit(self.repo.git_dir, after_tree, before_commit, f"after turn {number}")
        await move_head(self.repo, after_commit, head)
        before = Tree(commit=before_commit, tree=before_tree)
        return before, Tree(commit=after_commit, tree=after_tree, skipped=tuple(sorted(self.skipped)))

    async def _kept(self, base_tree: str, written: set[str]) -> set[str]:
        """Those of ``written`` a store of the whole workspace would keep: those stored already, and the others
        unless the workspace's ignore rules (and the store's own excludes) leave them out."""
        new = [p for p in sorted(written) if await entry_at(self.repo, base_tree, p) is None]
        ignored: set[str] = set()
        if new:
            out = await self.repo.git(
                "check-ignore", "-z", "--stdin", "--no-index", stdin=join_nul(new), ok_codes=(0, 1)
            )
            ignored = set(out.decode("utf-8", "surrogateescape").split("\0")) - {""}
        return written - ignored


async def _tree_of(repo: ShadowRepo, commit_id: str) -> str:
    body = await read_object(repo, commit_id, "commit")
    return body.split(b"\n", 1)[0].removeprefix(b"tree ").decode()


def _named(workspace: Path, tool: Any, args: BaseModel, ctx: Any) -> tuple[str, ...] | None:
    """What the call writes in ``workspace`` when it names it: ``()`` for nothing (or another tree: a branch's
    copy), None when it may write anything or names a path the store cannot take as written."""
    root = Path(ctx.root)
    if root != workspace and root.resolve() != workspace:
        return ()
    paths: tuple[str, ...] | None = tool.writes(args, ctx)
    if paths is None or any(not _plain(workspace, p) for p in paths):
        return None
    return paths


def _plain(workspace: Path, rel: str) -> bool:
    """``rel`` is a path the store can hold as written: relative, normal, not in ``.git``, every directory on the
    way a real one (no symlink)."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or any(p.lower() == ".git" for p in parts):
        return False
    at = workspace
    for part in parts[:-1]:
        at = at / part
        try:
            st = at.lstat()
        except FileNotFoundError:
            return True  # made by the write: a plain directory
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            return False
    return True


class TurnGate:
    """The conversation's gate with its turn told of each call the gate lets run (before it runs); every other
    attribute is the inner gate's (its ``after``, ``hooks``, ``rules``)."""

    def __init__(self, inner: Any, turn: Callable[[], Turn | None]) -> None:
        self.inner = inner
        self.turn = turn

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        refused = await self.inner.check(tool, args, ctx) if self.inner is not None else None
        turn = self.turn()
        if refused is None and turn is not None:
            await turn.allow(tool, args, ctx)
        return refused

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
