"""Issue 11 item 15: one process per run, and ``--resume`` takes a run id only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.goal.store import RunNotFoundError, RunStore
from orchestrator.run_seal import seal_run

HOLD = """
import sys
from pathlib import Path
from orchestrator.goal.store import RunStore
RunStore.open(Path(sys.argv[1]), "run-1").lock()
print("locked", flush=True)
sys.stdin.read()
"""
TRY = """
import sys
from pathlib import Path
from orchestrator.errors import ReasonixError
from orchestrator.goal.store import RunStore
try:
    RunStore.open(Path(sys.argv[1]), "run-1").lock()
except ReasonixError as exc:
    print(exc)
    sys.exit(3)
print("locked")
"""


def _run(ws: Path) -> None:
    (ws / ".reasonix" / "runs" / "run-1").mkdir(parents=True)
    (ws / ".reasonix" / "runs" / "run-1" / "goal.json").write_text('{"run_id": "run-1", "objective": "x"}')
    seal_run(ws, "run-1")  # this user's run, as Reasonix makes them


def test_a_second_process_is_refused_while_the_first_holds_the_run(tmp_path: Path) -> None:
    _run(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        second = subprocess.run([sys.executable, "-c", TRY, str(tmp_path)], capture_output=True, text=True)
        assert second.returncode == 3, second.stderr
        assert second.stdout.strip() == (
            f"run run-1 is already running in process {holder.pid}; wait for it or stop it"
        )
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    after = subprocess.run([sys.executable, "-c", TRY, str(tmp_path)], capture_output=True, text=True)
    assert after.returncode == 0 and after.stdout.strip() == "locked"  # the lock died with its process


@pytest.mark.parametrize("name", ["/etc", "../other", "run-1/../../x", "..", "a/b", ""])
def test_resume_takes_a_run_id_not_a_path(tmp_path: Path, name: str) -> None:
    _run(tmp_path)
    outside = tmp_path / "other"
    outside.mkdir()
    (outside / "goal.json").write_text('{"run_id": "x", "objective": "x"}')
    with pytest.raises(RunNotFoundError, match="not a run id"):
        RunStore.open(tmp_path, name)


@pytest.mark.bwrap
def test_a_second_goal_resume_of_a_running_run_is_refused(tmp_path: Path) -> None:
    from tests.support.goal_cli import (
        VERDICT,
        calc_executor,
        calc_planning,
        calc_workspace,
        goal_script,
        wait_for_stall,
    )

    from .run_support import clean_env, emulator_process, reasonix, start_reasonix

    env = clean_env(tmp_path)
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor(stall_at=3)), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        first = start_reasonix("goal", "Grow calc", *base, env=env)
        try:
            wait_for_stall(url, "executor", first)
            (run_id,) = [p.name for p in (ws / ".reasonix" / "runs").iterdir()]
            second = reasonix("goal", "--resume", run_id, *base, env=env)
        finally:
            first.kill()
            first.wait()
    assert second.returncode == 2, second.stderr
    assert f"run {run_id} is already running in process {first.pid}; wait for it or stop it" in second.stderr
    outside = reasonix(
        "goal", "--resume", "../../etc", "--workspace", str(ws), "--base-url", "http://127.0.0.1:9", "--yes", env=env
    )
    assert outside.returncode == 2 and "Traceback" not in outside.stderr
