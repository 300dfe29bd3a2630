"""Revisions keep done steps as history; diffs are exact."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plans import IssueCode, Plan, PlanDiff, PlanRevisionError, PlanValidationError, Step, StepStatus, diff, revise
from plans.revision import PLANNER_STEP_FIELDS, diff_text
from plans.schema import VerifyCommand

from .strategies import dag_plans, random_fields, step


def current_plan() -> Plan:
    return Plan(
        objective="add a flag",
        steps=(
            step("S1", [], status=StepStatus.DONE, result="read it", evidence=("cli.py:10",)),
            step("S2", ["S1"], status=StepStatus.FAILED, result="tests failed"),
            step("S3", ["S2"]),
        ),
        revision=2,
    )


def as_proposed(plan: Plan) -> Plan:
    """What a planner sends: no status, result or evidence."""
    steps = tuple(Step.model_validate(s.model_dump(exclude={"status", "result", "evidence"})) for s in plan.steps)
    return plan.model_copy(update={"steps": steps})


def test_revision_replaces_the_unfinished_part_and_keeps_done_steps() -> None:
    current = current_plan()
    proposed = Plan(
        objective="something else entirely",
        steps=(step("S1", []), step("S2", ["S1"], instructions="fix the test first"), step("S4", ["S2"])),
    )
    revised = revise(current, proposed)
    assert revised.revision == 3
    assert revised.objective == "add a flag"  # the user's objective stays
    assert revised.steps[0] == current.steps[0]  # done: status, result and evidence kept
    assert revised.step("S2").status is StepStatus.PENDING
    assert revised.step("S2").instructions == "fix the test first"
    assert revised.ids == ("S1", "S2", "S4")


def test_changing_or_dropping_a_done_step_is_refused_naming_it() -> None:
    current = current_plan()
    with pytest.raises(PlanRevisionError) as info:
        revise(current, Plan(objective="x", steps=(step("S1", [], title="reworded"), step("S2", ["S1"]))))
    (issue,) = info.value.issues
    assert issue.code is IssueCode.DONE_STEP_CHANGED and issue.steps == ("S1",)
    assert "S1 is done" in str(info.value) and "title" in str(info.value)
    with pytest.raises(PlanRevisionError) as info:
        revise(current, Plan(objective="x", steps=(step("S2", []),)))
    assert [i.code for i in info.value.issues] == [IssueCode.DONE_STEP_DROPPED]
    assert "S1 is done and cannot be dropped" in str(info.value)


def test_a_revision_is_validated() -> None:
    with pytest.raises(PlanValidationError) as info:
        revise(current_plan(), Plan(objective="x", steps=(step("S1", []), step("S2", ["S5"]))))
    assert not isinstance(info.value, PlanRevisionError)
    assert [i.code for i in info.value.issues] == [IssueCode.UNKNOWN_DEPENDENCY]


@st.composite
def revisions(draw: st.DrawFn) -> tuple[Plan, Plan]:
    """A current plan with random statuses, and a proposal that keeps, edits, drops and adds steps at random."""
    current = draw(dag_plans(max_steps=8, statuses=True))
    proposed_steps = []
    for s in as_proposed(current).steps:
        action = draw(st.sampled_from(["keep", "keep", "edit", "drop"]))
        if action == "keep":
            proposed_steps.append(s)
        elif action == "edit":
            proposed_steps.append(s.model_copy(update=draw(random_fields())))
    for k in range(draw(st.integers(0, 2))):
        deps = draw(st.lists(st.sampled_from([s.id for s in proposed_steps]), unique=True)) if proposed_steps else []
        proposed_steps.append(step(f"N{k}", deps))
    return current, Plan(objective="proposed", steps=tuple(proposed_steps))


@settings(max_examples=200, deadline=None)
@given(revisions())
def test_revisions_never_alter_a_done_step(pair: tuple[Plan, Plan]) -> None:
    current, proposed = pair
    done = {s.id: s for s in current.steps if s.status is StepStatus.DONE}
    proposed_by_id = {s.id: s for s in proposed.steps}
    touched = {
        sid
        for sid, s in done.items()
        if sid not in proposed_by_id
        or any(getattr(s, f) != getattr(proposed_by_id[sid], f) for f in PLANNER_STEP_FIELDS)
    }
    try:
        revised = revise(current, proposed)
    except PlanRevisionError as exc:
        named = {i.steps[0] for i in exc.issues if i.code in (IssueCode.DONE_STEP_CHANGED, IssueCode.DONE_STEP_DROPPED)}
        assert named == touched and touched
        return
    except PlanValidationError:
        assert not touched  # rejected for its graph, not for history (dropping a dependency of a kept step)
        return
    assert not touched
    for sid, old in done.items():
        assert revised.step(sid) == old
    assert revised.revision == current.revision + 1


def apply(old: Plan, d: PlanDiff, new: Plan) -> dict[str, dict[str, Any]]:
    """Old steps (JSON form) with the diff's removals and field changes applied, plus new's added steps."""
    result = {s.id: s.model_dump(mode="json") for s in old.steps}
    for ref in d.removed:
        del result[ref.id]
    for change in d.changed:
        for field in change.changes:
            assert result[change.id][field.field] == field.old
            result[change.id][field.field] = field.new
    for ref in d.added:
        result[ref.id] = new.step(ref.id).model_dump(mode="json")
    return result


@st.composite
def plan_pairs(draw: st.DrawFn) -> tuple[Plan, Plan]:
    def one() -> Plan:
        ids = draw(st.lists(st.sampled_from(["S1", "S2", "S3", "S4", "S5"]), unique=True))
        steps = tuple(
            step(sid, [], status=draw(st.sampled_from([StepStatus.PENDING, StepStatus.DONE])), **draw(random_fields()))
            for sid in ids
        )
        return Plan(objective=draw(st.sampled_from(["o", "p"])), steps=steps, revision=draw(st.integers(1, 2)))

    return one(), one()


@settings(max_examples=200, deadline=None)
@given(plan_pairs())
def test_diffs_are_exact(pair: tuple[Plan, Plan]) -> None:
    old, new = pair
    d = diff(old, new)
    assert {r.id for r in d.added} == set(new.ids) - set(old.ids)
    assert {r.id for r in d.removed} == set(old.ids) - set(new.ids)
    assert apply(old, d, new) == {s.id: s.model_dump(mode="json") for s in new.steps}
    for change in d.changed:
        assert change.changes and all(c.old != c.new for c in change.changes)
    plan_fields = {c.field: (c.old, c.new) for c in d.plan_changes}
    for name in ("objective", "revision"):
        before, after = getattr(old, name), getattr(new, name)
        assert (plan_fields.get(name) == (before, after)) if before != after else name not in plan_fields
    assert d.is_empty == (old == new or (set(old.steps) == set(new.steps) and plan_fields == {}))
    assert diff(old, old).is_empty


def test_diff_text() -> None:
    current = current_plan()
    revised = revise(
        current, Plan(objective="x", steps=(step("S1", []), step("S2", ["S1"], risk="high"), step("S4", [])))
    )
    text = diff_text(diff(current, revised))
    assert text.splitlines() == [
        "revision: 2 → 3",
        "+ S4 do S4",
        "- S3 do S3",
        "~ S2 do S2",
        "    risk: low → high",
        "    status: failed → pending",
        "    result: tests failed → (none)",
    ]
    assert diff_text(diff(current, current)) == "no changes\n"


def test_diff_text_says_changes_in_the_plan_s_own_words_not_json() -> None:
    old = Plan(
        objective="grow calc",
        steps=(
            step("S1", []),
            Step(
                id="S2",
                title="Add sub",
                instructions="Add sub().",
                depends_on=("S1",),
                writes=("calc.py",),
                acceptance=("sub(3, 1) == 2",),
                verify=({"command": "python3 -m unittest"},),
            ),
        ),
    )
    new_s2 = old.steps[1].model_copy(
        update={
            "instructions": "Add sub() and mul(), each with a docstring.\nKeep add() as it is.",
            "depends_on": (),
            "writes": ("calc.py", "tests/test_calc.py"),
            "acceptance": ("sub(3, 1) == 2", "mul(2, 3) == 6"),
            "verify": (
                VerifyCommand(command="python3 -m unittest", timeout_s=30),
                VerifyCommand(command="python3 -m calc", expect_exit=2),
            ),
            "needs_pro": True,
        }
    )
    text = diff_text(diff(old, old.model_copy(update={"steps": (old.steps[0], new_s2)})))
    assert text.splitlines() == [
        "~ S2 Add sub",
        "    instructions:",
        "        - Add sub().",
        "        + Add sub() and mul(), each with a docstring.",
        "        + Keep add() as it is.",
        "    after: S1 → (none)",
        "    writes: calc.py → calc.py, tests/test_calc.py",
        "    accept + mul(2, 3) == 6",
        "    verify - `python3 -m unittest`",
        "    verify + `python3 -m unittest` (30s)",
        "    verify + `python3 -m calc` (exit 2)",
        "    needs pro: no → yes",
    ]
    assert "{" not in text and "expect_exit" not in text and "timeout_s" not in text
