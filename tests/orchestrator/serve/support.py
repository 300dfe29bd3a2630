"""A real service for the tests: the emulator, a goal manager and the app served by hypercorn's trio worker on a
loopback port, and an httpx client holding the token."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import trio

from orchestrator.serve.app import create_app, serve_app
from orchestrator.serve.manager import GoalManager, open_manager
from scenarios.emulator import RunningEmulator, Script, open_emulator

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

TOKEN = "test-token-123"
TERMINAL = {"complete", "blocked", "paused", "failed", "cancelled"}


def workspace(root: Path, name: str = "ws", marker: str | None = None) -> Path:
    ws = root / name
    ws.mkdir(parents=True)
    (ws / ".git").mkdir()  # ends the upward search for standing memory here
    if marker is not None:
        (ws / "AGENTS.md").write_text(f"Workspace marker: {marker}\n")
    return ws


def one_step_plan(title: str = "Write hello.txt", path: str = "hello.txt") -> list[dict[str, Any]]:
    return [step("S1", title, writes=[path], verify=[f"test -f {path}"])]


def planner_replies(title: str = "Write hello.txt", path: str = "hello.txt") -> list[dict[str, Any]]:
    return [
        reply(call("submit_plan", objective="Say hello", steps=one_step_plan(title, path))),
        reply(call("goal_verdict", verdict="complete", evidence=["S1 verified"])),
    ]


def executor_replies(path: str = "hello.txt") -> list[dict[str, Any]]:
    return executor_step("S1", path, "hello\n")


def simple_script(title: str = "Write hello.txt") -> Script:
    return Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner_replies(title)},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor_replies()},
            ]
        }
    )


def per_workspace_script(markers: Sequence[str]) -> Script:
    """One session per workspace, found by the marker in its AGENTS.md (in both sessions' prefixes): the goal's
    planner and executor requests come one after the other, so one list of replies serves both."""
    sessions = []
    for marker in markers:
        plan, verdict = planner_replies()
        sessions.append({"key": marker, "system_contains": marker, "replies": [plan, *executor_replies(), verdict]})
    return Script.model_validate({"sessions": sessions})


def service_env(root: Path, base_url: str) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), DEEPSEEK_BASE_URL=base_url)
    config = home / ".config" / "reasonix" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[client]\nmax_attempts = 1\n")  # a failing request fails at once: no retry backoff
    return env


@dataclass
class Service:
    url: str
    client: httpx.AsyncClient
    manager: GoalManager
    emulator: RunningEmulator
    state_dir: Path

    async def start(self, ws: Path, objective: str = "Say hello", **extra: Any) -> str:
        response = await self.client.post("/api/goals", json={"workspace": str(ws), "objective": objective, **extra})
        assert response.status_code == 201, response.text
        run_id: str = response.json()["run_id"]
        return run_id

    async def run(self, run_id: str) -> dict[str, Any]:
        response = await self.client.get(f"/api/runs/{run_id}")
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data

    async def wait_for(self, run_id: str, *, awaiting_review: bool = False, limit_s: float = 60) -> dict[str, Any]:
        """Until the run awaits a review (``awaiting_review``) or is no longer live."""
        with trio.fail_after(limit_s):
            while True:
                data = await self.run(run_id)
                if (awaiting_review and data["awaiting_review"]) or (not awaiting_review and not data["live"]):
                    return data
                await trio.sleep(0.02)

    async def review(self, run_id: str, **body: Any) -> httpx.Response:
        return await self.client.post(f"/api/runs/{run_id}/review", json=body)


@asynccontextmanager
async def open_service(
    root: Path,
    script: Script,
    *,
    workspaces: Sequence[Path] = (),
    state_dir: Path | None = None,
    ping_s: float = 15.0,
    emulator: RunningEmulator | None = None,
) -> AsyncIterator[Service]:
    async with open_emulator(script=script) as emu:
        use = emulator or emu
        state = state_dir or root / "state"
        async with open_manager(state_dir=state, workspaces=list(workspaces), env=service_env(root, use.base_url)) as m:
            app = create_app(m, TOKEN, ping_s=ping_s)
            async with trio.open_nursery() as nursery:
                stop = trio.Event()
                url = await nursery.start(serve_app, app, "127.0.0.1", 0, stop.wait)
                headers = {"Authorization": f"Bearer {TOKEN}"}
                async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:
                    yield Service(url=url, client=client, manager=m, emulator=use, state_dir=state)
                stop.set()


async def read_sse(
    client: httpx.AsyncClient, run_id: str, *, after: int | None = None, limit: int | None = None
) -> tuple[list[tuple[int, str, dict[str, Any]]], bool]:
    """The events of a run's stream (id, event name, data) until ``end`` (True) or ``limit`` events (False)."""
    headers = {"Last-Event-ID": str(after)} if after is not None else {}
    out: list[tuple[int, str, dict[str, Any]]] = []
    async with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        async for line in response.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
                continue
            if fields.get("event") == "end":
                return out, True
            if "id" in fields:
                out.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
                if limit is not None and len(out) >= limit:
                    return out, False
            fields = {}
    return out, False
