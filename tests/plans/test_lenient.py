"""Reading model-made plans: common slips are normalized and recorded; the rest is rejected in words for the model."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from plans import Plan, PlanReadError, Risk, StepStatus, find_issues, read_plan
from plans.lenient import LenientPlan

from .strategies import dag_plans


def test_a_well_formed_plan_needs_no_notes() -> None:
    data = {"objective": "o", "steps": [{"id": "S1", "title": "t", "instructions": "i", "depends_on": []}]}
    result = read_plan(json.dumps(data))
    assert result == LenientPlan(plan=Plan.model_validate(data), notes=())


@settings(max_examples=50, deadline=None)
@given(dag_plans())
def test_any_strict_plan_reads_back_unchanged(plan: Plan) -> None:
    assert read_plan(plan.model_dump_json()) == LenientPlan(plan=plan, notes=())


def test_common_slips_are_normalized_and_recorded() -> None:
    raw = {
        "goal": "add a flag",
        "nonGoals": "rewrite the parser",
        "revision": 9,
        "steps": [
            {"id": 1, "name": "read", "description": "read cli.py", "writes": "notes.md", "verify": "true"},
            {
                "id": 2,
                "title": "edit",
                "deps": [1],
                "risk": "High",
                "needsPro": "yes",
                "status": "done",
                "verify": [{"cmd": "pytest", "exit_code": 0, "timeout": 30}],
                "estimate": "1h",
            },
            {"id": 3, "instructions": "run the tests\nand fix", "dependencies": "1, 2"},
        ],
    }
    result = read_plan(raw)
    plan = result.plan
    assert plan.objective == "add a flag" and plan.non_goals == ("rewrite the parser",) and plan.revision == 1
    s1, s2, s3 = plan.steps
    assert (s1.id, s1.title, s1.instructions, s1.writes, s1.verify[0].command) == (
        "1",
        "read",
        "read cli.py",
        ("notes.md",),
        "true",
    )
    assert s2.depends_on == ("1",) and s2.risk is Risk.HIGH and s2.needs_pro is True
    assert s2.status is StepStatus.PENDING  # a planner never marks a step done
    assert s2.instructions == "edit" and s2.verify[0].timeout_s == 30
    assert s3.title == "run the tests" and s3.depends_on == ("1", "2")
    assert find_issues(plan) == []
    notes = "\n".join(result.notes)
    for expected in (
        "read 'goal' as 'objective'",
        "read integer step ids as strings",
        "read 'deps' as 'depends_on' (step 2)",
        "read 'dependencies' as 'depends_on' (step 3)",
        "dropped 'status': the supervisor sets it, not the plan (step 2)",
        "dropped 'revision'",
        "ignored unknown field 'estimate' (step 2)",
        "read verify commands given as strings (step 1)",
        "used the first line of the instructions as the missing title (step 3)",
        "read risk levels case-insensitively (step 2)",
    ):
        assert expected in notes


def test_bare_list_wrapper_and_missing_ids() -> None:
    steps = [{"title": "one", "instructions": "1"}, {"title": "two", "instructions": "2", "after": ["S1"]}]
    result = read_plan(json.dumps({"plan": steps}), objective="from the goal")
    assert result.plan.objective == "from the goal"
    assert result.plan.ids == ("S1", "S2") and result.plan.steps[1].depends_on == ("S1",)
    assert "unwrapped the outer 'plan' object" in result.notes
    assert "read a bare list as the plan's steps" in result.notes
    assert "numbered the steps S1, S2, ... because none had an id" in result.notes
    by_id = read_plan({"objective": "o", "steps": {"A": {"title": "a", "instructions": "a"}}})
    assert by_id.plan.ids == ("A",)


def test_malformed_json_is_repaired() -> None:
    text = '{"objective": "o", "steps": [{"id": "S1", "title": "t", "instructions": "i",}]'
    result = read_plan(text)
    assert result.plan.ids == ("S1",) and "repaired malformed JSON" in result.notes


def test_what_cannot_be_understood_is_rejected_with_a_message_for_the_model() -> None:
    with pytest.raises(PlanReadError) as info:
        read_plan({"steps": [{"id": "S1", "title": "t"}, {"title": "u", "risk": "extreme"}, 42]})
    message = str(info.value)
    assert message.startswith("Your plan could not be read:\n")
    assert message.endswith("Fix these and submit the whole plan again.")
    assert "the plan has no 'objective'" in message
    assert "'risk' must be one of low, medium, high; got \"extreme\"" in message
    assert "step 3: a step must be an object" in message
    with pytest.raises(PlanReadError, match=r"step S 1: 'id' string should match pattern"):
        read_plan({"objective": "o", "steps": [{"id": "S 1", "title": "t", "instructions": "i"}]})
    with pytest.raises(PlanReadError, match="every step needs an 'id'"):
        read_plan({"objective": "o", "steps": [{"id": "S1", "title": "t"}, {"title": "u"}]})
    with pytest.raises(PlanReadError, match="the plan is not JSON"):
        read_plan("this is prose, not a plan")
    with pytest.raises(PlanReadError, match="must be a list of strings"):
        read_plan({"objective": "o", "steps": [{"id": "S1", "title": "t", "writes": {"a": 1}}]})
