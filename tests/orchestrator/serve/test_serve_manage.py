"""Several goals at once, the run lock, pause and resume with a new budget, a restarted service, a failing DeepSeek,
and undo through the API."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from scenarios.emulator import Script

from ..goal_support import EXECUTOR, PLANNER, call, reply
from .support import (
    executor_replies,
    one_step_plan,
    open_service,
    per_workspace_script,
    planner_replies,
    simple_script,
    workspace,
)


@pytest.mark.bwrap
async def test_ten_goals_started_at_once_in_ten_workspaces_all_complete(tmp_path: Path) -> None:
    markers = [f"ws-marker-{i:02d}" for i in range(10)]
    spaces = [workspace(tmp_path, f"ws{i}", marker) for i, marker in enumerate(markers)]
    async with open_service(tmp_path, per_workspace_script(markers)) as svc:
        run_ids: list[str] = []
        async with trio.open_nursery() as nursery:
            for ws in spaces:

                async def start(ws: Path = ws) -> None:
                    run_ids.append(await svc.start(ws, review=False))

                nursery.start_soon(start)
        assert len(set(run_ids)) == 10
        assert len(svc.manager.live) >= 1
        for run_id in run_ids:
            done = await svc.wait_for(run_id, limit_s=120)
            assert done["state"] == "complete", done
        runs = (await svc.client.get("/api/runs")).json()["runs"]
    assert sorted(r["run_id"] for r in runs) == sorted(run_ids)
    assert all((ws / "hello.txt").is_file() for ws in spaces)


async def test_one_workspace_runs_one_goal_at_a_time_and_refuses_a_second_with_409(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        second = await svc.client.post("/api/goals", json={"workspace": str(ws), "objective": "again"})
        assert second.status_code == 409, second.text
        assert run_id in second.json()["error"] and "pause" in second.json()["hint"]
        not_a_dir = await svc.client.post("/api/goals", json={"workspace": str(tmp_path / "nope"), "objective": "x"})
        assert not_a_dir.status_code == 400 and not_a_dir.json()["hint"]
        bad_body = await svc.client.post("/api/goals", json={"workspace": str(ws), "objective": "x", "budget": 1})
        assert bad_body.status_code == 400 and "budget" in bad_body.json()["error"]
        undo_running = await svc.client.post(f"/api/runs/{run_id}/undo", json={})
        assert undo_running.status_code == 409
        await svc.review(run_id, decision="cancel")
        await svc.wait_for(run_id)
        third = await svc.client.post("/api/goals", json={"workspace": str(ws), "objective": "now free"})
        assert third.status_code == 201
        await svc.client.post(f"/api/runs/{third.json()['run_id']}/pause")
        unknown = await svc.client.get("/api/runs/no-such-run")
        assert unknown.status_code == 404 and unknown.json()["hint"]


@pytest.mark.bwrap
async def test_pause_then_resume_with_a_new_budget_completes(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        # A budget of one request pauses the goal after its planner's first request.
        run_id = await svc.start(ws, review=False, max_requests=1)
        paused = await svc.wait_for(run_id)
        assert paused["state"] == "paused" and paused["resume_hint"], paused
        assert paused["summary"]["status"] == "paused"
        resumed = await svc.client.post(f"/api/runs/{run_id}/resume", json={"max_requests": 10})
        assert resumed.status_code == 200, resumed.text
        done = await svc.wait_for(run_id)
        assert done["state"] == "complete", done
        again = await svc.client.post(f"/api/runs/{run_id}/resume", json={})
        assert again.status_code == 409


@pytest.mark.bwrap
async def test_pause_at_the_review_pauses_resumable_and_the_resumed_goal_is_reviewed_again(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        assert (await svc.client.post(f"/api/runs/{run_id}/pause")).json() == {"ok": True}
        paused = await svc.wait_for(run_id)
        assert paused["state"] == "paused" and "resumable" in paused["reason"]
        assert (await svc.client.post(f"/api/runs/{run_id}/pause")).status_code == 409
        assert (await svc.client.post(f"/api/runs/{run_id}/resume", json={"budget_usd": 5})).status_code == 200
        # Paused at the review, its plan was never approved: resumed, it goes back to the review, not to execution.
        again = await svc.wait_for(run_id, awaiting_review=True)
        assert again["state"] == "awaiting_review" and not (ws / "hello.txt").exists()
        assert (await svc.review(run_id, decision="approve")).status_code == 200
        done = await svc.wait_for(run_id)
        assert done["state"] == "complete", done


@pytest.mark.bwrap
async def test_a_restarted_service_lists_the_runs_and_resumes_a_paused_one(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    state = tmp_path / "state"
    first = Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": [*planner_replies(), planner_replies()[0]]},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor_replies()},
            ]
        }
    )
    # The first service is given the workspace (--workspace); the goals started there are what it remembers.
    async with open_service(tmp_path, first, state_dir=state, workspaces=[ws]) as svc:
        finished = await svc.start(ws, review=False)
        await svc.wait_for(finished)
        # The second goal has the same plan: without this, its step would change nothing and not count as done.
        (ws / "hello.txt").unlink()
        paused = await svc.start(ws, review=False, max_requests=1)
        await svc.wait_for(paused)
    script = Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner_replies()[1:]},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor_replies()},
            ]
        }
    )
    # A new service on the same state directory, not told about the workspace: it remembers it.
    async with open_service(tmp_path / "again", script, state_dir=state) as svc:
        runs = {r["run_id"]: r for r in (await svc.client.get("/api/runs")).json()["runs"]}
        assert set(runs) == {finished, paused}
        assert runs[finished]["state"] == "complete" and runs[paused]["state"] == "paused"
        assert not any(r["live"] for r in runs.values())
        before = (await svc.run(paused))["summary"]
        assert before is not None and before["status"] == "paused"
        assert (await svc.client.post(f"/api/runs/{paused}/resume", json={"max_requests": 10})).status_code == 200
        assert (await svc.wait_for(paused))["state"] == "complete"


async def test_a_failing_deepseek_pauses_that_goal_with_its_reason_not_the_service(tmp_path: Path) -> None:
    failing = reply(call("submit_plan", objective="x", steps=one_step_plan()))
    failing["faults"] = [{"kind": "http_status", "status": 500, "times": 5}]
    script = Script.model_validate({"sessions": [{"key": "planner", "system_contains": PLANNER, "replies": [failing]}]})
    ws = workspace(tmp_path)
    async with open_service(tmp_path, script) as svc:
        run_id = await svc.start(ws, review=False)
        done = await svc.wait_for(run_id)
        assert done["state"] == "paused" and "DeepSeek" in done["reason"], done
        assert done["error"] and done["resume_hint"]
        assert (await svc.client.get("/api/runs")).status_code == 200  # the service is still up
        from .support import read_sse

        events, ended = await read_sse(svc.client, run_id)
        assert ended and events[-1][1] == "error" and events[-1][2]["resume_command"]


@pytest.mark.bwrap
async def test_undo_takes_back_a_finished_runs_step(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws, review=False)
        assert (await svc.wait_for(run_id))["state"] == "complete"
        assert (ws / "hello.txt").is_file()
        undone = await svc.client.post(f"/api/runs/{run_id}/undo", json={})
        assert undone.status_code == 200, undone.text
        assert undone.json()["restored"] == ["hello.txt"] and undone.json()["ok"]
        assert not (ws / "hello.txt").exists()
