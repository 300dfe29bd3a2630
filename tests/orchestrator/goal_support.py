"""Driving a real goal (planner + executor sessions, real tools, real verify commands) against the emulator."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from orchestrator.build import create_runner
from orchestrator.goal.runner import GoalOptions, GoalRunner
from orchestrator.review.reviewer import Reviewer
from scenarios.emulator import RunningEmulator, Script, open_emulator
from sessions.wire.client import ClientSettings, DeepSeekClient

PLANNER = "You are the planner of Reasonix"
EXECUTOR = "You are the executor of Reasonix"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def reply(*calls: dict[str, Any], content: str = "", reasoning: str = "", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"reasoning": reasoning, "content": content, "tool_calls": list(calls)}
    out.update(extra)
    return out


def step(
    sid: str,
    title: str,
    *,
    deps: Sequence[str] = (),
    writes: Sequence[str] = (),
    verify: Sequence[str] = (),
    instructions: str = "",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": sid,
        "title": title,
        "instructions": instructions or title,
        "depends_on": list(deps),
        "writes": list(writes),
        "verify": [{"command": v} for v in verify],
    }
    out.update(extra)
    return out


def executor_step(sid: str, path: str, text: str, *, summary: str = "") -> list[dict[str, Any]]:
    """The executor writes a file and reports the step done: the report ends its turn."""
    return [
        reply(call("write_file", path=path, content=text), reasoning=f"Step {sid}: write {path}."),
        reply(
            call(
                "report_step",
                step_id=sid,
                status="done",
                summary=summary or f"wrote {path}",
                evidence=[f"wrote {path}"],
            )
        ),
    ]


def script(planner: list[dict[str, Any]], executor: list[dict[str, Any]]) -> Script:
    return Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        }
    )


@asynccontextmanager
async def goal_env(sc: Script) -> AsyncIterator[tuple[RunningEmulator, DeepSeekClient]]:
    async with open_emulator(script=sc) as emu:
        client = DeepSeekClient(
            base_url=emu.base_url,
            api_key="test-key",
            settings=ClientSettings(backoff_initial_s=0.01, backoff_jitter_s=0),
        )
        async with client:
            yield emu, client


def new_runner(
    client: DeepSeekClient,
    workspace: Path,
    objective: str,
    *,
    reviewer: Reviewer | None = None,
    options: GoalOptions | None = None,
    events: list[Any] | None = None,
    run_id: str = "run-1",
) -> GoalRunner:
    return create_runner(
        workspace=workspace,
        client=client,
        objective=objective,
        options=options or GoalOptions(parallel=1),  # scripts written for one step at a time (parallel: its own tests)
        reviewer=reviewer,
        on_event=events.append if events is not None else None,
        run_id=run_id,
        config_dir=workspace / ".no-user-config",
    )


def dump(events: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(e.model_dump_json()) for e in events]
