"""What of ``.reasonix/`` the user's git sees (issue 48 item 17): the run state never, a team's commands, skills and
agents always; checked with real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.goal.store import RunStore, ensure_state_dir
from tests.support.git_repo import user_git

pytestmark = pytest.mark.git

SHARED = [".reasonix/agents/fixer.md", ".reasonix/commands/review.md", ".reasonix/skills/deploy/SKILL.md"]


def _untracked(ws: Path) -> list[str]:
    out = user_git(ws, "status", "--porcelain", "--untracked-files=all")
    return sorted(line[3:] for line in out.splitlines())


def _share(ws: Path) -> None:
    for name in SHARED:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("shared with the team\n")


def test_run_state_is_ignored_and_team_commands_skills_and_agents_can_be_committed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    user_git(ws, "init", "-q")
    RunStore.create(ws, "r1")  # a run: .reasonix/, its .gitignore, runs/r1/...
    (ws / ".reasonix" / "repl_history").write_text("hello\n")
    _share(ws)
    assert _untracked(ws) == SHARED


def test_the_star_an_earlier_version_wrote_is_replaced_and_a_users_own_file_is_kept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".reasonix").mkdir(parents=True)
    user_git(ws, "init", "-q")
    (ws / ".reasonix" / ".gitignore").write_text("# Reasonix run journals and plans: local state, not source.\n*\n")
    _share(ws)
    assert _untracked(ws) == []  # the old '*' hid them
    ensure_state_dir(ws)
    assert _untracked(ws) == SHARED

    mine = "# mine\n*\n!/notes.md\n"
    (ws / ".reasonix" / ".gitignore").write_text(mine)
    ensure_state_dir(ws)
    assert (ws / ".reasonix" / ".gitignore").read_text() == mine


def test_an_old_gitignore_that_is_a_link_is_not_replaced_through_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".reasonix").mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text("# Reasonix run journals and plans: local state, not source.\n*\n")
    os.symlink(target, ws / ".reasonix" / ".gitignore")
    ensure_state_dir(ws)
    assert target.read_text() == "# Reasonix run journals and plans: local state, not source.\n*\n"
    assert (ws / ".reasonix" / ".gitignore").is_symlink()
