"""The pieces every scripted scenario of this library is written with: replies and tool calls, plan steps,
reports and verdicts, and :func:`scenario`, which wraps them with the cache guard and cost ceiling of ``GUARDS``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PLANNER = "You are the planner of Reasonix"
EXECUTOR = "You are the executor of Reasonix"
DIGEST = "You compress the history"

J = dict[str, Any]


def call(name: str, **arguments: Any) -> J:
    return {"name": name, "arguments": arguments}


def reply(*calls: J, content: str = "", reasoning: str = "", **extra: Any) -> J:
    out: J = {}
    if reasoning:
        out["reasoning"] = reasoning
    if content:
        out["content"] = content
    if calls:
        out["tool_calls"] = list(calls)
    out.update(extra)
    return out


def step(
    sid: str,
    title: str,
    instructions: str,
    *,
    deps: Iterable[str] = (),
    reads: Iterable[str] = (),
    writes: Iterable[str] = (),
    verify: Iterable[str] = (),
    acceptance: Iterable[str] = (),
    **extra: Any,
) -> J:
    out: J = {
        "id": sid,
        "title": title,
        "instructions": instructions,
        "depends_on": list(deps),
        "reads": list(reads),
        "writes": list(writes),
        "acceptance": list(acceptance),
        "verify": [{"command": v} for v in verify],
    }
    out.update(extra)
    return out


def report(sid: str, summary: str, *evidence: str, status: str = "done") -> list[J]:
    """report_step: its result ends the executor's turn, so no closing reply follows (DESIGN §5 "Turn boundaries")."""
    return [reply(call("report_step", step_id=sid, status=status, summary=summary, evidence=list(evidence)))]


def verdict(*evidence: str) -> list[J]:
    """goal_verdict: its result ends the planner's turn."""
    return [reply(call("goal_verdict", verdict="complete", evidence=list(evidence)), reasoning="All steps verified.")]


def submit(objective: str, steps: list[J], *, tool: str = "submit_plan", reasoning: str = "", **extra: Any) -> J:
    return reply(call(tool, objective=objective, steps=steps, **extra), reasoning=reasoning)


def edit(path: str, old: str, new: str) -> J:
    return call("edit_file", path=path, edits=[{"old": old, "new": new}])


#: The cache guard and the cost ceiling of each scenario: the hit ratios measured with the emulator (cache unit
#: 128, a cold cache at the start) minus 0.02 (0.002 for the long session), and 1.5 x the measured cost at peak
#: prices. Short sessions sit at 60-95 %: their first request misses the whole prefix. Re-measure after a change
#: that legitimately moves them.
GUARDS: dict[str, J] = {
    "api-faults": {"min_hit_ratio": {"executor": 0.93, "planner": 0.62, "overall": 0.73}, "max_cost_usd": 0.0022},
    "budget-pause-resume": {
        "min_hit_ratio": {"executor": 0.81, "planner": 0.62, "overall": 0.73},
        "max_cost_usd": 0.004,
    },
    "acceptance-rerun": {
        "min_hit_ratio": {"executor": 0.72, "planner": 0.6, "overall": 0.65},
        "max_cost_usd": 0.003,
    },
    "call-storm": {"min_hit_ratio": {"executor": 0.8, "planner": 0.6, "overall": 0.73}, "max_cost_usd": 0.0038},
    "cyclic-plan": {"min_hit_ratio": {"executor": 0.76, "planner": 0.7, "overall": 0.73}, "max_cost_usd": 0.004},
    "executor-escalation": {
        "min_hit_ratio": {"executor": 0.74, "planner": 0.63, "overall": 0.71},
        "max_cost_usd": 0.0093,
    },
    "failure-escalation": {
        "min_hit_ratio": {"executor": 0.62, "planner": 0.61, "overall": 0.62},
        "max_cost_usd": 0.0077,
    },
    "flagship": {"min_hit_ratio": {"executor": 0.84, "planner": 0.7, "overall": 0.81}, "max_cost_usd": 0.015},
    "long-session": {
        "min_hit_ratio": {"executor": 0.995, "planner": 0.67, "overall": 0.994},
        "min_hit_ratio_after_first": {"executor": 0.995, "planner": 0.77},
        "max_cost_usd": 0.71,
    },
    "planner-escalation": {"min_hit_ratio": {"executor": 0.86, "planner": 0.42, "overall": 0.7}, "max_cost_usd": 0.012},
    "reasoning-scavenge": {
        "min_hit_ratio": {"executor": 0.77, "planner": 0.63, "overall": 0.71},
        "max_cost_usd": 0.0035,
    },
    "silent-edit-failure": {
        "min_hit_ratio": {"executor": 0.68, "planner": 0.62, "overall": 0.65},
        "max_cost_usd": 0.0027,
    },
    "unverified-plan": {"min_hit_ratio": {"planner": 0.81, "overall": 0.81}, "max_cost_usd": 0.0023},
    "verdict-without-evidence": {"min_hit_ratio": {"planner": 0.47, "overall": 0.47}, "max_cost_usd": 0.0012},
    "review-revise": {"min_hit_ratio": {"executor": 0.77, "planner": 0.76, "overall": 0.76}, "max_cost_usd": 0.0044},
    "truncated-arguments": {
        "min_hit_ratio": {"executor": 0.72, "planner": 0.61, "overall": 0.66},
        "max_cost_usd": 0.003,
    },
    "verify-retry-replan": {
        "min_hit_ratio": {"executor": 0.85, "planner": 0.73, "overall": 0.8},
        "max_cost_usd": 0.0053,
    },
}


def scenario(
    name: str,
    title: str,
    description: str,
    objective: str,
    workspace: dict[str, str],
    planner: list[J],
    executor: list[J],
    expect: J,
    *,
    settings: J | None = None,
    review: list[J] | None = None,
    resume: J | None = None,
    digest: list[J] | None = None,
) -> J:
    sessions: list[J] = [
        {"key": "planner", "system_contains": PLANNER, "replies": planner},
        {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
    ]
    if digest is not None:
        sessions.append({"key": "digest", "system_contains": DIGEST, "replies": digest})
    out: J = {
        "name": name,
        "title": title,
        "description": description,
        "origin": "scripted",
        "command": "goal",
        "objective": objective,
        "workspace": workspace,
        "settings": settings or {},
        "script": {"version": 1, "sessions": sessions},
        "review": review or [],
        "expect": {**expect, **GUARDS.get(name, {})},
    }
    if resume is not None:
        out["resume"] = resume
    return out
