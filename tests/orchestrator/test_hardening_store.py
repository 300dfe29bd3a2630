"""Issue 22, items 1 and 12: nothing the model writes and nothing a repository ships changes what the host runs
through the checkpoint store or the branch worktrees, and a ``.reasonix`` symlink is refused with nothing written
through it. Real git, the real CLI (``reasonix goal``, ``reasonix undo``) against a real emulator process; each attack
leaves a canary file outside the workspace when it works."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from orchestrator.branches import BranchError, BranchWorkspace, MergeOutcome
from orchestrator.checkpoints.git import ATTRIBUTES, ShadowRepo, config_text, store_for
from orchestrator.checkpoints.snapshot import take_checkpoint
from orchestrator.goal.store import RunStore, StateDirError, ensure_state_dir
from sessions.tools.errors import WorkspaceEscapeError
from sessions.tools.paths import resolve_for_write

from .goal_support import EXECUTOR, PLANNER, call, reply, step
from .run_support import clean_env, emulator_process, json_lines, reasonix

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

GIT_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def _git(*args: str, git_dir: Path) -> None:
    subprocess.run(
        ["git", *args], env={**GIT_ENV, "GIT_DIR": str(git_dir)}, cwd=git_dir, check=True, capture_output=True
    )


def _hostile_config(canary: Path) -> str:
    """A git config that runs a command (leaving ``canary``) on add, checkout, status and every hook."""
    run = f"sh -c 'touch {canary}; cat'"
    return (
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f"\tfsmonitor = \"sh -c 'touch {canary}'\"\n\thooksPath = hooks\n"
        f'[filter "x"]\n\tclean = "{run}"\n\tsmudge = "{run}"\n\trequired = true\n'
        f'[diff "x"]\n\ttextconv = "{run}"\n'
    )


def _plant_store(git_dir: Path, canary: Path) -> None:
    """A git directory made by real git, then given the hostile config and a hook."""
    git_dir.mkdir(parents=True)
    _git("init", "-q", git_dir=git_dir)
    (git_dir / "config").write_text(_hostile_config(canary))
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {canary}\n")
        os.chmod(hooks / name, 0o755)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / ".gitattributes").write_text("* filter=x diff=x\n")
    return ws


def _goal(ws: Path, tmp_path: Path, env: dict[str, str], executor: list[dict[str, Any]]) -> Any:
    steps = [step("S1", "Write notes", writes=["notes.md"], verify=["test -e notes.md"])]
    planner = [
        reply(call("submit_plan", objective="Notes", steps=steps)),
        reply(call("goal_verdict", verdict="complete", evidence=["done"])),
    ]
    script = {
        "sessions": [
            {"key": "planner", "system_contains": PLANNER, "replies": planner},
            {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
        ]
    }
    with emulator_process(script, tmp_path, env) as url:
        return reasonix("goal", "Notes", "--workspace", str(ws), "--base-url", url, "--yes", "--json", env=env)


def _tool_results(ws: Path, run_id: str) -> list[str]:
    journal = ws / ".reasonix" / "runs" / run_id / "executor.jsonl"
    out = []
    for line in journal.read_text().splitlines():
        record = json.loads(line)
        if record.get("t") == "msg":
            message = json.loads(record["raw"])
            if message["role"] == "tool":
                out.append(str(message["content"]))
    return out


NOTES = [
    reply(call("write_file", path="notes.md", content="notes\n")),
    reply(call("report_step", step_id="S1", status="done", summary="notes", evidence=["wrote notes.md"])),
]


@pytest.mark.bwrap
def test_a_store_the_repository_ships_is_never_adopted_by_goal_or_undo(tmp_path: Path) -> None:
    """A cloned repository with a ready-made ``.reasonix/checkpoints/git`` (filter, fsmonitor, hooks) and a
    ``.gitattributes`` naming the filter: the goal's checkpoints and ``reasonix undo`` run none of it."""
    env = clean_env(tmp_path / "home")
    ws = _workspace(tmp_path)
    canary = tmp_path / "canary"
    planted = ws / ".reasonix" / "checkpoints" / "git"
    _plant_store(planted, canary)
    planted_bytes = (planted / "config").read_bytes()

    proc = _goal(ws, tmp_path, env, NOTES)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "notes.md").read_text() == "notes\n"
    assert not canary.exists()

    undo = reasonix("undo", "--workspace", str(ws), env=env)
    assert undo.returncode == 0, undo.stderr
    assert not (ws / "notes.md").exists()
    assert not canary.exists()
    # The planted store was not used at all; the real one is Reasonix's own, outside the workspace.
    assert (planted / "config").read_bytes() == planted_bytes
    store = store_for(ws, env)
    assert not store.is_relative_to(ws)
    assert (store / "git" / "config").read_text() == config_text()


@pytest.mark.bwrap
def test_a_store_config_the_model_writes_runs_nothing(tmp_path: Path) -> None:
    """The model tries every way to give the store a filter: write_file into ``.reasonix/checkpoints/git/config``
    (where the store used to be), write_file to the real store's absolute path, and bash appending to it; and a
    ``.gitattributes`` naming the filter. The next checkpoints run nothing, and the store's config is Reasonix's."""
    env = clean_env(tmp_path / "home")
    ws = _workspace(tmp_path)
    canary = tmp_path / "canary"
    real_config = store_for(ws, env) / "git" / "config"
    hostile = _hostile_config(canary)
    executor = [
        reply(
            call("write_file", path=".reasonix/checkpoints/git/config", content=hostile),
            call("write_file", path=str(real_config), content=hostile),
            call("write_file", path=".gitattributes", content="* filter=x\n"),
        ),
        reply(call("bash", command=f"cat >> {real_config} <<'EOF'\n{hostile}EOF\n")),
        *NOTES,
    ]
    proc = _goal(ws, tmp_path, env, executor)
    assert proc.returncode == 0, proc.stderr
    run_id = json_lines(proc.stdout)[-1]["run_id"]
    assert not canary.exists()
    assert real_config.read_text() == config_text()
    assert not (ws / ".reasonix" / "checkpoints" / "git" / "config").exists()
    results = _tool_results(ws, run_id)
    assert any("inside .reasonix/" in r for r in results), results
    assert any("outside the workspace" in r for r in results), results

    undo = reasonix("undo", "--workspace", str(ws), env=env)
    assert undo.returncode == 0, undo.stderr
    assert not canary.exists()


def _ws_plain(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    return ws


def test_a_tampered_store_config_is_rewritten_and_gitattributes_name_no_filter(tmp_path: Path) -> None:
    """Whatever changed the store's config and attributes (the user, another tool), the next checkpoint puts
    Reasonix's own back before git runs; the workspace's ``.gitattributes`` neither filters nor converts."""
    ws = _ws_plain(tmp_path)
    canary = tmp_path / "canary"
    repo = ShadowRepo(ws)
    trio.run(lambda: take_checkpoint(repo, run_id="r1", step_id="S1", kind="before"))
    (repo.git_dir / "config").write_text(_hostile_config(canary))
    (repo.git_dir / "info" / "attributes").write_text("* filter=x diff=x\n")
    (ws / ".gitattributes").write_text("* filter=x text eol=crlf\n")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / "lf.txt").write_bytes(b"one\ntwo\n")

    async def main() -> dict[str, bytes]:
        cp = await take_checkpoint(repo, run_id="r1", step_id="S1", kind="after")
        return {p: await repo.git("cat-file", "blob", f"{cp.tree}:{p}") for p in ("crlf.txt", "lf.txt")}

    stored = trio.run(main)
    assert not canary.exists()
    assert stored == {"crlf.txt": b"one\r\ntwo\r\n", "lf.txt": b"one\ntwo\n"}  # byte for byte
    assert (repo.git_dir / "config").read_text() == config_text()
    assert (repo.git_dir / "info" / "attributes").read_text() == ATTRIBUTES


def test_an_embedded_repository_in_the_workspace_runs_nothing(tmp_path: Path) -> None:
    ws = _ws_plain(tmp_path)
    canary = tmp_path / "canary"
    sub = ws / "vendor" / "lib"
    sub.mkdir(parents=True)
    (sub / "x.txt").write_text("x\n")
    for args in (("init", "-q"), ("add", "x.txt"), ("commit", "-qm", "x")):
        subprocess.run(["git", *args], env=GIT_ENV, cwd=sub, check=True, capture_output=True)
    (sub / ".git" / "config").write_text(_hostile_config(canary))
    (sub / ".gitattributes").write_text("* filter=x\n")
    trio.run(lambda: take_checkpoint(ShadowRepo(ws), run_id="r1", step_id="S1", kind="before"))
    assert not canary.exists()


def test_a_branch_that_points_its_git_file_at_a_hostile_git_dir_runs_nothing(tmp_path: Path) -> None:
    """The branch's session owns its copy, ``.git`` file included: pointing it at a git directory of its own making
    (with a filter) must not make the merge run that filter; the merge still takes the branch's change."""
    ws = _ws_plain(tmp_path)
    canary = tmp_path / "canary"
    run_dir = ws / ".reasonix" / "runs" / "r1"

    async def main() -> MergeOutcome | BranchError:
        branch = await BranchWorkspace.open(ws, run_dir, "S1")
        evil = branch.path / "evil.git"
        _plant_store(evil, canary)
        (branch.path / ".git").write_text(f"gitdir: {evil}\n")
        (branch.path / ".gitattributes").write_text("* filter=x\n")
        (branch.path / "a.txt").write_text("changed in the branch\n")
        try:
            return await branch.merge_back(["a.txt", ".gitattributes", ".git", "evil.git/**"])
        except BranchError as exc:
            return exc
        finally:
            await branch.discard()

    outcome = trio.run(main)
    assert not canary.exists()
    assert isinstance(outcome, MergeOutcome) and outcome.merged, outcome
    assert (ws / "a.txt").read_text() == "changed in the branch\n"


# ------------------------------------------------------------------------------------------- item 12: the symlink


@pytest.mark.parametrize("link", [".reasonix", ".reasonix/runs"])
def test_a_reasonix_symlink_is_refused_and_nothing_is_written_through_it(tmp_path: Path, link: str) -> None:
    env = clean_env(tmp_path / "home")
    ws = _ws_plain(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, ws / link)
    proc = _goal(ws, tmp_path, env, NOTES)
    assert proc.returncode != 0
    assert "is a symlink" in proc.stderr and "remove the link" in proc.stderr, proc.stderr
    assert list(outside.iterdir()) == []
    assert not (ws / "notes.md").exists()


def test_a_state_dir_that_is_a_file_or_a_dangling_link_is_refused(tmp_path: Path) -> None:
    ws = _ws_plain(tmp_path)
    (ws / ".reasonix").write_text("not a directory\n")
    with pytest.raises(StateDirError, match="not a directory"):
        ensure_state_dir(ws)
    (ws / ".reasonix").unlink()
    os.symlink(tmp_path / "nowhere", ws / ".reasonix")
    with pytest.raises(StateDirError, match="is a symlink"):
        RunStore.create(ws)
    assert not (tmp_path / "nowhere").exists()


def test_a_gitignore_link_in_the_state_dir_is_not_written_through(tmp_path: Path) -> None:
    ws = _ws_plain(tmp_path)
    (ws / ".reasonix").mkdir()
    target = tmp_path / "victim"
    os.symlink(target, ws / ".reasonix" / ".gitignore")
    ensure_state_dir(ws)
    assert not target.exists()


def test_a_shipped_run_with_a_symlinked_record_is_not_resumed(tmp_path: Path) -> None:
    ws = _ws_plain(tmp_path)
    store = RunStore.create(ws, "shipped")
    (store.dir / "goal.json").write_text("{}")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    os.symlink(victim, store.dir / "events.jsonl")
    with pytest.raises(StateDirError, match=r"events\.jsonl is a symlink"):
        RunStore.open(ws, "shipped")
    assert victim.read_text() == "the user's file\n"


@pytest.mark.parametrize("raw", [".reasonix/runs/x/goal.json", "./.reasonix/checkpoints/git/config", "via/goal.json"])
def test_file_tools_do_not_write_inside_the_state_dir(tmp_path: Path, raw: str) -> None:
    ws = _ws_plain(tmp_path)
    (ws / ".reasonix" / "runs" / "x").mkdir(parents=True)
    os.symlink(ws / ".reasonix" / "runs" / "x", ws / "via")
    with pytest.raises(WorkspaceEscapeError, match=r"inside \.reasonix/"):
        resolve_for_write(ws, raw)
    assert resolve_for_write(ws, "reasonix-notes.md").rel == "reasonix-notes.md"
