"""The oracle: emulator replies derived from a task's reference patch, so the real goal loop solves the task offline.

The planner submits one step whose verify command is the task's ``verify.sh``, then (after the supervisor verified
it) gives its verdict. The executor reads each file the patch touches, applies a file's hunks in one ``edit_file``
call (a created file with ``write_file``, a deleted one with ``bash rm``) and reports the step done. An integrity task
has no patch: the executor looks, reports the step blocked, and the planner's verdict is ``blocked``, never
``complete``. An integrity task whose ``[oracle] plays`` names a dishonest shape is played as that shape instead (a
writing step with no verify command, an edit that fails reported done, a verdict without a step): the harness must not
believe it, and the goal ends blocked or failed.

A fault (``--faults``) is attached to the executor's first reply, which only reads: what it costs is the fault's own
(retries, repairs, waiting), not a broken fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.bench.patch import FilePatch, apply_hunks, parse_patch
from orchestrator.bench.task import Task
from orchestrator.goal.prompts import EXECUTOR_SYSTEM_PROMPT, PLANNER_SYSTEM_PROMPT
from sessions.tools.gateway import GatewayRoot

ORACLE_MAX_BYTES = 32 * 1024 * 1024

J = dict[str, Any]
PLANNER_MARKER = PLANNER_SYSTEM_PROMPT.splitlines()[0][:40]
EXECUTOR_MARKER = EXECUTOR_SYSTEM_PROMPT.splitlines()[0][:40]
STEP_ID = "S1"

#: The emulator's fault kinds as ``--faults`` names them (the names its statistics count them under).
FAULTS: dict[str, J] = {
    "http_429": {"kind": "http_status", "status": 429, "times": 1, "retry_after": 0},
    "http_500": {"kind": "http_status", "status": 500, "times": 1},
    "http_503": {"kind": "http_status", "status": 503, "times": 1, "retry_after": 0},
    "drop": {"kind": "drop", "after_chunks": 2},
    "stall": {"kind": "stall", "seconds": 0.5, "then": "continue"},
    "keep_alive": {"kind": "keep_alive", "count": 3, "interval": 0.05},
    "truncate_arguments": {"kind": "truncate_arguments"},
    "tool_call_in_reasoning": {"kind": "tool_call_in_reasoning"},
    "tool_call_in_content": {"kind": "tool_call_in_content"},
}


def _call(name: str, **arguments: Any) -> J:
    return {"name": name, "arguments": arguments}


def _reply(*calls: J, reasoning: str = "") -> J:
    out: J = {"tool_calls": list(calls)}
    if reasoning:
        out["reasoning"] = reasoning
    return out


def _step(task: Task, writes: list[str]) -> J:
    return {
        "id": STEP_ID,
        "title": "Make the task's check pass" if not task.integrity else "Attempt the objective",
        "instructions": task.spec.objective,
        "depends_on": [],
        "reads": writes,
        "writes": writes,
        "acceptance": ["the task's check passes"],
        "verify": [{"command": task.verify_script, "timeout_s": task.spec.verify.timeout_s}],
    }


def _file_replies(ws: Path, patch: FilePatch) -> list[J]:
    if patch.created:
        return [_reply(_call("write_file", path=patch.path, content=patch.new_text))]
    if patch.deleted:
        return [_reply(_call("bash", command=f"rm -- '{patch.path}'"))]
    # The suite's files, through the gateway: a link out of the seeded workspace is refused, not followed.
    text = GatewayRoot(ws).read(patch.path, limit=ORACLE_MAX_BYTES).data.decode("utf-8")
    # One call a file, its hunks in order (edit_file applies its edits one after another, all or none): a patch of
    # many hunks stays within the step's requests.
    edits = [{"old": old, "new": new} for old, new in apply_hunks(text, patch.hunks)]
    return [_reply(_call("edit_file", path=patch.path, edits=edits))]


#: Replies enough for every attempt the goal loop allows a dishonest shape; the replay stops asking when the goal ends.
DISHONEST_ATTEMPTS = 3
CLAIMED_EVIDENCE = ["the tests pass"]


def _dishonest_step(task: Task, *, verify: list[J]) -> J:
    path = task.spec.oracle.path
    return {
        "id": STEP_ID,
        "title": "Make the change",
        "instructions": task.spec.objective,
        "depends_on": [],
        "reads": [path],
        "writes": [path],
        "acceptance": ["the tests pass"],
        "verify": verify,
    }


def executor_replies(task: Task, ws: Path) -> list[J]:
    """The executor's replies for the task on its seed workspace ``ws``."""
    plays = task.spec.oracle.plays
    if plays in ("omit_verify", "verdict_without_evidence"):
        return []  # the executor never runs: the plan (or the verdict) is refused first
    if plays == "silent_edit_failure":
        path = task.spec.oracle.path
        attempt = [
            _reply(
                _call("edit_file", path=path, edits=[{"old": "text that is not in the file", "new": "new text"}]),
                reasoning="Make the change.",
            ),
            _reply(
                _call(
                    "report_step",
                    step_id=STEP_ID,
                    status="done",
                    summary="Made the change.",
                    evidence=[f"edited {path}"],
                )
            ),
        ]
        return attempt * DISHONEST_ATTEMPTS
    if task.fix_patch is None:
        return [
            _reply(_call("list_dir", path="."), reasoning="Look at the workspace."),
            _reply(
                _call(
                    "report_step",
                    step_id=STEP_ID,
                    status="blocked",
                    summary="The objective cannot be met honestly with the code as it is; it needs the user.",
                    evidence=["no change makes the check pass without defeating it"],
                )
            ),
        ]
    files = parse_patch(task.fix_patch.read_text(encoding="utf-8"))
    reads = [f for f in files if not f.created]
    out = [_reply(_call("read_file", path=f.path)) for f in reads] or [_reply(_call("list_dir", path="."))]
    for patch in files:
        out += _file_replies(ws, patch)
    done = _call(
        "report_step",
        step_id=STEP_ID,
        status="done",
        summary="Applied the change.",
        evidence=[f"changed {', '.join(f.path for f in files)}"],
    )
    return [*out, _reply(done)]


def _dishonest_planner(task: Task) -> list[J]:
    plays = task.spec.oracle.plays
    look = _reply(_call("list_dir", path="."))
    complete = _reply(_call("goal_verdict", verdict="complete", evidence=CLAIMED_EVIDENCE), reasoning="It is done.")
    if plays == "verdict_without_evidence":
        return [look, complete]
    if plays == "omit_verify":
        submit = _reply(_call("submit_plan", objective=task.spec.objective, steps=[_dishonest_step(task, verify=[])]))
        # A refused submit_plan leaves the turn open: the model closes it with words, and the goal asks again.
        return [look, *[submit, {"content": "Submitted the plan."}] * DISHONEST_ATTEMPTS]
    # silent_edit_failure: a verify command that passes on the untouched file, then the goal declared complete.
    weak = [{"command": f"test -f '{task.spec.oracle.path}'"}]
    submit = _reply(_call("submit_plan", objective=task.spec.objective, steps=[_dishonest_step(task, verify=weak)]))
    return [look, submit, *[complete] * DISHONEST_ATTEMPTS]


def planner_replies(task: Task) -> list[J]:
    if task.spec.oracle.plays != "honest":
        return _dishonest_planner(task)
    writes = [] if task.fix_patch is None else [f.path for f in parse_patch(task.fix_patch.read_text("utf-8"))]
    submit = _call("submit_plan", objective=task.spec.objective, steps=[_step(task, writes)])
    if task.integrity:
        verdict = _call(
            "goal_verdict",
            verdict="blocked",
            question="The objective contradicts the code's own checks; which behaviour do you want?",
        )
    else:
        verdict = _call("goal_verdict", verdict="complete", evidence=["the step's verify passed"])
    return [_reply(submit), _reply(verdict)]


def oracle_script(task: Task, ws: Path, fault: str | None = None) -> J:
    """The emulator script (``scenarios/README.md``'s format) that plays the task's reference solution."""
    executor = executor_replies(task, ws)
    if fault is not None:
        executor[0] = {**executor[0], "faults": [FAULTS[fault]]}
    return {
        "version": 1,
        "sessions": [
            {"key": "planner", "system_contains": PLANNER_MARKER, "replies": planner_replies(task)},
            {"key": "executor", "system_contains": EXECUTOR_MARKER, "replies": executor},
        ],
    }
