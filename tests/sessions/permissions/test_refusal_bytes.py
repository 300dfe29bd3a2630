"""A refusal reaches the model as a tool result: the next request is the previous one with messages appended, and the
first request (the prefix: system prompt, tool schemas) is byte for byte the same with or without rules."""

from __future__ import annotations

import json
from pathlib import Path

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec
from sessions.permissions import PermissionGate, Rules
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tools.base import ToolContext
from sessions.tools.registry import default_registry
from tests.sessions.session_support import SYSTEM, BodyRecorder, emulated

COMMAND = "git status && rm -rf does-not-exist"


async def _bodies(ws: Path, gate: PermissionGate | None) -> list[bytes]:
    script = Script(
        sessions=(
            SessionSpec(
                key="executor",
                replies=(
                    ReplySpec(tool_calls=(ToolCallSpec(name="bash", arguments={"command": COMMAND}),)),
                    ReplySpec(content="understood"),
                ),
            ),
        )
    )
    recorder = BodyRecorder()
    registry = default_registry(use_ripgrep=False)
    async with emulated(script) as (_emu, client):
        session = Session.start(
            journal_path=None,
            prefix=build_prefix(SYSTEM, Session.schemas_for(registry), None),
            name="executor",
            client=client,
            registry=registry,
            tool_context=ToolContext(root=ws, gate=gate),
            settings=SessionSettings(),
            reply_source=recorder,
        )
        result = await session.send("clean up")
        assert result.status == "done"
    return recorder.bodies


async def test_a_refusal_is_appended_and_the_prefix_is_untouched(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("kept")
    gate = PermissionGate(Rules.parse(allow=["bash(git status)"], deny=["bash(rm:*)"]))
    first, second = await _bodies(tmp_path, gate)
    assert second.startswith(first[:-2] + b",") and second.endswith(b"]}")
    appended = json.loads(b"[" + second[len(first) - 1 : -2] + b"]")
    tool_result = appended[-1]
    assert tool_result["role"] == "tool" and tool_result["content"].startswith("refused by the rule 'bash(rm:*)'")
    assert (tmp_path / "keep.txt").read_text() == "kept"
    plain_first, _ = await _bodies(tmp_path, None)
    assert plain_first == first
