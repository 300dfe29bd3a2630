"""The system prompts of the planner and the executor of a goal, and the user turns the supervisor writes.

The system prompts are constants: no objective, clock, path or run id, so every goal in every workspace starts from
the same prefix bytes and the second run hits the cache from its first request (DESIGN §7). Everything that changes
goes into user turns, and state that changes mid-goal rides in tail blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from orchestrator.events import VerifyOutcome
from plans import Plan, Step, StepStatus, prompt_text, step_prompt_text

PLANNER_SYSTEM_PROMPT = """\
You are the planner of Reasonix, a coding agent. You plan; an executor carries the plan out; a supervisor checks
every step by running its verify commands.

You may only read: the workspace tools that change files or run commands are refused for you.
Inspect what you need (list_dir, glob, grep, read_file), then call submit_plan once with a plan:
- steps form a DAG through depends_on; each step is one coherent change an engineer could review;
- instructions say exactly what to change and where; reads and writes list the paths;
- acceptance says what must be true; verify lists shell commands (run from the workspace root) that exit 0 when
  the step is right. Prefer the project's own test commands. Every step that changes code has a verify command;
- two steps that write the same file must depend on each other;
- set needs_pro only for a step that needs deep reasoning (tricky algorithms, subtle concurrency).
When asked to revise, call revise_plan with the remaining steps (done steps stay as they are).
When every step is done and verified, call goal_verdict: complete with evidence, or blocked with the one question
only the user can answer.
If a task is beyond you, start your reply with <<<NEEDS_PRO: reason>>> and nothing else.
Be brief: no commentary outside tool calls."""

EXECUTOR_SYSTEM_PROMPT = """\
You are the executor of Reasonix, a coding agent. The supervisor hands you one step of a plan at a time.
Do exactly that step in the workspace with the tools: read before you edit; keep edits minimal; run the step's verify
commands yourself before you report. Then call report_step once: done, failed (what went wrong) or blocked (what you
need), with a short summary and evidence (files changed, commands run and their results).
The supervisor re-runs the verify commands itself; a step is done only when they pass.
If a step is beyond you, start your reply with <<<NEEDS_PRO: reason>>> and nothing else.
Be brief."""


def progress_text(plan: Plan) -> str:
    """Where each step stands, compactly: the planner wrote the plan, so only states and results are new to it."""
    lines = []
    for step in plan.steps:
        line = f"- {step.id} [{step.status.value}] {step.title}"
        if step.result:
            line += f": {step.result}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def planning_turn(objective: str) -> str:
    return f"Objective:\n{objective.strip()}\n\nInspect the workspace as needed, then submit the plan."


def no_plan_turn(attempt: int) -> str:
    return (
        f"You ended your turn without an accepted plan (attempt {attempt}). "
        "Call submit_plan (or revise_plan) with a valid plan now."
    )


def feedback_turn(feedback: str) -> str:
    return f"The user reviewed the plan and asks for changes:\n{feedback.strip()}\n\nCall revise_plan."


def user_edit_turn(plan: Plan) -> str:
    return f"The user edited the plan. This is the plan now; keep to it:\n\n{prompt_text(plan)}"


def step_turn(step: Step, dependencies: Sequence[Step], *, attempt: int, resumed: bool = False) -> str:
    parts = []
    if resumed:
        parts.append("The session was interrupted and resumed; check the workspace state before you continue.")
    if attempt > 1:
        parts.append(f"Attempt {attempt} of this step.")
    parts.append("Your step:\n" + step_prompt_text(step))
    if dependencies:
        done = "\n\n".join(f"{d.id}: {d.title}\nresult: {d.result or '(no summary)'}" for d in dependencies)
        parts.append("Results of the steps it depends on:\n" + done)
    return "\n\n".join(parts)


def verify_failed_turn(step: Step, feedback: str) -> str:
    return (
        f"The supervisor ran the verify commands of {step.id} and they failed:\n{feedback}\n\n"
        "Fix the problem, run the commands yourself, and report again."
    )


def replan_turn(plan: Plan, step: Step, feedback: str) -> str:
    return (
        f"Step {step.id} failed verification repeatedly. Progress so far:\n{progress_text(plan)}\n"
        f"Last failure of {step.id}:\n{feedback}\n\nRevise the remaining plan with revise_plan."
    )


def blocked_step_turn(plan: Plan, step: Step, summary: str) -> str:
    return (
        f"The executor reports step {step.id} as blocked: {summary}\n\nProgress so far:\n{progress_text(plan)}\n"
        "Revise the remaining plan with revise_plan, or call goal_verdict blocked with the question for the user."
    )


def verdict_turn(plan: Plan) -> str:
    return (
        "Every step is done and verified:\n"
        f"{progress_text(plan)}\n"
        "Check the objective is met, then call goal_verdict (or revise_plan if work remains)."
    )


def task_state(
    objective: str,
    plan: Plan | None,
    *,
    changed: Sequence[str],
    verified: Mapping[str, Sequence[VerifyOutcome]],
) -> str:
    """The task as the supervisor holds it, restated at the top of a compacted log (DESIGN §5 "Compaction in a
    goal"): the objective, every step with its status and its verify commands' last outcome, the files changed so
    far, and a blocked step's question. Facts the harness keeps, never the model's digest of them."""
    lines = ["The task, as the supervisor holds it:", f"Objective: {objective}"]
    if plan is None:
        lines.append("Plan: none yet.")
    else:
        lines.append(f"Plan (revision {plan.revision}):")
        for step in plan.steps:
            lines.append(f"- {step.id} [{step.status.value}] {step.title}")
            last = {o.command: o for o in verified.get(step.id, ())}
            for v in step.verify:
                outcome = last.get(v.command)
                seen = "not run yet" if outcome is None else _outcome(outcome)
                lines.append(f"    verify `{v.command}`: {seen}")
            if step.status is StepStatus.BLOCKED and step.result:
                lines.append(f"    open question: {step.result}")
    lines.append("Files changed so far: " + (", ".join(changed) if changed else "none yet"))
    return "\n".join(lines)


def _outcome(outcome: VerifyOutcome) -> str:
    if outcome.ok:
        return "passed"
    if outcome.timed_out:
        return "timed out"
    return f"failed (exit {outcome.exit_code})"
