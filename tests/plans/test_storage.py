"""Plans on disk: one JSON file per revision, atomic writes, loaded back equal, history never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from plans import Plan, PlanStorageError, StepStatus, VerifyCommand
from plans.storage import (
    load_latest,
    load_plan,
    load_revision,
    revision_numbers,
    revision_path,
    save_plan,
    save_revision,
)

from .strategies import dag_plans, step


def full_plan(revision: int = 1) -> Plan:
    return Plan(
        objective="ünïcode objective",
        assumptions=("a",),
        non_goals=("b",),
        requires_approval=True,
        revision=revision,
        steps=(
            step(
                "S1",
                [],
                writes=("x.py",),
                reads=("y/*.py",),
                acceptance=("works",),
                verify=(VerifyCommand(command="false", expect_exit=1, timeout_s=2.5),),
                risk="medium",
                needs_pro=True,
                status=StepStatus.DONE,
                result="did it",
                evidence=("log",),
            ),
            step("S2", ["S1"]),
        ),
    )


def test_revisions_are_stored_one_file_each_and_load_back_equal(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first, second = full_plan(1), full_plan(2)
    assert save_revision(run, first) == run / "plan.r001.json"
    assert save_revision(run, second) == revision_path(run, 2)
    assert revision_numbers(run) == [1, 2]
    assert load_revision(run, 1) == first
    assert load_latest(run) == second
    assert sorted(p.name for p in run.iterdir()) == ["plan.r001.json", "plan.r002.json"]  # no temp files left


def test_history_is_not_overwritten(tmp_path: Path) -> None:
    save_revision(tmp_path, full_plan(1))
    save_revision(tmp_path, full_plan(1))  # the same plan again is fine
    with pytest.raises(PlanStorageError, match=r"plan\.r001\.json already holds a different plan.*revision 2"):
        save_revision(tmp_path, full_plan(1).model_copy(update={"objective": "other"}))
    assert load_revision(tmp_path, 1) == full_plan(1)


def test_missing_and_corrupt_files_name_the_file(tmp_path: Path) -> None:
    assert load_latest(tmp_path / "nothing") is None
    with pytest.raises(PlanStorageError, match="cannot read plan file"):
        load_plan(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"objective": "o"}')
    with pytest.raises(PlanStorageError, match=r"bad\.json is not a valid plan document"):
        load_plan(bad)


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    save_plan(target, full_plan())
    (tmp_path / "plan.json.dir").mkdir()
    with pytest.raises(OSError):
        save_plan(tmp_path / "plan.json.dir", full_plan(2))  # os.replace onto a directory fails
    assert load_plan(target) == full_plan()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json", "plan.json.dir"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(dag_plans(statuses=True))
def test_any_plan_round_trips(tmp_path: Path, plan: Plan) -> None:
    path = save_plan(tmp_path / "p.json", plan)
    assert load_plan(path) == plan
