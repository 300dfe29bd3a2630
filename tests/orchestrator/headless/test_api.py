"""The Python API against the in-process emulator: typed events, the bytes sent, a goal with a reviewer callback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from orchestrator import api
from orchestrator.build import build_client
from orchestrator.config.model import load_config
from orchestrator.conversation import run_task
from orchestrator.errors import ReasonixError
from plans import Plan
from scenarios.emulator import Script, open_emulator
from tests.support.tasks import task_conversation

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step

READ = {"reasoning": "Read it first.", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}


class Recording(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        if request.url.path.endswith("/chat/completions"):
            self.bodies.append(body)
        return await self.inner.handle_async_request(request)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"), "PATH": "/usr/bin:/bin"}


def _script(*replies: dict[str, Any]) -> Script:
    return Script.model_validate({"sessions": [{"key": "executor", "replies": list(replies)}]})


async def test_a_conversation_streams_typed_events_and_every_request_extends_the_last(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), _env(tmp_path)
    transport = Recording()
    sc = _script(READ, {"content": "It subtracts."}, {"content": "Still."})
    async with (
        open_emulator(script=sc) as emu,
        api.open_conversation(ws, base_url=emu.base_url, env=env, transport=transport) as chat,
    ):
        assert isinstance(chat.init, api.SystemInit) and "read_file" in chat.init.tools
        async with chat.stream("what does add do?") as events:
            seen = [event async for event in events]
        second = await chat.send("and now?")
    kinds = [type(e).__name__ for e in seen]
    assert kinds[-1] == "ResultLine" and "AssistantLine" in kinds and "UserLine" in kinds
    result = seen[-1]
    assert isinstance(result, api.ResultLine) and result.result == "It subtracts." and result.num_turns == 2
    assert second.result == "Still." and second.session_id == result.session_id == chat.session_id
    # The same objects the CLI prints: they read back from their JSON.
    assert all(api.parse_event(e.model_dump(mode="json", by_alias=True)) == e for e in seen)
    # Each request starts with the whole previous one (its closing "]}" aside): nothing sent was rewritten.
    assert len(transport.bodies) == 3
    for before, after in zip(transport.bodies, transport.bodies[1:], strict=False):
        assert after.startswith(before[:-2])


async def test_the_first_request_is_byte_for_byte_that_of_reasonix_run(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), _env(tmp_path)
    ours, runs = Recording(), Recording()
    async with open_emulator(script=_script({"content": "A."}, {"content": "A."})) as emu:
        async with api.open_conversation(ws, base_url=emu.base_url, env=env, transport=ours) as chat:
            await chat.send("explain calc.py")
        resolved = load_config(workspace=ws, flags={"base_url": emu.base_url}, env=env)
        client = build_client(resolved, transport=runs)
        async with client:
            await run_task(task_conversation(resolved, ws, client=client), "explain calc.py")
    assert ours.bodies == runs.bodies


async def test_an_unknown_resume_id_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), _env(tmp_path)
    async with open_emulator(script=_script()) as emu:
        with pytest.raises(ReasonixError, match="no conversation"):
            async with api.open_conversation(ws, base_url=emu.base_url, env=env, resume="20990101-000000-abcdef"):
                pass
        assert emu.stats()["total"]["requests"] == 0


async def test_a_goal_with_a_reviewer_that_revises_once_then_approves_completes(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    check = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"
    first = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[check])]
    second = [*first, step("S2", "Add README", deps=["S1"], writes=["README.md"], verify=["test -s README.md"])]
    planner = [
        reply(call("submit_plan", objective="ops", steps=first)),
        reply(call("revise_plan", objective="ops", steps=second)),
        reply(call("goal_verdict", verdict="complete", evidence=["add works"])),
    ]
    ops = "def add(a, b):\n    return a + b\n"
    executor = [*executor_step("S1", "calc/ops.py", ops), *executor_step("S2", "README.md", "# calc\n")]
    sc = Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        }
    )
    reviewed: list[int] = []

    def review(plan: Plan) -> api.ReviewDecision:
        reviewed.append(len(plan.steps))
        return api.revise("Also add a README.") if len(reviewed) == 1 else api.approve()

    events: list[api.StreamJsonEvent] = []
    (ws / "reasonix.toml").write_text("[goal]\nparallel = 1\n")
    async with open_emulator(script=sc) as emu:
        summary = await api.run_goal(
            "ops",
            ws,
            reviewer=review,
            on_event=events.append,
            base_url=emu.base_url,
            env=_env(tmp_path),
            allow_unconfined_verify=True,
        )
    assert summary.status == "complete" and summary.ok, summary
    assert reviewed == [1, 2]
    assert (ws / "README.md").read_text() == "# calc\n"
    goal_kinds = [e.message for e in events if isinstance(e, api.SystemNotice) and e.subtype == "goal_event"]
    assert "plan_revised" in goal_kinds and goal_kinds.count("review") == 2
    assert any(isinstance(e, api.AssistantLine) for e in events)


async def test_a_goal_paused_through_its_handle_resumes_and_completes(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "reasonix.toml").write_text("[goal]\nparallel = 1\n")
    check = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"
    steps = [step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[check])]
    planner = [
        reply(call("submit_plan", objective="ops", steps=steps)),
        reply(call("goal_verdict", verdict="complete", evidence=["add works"])),
    ]
    executor = executor_step("S1", "calc/ops.py", "def add(a, b):\n    return a + b\n")
    sc = Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        }
    )
    handles: list[api.GoalHandle] = []

    async def pause_at_review(plan: Plan) -> api.ReviewDecision:
        handles[0].pause()
        await trio.sleep_forever()  # the pause cancels this wait
        raise AssertionError("not reached")

    common: dict[str, Any] = dict(env=_env(tmp_path), allow_unconfined_verify=True)
    async with open_emulator(script=sc) as emu:
        paused = await api.run_goal(
            "ops", ws, reviewer=pause_at_review, on_start=handles.append, base_url=emu.base_url, **common
        )
        assert paused.status == "paused" and not (ws / "calc" / "ops.py").exists()
        done = await api.run_goal(
            resume=paused.run_id, workspace=ws, reviewer=lambda plan: api.approve(), base_url=emu.base_url, **common
        )
    assert done.status == "complete" and done.run_id == paused.run_id
    assert (ws / "calc" / "ops.py").exists()
