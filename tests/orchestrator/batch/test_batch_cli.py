"""``reasonix batch`` on this machine, as a user runs it: a real process against a real ``reasonix emulate`` process,
each goal's copy a real git clone, real verify commands, a real SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.orchestrator.run_support import clean_env, emulator_process, emulator_stats, reasonix, start_reasonix
from tests.support.batch import GIT_ENV, OPS, batch_script, goals_file, results

pytestmark = pytest.mark.git  # real git repositories (tests/support/parts.py)

SIX = [f"g{i}" for i in range(1, 7)]
STALL = [{"kind": "stall", "seconds": 300, "then": "drop"}]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**clean_env(tmp_path), "DEEPSEEK_API_KEY": "sk-test", "XDG_STATE_HOME": str(tmp_path / "state")}


def _git_status(ws: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True, check=True).stdout


@pytest.mark.bwrap
def test_six_goals_complete_locally_three_at_a_time_each_in_its_own_copy(tmp_path: Path) -> None:
    env = _env(tmp_path)
    goals = goals_file(tmp_path, SIX)
    with emulator_process(batch_script(SIX), tmp_path, env) as url:
        proc = reasonix("batch", str(goals), "--jobs", "3", "--base-url", url, env=env, timeout=600)
        stats = emulator_stats(url)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    found = results(tmp_path / "goals.batch" / "results.jsonl")
    assert sorted(found) == SIX
    for goal_id, result in found.items():
        assert result["status"] == "complete", result
        assert result["node"] == "local" and result["attempts"] == 1
        assert result["requests"] == 4 and result["cost_usd"] > 0 and 0 < result["cache_hit_ratio"] < 1
        assert "+++ b/calc/ops.py" in result["diff"] and "+def add(a, b):" in result["diff"]
        run_dir = Path(result["run_dir"])
        assert run_dir.is_dir() and json.loads((run_dir / "goal.json").read_text())["state"] == "complete"
        copy = tmp_path / "goals.batch" / "goals" / goal_id / "workspace"
        assert run_dir.is_relative_to(copy) and (copy / "calc" / "ops.py").read_text() == OPS
        user = tmp_path / "repos" / goal_id  # the user's checkout is never touched
        assert _git_status(user) == "" and not (user / "calc" / "ops.py").exists() and not (user / ".reasonix").exists()
    assert stats["total"]["requests"] == 24
    lines = proc.stdout.splitlines()  # not a terminal: plain lines, each naming its goal, then the table
    assert any(line.startswith("g3 started") for line in lines)
    assert any(line.startswith("g3 complete · $") and "4 requests" in line for line in lines)
    # The goal view's words for its states (issue 48 item 11: "state: replanning: every step is verified" for judging)
    assert any(line.startswith("g3 » judging: every step is verified") for line in lines), lines
    assert not any("replanning" in line for line in lines)
    assert any(line.startswith("6/6 done · 0 running · 0 failed · $") for line in lines)
    assert (
        any("│ total" in line for line in lines) and f"results: {tmp_path / 'goals.batch' / 'results.jsonl'}" in lines
    )
    again = reasonix("batch", str(goals), "--base-url", url, env=env)
    assert again.returncode == 2 and "already ran" in again.stderr and "--resume" in again.stderr


def _wait(predicate: object, proc: subprocess.Popen[str], what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.bwrap
def test_resume_after_ctrl_c_runs_only_the_goals_that_did_not_finish(tmp_path: Path) -> None:
    env = _env(tmp_path)
    ids = SIX[:4]
    goals = goals_file(tmp_path, ids)
    out = tmp_path / "goals.batch" / "results.jsonl"
    with emulator_process(batch_script(ids, g1=STALL), tmp_path, env) as url:
        proc = start_reasonix("batch", str(goals), "--jobs", "3", "--base-url", url, env=env)
        _wait(lambda: out.exists() and len(results(out)) == 3, proc, "three goals to finish")
        # g1 may be the goal that waited for a free job: its first request can land just after the third result.
        _wait(lambda: "g1-planner" in emulator_stats(url)["sessions"], proc, "g1's first request")
        faults = emulator_stats(url)["sessions"]["g1-planner"]["faults_injected"]
        assert faults.get("stall") == 1  # g1 is mid-request, held by the emulator
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 130, stderr
        assert "interrupted" in stderr and f"reasonix batch {goals} --resume" in stderr
        first = results(out)
        assert sorted(first) == ["g2", "g3", "g4"] and all(r["status"] == "complete" for r in first.values())
        paused = json.loads(
            (
                tmp_path / "goals.batch" / "goals" / "g1" / "workspace" / ".reasonix" / "runs" / "g1" / "goal.json"
            ).read_text()
        )
        assert paused["state"] == "paused"
        before = {k: v["requests"] for k, v in emulator_stats(url)["sessions"].items()}
        resumed = reasonix("batch", str(goals), "--resume", "--base-url", url, env=env, timeout=300)
        after = {k: v["requests"] for k, v in emulator_stats(url)["sessions"].items()}
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert "resuming: 3 of 4 goals already finished, 1 to run" in resumed.stdout
    assert not any(line.startswith(("g2 ", "g3 ", "g4 ")) for line in resumed.stdout.splitlines())
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed <= {"g1-planner", "g1-executor"} and changed, changed  # only the unfinished goal sent anything
    final = results(out)
    assert all(r["status"] == "complete" for r in final.values()) and sorted(final) == ids
    assert final["g1"]["run_id"] == "g1" and "+def add(a, b):" in final["g1"]["diff"]


@pytest.mark.bwrap
def test_the_batch_budget_pauses_every_goal_and_no_request_passes_it(tmp_path: Path) -> None:
    env = _env(tmp_path)
    ids = SIX[:3]
    goals = goals_file(tmp_path, ids)
    out = tmp_path / "goals.batch" / "results.jsonl"
    budget = 0.012  # about one request's upper bound (its prompt unhit, 8,192 output tokens at flash's peak price)
    with emulator_process(batch_script(ids), tmp_path, env) as url:
        proc = reasonix("batch", str(goals), "--jobs", "3", "--budget-usd", str(budget), "--base-url", url, env=env)
        sent = emulator_stats(url)["total"]["requests"]
        assert proc.returncode == 3, proc.stderr + proc.stdout
        found = results(out)
        assert sorted(found) == ids and all(r["status"] == "paused" for r in found.values()), found
        assert any("batch budget" in r["reason"] for r in found.values())
        assert sum(r["cost_usd"] for r in found.values()) <= budget
        assert sum(r["requests"] for r in found.values()) == sent  # every request sent is counted, none past it
        assert "--resume" in proc.stderr and "--budget-usd" in proc.stderr
        resumed = reasonix("batch", str(goals), "--resume", "--budget-usd", "5", "--base-url", url, env=env)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert all(r["status"] == "complete" for r in results(out).values())
    # One line per goal, its latest, in the goals file's order (issue 48 item 9: it was 6 lines, one per attempt).
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["status"]) for r in lines] == [(i, "complete") for i in ids]


HOOKED = '[[hooks]]\nevent = "pre_tool"\nmatcher = "write_file"\ncommand = "echo hooked >> hook.log"\n'


@pytest.mark.bwrap
def test_a_trusted_workspace_files_copy_is_trusted_for_the_batch_and_an_untrusted_one_is_not(tmp_path: Path) -> None:
    """Issue 48 item 8: every goal failed on a workspace whose committed reasonix.toml has hooks and was trusted:
    each goal's copy is a new path, so it was untrusted. A copy with exactly the trusted bytes is trusted; a workspace
    the user never trusted is still refused."""
    env = _env(tmp_path)
    ids = ["g1", "g2"]
    goals = goals_file(tmp_path, ids)
    for goal_id in ids:
        repo = tmp_path / "repos" / goal_id
        (repo / "reasonix.toml").write_text(HOOKED)
        subprocess.run(["git", "add", "reasonix.toml"], cwd=repo, check=True, env={**env, **GIT_ENV})
        subprocess.run(["git", "commit", "-qm", "hooks"], cwd=repo, check=True, env={**env, **GIT_ENV})
    trusted = reasonix("trust", "--workspace", str(tmp_path / "repos" / "g1"), env=env)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    with emulator_process(batch_script(ids), tmp_path, env) as url:
        proc = reasonix("batch", str(goals), "--jobs", "2", "--base-url", url, env=env, timeout=600)
    found = results(tmp_path / "goals.batch" / "results.jsonl")
    assert found["g1"]["status"] == "complete", found["g1"]
    copy = tmp_path / "goals.batch" / "goals" / "g1" / "workspace"
    assert (copy / "hook.log").read_text() == "hooked\n"  # the trusted hook ran, in the copy
    assert found["g2"]["status"] == "error" and "is not trusted" in found["g2"]["reason"], found["g2"]
    assert not (tmp_path / "goals.batch" / "goals" / "g2" / "workspace" / "hook.log").exists()
    assert proc.returncode == 1, proc.stderr + proc.stdout


def test_the_batch_command_without_ray_never_imports_ray() -> None:
    code = (
        "import sys\n"
        "from orchestrator.cli.main import build_parser\n"
        "import orchestrator.cli.commands.batch, orchestrator.batch.local, orchestrator.batch.driver\n"
        "import orchestrator.batch.goal_run, orchestrator.batch.display\n"
        "build_parser()\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout


@pytest.mark.bwrap
def test_a_relative_batch_directory_completes_its_goal(tmp_path: Path) -> None:
    """``--dir rel/path`` from the directory it is relative to: the path reaches the sandbox and the goal's
    checkpoints absolute (given as it was, bubblewrap failed verification and the goal retried until killed)."""
    env = _env(tmp_path)
    goals = goals_file(tmp_path, ["g1"])
    with emulator_process(batch_script(["g1"]), tmp_path, env) as url:
        proc = subprocess.run(
            [sys.executable, "-m", "orchestrator", "batch", goals.name, "--dir", "rel/batch", "--base-url", url],
            capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    found = results(tmp_path / "rel" / "batch" / "results.jsonl")
    assert found["g1"]["status"] == "complete" and found["g1"]["requests"] == 4, found
    assert Path(found["g1"]["run_dir"]).is_absolute()
