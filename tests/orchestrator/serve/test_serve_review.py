"""The plan review through the API: revise with feedback, edit with a validated plan (422 for an invalid one), cancel;
model-supplied text comes back as JSON text."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.emulator import Script

from ..goal_support import EXECUTOR, PLANNER, call, reply
from .support import executor_replies, one_step_plan, open_service, simple_script, workspace


def _script(planner: list[dict[str, object]]) -> Script:
    return Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor_replies()},
            ]
        }
    )


VERDICT = reply(call("goal_verdict", verdict="complete", evidence=["S1 verified"]))


@pytest.mark.bwrap
async def test_revise_sends_the_feedback_to_the_planner_and_the_revised_plan_is_reviewed_again(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    planner = [
        reply(call("submit_plan", objective="Say hello", steps=one_step_plan("First title"))),
        reply(call("revise_plan", objective="Say hello", steps=one_step_plan("Revised title"))),
        VERDICT,
    ]
    async with open_service(tmp_path, _script(planner)) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        revise = await svc.review(run_id, decision="revise")
        assert revise.status_code == 400 and "feedback" in revise.json()["error"]
        assert (await svc.review(run_id, decision="revise", feedback="Use a better title")).status_code == 200
        again = await svc.wait_for(run_id, awaiting_review=True)
        assert again["plan"]["revision"] == 2 and again["plan"]["steps"][0]["title"] == "Revised title"
        assert (await svc.review(run_id, decision="approve")).status_code == 200
        done = await svc.wait_for(run_id)
        assert done["state"] == "complete"
    planner_requests = svc.emulator.stats()["script_position"]["planner"]
    assert planner_requests == 3


@pytest.mark.bwrap
async def test_edit_takes_a_validated_plan_and_refuses_an_invalid_one_with_422(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        waiting = await svc.wait_for(run_id, awaiting_review=True)
        plan = waiting["plan"]
        broken = {**plan, "steps": [{**plan["steps"][0], "depends_on": ["S9"]}]}
        refused = await svc.review(run_id, decision="edit", plan=broken)
        assert refused.status_code == 422, refused.text
        assert "S9" in refused.json()["error"] and refused.json()["hint"]
        not_a_plan = await svc.review(run_id, decision="edit", plan={"steps": "none"})
        assert not_a_plan.status_code == 422
        assert (await svc.run(run_id))["awaiting_review"]  # still waiting for a valid decision
        edited = {**plan, "steps": [{**plan["steps"][0], "title": "Edited by hand"}]}
        assert (await svc.review(run_id, decision="edit", plan=edited)).status_code == 200
        again = await svc.wait_for(run_id, awaiting_review=True)
        assert again["plan"]["steps"][0]["title"] == "Edited by hand"
        assert (await svc.review(run_id, decision="approve")).status_code == 200
        done = await svc.wait_for(run_id)
        assert done["state"] == "complete" and done["plan"]["steps"][0]["title"] == "Edited by hand"


async def test_cancel_ends_the_goal_before_anything_runs(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script()) as svc:
        run_id = await svc.start(ws)
        await svc.wait_for(run_id, awaiting_review=True)
        assert (await svc.review(run_id, decision="cancel")).status_code == 200
        done = await svc.wait_for(run_id)
        assert done["state"] == "cancelled" and not (ws / "hello.txt").exists()
        late = await svc.review(run_id, decision="approve")
        assert late.status_code == 409 and late.json()["hint"]


async def test_a_plan_title_holding_a_script_tag_comes_back_as_json_text(tmp_path: Path) -> None:
    title = '<script>alert("x")</script> & <b>bold</b>'
    ws = workspace(tmp_path)
    async with open_service(tmp_path, simple_script(title)) as svc:
        run_id = await svc.start(ws)
        waiting = await svc.wait_for(run_id, awaiting_review=True)
        assert waiting["plan"]["steps"][0]["title"] == title
        response = await svc.client.get(f"/api/runs/{run_id}")
        assert response.headers["content-type"] == "application/json"
        assert "<script>" in response.text  # JSON text, escaped by the page when shown (dash's side)
        await svc.review(run_id, decision="cancel")
        await svc.wait_for(run_id)
