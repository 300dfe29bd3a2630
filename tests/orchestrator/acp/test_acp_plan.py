"""Plan mode over ACP, driven by the SDK's client: the goal's read-only planner answers, its plan's steps are ACP plan
entries, the editor's answer to "Run the plan?" decides, and the entries follow the steps as they run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios.emulator import Script, open_emulator
from tests.support.acp_sdk import agent_command, index_of, results, run_sdk_client, updates

from ..goal_support import EXECUTOR, PLANNER, call, executor_step, reply, step
from ..run_support import clean_env

CHECK = "python3 -c 'from calc.ops import add; assert add(2, 2) == 4'"
STEPS = [
    step("S1", "Add calc/ops.py", writes=["calc/ops.py"], verify=[CHECK]),
    step("S2", "Add a README", deps=["S1"], writes=["README.md"], verify=["test -s README.md"], risk="medium"),
]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "calc").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "calc" / "__init__.py").write_text("")
    (ws / "reasonix.toml").write_text("[goal]\nparallel = 1\n")
    return ws


def _script(planner: list[dict[str, Any]], executor: list[dict[str, Any]]) -> Script:
    return Script.model_validate(
        {
            "sessions": [
                {"key": "planner", "system_contains": PLANNER, "replies": planner},
                {"key": "executor", "system_contains": EXECUTOR, "replies": executor},
            ]
        }
    )


def _scenario(base_url: str, ws: Path, answer: str) -> dict[str, Any]:
    return {
        "agent": agent_command(base_url),
        "permissions": {"switch_mode": answer, "*": "allow_once"},
        "steps": [
            {"op": "initialize"},
            {"op": "new_session", "cwd": str(ws)},
            {"op": "set_mode", "mode": "plan"},
            {"op": "prompt", "text": "add calc/ops.py with add(), and a README"},
        ],
    }


def _plans(found: list[dict[str, Any]]) -> list[list[tuple[str, str, str]]]:
    return [
        [(e["content"], e["priority"], e["status"]) for e in u["entries"]]
        for u in found
        if u["sessionUpdate"] == "plan"
    ]


@pytest.mark.bwrap
async def test_plan_mode_shows_the_plan_as_entries_and_runs_it_once_the_editor_approves(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    planner = [
        reply(call("read_file", path="calc/__init__.py"), reasoning="Look first."),
        reply(call("submit_plan", objective="ops", steps=STEPS)),
        reply(call("goal_verdict", verdict="complete", evidence=["add works"])),
    ]
    ops = "def add(a, b):\n    return a + b\n"
    executor = [
        *executor_step("S1", "calc/ops.py", ops),
        *executor_step("S2", "README.md", "# calc\n"),
        {"content": "Both are in."},
    ]
    bodies: list[bytes] = []
    async with open_emulator(script=_script(planner, executor)) as emu:
        handle = emu.emulator.handle

        def recording(method: str, path: str, headers: Any, body: bytes) -> Any:
            bodies.append(body)
            return handle(method, path, headers, body)

        emu.emulator.handle = recording  # type: ignore[method-assign]
        scenario = _scenario(emu.base_url, ws, "run_plan")
        scenario["steps"].append({"op": "prompt", "text": "is it done?"})
        transcript = await run_sdk_client(scenario, tmp_path, env)
    assert [r["result"] for r in results(transcript, "prompt")] == [{"stopReason": "end_turn"}] * 2
    # The next prompt, now in ask mode, went to the session's own conversation, told what the plan run did.
    assert b"<plan-run>" in bodies[-1] and b"complete: add works" in bodies[-1]
    assert all(b"<plan-run>" not in body for body in bodies[:-1])
    assert (ws / "calc" / "ops.py").read_text() == ops and (ws / "README.md").read_text() == "# calc\n"
    turn = transcript[index_of(transcript, "set_mode") + 1 : index_of(transcript, "prompt")]
    found = updates(turn)
    # The planner's read streamed as a tool call before any plan; then the plan, then the question.
    first_plan = next(i for i, u in enumerate(found) if u["sessionUpdate"] == "plan")
    assert any(u["sessionUpdate"] == "tool_call" and u["kind"] == "read" for u in found[:first_plan])
    assert _plans(found) == [
        [("Add calc/ops.py", "low", "pending"), ("Add a README", "medium", "pending")],
        [("Add calc/ops.py", "low", "in_progress"), ("Add a README", "medium", "pending")],
        [("Add calc/ops.py", "low", "completed"), ("Add a README", "medium", "pending")],
        [("Add calc/ops.py", "low", "completed"), ("Add a README", "medium", "in_progress")],
        [("Add calc/ops.py", "low", "completed"), ("Add a README", "medium", "completed")],
    ]
    asked = [e for e in turn if e["kind"] == "permission"]
    assert asked[0]["toolCall"]["kind"] == "switch_mode"
    assert [o["optionId"] for o in asked[0]["options"]] == ["run_plan", "reject_plan"]
    plan_at = next(i for i, e in enumerate(turn) if e["kind"] == "update" and e["update"]["sessionUpdate"] == "plan")
    assert plan_at < turn.index(asked[0])
    # Approved: the session left plan mode for ask, and the executor's writes were asked about in the editor.
    assert {"sessionUpdate": "current_mode_update", "currentModeId": "ask"} in found
    assert [e["toolCall"]["kind"] for e in asked[1:]] == ["edit", "edit"]
    text = "".join(u["content"]["text"] for u in found if u["sessionUpdate"] == "agent_message_chunk")
    assert "Add calc/ops.py" in text and text.endswith("\n\ncomplete: add works")


async def test_plan_mode_stops_at_the_plan_when_the_editor_does_not_run_it(tmp_path: Path) -> None:
    ws, env = _workspace(tmp_path), clean_env(tmp_path)
    planner = [reply(call("submit_plan", objective="ops", steps=STEPS))]
    async with open_emulator(script=_script(planner, [])) as emu:
        transcript = await run_sdk_client(_scenario(emu.base_url, ws, "reject_plan"), tmp_path, env)
        stats = emu.stats()["sessions"]
    assert results(transcript, "prompt")[0]["result"] == {"stopReason": "end_turn"}
    found = updates(transcript)
    assert _plans(found) == [[("Add calc/ops.py", "low", "pending"), ("Add a README", "medium", "pending")]]
    assert "executor" not in stats and not (ws / "calc" / "ops.py").exists()
    assert all(u["sessionUpdate"] != "current_mode_update" for u in found)
