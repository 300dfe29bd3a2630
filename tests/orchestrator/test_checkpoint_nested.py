"""The checkpoint store's staging (``orchestrator.checkpoints.stage``) with real git on real files: no repository
nested in the workspace — a directory, a ``.git`` file pointing elsewhere, a gitlink left in an older store's index,
one inside a branch copy — is entered by the store's git, and their files are stored as plain content."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.branches.workspace import BranchWorkspace
from orchestrator.checkpoints import snapshot
from orchestrator.checkpoints.git import ShadowRepo
from orchestrator.checkpoints.snapshot import store_workspace
from orchestrator.checkpoints.turns import TurnCheckpoints, apply_rewind, plan_rewind
from orchestrator.checkpoints.undo import apply_undo, plan_undo

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(cwd: Path, *args: str) -> str:
    argv = ["git", "-c", "user.name=m", "-c", "user.email=m@x", *args]
    return subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def _hostile_repo(path: Path, marker: Path) -> None:
    """A repository whose own config defines a clean filter its ``.gitattributes`` gives every path, committed, then
    changed: what git would have to ask it about."""
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    _git(path, "config", "filter.x.clean", f"sh -c 'touch {marker}; cat'")
    (path / ".gitattributes").write_text("* filter=x\n")
    (path / "f.txt").write_text("one\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "x")
    marker.unlink(missing_ok=True)  # its own commit ran it, here on purpose
    (path / "f.txt").write_text("two\n")


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def _stored(repo: ShadowRepo, tree: str) -> dict[str, str]:
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", tree], env=repo.env(), capture_output=True, check=True, cwd=repo.workspace
    ).stdout.decode()
    return {line.split("\t", 1)[1]: line.split()[0] for line in out.split("\0") if line}


async def test_nested_repositories_are_stored_as_files_and_never_entered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    marker = tmp_path / "filter-ran"
    _hostile_repo(ws / "sub", marker)
    _hostile_repo(ws / "sub" / "deeper", marker)  # one inside the other
    outside = tmp_path / "elsewhere"
    _hostile_repo(outside, marker)
    (ws / "linked").mkdir()
    (ws / "linked" / ".git").write_text(f"gitdir: {outside / '.git'}\n")  # a .git file naming a repository outside
    (ws / "linked" / "g.txt").write_text("g\n")
    (ws / "sub" / ".gitignore").write_text("*.log\n")
    (ws / "sub" / "noise.log").write_text("ignored\n")
    repo = ShadowRepo(ws)
    await repo.ensure()
    # an older store's index holding a gitlink: the next add would ask that repository for its status
    head = _git(ws / "sub", "rev-parse", "HEAD").strip()
    await repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    stored_first = await repo.git("ls-files", "-s")
    assert stored_first.startswith(b"160000 ")  # the gitlink an older store would have left
    first = await store_workspace(repo, "first")
    (ws / "sub" / "f.txt").write_text("three\n")
    (ws / "sub" / "deeper" / "f.txt").write_text("three\n")
    second = await store_workspace(repo, "second")
    assert not marker.exists(), "a nested repository's filter ran on the host"
    stored = _stored(repo, second.tree)
    assert set(stored) == {
        "sub/.gitattributes",
        "sub/.gitignore",
        "sub/f.txt",
        "sub/deeper/.gitattributes",
        "sub/deeper/f.txt",
        "linked/g.txt",
    }
    assert all(mode == "100644" for mode in stored.values())  # files, never a gitlink
    assert first.tree != second.tree
    blob = await repo.git("cat-file", "blob", f"{second.tree}:sub/f.txt")
    assert blob == b"three\n"  # byte for byte, no filter


async def test_a_branch_copy_never_enters_a_repository_made_in_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    marker = tmp_path / "filter-ran"
    branch = await BranchWorkspace.open(ws, tmp_path / "run", "S1")
    _hostile_repo(branch.path / "made", marker)
    outcome = await branch.merge_back(["made/**"])
    assert not marker.exists(), "a repository made in the branch copy had its filter run on the host"
    assert outcome.merged, outcome
    assert (ws / "made" / "f.txt").read_text() == "two\n"
    assert not (ws / "made" / ".git").exists()  # its .git is not content the merge carries
    second = await BranchWorkspace.open(ws, tmp_path / "run", "S2")  # the live workspace now holds made/
    (ws / "made" / "f.txt").write_text("live\n")
    await second.merge_back([])
    assert not marker.exists()


async def test_a_repository_made_between_the_listing_and_the_add_leaves_the_index_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    marker = tmp_path / "filter-ran"
    repo = ShadowRepo(ws)
    await store_workspace(repo, "first")  # the index is known clean from here on
    _hostile_repo(ws / "late", marker)

    async def too_late(*_args: object, **_kwargs: object) -> list[str]:
        return []  # as if ``late`` appeared just after the workspace was listed: only ``add`` sees it

    monkeypatch.setattr(snapshot, "index_nested", too_late)
    raced = await store_workspace(repo, "raced")
    assert "late" not in _stored(repo, raced.tree)
    assert b"late" not in await repo.git("ls-files", "-s")  # no gitlink kept for the next add to ask
    monkeypatch.undo()
    (ws / "late" / "f.txt").write_text("three\n")
    after = await store_workspace(repo, "after")
    assert not marker.exists(), "the late repository's filter ran on the host"
    assert _stored(repo, after.tree).keys() == {"a.txt", "late/.gitattributes", "late/f.txt"}


def _contents(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _arm(repo: Path, marker: Path) -> None:
    """Everything of a repository's own that runs a command: fsmonitor, and the hooks a checkout, an index change or a
    commit would run."""
    _git(repo, "config", "core.fsmonitor", f"sh -c 'touch {marker}'")
    for hook in ("post-checkout", "post-index-change", "pre-commit", "post-commit", "reference-transaction"):
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\ntouch {marker}\n")
        path.chmod(0o755)


async def test_a_nested_git_directory_survives_turns_undo_and_rewind_byte_for_byte(tmp_path: Path) -> None:
    """Follow-up part e: a nested repository's ``.git`` (config, HEAD, refs, objects, hooks) is never entered by the
    store's git and never changed by a checkpoint, an undo or a rewind; none of its filters, hooks or fsmonitor run."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    marker = tmp_path / "ran-on-the-host"
    turns = TurnCheckpoints(ws, notify=lambda _text: None)
    before = await turns.before()
    _hostile_repo(ws / "sub", marker)
    _arm(ws / "sub", marker)
    one = await turns.after(before, run_id="conv", number=1, note="turn 1 made sub")
    saved = _contents(ws / "sub" / ".git")
    assert {"config", "HEAD", "index"} <= saved.keys() and any(k.startswith("objects/") for k in saved)
    before = await turns.before()
    (ws / "sub" / "f.txt").write_text("three\n")
    (ws / "a.txt").write_text("a2\n")
    two = await turns.after(before, run_id="conv", number=2, note="turn 2 changed sub/f.txt")
    assert one is not None and two is not None
    assert _contents(ws / "sub" / ".git") == saved
    await apply_undo(ShadowRepo(ws), await plan_undo(ShadowRepo(ws)))  # takes back turn 2
    assert (ws / "sub" / "f.txt").read_text() == "two\n" and (ws / "a.txt").read_text() == "a0\n"
    assert _contents(ws / "sub" / ".git") == saved
    repo = ShadowRepo(ws)
    await apply_rewind(repo, await plan_rewind(repo, [one]))  # takes back turn 1: the files it made go
    assert not (ws / "sub" / "f.txt").exists()
    assert _contents(ws / "sub" / ".git") == saved  # the repository's own data is not the store's to remove
    assert not marker.exists(), "a nested repository's filter, hook or fsmonitor ran on the host"
