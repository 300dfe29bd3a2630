"""``reasonix runs`` / ``runs show`` on a workspace with several real runs (goals driven against the emulator), as
text and as JSON; ``reasonix goal --resume`` without an id; unknown ids answered with the nearest runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import trio

from orchestrator.goal.runner import GoalOptions
from orchestrator.policy.budget import Budget
from orchestrator.run_seal import seal_run
from tests.support.goal_cli import VERDICT, calc_executor, calc_planning, calc_workspace, goal_script

from .goal_support import call, executor_step, goal_env, new_runner, reply, script, step
from .run_support import clean_env, emulator_process, json_lines, reasonix

OPS = "def add(a, b):\n    return a + b\n"
DONE = "20261101-090000-aaaaaa"
FAILED = "20261102-090000-bbbbbb"
PAUSED = "20261103-090000-cccccc"
TASK = "20261104-090000-dddddd"


def _planner(steps: list[dict[str, object]], objective: str) -> list[dict[str, object]]:
    return [
        reply(call("submit_plan", objective=objective, steps=steps)),
        reply(call("goal_verdict", verdict="complete", evidence=["done"])),
    ]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four runs: complete, blocked, paused (budget), and a `reasonix run` task (an executor journal only)."""
    ws = tmp_path_factory.mktemp("runs") / "ws"
    with pytest.MonkeyPatch.context() as patch:  # the runs' checkpoint store, where every test's commands look
        patch.setenv("XDG_STATE_HOME", str(_state_home(ws)))
        trio.run(_runs, ws)
    return ws


def _state_home(ws: Path) -> Path:
    return ws.parent / "state-home"


def _env(workspace: Path, tmp_path: Path) -> dict[str, str]:
    """A clean user's environment whose state home holds the fixture runs' checkpoints."""
    return {**clean_env(tmp_path), "XDG_STATE_HOME": str(_state_home(workspace))}


async def _runs(ws: Path) -> None:
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    ok = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=["python3 -c 'import calc.ops'"])]
    async with goal_env(script(_planner(ok, "ops"), executor_step("S1", "calc/ops.py", OPS))) as (_emu, client):
        outcome = await new_runner(client, ws, "Add an add() function to calc", run_id=DONE).run()
        assert outcome.status == "complete"
    blocked = [
        reply(call("goal_verdict", verdict="blocked", question="which calculator?")),
    ]
    async with goal_env(script(blocked, [])) as (_emu, client):
        outcome = await new_runner(client, ws, "Port the calculator to Rust", run_id=FAILED).run()
        assert outcome.status == "blocked"
    options = GoalOptions(budget=Budget(usd=0.0000001))
    async with goal_env(script(_planner(ok, "mul"), [])) as (_emu, client):
        runner = new_runner(client, ws, "Add mul() with tests and docs " * 5, run_id=PAUSED, options=options)
        outcome = await runner.run()
        assert outcome.status == "paused"
    task = ws / ".reasonix" / "runs" / TASK
    task.mkdir()
    shutil.copy(ws / ".reasonix" / "runs" / DONE / "executor.jsonl", task / "executor.jsonl")
    seal_run(ws, TASK)  # as `reasonix run` seals the run directory it makes


def test_runs_lists_every_run_newest_first_as_text_and_json(workspace: Path, tmp_path: Path) -> None:
    env = _env(workspace, tmp_path)
    text = reasonix("runs", "--workspace", str(workspace), env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].split()[:4] == ["run", "when", "(UTC)", "command"]
    ids = [line.split()[0] for line in lines[1:5]]
    assert ids == [TASK, PAUSED, FAILED, DONE]
    done = next(line for line in lines if line.startswith(DONE))
    assert " goal " in done and " complete " in done and " 1/1 " in done and "Add an add() function to calc" in done
    paused = next(line for line in lines if line.startswith(PAUSED))
    assert " paused " in paused and "…" in paused  # the objective shortened
    assert " run " in next(line for line in lines if line.startswith(TASK))
    assert f"resume the latest resumable run ({PAUSED})" in text.stdout

    as_json = reasonix("runs", "--workspace", str(workspace), "--json", env=env)
    runs = json.loads(as_json.stdout)
    assert [r["run_id"] for r in runs] == [TASK, PAUSED, FAILED, DONE]
    first = runs[3]
    assert first["status"] == "complete" and first["steps_done"] == 1 and first["steps_total"] == 1
    assert first["requests"] == 4 and first["cost_usd"] > 0 and 0 < first["cache_hit_ratio"] < 1
    assert set(first["sessions"]) == {"planner", "executor"}
    assert sum(s["requests"] for s in first["sessions"].values()) == 4
    assert runs[1]["resumable"] is True and runs[1]["resume_command"] == f"reasonix goal --resume {PAUSED}"
    assert runs[2]["status"] == "blocked" and runs[2]["resumable"] is False
    assert runs[0]["command"] == "run" and runs[0]["objective"].startswith("Your step:")


def test_runs_show_gives_the_plan_events_costs_and_checkpoints(workspace: Path, tmp_path: Path) -> None:
    env = _env(workspace, tmp_path)
    shown = reasonix("runs", "show", DONE, "--workspace", str(workspace), env=env)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.startswith(f"run {DONE} · goal · complete · started 2026-11-01 09:00 UTC")
    assert "\nplan r1\n" in out and "S1" in out
    assert "◐ S1 Add calc/ops.py · attempt 1" in out and "✓ S1 verified" in out and "■ complete" in out
    assert "cost per session" in out and "  planner " in out and "  executor " in out
    assert f"checkpoints (2): reasonix checkpoints --run {DONE}" in out

    data = json.loads(reasonix("runs", "show", DONE[:10], "--workspace", str(workspace), "--json", env=env).stdout)
    assert data["run"]["run_id"] == DONE  # a unique prefix names the run
    assert data["plan"]["steps"][0]["id"] == "S1"
    assert [e["kind"] for e in data["events"]][-1] == "goal_finished"
    assert [c["kind"] for c in data["checkpoints"]] == ["before", "after"]


def test_runs_show_without_an_id_shows_the_latest_and_a_shared_prefix_is_ambiguous(
    workspace: Path, tmp_path: Path
) -> None:
    env = _env(workspace, tmp_path)
    latest = reasonix("runs", "show", "--workspace", str(workspace), env=env)
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.startswith(f"run {TASK} · run · ")
    ambiguous = reasonix("runs", "show", "202611", "--workspace", str(workspace), env=env)
    assert ambiguous.returncode == 1
    lines = ambiguous.stderr.splitlines()
    assert lines[0] == "reasonix runs: '202611' is ambiguous: 4 runs start with it; say more of the id:"
    assert {line.split()[0] for line in lines[1:]} == {DONE, FAILED, PAUSED, TASK}
    resumed = reasonix("goal", "--resume", "202611", "--workspace", str(workspace), "--yes", env=env)
    assert resumed.returncode == 2 and "is ambiguous" in resumed.stderr


def test_an_unknown_run_lists_the_nearest_with_their_objectives(workspace: Path, tmp_path: Path) -> None:
    env = _env(workspace, tmp_path)
    shown = reasonix("runs", "show", "20261102-090000-bbbbbx", "--workspace", str(workspace), env=env)
    assert shown.returncode == 1
    assert "no run '20261102-090000-bbbbbx'" in shown.stderr
    assert f"{FAILED}  blocked   Port the calculator to Rust" in shown.stderr
    resumed = reasonix("goal", "--resume", "2026110x", "--workspace", str(workspace), "--yes", env=env)
    assert resumed.returncode == 2 and "Port the calculator to Rust" in resumed.stderr


def test_runs_in_an_empty_workspace(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    (tmp_path / "ws").mkdir()
    empty = reasonix("runs", "--workspace", str(tmp_path / "ws"), env=env)
    assert empty.returncode == 0 and "no runs in this workspace yet" in empty.stdout
    assert json.loads(reasonix("runs", "--workspace", str(tmp_path / "ws"), "--json", env=env).stdout) == []


@pytest.mark.bwrap
def test_goal_resume_without_an_id_resumes_the_latest_resumable_run(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ws = calc_workspace(tmp_path)
    none = reasonix("goal", "--resume", "--workspace", str(ws), "--yes", "--base-url", "http://127.0.0.1:9", env=env)
    assert none.returncode == 2 and "no paused or interrupted run to resume" in none.stderr
    planner = calc_planning() + VERDICT  # the budget refuses the first request: nothing is sent before the resume
    with emulator_process(goal_script(planner, calc_executor()), tmp_path, env) as url:
        base = ("--workspace", str(ws), "--base-url", url, "--yes", "--json")
        paused = reasonix("goal", "Grow calc", *base, "--budget-usd", "0.0000001", env=env)
        assert paused.returncode == 3, paused.stderr
        run_id = json_lines(paused.stdout)[-1]["run_id"]
        resumed = reasonix("goal", "--resume", *base, "--budget-usd", "5", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming the latest resumable run {run_id} (paused): Grow calc" in resumed.stderr
    summary = json_lines(resumed.stdout)[-1]
    assert summary["run_id"] == run_id and summary["status"] == "complete"


async def test_the_review_shows_the_expected_cost_beside_the_budget(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from io import StringIO

    from rich.console import Console

    from orchestrator.review.reviewer import TerminalReviewer
    from orchestrator.runs.estimate import estimate_plan
    from plans.schema import Plan
    from sessions.accounting.prices import default_price_book

    plan = Plan.model_validate(
        {
            "objective": "three",
            "steps": [step(f"S{i}", f"step {i}", deps=[f"S{i - 1}"] if i > 1 else []) for i in (1, 2, 3)],
        }
    )
    book = default_price_book()
    monkeypatch.setenv("XDG_STATE_HOME", str(_state_home(workspace)))  # whose key sealed the fixture's runs
    here = estimate_plan(workspace, plan, model="deepseek-v4-flash", book=book)
    assert here.requests == 12 and here.basis.startswith("4.0 requests a step in 1 finished run here")
    assert here.usd is not None and here.usd > 0
    (tmp_path / "fresh").mkdir()
    fresh = estimate_plan(tmp_path / "fresh", plan, model="deepseek-v4-flash", book=book)
    assert fresh.requests == 10 and fresh.basis.startswith("no finished runs here yet")
    assert estimate_plan(workspace, plan, model="no-such-model", book=book).usd is None

    out = StringIO()
    reviewer = TerminalReviewer(
        Console(file=out, width=200),
        read_line=lambda prompt: "a",
        estimate=lambda p: estimate_plan(workspace, p, model="deepseek-v4-flash", book=book).text(Budget(usd=0.5)),
    )
    decision = await reviewer.review(plan)
    assert decision.kind == "approve"
    shown = next(line for line in out.getvalue().splitlines() if line.startswith("expected:"))
    assert shown.startswith("expected: about 12 requests, about $") and shown.endswith(" · budget $0.5")
