import subprocess
from pathlib import Path

import pytest

from orchestrator.goal.store import GoalRecord, RunNotFoundError, RunStore

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)


def test_runs_never_show_up_in_the_users_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "app.py").write_text("print(1)\n")
    store = RunStore.create(tmp_path, "r1")
    store.save(GoalRecord(run_id="r1", objective="x"))
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status.splitlines() == ["?? app.py"]


def test_a_record_round_trips_and_an_unknown_run_names_the_known_ones(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, "20261130-010203-abcdef")
    record = GoalRecord(run_id=store.run_id, objective="ship it", attempts={"S2": 1}, current_step="S2")
    store.save(record)
    assert RunStore.open(tmp_path, store.run_id).load() == record
    with pytest.raises(RunNotFoundError, match="Known runs: 20261130-010203-abcdef"):
        RunStore.open(tmp_path, "nope")
