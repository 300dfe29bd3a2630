"""``stop``, ``session_start`` and ``pre_compact`` hooks from the user's config in a real conversation (hooks run in
the real sandbox) against the emulator; each request extends the one before."""

from __future__ import annotations

import json
from pathlib import Path

from scenarios.emulator import open_emulator
from tests.support.conversation import Recording, conversation, conversation_workspace, executor_script

STOP_ONCE = 'test -e stopped && exit 0; touch stopped; echo \'{"decision": "block", "reason": "run the tests too"}\''
CONFIG = f"""
[[hooks]]
event = "Stop"
command = '''{STOP_ONCE}'''

[[hooks]]
event = "session_start"
command = "echo 'This repository uses make.'"

[[hooks]]
event = "pre_compact"
command = "cat > compact-payload.json"
"""


async def test_a_stop_hook_asks_to_go_on_once_and_pre_compact_hears_of_a_compaction(tmp_path: Path) -> None:
    ws = conversation_workspace(tmp_path)
    (tmp_path / "cfg" / "reasonix").mkdir(parents=True)
    (tmp_path / "cfg" / "reasonix" / "config.toml").write_text(CONFIG)
    replies = [{"content": "Hi."}, {"content": "Tests pass."}, {"content": "Digest of the conversation."}]
    transport = Recording()
    async with open_emulator(script=executor_script(replies)) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
            await conv.session.compact(reason="asked by the user (/compact)")
    first, second = transport.bodies[:2]
    assert second.startswith(first[:-2])  # the stop hook's go-on is an appended user message
    messages = json.loads(second)["messages"]
    assert "</mode>\n\n<hook-context>\nThis repository uses make.\n</hook-context>\n\nhello" in messages[1]["content"]
    assert messages[-1] == {"role": "user", "content": "run the tests too"}
    payload = json.loads((ws / "compact-payload.json").read_text())
    assert payload["hook_event_name"] == "PreCompact" and payload["trigger"] == "manual"
    assert payload["session_id"] == conv.run_id


async def test_a_stop_hook_that_answers_continue_false_lets_the_turn_end(tmp_path: Path) -> None:
    """Claude Code's ``continue: false`` means stop, even beside a ``decision: block`` (which alone means go on)."""
    ws = conversation_workspace(tmp_path)
    (tmp_path / "cfg" / "reasonix").mkdir(parents=True)
    halt = '{"continue": false, "stopReason": "enough", "decision": "block", "reason": "go on"}'
    (tmp_path / "cfg" / "reasonix" / "config.toml").write_text(
        f"[[hooks]]\nevent = \"Stop\"\ncommand = '''echo '{halt}' '''\n"
    )
    transport = Recording()
    async with open_emulator(script=executor_script([{"content": "Hi."}, {"content": "Never asked."}])) as emu:
        conv = conversation(ws, emu.base_url, transport)
        async with conv.client:
            await conv.turn("hello")
    assert len(transport.bodies) == 1  # no "go on" message was sent
