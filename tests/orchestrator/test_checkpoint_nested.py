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
