"""A diamond plan (S0 → S1, S2 → S3) and an emulator script that gives each step's turns their own replies
(``user_contains``), whichever session (the executor or a fork of it) sends them and in whatever order."""

from __future__ import annotations

import json
from typing import Any

from .goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

FILES = {"S0": "base.py", "S1": "left.py", "S2": "right.py", "S3": "top.py"}
TEXT = {sid: f"{sid.lower()} = {i}\n" for i, sid in enumerate(FILES)}


def diamond(**writes: list[str]) -> list[dict[str, Any]]:
    """S0, then S1 and S2 (each after S0), then S3 after both. ``writes`` overrides a step's declared writes."""

    def check(sid: str) -> list[str]:
        return [f"python3 -c 'import {FILES[sid][:-3]}'"]

    deps = {"S0": [], "S1": ["S0"], "S2": ["S0"], "S3": ["S1", "S2"]}
    return [
        step(sid, f"Add {FILES[sid]}", deps=deps[sid], writes=writes.get(sid, [FILES[sid]]), verify=check(sid))
        for sid in FILES
    ]


def diamond_script(steps: list[dict[str, Any]] | None = None, **replies: list[dict[str, Any]]) -> dict[str, Any]:
    """The planner submits ``steps`` (default: :func:`diamond`) and gives its verdict; each step's session writes its
    file and reports, unless ``replies`` gives that step's replies."""
    planner = [
        reply(call("submit_plan", objective="Diamond", steps=steps or diamond())),
        reply(call("goal_verdict", verdict="complete", evidence=["every step verified"])),
    ]
    sessions: list[dict[str, Any]] = [{"key": "planner", "system_contains": PLANNER, "replies": planner}]
    for sid, path in FILES.items():
        sessions.append(
            {
                "key": f"executor-{sid}",
                "system_contains": EXECUTOR,
                "user_contains": f"## {sid}:",
                "replies": replies.get(sid, executor_step(sid, path, TEXT[sid])),
            }
        )
    return {"sessions": sessions}


def step_of(body: bytes) -> str:
    """Which step a request body works on (``planner`` for the planner's requests)."""
    data = json.loads(body)
    if PLANNER in data["messages"][0]["content"]:
        return "planner"
    users = [m["content"] for m in data["messages"] if m["role"] == "user"]
    return next(sid for sid in FILES if f"## {sid}:" in users[-1])
