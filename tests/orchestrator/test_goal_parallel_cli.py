"""``reasonix goal`` with a parallel wave, as a real process against a real ``reasonix emulate`` process: SIGKILL and
Ctrl-C (SIGINT) while both branches of the wave are in flight, then ``--resume``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .goal_support import executor_step
from .parallel_support import FILES, TEXT, diamond_script
from .run_support import clean_env, emulator_process, emulator_stats, json_lines, reasonix, start_reasonix

STALL = {"kind": "stall", "seconds": 120, "then": "drop"}
"""The request is held for two minutes, then dropped; the reply stays for the next request of that step."""


def _script() -> dict[str, Any]:
    """The diamond, with the first request of each branch (S1, S2) held by the emulator."""
    held: dict[str, list[dict[str, Any]]] = {}
    for sid in ("S1", "S2"):
        replies = executor_step(sid, FILES[sid], TEXT[sid])
        replies[0] = {**replies[0], "faults": [STALL]}
        held[sid] = replies
    return diamond_script(**held)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)  # ends the upward search for standing memory here
    return ws


def _wait_until_both_branches_are_held(url: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    """Until the emulator holds the first request of both S1 and S2 at the same time: the two run at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = emulator_stats(url)["sessions"]
        held = [
            k for k in ("executor-S1", "executor-S2") if sessions.get(k, {}).get("faults_injected", {}).get("stall")
        ]
        if len(held) == 2:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the two branches' first requests were never held at once")


def _events(ws: Path, run_id: str) -> list[dict[str, Any]]:
    path = ws / ".reasonix" / "runs" / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == kind]


def _status(ws: Path, run_id: str) -> dict[str, str]:
    goal = json.loads((ws / ".reasonix" / "runs" / run_id / "goal.json").read_text())
    return {s["id"]: s["status"] for s in goal["plan"]["steps"]}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


@pytest.mark.bwrap
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_signal_during_a_wave_then_resume_finishes_without_rerunning_a_verified_step(
    tmp_path: Path, env: dict[str, str], sig: signal.Signals
) -> None:
    ws = _workspace(tmp_path)
    with emulator_process(_script(), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        proc = start_reasonix("goal", "Diamond", *base, env=env)
        try:
            _wait_until_both_branches_are_held(url, proc)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        (run_dir,) = (ws / ".reasonix" / "runs").iterdir()
        run_id = run_dir.name
        if sig == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
            assert _status(ws, run_id) == {"S0": "done", "S1": "running", "S2": "running", "S3": "pending"}
        else:
            assert proc.returncode == 130, err
            summary = json_lines(out)[-1]
            assert summary["status"] == "paused" and summary["steps_done"] == 1, summary
            assert f"reasonix goal --resume {run_id}" in err
            # Ctrl-C reached both branches: neither is left running, both start anew on resume.
            assert _status(ws, run_id) == {"S0": "done", "S1": "pending", "S2": "pending", "S3": "pending"}
        assert not (ws / "left.py").exists() and not (ws / "right.py").exists()  # nothing merged
        resumed = reasonix("goal", "--resume", run_id, *base, env=env)
    assert resumed.returncode == 0, resumed.stderr
    after = json_lines(resumed.stdout)
    assert after[-1]["status"] == "complete" and after[-1]["steps_done"] == 4, after[-1]
    assert [e["step_ids"] for e in _kinds(after, "wave_started")] == [["S1", "S2"]]
    assert sorted(e["step_id"] for e in _kinds(after, "step_started")) == ["S1", "S2", "S3"]  # S0 never again
    log = _events(ws, run_id)
    assert [e["step_id"] for e in _kinds(log, "step_started")].count("S0") == 1
    assert sorted(e["step_id"] for e in _kinds(log, "branch_merged")) == ["S1", "S2"]
    for sid, path in FILES.items():
        assert (ws / path).read_text() == TEXT[sid]
    # Every session event of a branch names its step in --json.
    fork_tools = [e for e in after if e.get("kind") == "tool_started" and e.get("step_id") in ("S1", "S2")]
    assert sorted({e["step_id"] for e in fork_tools}) == ["S1", "S2"]
    assert not any((ws / ".reasonix" / "runs" / run_id / "branches" / sid).exists() for sid in ("S1", "S2"))


@pytest.mark.bwrap
def test_a_wave_never_sends_more_requests_than_max_requests_and_pauses_resumable(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Issue 22: the branches of a wave used to check the budget only after a step's verification, so the wave passed
    --max-requests by what both branches sent meanwhile. The gate every session and fork asks before each request
    holds the cap exactly: the emulator, which counts what reaches it, never sees more."""
    ws = _workspace(tmp_path)
    # A branch the gate stops after its first request starts anew on resume: each wave step's script writes its
    # file twice, so the restarted branch (whose first reply was used) still writes it before reporting.
    again = {}
    for sid in ("S1", "S2"):
        write, report = executor_step(sid, FILES[sid], TEXT[sid])
        again[sid] = [write, write, report]
    with emulator_process(diamond_script(**again), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        # The planner's request and S0's two leave one for the wave of S1 and S2 (two requests each).
        paused = reasonix("goal", "Diamond", *base, "--max-requests", "4", env=env)
        assert paused.returncode == 3, paused.stderr
        assert emulator_stats(url)["total"]["requests"] == 4
        summary = json_lines(paused.stdout)[-1]
        run_id = summary["run_id"]
        assert summary["status"] == "paused" and "of 4 allowed requests" in summary["text"], summary
        assert summary["requests"] == 4
        assert "--max-requests 8" in summary["resume_command"]
        goal = json.loads((ws / ".reasonix" / "runs" / run_id / "goal.json").read_text())
        assert goal["usage_requests"] == 4 and goal["state"] == "paused"
        assert _status(ws, run_id)["S0"] == "done" and "running" not in _status(ws, run_id).values()
        resumed = reasonix("goal", "--resume", run_id, *base, "--max-requests", "20", env=env)
        assert resumed.returncode == 0, resumed.stderr
        total = emulator_stats(url)["total"]["requests"]
    after = json_lines(resumed.stdout)
    assert after[-1]["status"] == "complete" and after[-1]["steps_done"] == 4, after[-1]
    assert total == after[-1]["requests"]  # what reached the emulator is what the run counted, in both processes
    for sid, path in FILES.items():
        assert (ws / path).read_text() == TEXT[sid]


@pytest.mark.bwrap
def test_a_wave_never_spends_past_budget_usd_and_pauses_resumable(tmp_path: Path, env: dict[str, str]) -> None:
    """The same for dollars: each wave step's first reply is long (8,000 tokens of reasoning). Checked only after
    verification, the two branches together spent past the budget; the gate admits a request only while spent, the
    bounds in flight and its own bound (its prompt at the miss price, 8,192 output tokens) fit, so what reached the
    emulator, priced, stays within it. The budget is set from today's flash prices, so peak and off-peak alike."""
    from datetime import UTC, datetime

    from sessions.accounting.prices import default_price_book
    from sessions.wire.messages import Usage

    book, now = default_price_book(), datetime.now(UTC)
    per_output_token = float(book.cost(Usage(completion_tokens=1_000_000), "deepseek-v4-flash", now).total) / 1e6
    budget = 11_000 * per_output_token  # one long reply and the small ones fit under the gate; two do not
    long = {}
    for sid in ("S1", "S2"):
        write, report = executor_step(sid, FILES[sid], TEXT[sid])
        long[sid] = [{**write, "reasoning": "think " * 8_000}, write, report]
    ws = _workspace(tmp_path)
    with emulator_process(diamond_script(**long), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        paused = reasonix("goal", "Diamond", *base, "--budget-usd", f"{budget:.6f}", env=env)
        assert paused.returncode == 3, paused.stderr
        stats = emulator_stats(url)["total"]
        summary = json_lines(paused.stdout)[-1]
        assert summary["status"] == "paused" and "the next request may cost up to" in summary["text"], summary
        run_id = summary["run_id"]
        resumed = reasonix("goal", "--resume", run_id, *base, "--budget-usd", "5", env=env)
    sent = Usage(
        prompt_tokens=stats["prompt_tokens"],
        completion_tokens=stats["completion_tokens"],
        total_tokens=stats["prompt_tokens"] + stats["completion_tokens"],
        prompt_cache_hit_tokens=stats["hit_tokens"],
        prompt_cache_miss_tokens=stats["miss_tokens"],
    )
    assert float(book.cost(sent, "deepseek-v4-flash", now).total) <= budget * (1 + 1e-6)
    goal = json.loads((ws / ".reasonix" / "runs" / run_id / "goal.json").read_text())
    assert resumed.returncode == 0, resumed.stderr
    assert json_lines(resumed.stdout)[-1]["status"] == "complete" and goal["state"] == "complete"
