"""The gate's plan mode (issue 43 item 15) with real bubblewrap: it asks for what ask mode asks for, but a command the
read-only sandbox confines (it can change nothing) still runs unasked, as it did when plan mode set the gate to
auto."""

from __future__ import annotations

from pathlib import Path

from sessions.permissions import PermissionGate, Rules
from sessions.tools.base import ToolContext
from sessions.tools.dispatch import PreparedCall, dispatch
from sessions.tools.registry import default_registry
from tests.support.bwrap import sandbox


async def test_plan_mode_still_runs_a_confined_read_only_command_unasked(bwrap: str, ws: Path) -> None:
    (ws / "notes.txt").write_text("the notes\n")
    gate = PermissionGate(Rules(), mode="plan")  # nobody to ask: a question would be a refusal
    ctx = ToolContext(root=ws, gate=gate, sandbox=sandbox(bwrap))
    registry = default_registry(use_ripgrep=False)
    [shown] = await dispatch(registry, [PreparedCall("c1", "bash", {"command": "cat notes.txt"})], ctx, read_only=True)
    assert shown.content.startswith("the notes\n"), shown.content
    [written] = await dispatch(
        registry, [PreparedCall("c2", "bash", {"command": "echo x > notes.txt"})], ctx, read_only=True
    )
    assert "Read-only file system" in written.content and (ws / "notes.txt").read_text() == "the notes\n"
    [unconfined] = await dispatch(
        registry,
        [PreparedCall("c3", "bash", {"command": "cat notes.txt"})],
        ToolContext(root=ws, gate=gate),
        read_only=True,
    )
    assert unconfined.is_error  # without a sandbox to confine it, plan mode refuses the command at dispatch
