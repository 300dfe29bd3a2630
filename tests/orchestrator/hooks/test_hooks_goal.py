"""Hooks at a goal's events (``step_start``, ``step_verified``, ``goal_end``) in a real goal against the emulator:
what ``step_start`` says reaches the step's turn in the tail, and each executor request extends the one before."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path

from orchestrator.build import create_runner
from orchestrator.config.hooks import HookConfig
from orchestrator.goal.runner import GoalOptions
from orchestrator.hooks.gate import HookGate
from orchestrator.hooks.hooks import Hooks
from scenarios.emulator.app import Response
from sessions.permissions import Rules

from ..goal_support import EXECUTOR, call, executor_step, goal_env, reply, script, step

LOG = "cat >> ../events.jsonl; echo >> ../events.jsonl"


async def test_goal_events_run_their_hooks_and_step_start_context_rides_in_the_tail(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    plan = [step("S1", "Add ops.py", writes=["ops.py"], verify=["python3 -c 'import ops'"])]
    sc = script(
        [
            reply(call("submit_plan", objective="Add ops", steps=plan)),
            reply(call("goal_verdict", verdict="complete", evidence=["ops.py imports"])),
        ],
        executor_step("S1", "ops.py", "X = 1\n"),
    )
    hooks = Hooks(
        [
            HookConfig(event="step_start", command=f'{LOG}; echo \'{{"context": "Use four spaces."}}\''),
            HookConfig(event="step_verified", command=LOG),
            HookConfig(event="goal_end", command=LOG),
        ],
        ws,
    )
    bodies: list[bytes] = []
    async with goal_env(sc) as (emu, client):
        handle = emu.emulator.handle

        def record(method: str, path: str, headers: Mapping[str, str], body: bytes) -> Response:
            if path.rstrip("/").endswith("/chat/completions") and EXECUTOR.encode() in body:
                bodies.append(body)
            return handle(method, path, headers, body)

        emu.emulator.handle = record  # type: ignore[method-assign]
        runner = create_runner(
            workspace=ws,
            client=client,
            objective="Add ops",
            options=GoalOptions(parallel=1),
            reviewer=None,
            run_id="run-1",
            config_dir=ws / ".no-user-config",
            gate=HookGate(Rules.parse(), mode="auto", hooks=hooks),
        )
        outcome = await runner.run()
    assert outcome.status == "complete", outcome.summary
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines() if line.strip()]
    assert [(e["event"], e.get("step_id"), e.get("ok"), e.get("status")) for e in events] == [
        ("step_start", "S1", None, None),
        ("step_verified", "S1", True, None),
        ("goal_end", None, None, "complete"),
    ]
    first_step_turn = json.loads(bodies[0])["messages"][-1]["content"]
    assert first_step_turn.startswith("<hook-context>\nUse four spaces.\n</hook-context>")
    for earlier, later in itertools.pairwise(bodies):
        assert later.startswith(earlier[:-2])
