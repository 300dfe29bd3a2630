"""What a plan must carry so that its goal can be shown complete on the host (issue 44, DESIGN §5 "Evidence from the
host"): a writing step names a verify command, a plan names at least one, and the acceptance commands are the plan's
verify commands that expect success, each once, in plan order."""

from __future__ import annotations

from plans import Plan, StepStatus, acceptance_commands, evidence_problems, unverified_writers


def _plan(*steps: dict[str, object]) -> Plan:
    return Plan.model_validate({"objective": "o", "steps": list(steps)})


def _step(sid: str, *, writes: tuple[str, ...] = (), verify: tuple[object, ...] = (), **extra: object) -> dict:
    commands = [v if isinstance(v, dict) else {"command": v} for v in verify]
    return {"id": sid, "title": sid, "instructions": sid, "writes": list(writes), "verify": commands, **extra}


def test_a_writing_step_without_verify_is_named_with_what_to_do() -> None:
    plan = _plan(_step("S1", writes=("calc.py",)), _step("S2", writes=("b.py",), verify=("pytest",)))
    assert [s.id for s in unverified_writers(plan)] == ["S1"]
    (problem,) = evidence_problems(plan)
    assert problem.startswith("step S1 writes calc.py but names no verify command: add a verify command")


def test_a_plan_with_no_verify_command_at_all_is_refused_even_without_declared_writes() -> None:
    (problem,) = evidence_problems(_plan(_step("S1"), _step("S2")))
    assert "the plan names no verify command at all" in problem


def test_a_read_only_step_beside_a_verified_one_and_a_done_step_are_fine() -> None:
    done = _step("S0", writes=("old.py",), status=StepStatus.DONE)
    assert evidence_problems(_plan(done, _step("S1"), _step("S2", writes=("a.py",), verify=("pytest -q",)))) == []


def test_acceptance_commands_are_the_successful_verify_commands_once_in_order() -> None:
    plan = _plan(
        _step("S1", writes=("t.py",), verify=({"command": "pytest t.py", "expect_exit": 1}, "ruff check")),
        _step("S2", writes=("a.py",), verify=("pytest t.py", "ruff check")),
        _step("S3", writes=("b.py",), verify=("python3 -m b",)),
    )
    assert [(sid, c.command) for sid, c in acceptance_commands(plan)] == [
        ("S1", "ruff check"),
        ("S2", "pytest t.py"),
        ("S3", "python3 -m b"),
    ]
