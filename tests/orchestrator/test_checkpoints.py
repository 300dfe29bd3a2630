"""Checkpoints on real files with real git: the shadow store honours ignore rules and the size limit, re-hashes only
what changed, never touches the user's repository, and an undo puts back every byte, mode and symlink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.checkpoints import hook
from orchestrator.checkpoints.git import ShadowRepo, split_nul
from orchestrator.checkpoints.hook import StepCheckpoints
from orchestrator.checkpoints.ledger import Ledger, undone_steps
from orchestrator.checkpoints.snapshot import store_workspace, take_checkpoint
from orchestrator.checkpoints.undo import NothingToUndoError, apply_undo, plan_undo
from tests.support.git_repo import tree_state, user_git, user_repo_state

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    user_git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("print('v1')\n")
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    user_git(ws, "add", "-A")
    user_git(ws, "commit", "-qm", "first")
    user_git(ws, "branch", "feature")
    (ws / "app.py").write_text("print('stashed')\n")
    user_git(ws, "stash", "-q")
    (ws / "staged.py").write_text("x = 1\n")
    user_git(ws, "add", "staged.py")
    (ws / "debug.log").write_text("ignored\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_bytes(b"\0" * 100)
    return ws


async def test_a_checkpoint_honours_ignores_and_the_size_limit_and_leaves_the_users_git_alone(ws: Path) -> None:
    before = user_repo_state(ws)
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("private.txt\n")
    (ws / "private.txt").write_text("excluded by the user's info/exclude\n")
    (ws / "big.dat").write_bytes(b"x" * 2048)
    cp = await take_checkpoint(ShadowRepo(ws), run_id="r1", step_id="S1", kind="before", max_file_bytes=1024)
    files = split_nul(await ShadowRepo(ws).git("ls-tree", "-r", "-z", "--name-only", cp.tree))
    assert sorted(files) == [".gitignore", "app.py", "staged.py"]
    assert cp.skipped == ("big.dat",)
    # the user's repository: HEAD, index, stash, branches, refs and config exactly as they were
    assert user_repo_state(ws) == before
    assert not (ws / ".git" / "refs" / "reasonix").exists()


async def test_tools_caches_are_never_checkpointed_whatever_wrote_them(ws: Path) -> None:
    """A step's verify command that imports its module writes ``__pycache__`` (bytecode writing on, most users'
    default); that and other tools' caches are no change of the step's, so what a step changed, undo and what a
    compacted log says never depend on ``PYTHONDONTWRITEBYTECODE``."""
    repo = ShadowRepo(ws)
    before = await take_checkpoint(repo, run_id="r1", step_id="S1", kind="before")
    (ws / "calc").mkdir()
    (ws / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    await trio.run_process(["python3", "-c", "import calc.ops"], cwd=ws, env=env)
    assert any((ws / "calc" / "__pycache__").iterdir())
    for rel in (".pytest_cache/v/cache/nodeids", "web/node_modules/.cache/babel/x.json", ".mypy_cache/3.11/a.json"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("{}")
    after = await take_checkpoint(repo, run_id="r1", step_id="S1", kind="after")
    assert before.tree != after.tree
    assert {(c.status, c.path) for c in after.changes} == {("A", "calc/ops.py")}


async def test_only_changed_files_are_hashed_again(ws: Path) -> None:
    repo = ShadowRepo(ws)
    first = await store_workspace(repo, "one")
    index_before = repo.index_file.stat().st_mtime_ns
    again = await store_workspace(repo, "two")
    assert again.commit == first.commit  # nothing changed: no new commit
    (ws / "app.py").write_text("print('v2')\n")
    third = await store_workspace(repo, "three")
    assert third.commit != first.commit
    assert repo.index_file.stat().st_mtime_ns >= index_before  # the index (and its stat cache) persists


async def test_undo_puts_back_bytes_modes_and_symlinks_and_removes_created_files(ws: Path) -> None:
    (ws / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(ws / "tool.sh", 0o755)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "data.bin").write_bytes(bytes(range(256)))
    os.symlink("app.py", ws / "current")
    initial = tree_state(ws)
    user = user_repo_state(ws)
    checkpoints = StepCheckpoints(ws, "r1")
    async with checkpoints.step("S1"):
        (ws / "pkg" / "data.bin").unlink()  # deleted
        os.rmdir(ws / "pkg")
        (ws / "app.py").write_text("print('rewritten')\n")  # rewritten
        os.chmod(ws / "tool.sh", 0o644)  # mode
        os.unlink(ws / "current")
        os.symlink("tool.sh", ws / "current")  # symlink retargeted
        (ws / "new" / "deep").mkdir(parents=True)
        (ws / "new" / "deep" / "made.py").write_text("made\n")  # created
    assert tree_state(ws) != initial
    plan = await plan_undo(ShadowRepo(ws))
    assert plan.conflicts == ()
    await apply_undo(ShadowRepo(ws), plan)
    assert tree_state(ws) == initial
    assert not (ws / "new").exists()
    assert user_repo_state(ws) == user
    with pytest.raises(NothingToUndoError, match="already undone"):
        await plan_undo(ShadowRepo(ws))


async def test_a_file_that_becomes_a_directory_and_a_directory_that_becomes_a_file_are_stored_as_they_are(
    ws: Path,
) -> None:
    (ws / "was_file").write_text("a file\n")
    (ws / "was_dir").mkdir()
    (ws / "was_dir" / "inner.txt").write_text("inner\n")
    async with StepCheckpoints(ws, "r1").step("S1"):  # each store names only what the listing found changed
        (ws / "was_file").unlink()
        (ws / "was_file").mkdir()
        (ws / "was_file" / "now.txt").write_text("now inside\n")
        (ws / "was_dir" / "inner.txt").unlink()
        (ws / "was_dir").rmdir()
        (ws / "was_dir").write_text("now a file\n")
    after = Ledger(ws).read()[-1]
    assert sorted((c.status, c.path) for c in after.changes) == [
        ("A", "was_dir"),
        ("A", "was_file/now.txt"),
        ("D", "was_dir/inner.txt"),
        ("D", "was_file"),
    ]


async def test_a_hand_edit_is_a_conflict_and_an_undo_can_be_undone(ws: Path) -> None:
    checkpoints = StepCheckpoints(ws, "r1")
    async with checkpoints.step("S1"):
        (ws / "app.py").write_text("print('agent')\n")
        (ws / "other.py").write_text("agent\n")
    (ws / "app.py").write_text("print('my hand edit')\n")
    plan = await plan_undo(ShadowRepo(ws))
    assert plan.conflicts == ("app.py",)
    after = await apply_undo(ShadowRepo(ws), plan)  # without overwrite: the hand edit stays
    assert (ws / "app.py").read_text() == "print('my hand edit')\n"
    assert not (ws / "other.py").exists()
    assert undone_steps(Ledger(ws).read()) == {("r1", 1): after.run_id}
    # the undo itself, taken back
    redo = await plan_undo(ShadowRepo(ws), run_id=after.run_id)
    await apply_undo(ShadowRepo(ws), redo)
    assert (ws / "other.py").read_text() == "agent\n"
    assert ("r1", 1) not in undone_steps(Ledger(ws).read())


async def test_without_git_the_goal_goes_on_and_says_so_once(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(ws / "no-bin-here"))
    monkeypatch.setattr(hook, "_git_missing_said", False)
    notices: list[str] = []
    for step_id in ("S1", "S2"):
        checkpoints = StepCheckpoints(ws, "r1", notify=notices.append)
        async with checkpoints.step(step_id):
            (ws / f"{step_id}.txt").write_text("x")
        assert await checkpoints.reset_for_retry() == ""
    assert len(notices) == 1 and "git is not installed" in notices[0]
    assert not (ws / ".reasonix").exists()


NAMES = st.text(alphabet=st.sampled_from("ab-_.* #![]é 12"), min_size=1, max_size=8).filter(
    lambda n: n.strip(" ") == n and n not in (".", "..") and not n.startswith(".git")
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    before=st.dictionaries(NAMES, st.binary(max_size=64), max_size=4),
    after=st.dictionaries(NAMES, st.binary(max_size=64), max_size=4),
)
def test_undo_restores_any_file_set_exactly(
    tmp_path_factory: pytest.TempPathFactory, before: dict[str, bytes], after: dict[str, bytes]
) -> None:
    ws = tmp_path_factory.mktemp("prop")
    for name, data in before.items():
        (ws / name).write_bytes(data)
    initial = tree_state(ws)

    async def main() -> None:
        async with StepCheckpoints(ws, "r1").step("S1"):
            for name in before:
                (ws / name).unlink()
            for name, data in after.items():
                (ws / name).write_bytes(data)
        plan = await plan_undo(ShadowRepo(ws))
        await apply_undo(ShadowRepo(ws), plan)

    trio.run(main)
    assert tree_state(ws) == initial


async def test_a_step_cut_off_before_its_end_is_undone_only_with_the_users_word(ws: Path) -> None:
    repo = ShadowRepo(ws)
    await take_checkpoint(repo, run_id="r1", step_id="S1", kind="before")  # then the process was killed
    (ws / "app.py").write_text("print('half done')\n")
    plan = await plan_undo(repo)
    assert plan.cut_off and plan.conflicts == ("app.py",)
    await apply_undo(repo, plan, overwrite=True)  # the user's word (--force, or "overwrite" at the prompt)
    assert (ws / "app.py").read_text() == "print('v1')\n"
