"""The seal of a run directory (:mod:`orchestrator.run_seal`): the user's key is made 0600 once and never read
through a link or from a file others can read; a seal holds only for the user, the workspace and the run it was made
for."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from orchestrator.goal.store import RunStore, run_state_dir
from orchestrator.run_seal import ForgedRunError, RunKeyError, is_sealed, key_path, seal_run, user_key
from orchestrator.runs.history import list_runs


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_the_key_is_made_once_readable_by_the_user_alone(state: Path) -> None:
    first = user_key()
    path = key_path()
    assert path == state / "reasonix" / "run-key" and len(first) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert user_key() == first


def test_a_key_others_can_read_or_a_linked_key_is_refused(state: Path, tmp_path: Path) -> None:
    user_key()
    path = key_path()
    path.chmod(0o644)
    with pytest.raises(RunKeyError, match="only you can read"):
        user_key()
    path.unlink()
    (tmp_path / "planted").write_bytes(b"k" * 32)
    path.symlink_to(tmp_path / "planted")
    with pytest.raises(RunKeyError):
        user_key()


def test_a_seal_holds_for_its_workspace_and_run_and_another_users_does_not(
    state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run = RunStore.create(ws)
    assert is_sealed(ws, run.run_id) and [r.run_id for r in list_runs(ws)] == []  # no goal.json: not a run yet
    other = ws / ".reasonix" / "runs" / "copied"
    shutil.copytree(run.dir, other)  # a seal copied to another run id
    assert not is_sealed(ws, "copied")
    with pytest.raises(ForgedRunError, match="was not made by you"):
        run_state_dir(ws, "copied")
    moved = tmp_path / "moved"
    shutil.copytree(ws, moved)  # the same run in another directory
    assert not is_sealed(moved, run.run_id)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "someone-else"))
    assert not is_sealed(ws, run.run_id)  # another key
    seal_run(ws, run.run_id)
    assert is_sealed(ws, run.run_id)


def test_a_linked_seal_is_not_read(state: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run = RunStore.create(ws)
    seal = run.dir / "seal"
    (tmp_path / "real-seal").write_bytes(seal.read_bytes())
    seal.unlink()
    seal.symlink_to(tmp_path / "real-seal")
    assert not is_sealed(ws, run.run_id)
