"""Skills against the emulator: the index (never a body) in the prefix, the body as the ``skill`` tool's result, a
second session hitting the whole prefix, and a skill added mid-session announced in the tail."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.build import RunOptions
from orchestrator.config.model import load_config
from orchestrator.conversation import run_task
from orchestrator.extensions.skills import find_skills
from orchestrator.repl.slash.skills import skill_command
from scenarios.emulator import open_emulator
from sessions.wire.client import ClientSettings, DeepSeekClient
from tests.support.conversation import (
    Recording,
    conversation,
    conversation_workspace,
    executor_script,
    record_bodies,
    system_of,
    tool_names,
)
from tests.support.tasks import task_conversation

LINT_BODY = "Run ruff check --fix, then ruff format; never silence a rule with noqa."


def _skills(ws: Path) -> None:
    (ws / ".claude" / "skills" / "lint").mkdir(parents=True)
    (ws / ".claude" / "skills" / "lint" / "SKILL.md").write_text(
        f"---\nname: lint\ndescription: How this project lints Python\n---\n# Lint\n\n{LINT_BODY}\n"
    )
    (ws / ".reasonix" / "skills").mkdir(parents=True)
    (ws / ".reasonix" / "skills" / "deploy.md").write_text("Deploying to staging\n\nSECRET-STEPS of the deploy.\n")


async def _two_runs(ws: Path, cfg: Path) -> tuple[list[bytes], list[int]]:
    replies = [
        {"tool_calls": [{"name": "skill", "arguments": {"name": "lint"}}]},
        {"content": "Linted."},
        {"content": "Linted again."},
    ]
    bodies: list[bytes] = []
    hits: list[int] = []
    resolved = load_config(workspace=ws, env={"HOME": str(cfg.parent), "XDG_CONFIG_HOME": str(cfg.parent)})
    async with open_emulator(script=executor_script(replies)) as emu:
        record_bodies(emu, bodies)
        client = DeepSeekClient(base_url=emu.base_url, api_key="k", settings=ClientSettings(backoff_initial_s=0.01))
        async with client:
            for _ in range(2):
                run = task_conversation(resolved, ws, options=RunOptions(), client=client, memory_config_dir=cfg)
                summary = await run_task(run, "Lint the project")
                run.close()
                assert summary.status == "done", summary
                hits.append(summary.prompt_cache_hit_tokens)
    return bodies, hits


async def test_the_prefix_holds_the_index_the_tool_returns_the_body_and_a_second_session_hits(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    _skills(ws)
    bodies, hits = await _two_runs(ws, tmp_path / "cfg")
    system = system_of(bodies[0])
    assert "- deploy: Deploying to staging\n- lint: How this project lints Python" in system
    assert LINT_BODY not in system and "SECRET-STEPS" not in system
    assert "skill" in tool_names(bodies[0])
    assert bodies[1].startswith(bodies[0][:-2])
    result = json.loads(bodies[1])["messages"][-1]["content"]
    assert LINT_BODY in result and 'source=".claude/skills/lint/SKILL.md"' in result
    # The second session's only request is the first session's first request, byte for byte: a hit on all of it.
    assert bodies[2] == bodies[0]
    prompt = json.loads(bodies[2])
    assert hits[1] > 0 and prompt["messages"][0]["content"] == system


async def test_without_skills_there_is_no_index_and_no_tool(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    transport = Recording()
    async with open_emulator(script=executor_script([{"content": "Hi."}])) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
    assert "skill" not in tool_names(transport.bodies[0])
    assert "# Skills" not in system_of(transport.bodies[0])


async def test_a_skill_added_mid_session_is_announced_in_the_tail(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    transport = Recording()
    async with open_emulator(script=executor_script([{"content": "Hi."}, {"content": "Noted."}])) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            assert await skill_command(conv, "new release")
            await conv.turn("go on")
    first, second = transport.bodies
    assert second.startswith(first[:-2])
    last = json.loads(second)["messages"][-1]["content"]
    assert last.startswith("<skills-update>\nNew skills were added") and "- release: One line" in last
    assert (ws / ".reasonix" / "skills" / "release.md").exists()
    assert "release" in find_skills(ws)
