"""``reasonix goal`` / ``plan`` / ``exec`` as real processes against a real ``reasonix emulate`` process: real tools,
real files, real verify commands, real signals (SIGINT, SIGKILL)."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.goal_cli import (
    MUL,
    NEG,
    VERDICT,
    calc_executor,
    calc_planning,
    calc_workspace,
    goal_script,
    wait_for_stall,
)

from .run_support import ROOT, clean_env, emulator_process, emulator_stats, json_lines, reasonix, start_reasonix

REASONIX = (sys.executable, "-m", "orchestrator")


def _verified(goal: dict[str, Any]) -> list[str]:
    """The verified steps of a goal.json: its plan's steps that are done."""
    return [s["id"] for s in goal["plan"]["steps"] if s["status"] == "done"]


def _goal_json(ws: Path, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ws / ".reasonix" / "runs" / run_id / "goal.json").read_text())
    return data


def _kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("kind") == kind]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


def _lines_until(proc: subprocess.Popen[str], predicate: Any) -> Iterator[dict[str, Any]]:
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        yield event
        if predicate(event):
            return
    raise AssertionError("the process ended before the expected event: " + (proc.stderr.read() if proc.stderr else ""))


# ------------------------------------------------------------------------------------------------ goal


@pytest.mark.bwrap
def test_goal_yes_json_runs_to_complete_with_a_summary(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        proc = reasonix("goal", "Grow calc", "--workspace", str(ws), "--base-url", url, "--yes", "--json", env=env)
        stats = emulator_stats(url)["sessions"]
    assert proc.returncode == 0, proc.stderr
    events = json_lines(proc.stdout)
    summary = events[-1]
    assert summary["kind"] == "summary" and summary["status"] == "complete"
    assert summary["steps_total"] == 3 and summary["steps_done"] == 3
    assert summary["escalations"] == 0 and summary["replans"] == 0
    assert set(summary["sessions"]) == {"planner", "executor"}
    assert summary["sessions"]["executor"]["requests"] == stats["executor"]["requests"] == 6
    assert summary["prompt_cache_hit_tokens"] == stats["planner"]["hit_tokens"] + stats["executor"]["hit_tokens"]
    assert [e["step_id"] for e in _kinds(events, "step_started")] == ["S1", "S2", "S3"]
    assert all(e["ok"] for e in _kinds(events, "step_verified"))
    assert _kinds(events, "review")[0]["automatic"] is True
    assert (ws / "calc" / "neg.py").read_text() == NEG
    assert _goal_json(ws, summary["run_id"])["state"] == "complete"
    again = reasonix("goal", "--resume", summary["run_id"], "--workspace", str(ws), "--yes", "--base-url", url, env=env)
    assert again.returncode == 2 and "already complete" in again.stderr


@pytest.mark.bwrap
def test_goal_on_the_terminal_shows_plan_steps_tools_and_footers(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        proc = reasonix("goal", "Grow calc", "--workspace", str(ws), "--base-url", url, "--yes", env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("goal · run ")
    assert "plan r1 proposed" in lines
    assert any(line.startswith("Grow calc  r1 · 0/3 done") for line in lines)  # the tree, at plan time
    assert "◐ S2 Add calc/mul.py · deepseek-v4-flash" in lines
    assert "✓ S2 verified: 1 verify command passed" in lines
    assert any(line.startswith("▸ write_file ") and line.endswith(" · ok") for line in lines)
    footers = [line for line in lines if line.startswith(("planner · turn $", "executor · turn $"))]
    assert len(footers) == 8  # one per request: planner 2, executor 2 per step
    assert all(" · cache planner " in f and " · overall " in f and " · budget $" in f for f in footers)
    assert lines[-2].startswith("complete · 3/3 steps · 8 requests · $")
    assert lines[-1] == "every step verified"


def test_goal_without_a_terminal_and_without_yes_stops_at_once(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    proc = reasonix("goal", "Grow calc", "--workspace", str(ws), "--base-url", "http://127.0.0.1:9", env=env)
    assert proc.returncode == 2
    assert "standard input is not a terminal" in proc.stderr and "--yes" in proc.stderr
    assert not (ws / ".reasonix").exists()


def test_resume_without_a_terminal_and_without_yes_refuses_a_plan_no_review_approved(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Issue 22: a run paused by a limit right after planning has a plan nobody approved. Resumed without a terminal
    and without --yes, it used to build no reviewer and execute the plan unreviewed; it must refuse, as a new goal
    does, and say what to do, sending nothing."""
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url)
        paused = reasonix("goal", "Grow calc", *base, "--yes", "--json", "--max-requests", "1", env=env)
        assert paused.returncode == 3, paused.stderr
        run_id = json_lines(paused.stdout)[-1]["run_id"]
        goal = _goal_json(ws, run_id)
        assert goal["state"] == "paused" and goal["plan"] is not None and goal["approved"] is False
        sent = emulator_stats(url)["total"]["requests"]
        resumed = subprocess.run(
            [*REASONIX, "goal", "--resume", run_id, *base, "--max-requests", "50"],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=120,
            cwd=ROOT,
        )
        assert emulator_stats(url)["total"]["requests"] == sent  # nothing was sent
    assert resumed.returncode == 2, resumed.stderr
    message = " ".join(resumed.stderr.split())
    assert f"run {run_id} has a plan that no review approved yet" in message, message
    assert "standard input is not a terminal" in message and "nothing was executed" in message
    assert f"reasonix goal --resume {run_id}" in message and "--yes" in message
    assert not (ws / "calc" / "ops.py").exists() and _verified(_goal_json(ws, run_id)) == []


def test_a_cancel_at_review_exits_4_and_says_so_once(tmp_path: Path, env: dict[str, str]) -> None:
    """Issue 48 item 27: a cancel at the plan review exited 1, as a failure does, with "cancelled at review; nothing
    was executed: the user cancelled the plan at review" in red after the view had said it. It is the person's choice:
    its own exit status (4, so a script mistakes it neither for success nor for a failure), said once by the view."""
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "orchestrator", "goal", "Grow calc", "--workspace", str(ws), "--base-url", url],
            env={**env, "TERM": "xterm"},
            cwd=str(ROOT),
            encoding="utf-8",
            timeout=120,  # a hang guard, not a measure
            dimensions=(40, 120),
        )
        child.expect(r"\[c\]ancel: ")
        child.sendline("c")
        child.expect(pexpect.EOF)
        child.close()
        requests = emulator_stats(url)["total"]["requests"]
    after = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before or "")
    assert child.exitstatus == 4, after
    assert after.count("cancelled: the plan was not approved; nothing was executed") == 1, after
    assert "reasonix goal:" not in after and after.count("cancelled") == 2, after  # that line and the summary's
    assert requests == 1 and not (ws / "calc" / "ops.py").exists()


def test_goal_without_a_key_says_so_first(tmp_path: Path, env: dict[str, str]) -> None:
    """The missing key is the first thing to fix, even where review could not be asked for either."""
    ws = calc_workspace(tmp_path)
    proc = reasonix("goal", "Grow calc", "--workspace", str(ws), env=env)
    assert proc.returncode == 2
    assert (
        "no API key: set DEEPSEEK_API_KEY" in proc.stderr
        and "`reasonix setup`" in proc.stderr
        and "terminal" not in proc.stderr
    )
    assert not (ws / ".reasonix").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["goal", "--budget-usd", "0"], "--budget-usd must be more than 0"),
        (["goal", "  "], "the objective is empty"),
        (["goal", "x", "--resume", "nope"], "not both"),
        (["goal", "--resume", "nope"], "no run 'nope'"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, env: dict[str, str], args: list[str], message: str) -> None:
    ws = calc_workspace(tmp_path)
    proc = reasonix(*args, "--workspace", str(ws), "--yes", "--base-url", "http://127.0.0.1:9", env=env)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


# ------------------------------------------------------------------------------------------------ plan and exec


@pytest.mark.bwrap
def test_plan_saves_the_approved_plan_and_exec_runs_it(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    # The plan run has only a planner; exec starts a new run whose planner is asked only for the verdict.
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        planned = reasonix("plan", "Grow calc", "--workspace", str(ws), "--base-url", url, "--yes", env=env)
        assert planned.returncode == 0, planned.stderr
        saved = [line for line in planned.stdout.splitlines() if line.startswith("plan approved and saved: ")]
        path = Path(saved[0].removeprefix("plan approved and saved: "))
        assert path.name == "plan.r001.json" and path.parent.parent == ws / ".reasonix" / "runs"
        assert f"execute it with: reasonix exec {path} --workspace {ws}" in planned.stdout
        assert not (ws / "calc" / "ops.py").exists()  # planning changed nothing
        listed = reasonix("runs", "--workspace", str(ws), env=env).stdout.splitlines()
        row = next(line for line in listed if line.startswith(path.parent.name))
        assert " plan " in row and " planned " in row and " paused " not in row, row  # not a goal left paused
        assert "» planned: plan approved and saved" in planned.stdout and "» paused" not in planned.stdout
        assert any(line.startswith("planned · 0/3 steps · ") for line in planned.stdout.splitlines())
        executed = reasonix("exec", str(path), "--workspace", str(ws), "--base-url", url, "--json", env=env)
    assert executed.returncode == 0, executed.stderr
    events = json_lines(executed.stdout)
    assert events[-1]["status"] == "complete" and events[-1]["run_id"] != path.parent.name
    assert not _kinds(events, "plan_proposed") and not _kinds(events, "review")
    assert [e["step_id"] for e in _kinds(events, "step_started")] == ["S1", "S2", "S3"]
    assert (ws / "calc" / "mul.py").read_text() == MUL


def test_exec_refuses_an_invalid_plan_naming_its_problems(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "objective": "x",
                "steps": [
                    {"id": "A", "title": "a", "instructions": "a", "depends_on": ["B"]},
                    {"id": "B", "title": "b", "instructions": "b", "depends_on": ["A"]},
                    {"id": "C", "title": "c", "instructions": "c", "depends_on": ["Z"]},
                ],
            }
        )
    )
    proc = reasonix("exec", str(bad), "--workspace", str(ws), "--base-url", "http://127.0.0.1:9", env=env)
    assert proc.returncode == 1
    assert "2 problems" in proc.stderr and "Z" in proc.stderr and "A → B → A" in proc.stderr
    assert not (ws / ".reasonix").exists()


# ------------------------------------------------------------------------------------------------ budget


@pytest.mark.bwrap
def test_budget_pause_then_resume_with_a_raised_budget(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    # A budget no request fits in: the gate refuses the planner's first request before it is sent, and the goal pauses
    # with nothing sent; resumed with a raised budget, it plans from the start.
    planner = calc_planning() + VERDICT
    with emulator_process(goal_script(planner, calc_executor()), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        paused = reasonix("goal", "Grow calc", *base, "--budget-usd", "0.0000001", env=env)
        assert paused.returncode == 3, paused.stderr
        assert emulator_stats(url)["total"]["requests"] == 0
        assert "the next request may cost up to" in json_lines(paused.stdout)[-1]["text"]
        summary = json_lines(paused.stdout)[-1]
        run_id = summary["run_id"]
        assert summary["status"] == "paused" and summary["steps_done"] == 0
        assert f"reasonix goal --resume {run_id}" in summary["resume_command"]
        assert "--budget-usd" in summary["resume_command"] and "resume with: reasonix goal --resume" in paused.stderr
        assert _goal_json(ws, run_id)["state"] == "paused"
        resumed = reasonix("goal", "--resume", run_id, *base, "--budget-usd", "5", env=env)
    assert resumed.returncode == 0, resumed.stderr
    events = json_lines(resumed.stdout)
    assert events[-1]["status"] == "complete" and events[-1]["run_id"] == run_id
    assert events[-1]["steps_done"] == 3
    assert _goal_json(ws, run_id)["settings"]["budget"]["usd"] == 5


@pytest.mark.bwrap  # the resumed goal runs its verify commands, which need the sandbox (or a flag not under test)
def test_the_printed_resume_command_of_a_yes_goal_runs_as_printed_without_a_terminal(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Issue 48 item 26: a goal started with --yes and paused by its budget before planning printed a resume command
    without --yes; run as printed without a terminal it failed, saying the run "has a plan that no review approved"
    though it had no plan at all."""
    ws = calc_workspace(tmp_path)
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url)
        paused = reasonix("goal", "Grow calc", *base, "--yes", "--budget-usd", "0.0000001", env=env)
        assert paused.returncode == 3, paused.stderr
        printed = [line for line in paused.stdout.splitlines() if line.startswith("resume with: ")]
        assert len(printed) == 1, paused.stdout
        command = shlex.split(printed[0].removeprefix("resume with: "))
        assert command[:3] == ["reasonix", "goal", "--resume"] and "--yes" in command
        run_id = command[3]

        # Without --yes and without a terminal the refusal says what is true of this run: no plan yet.
        without_yes = [arg for arg in command[1:] if arg != "--yes"]
        refused = subprocess.run(
            [*REASONIX, *without_yes], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, cwd=ROOT
        )
        assert refused.returncode == 2, refused.stderr
        message = " ".join(refused.stderr.split())
        assert f"run {run_id} has no plan yet, and the plan it makes next needs a review" in message, message
        assert "no review approved" not in message
        assert emulator_stats(url)["total"]["requests"] == 0

        resumed = subprocess.run(
            [*REASONIX, *command[1:]],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=120,
            cwd=ROOT,
        )
    assert resumed.returncode == 0, resumed.stderr
    assert _goal_json(ws, run_id)["state"] == "complete"
    assert (ws / "calc" / "neg.py").read_text() == NEG


# ------------------------------------------------------------------------------------------------ signals


@pytest.mark.bwrap
def test_ctrl_c_mid_turn_pauses_the_goal_and_resume_completes(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    # S2's first executor request stalls: the goal is mid-turn when it is interrupted.
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor(stall_at=3)), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        proc = start_reasonix("goal", "Grow calc", *base, env=env)
        try:
            wait_for_stall(url, "executor", proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, err
        events = json_lines(out)
        summary = events[-1]
        assert summary["kind"] == "summary", (out[-3000:], err)
        run_id = summary["run_id"]
        assert summary["status"] == "paused" and summary["steps_done"] == 1
        assert f"reasonix goal --resume {run_id}" in err and "Ctrl-C again exits at once" in err
        record = _goal_json(ws, run_id)
        assert record["state"] == "paused" and _verified(record) == ["S1"]
        resumed = reasonix("goal", "--resume", run_id, *base, env=env)
    assert resumed.returncode == 0, resumed.stderr
    after = json_lines(resumed.stdout)
    assert [e["step_id"] for e in _kinds(after, "step_started")] == ["S2", "S3"]
    assert after[-1]["status"] == "complete" and _verified(_goal_json(ws, run_id)) == ["S1", "S2", "S3"]


@pytest.mark.bwrap
def test_sigkill_mid_goal_then_resume_never_reruns_a_verified_step(tmp_path: Path, env: dict[str, str]) -> None:
    ws = calc_workspace(tmp_path)
    # Killed while S2's first executor request is held by the emulator (S1 verified by then). The held request
    # delivered nothing, so the resumed run is served the same S2 replies, and then the rest.
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor(stall_at=3)), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        proc = start_reasonix("goal", "Grow calc", *base, env=env)
        try:
            before = list(_lines_until(proc, lambda e: e.get("kind") == "step_started" and e["step_id"] == "S2"))
            wait_for_stall(url, "executor", proc)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        (run_dir,) = (ws / ".reasonix" / "runs").iterdir()
        run_id = run_dir.name
        verified = [e["step_id"] for e in _kinds(before, "step_verified") if e["ok"]]
        assert verified == ["S1"]
        record = _goal_json(ws, run_id)
        assert _verified(record) == ["S1"] and record["current_step"] == "S2" and record["state"] == "executing"
        resumed = reasonix("goal", "--resume", run_id, *base, env=env)
    assert resumed.returncode == 0, resumed.stderr
    after = json_lines(resumed.stdout)
    assert [e["step_id"] for e in _kinds(after, "step_started")] == ["S2", "S3"]  # S1 never again
    assert after[-1]["status"] == "complete" and after[-1]["steps_done"] == 3
    record = _goal_json(ws, run_id)
    assert record["state"] == "complete" and _verified(record) == ["S1", "S2", "S3"]
    # The goal's own event log, across both processes: S1 started once and was verified once.
    log = [json.loads(line) for line in (ws / ".reasonix" / "runs" / run_id / "events.jsonl").read_text().splitlines()]
    assert [e["step_id"] for e in _kinds(log, "step_started")].count("S1") == 1
    assert [e["step_id"] for e in _kinds(log, "step_verified") if e["ok"]] == ["S1", "S2", "S3"]
    assert (ws / "calc" / "neg.py").read_text() == NEG


@pytest.mark.bwrap
def test_goal_record_writes_a_replayable_scenario_without_the_key(tmp_path: Path, env: dict[str, str]) -> None:
    from orchestrator.replay.runner import replay
    from scenarios.format import load_scenario

    ws = calc_workspace(tmp_path)
    key = "sk-very-secret-key-1234567890"
    env = {**env, "DEEPSEEK_API_KEY": key}
    record = tmp_path / "recorded.json"
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        proc = reasonix(
            "goal",
            "Grow calc",
            "--workspace",
            str(ws),
            "--base-url",
            url,
            "--yes",
            "--json",
            "--record",
            str(record),
            env=env,
        )
    assert proc.returncode == 0, proc.stderr
    text = record.read_text()
    assert key not in text and "Authorization" not in text and "Bearer" not in text
    loaded = load_scenario(record)
    assert loaded.scenario.origin == "recorded" and loaded.scenario.command == "goal"
    assert "calc/__init__.py" in loaded.scenario.workspace and "calc/neg.py" not in loaded.scenario.workspace
    report = replay(loaded)
    assert report.ok, report.text_report()
    assert not report.drift


def test_a_recorded_goal_stopped_before_its_first_answer_says_nothing_was_recorded(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Seen with a real local model: a goal whose runtime ran out while its first request was still being read
    ended paused, then --record raised a ValidationError (a recording needs an exchange) and the exit status was 1."""
    ws = calc_workspace(tmp_path)
    record = tmp_path / "recorded.json"
    with emulator_process(goal_script(calc_planning() + VERDICT, calc_executor()), tmp_path, env) as url:
        proc = reasonix(
            "goal",
            "Grow calc",
            *("--workspace", str(ws), "--base-url", url, "--yes"),
            *("--budget-usd", "0.0000001", "--record", str(record)),
            env=env,
        )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and not record.exists()
    assert f"nothing recorded to {record}: no request got a whole reply before the run ended" in " ".join(
        proc.stderr.split()
    )
