"""``reasonix undo`` and ``reasonix checkpoints`` as real processes after a real ``reasonix goal`` (against a real
``reasonix emulate`` process): real files, real git, the user's own repository checked with git itself."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repo import tree_state, user_git, user_repo_state

from .goal_support import EXECUTOR, PLANNER, call, reply, step
from .run_support import clean_env, emulator_process, json_lines, reasonix

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

OPS = "def add(a, b):\n    return a + b\n"
REWRITTEN = "def add(a, b):\n    return a - b  # rewritten\n"
S1_COMMAND = (
    "rm old.txt && chmod -x tool.sh && ln -sfn tool.sh current && rm -r data && "
    "printf 'def add(a, b):\\n    return a - b  # rewritten\\n' > calc/ops.py && mkdir -p made && echo new > made/x.txt"
)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "calc").mkdir(parents=True)
    user_git(ws, "init", "-q", "-b", "main")
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "calc" / "ops.py").write_text(OPS)
    (ws / "old.txt").write_text("to be deleted\n")
    (ws / "tool.sh").write_text("#!/bin/sh\necho tool\n")
    os.chmod(ws / "tool.sh", 0o755)
    os.symlink("old.txt", ws / "current")
    (ws / "data").mkdir()
    (ws / "data" / "blob.bin").write_bytes(bytes(range(256)) * 4)
    user_git(ws, "add", "-A")
    user_git(ws, "commit", "-qm", "start")
    user_git(ws, "branch", "topic")
    (ws / "calc" / "ops.py").write_text(OPS + "# stashed\n")
    user_git(ws, "stash", "-q")
    (ws / "README.md").write_text("# staged, not committed\n")
    user_git(ws, "add", "README.md")
    return ws


def _script() -> dict[str, Any]:
    steps = [
        step("S1", "Rework the files", writes=["calc/ops.py"], verify=["test -e made/x.txt"]),
        step("S2", "Add notes", deps=["S1"], writes=["notes.md"], verify=["test -e notes.md"]),
    ]
    planner = [
        reply(call("submit_plan", objective="Rework", steps=steps)),
        reply(call("goal_verdict", verdict="complete", evidence=["done"])),
    ]
    executor = [
        reply(call("bash", command=S1_COMMAND)),
        reply(call("report_step", step_id="S1", status="done", summary="reworked", evidence=["ran it"])),
        reply(call("write_file", path="notes.md", content="notes by the agent\n")),
        reply(call("write_file", path="calc/ops.py", content=OPS + "# touched by S2\n")),
        reply(call("report_step", step_id="S2", status="done", summary="notes", evidence=["wrote notes.md"])),
    ]
    return {
        "sessions": [
            {"key": "planner", "system_contains": PLANNER, "replies": planner},
            {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
        ]
    }


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


def _goal(ws: Path, tmp_path: Path, env: dict[str, str]) -> str:
    with emulator_process(_script(), tmp_path, env) as url:
        proc = reasonix("goal", "Rework", "--workspace", str(ws), "--base-url", url, "--yes", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    run_id: str = json_lines(proc.stdout)[-1]["run_id"]
    return run_id


@pytest.mark.bwrap
def test_undo_takes_back_steps_byte_for_byte_and_leaves_the_users_git_alone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    ws = _workspace(tmp_path)
    initial = tree_state(ws)
    user_before = user_repo_state(ws)
    status_before = user_git(ws, "status", "--porcelain")
    run_id = _goal(ws, tmp_path, env)
    after_goal = tree_state(ws)
    assert after_goal["current"] == ("link", b"tool.sh") and "old.txt" not in after_goal

    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"run {run_id}" in listed.stdout
    assert "S1" in listed.stdout and "D old.txt" in listed.stdout and "A made/x.txt" in listed.stdout
    assert "A notes.md" in listed.stdout

    # The last step of the latest run: S2 only.
    last = reasonix("undo", "--workspace", str(ws), env=env)
    assert last.returncode == 0, last.stderr
    assert "taking back S2 of run " + run_id in last.stdout and "notes.md: remove (the step created it)" in last.stdout
    assert not (ws / "notes.md").exists() and (ws / "made" / "x.txt").exists()

    # S1 and everything after it (S2 is already undone): the workspace as it was, byte for byte.
    whole = reasonix("undo", "--run", run_id, "--step", "S1", "--workspace", str(ws), "--json", env=env)
    assert whole.returncode == 0, whole.stderr
    result = json.loads(whole.stdout)
    assert result["steps"] == ["S1"] and result["kept"] == []
    assert tree_state(ws) == initial
    assert os.stat(ws / "tool.sh").st_mode & 0o111 and os.readlink(ws / "current") == "old.txt"
    # The user's repository, asked of git itself: HEAD, index, stash, branches, refs, config; and the status.
    assert user_repo_state(ws) == user_before
    assert user_git(ws, "status", "--porcelain") == status_before

    # With every step undone, `reasonix checkpoints` no longer suggests an undo that would fail.
    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert listed.returncode == 0, listed.stderr
    assert "reasonix undo " not in listed.stdout.replace("reasonix undo --run", "")
    assert "every step is undone: there is nothing left to take back" in listed.stdout
    assert reasonix("undo", "--workspace", str(ws), env=env).returncode == 1
    ambiguous = reasonix("checkpoints", "--run", "undo-", "--workspace", str(ws), env=env)  # the two undos
    assert ambiguous.returncode == 1 and "'undo-' is ambiguous: it starts 2 runs' ids" in ambiguous.stderr

    # An undo can be undone.
    redo = reasonix("undo", "--run", result["undo_id"], "--workspace", str(ws), env=env)
    assert redo.returncode == 0, redo.stderr
    relisted = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert "take back the last step with: reasonix undo" in relisted.stdout
    expected = {k: v for k, v in after_goal.items() if k != "notes.md"} | {
        "calc/ops.py": ("file 0", REWRITTEN.encode())
    }
    assert tree_state(ws) == expected  # as S1 left it
    assert (ws / "made" / "x.txt").exists() and not (ws / "old.txt").exists()
    assert user_repo_state(ws) == user_before


@pytest.mark.bwrap
def test_a_hand_edit_after_the_agent_is_detected_on_undo_and_not_lost(tmp_path: Path, env: dict[str, str]) -> None:
    ws = _workspace(tmp_path)
    _goal(ws, tmp_path, env)
    mine = "my hand edit, after the agent\n"
    (ws / "notes.md").write_text(mine)

    refused = reasonix("undo", "--workspace", str(ws), env=env)  # no terminal: refuse, name the file and the flags
    assert refused.returncode == 1
    assert "notes.md" in refused.stderr and "--force" in refused.stderr and "--keep" in refused.stderr
    # The diff of a text file is its lines (issue 48 item 28: it was "Binary files a/notes.md and b/notes.md differ").
    assert "-notes by the agent\n+my hand edit, after the agent\n" in refused.stderr, refused.stderr
    assert "Binary files" not in refused.stderr
    assert (ws / "notes.md").read_text() == mine  # not lost

    # --force overwrites; the hand edit is still in the undo's checkpoint, and undoing that undo brings it back.
    forced = reasonix("undo", "--force", "--workspace", str(ws), "--json", env=env)
    assert forced.returncode == 0, forced.stderr
    assert not (ws / "notes.md").exists()
    back = reasonix("undo", "--run", json.loads(forced.stdout)["undo_id"], "--workspace", str(ws), env=env)
    assert back.returncode == 0, back.stderr
    assert (ws / "notes.md").read_text() == mine

    # --keep: everything else of the step is taken back, the hand-edited file stays as the user left it.
    kept = reasonix("undo", "--keep", "--workspace", str(ws), "--json", env=env)
    assert kept.returncode == 0, kept.stderr
    result = json.loads(kept.stdout)
    assert result["kept"] == ["notes.md"] and [c["path"] for c in result["restored"]] == ["calc/ops.py"]
    assert (ws / "notes.md").read_text() == mine
    assert (ws / "calc" / "ops.py").read_text() == REWRITTEN


def test_undo_without_checkpoints_and_with_an_unknown_run_says_what_to_do(tmp_path: Path, env: dict[str, str]) -> None:
    ws = tmp_path / "empty"
    ws.mkdir()
    nothing = reasonix("undo", "--workspace", str(ws), env=env)
    assert nothing.returncode == 1 and "no checkpoints in this workspace yet" in nothing.stderr
    listed = reasonix("checkpoints", "--workspace", str(ws), env=env)
    assert listed.returncode == 0 and "no checkpoints yet" in listed.stdout
    step_only = reasonix("undo", "--step", "S1", "--workspace", str(ws), env=env)
    assert step_only.returncode == 2 and "--step needs --run" in step_only.stderr
