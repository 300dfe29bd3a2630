"""What a plan must carry so that its goal can be shown complete on the host (DESIGN §5 "Evidence from the host").

A model's word is never evidence: a step is done when commands the supervisor runs pass, and a goal is complete when
its acceptance commands pass after the last step. So a step that writes files must name a verify command, a plan must
name at least one, and the acceptance commands are the verify commands of every step that expect success, each once,
in plan order (a command that expects a failure shows an intermediate state, such as a test written before its fix).
"""

from __future__ import annotations

from plans.schema import SATISFIED, Plan, Step, VerifyCommand

NO_VERIFY_HINT = (
    "add a verify command: a shell command, run from the workspace root, that exits 0 only when the step is right "
    "(the project's own tests where there are any)"
)


def unverified_writers(plan: Plan) -> tuple[Step, ...]:
    """The steps still to run that declare writes but name no verify command: nothing could show they are done."""
    return tuple(s for s in plan.steps if s.writes and not s.verify and s.status not in SATISFIED)


def evidence_problems(plan: Plan) -> list[str]:
    """Why the supervisor could not check ``plan`` on the host, each written for the planner; empty when it can."""
    problems = [
        f"step {s.id} writes {', '.join(s.writes)} but names no verify command: {NO_VERIFY_HINT}"
        for s in unverified_writers(plan)
    ]
    if not problems and not any(s.verify for s in plan.steps):
        problems.append(
            "the plan names no verify command at all, so nothing could show the objective is met: give the step "
            f"that makes the change its verify commands ({NO_VERIFY_HINT})"
        )
    return problems


def acceptance_commands(plan: Plan) -> tuple[tuple[str, VerifyCommand], ...]:
    """The goal's acceptance commands with the id of the step that named each first: every verify command that
    expects exit 0, each command once, in plan order. Re-run on the host after the last step."""
    seen: set[str] = set()
    out: list[tuple[str, VerifyCommand]] = []
    for step in plan.steps:
        for command in step.verify:
            if command.expect_exit != 0 or command.command in seen:
                continue
            seen.add(command.command)
            out.append((step.id, command))
    return tuple(out)
