"""``/remember TEXT`` and ``/memory`` in ``reasonix code``.

``/remember TEXT`` appends a note to the configured memory file (``[memory] file``; ``/remember --shared TEXT``
writes ``REASONIX.md``); ``/memory`` shows what the workspace's memory files hold, and ``/memory edit`` opens the
memory file in ``$EDITOR``. A change reaches the model in a ``<memory-update>`` block in front of the next message,
and later sessions in their prefix.
"""

from __future__ import annotations

from pathlib import Path

import trio
from rich.text import Text

from orchestrator.memory.notes import MEMORY_FILES, MemoryNoteError, remember_note
from orchestrator.repl.conversation import Conversation
from sessions.tools import ToolError
from sessions.tools.gateway import GatewayRoot

MAX_SHOWN_CHARS = 4_000
MAX_READ_BYTES = 1024 * 1024


async def remember_command(conv: Conversation, arg: str) -> bool:
    text = arg.strip()
    file = conv.resolved.config.memory.file
    if text.startswith("--shared"):
        file, text = "REASONIX.md", text.removeprefix("--shared").strip()
    try:
        line = remember_note(conv.workspace, text, file=file)
    except MemoryNoteError as exc:
        conv.say(f"/remember: {exc}", "red")
        return True
    conv.memory_updates.add(file, line)
    conv.say(f"remembered in {file}; the model hears of it with your next message")
    return True


def _read(workspace: Path, name: str) -> str | None:
    found = GatewayRoot(workspace).try_read(name, limit=MAX_READ_BYTES)
    return None if found is None else found.data.decode("utf-8", errors="replace")


async def memory_command(conv: Conversation, arg: str) -> bool:
    if arg.strip() == "edit":
        return await _edit(conv)
    shown = False
    for name in MEMORY_FILES:
        text = _read(conv.workspace, name)
        if text is None:
            continue
        shown = True
        conv.console.print(Text(name, style="bold"), soft_wrap=True)
        cut = text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "\n…"
        conv.console.print(Text(cut.rstrip()), soft_wrap=True, highlight=False)
    if not shown:
        conv.say("no project memory yet: /remember TEXT writes a note to " + conv.resolved.config.memory.file)
    return True


async def _edit(conv: Conversation) -> bool:
    from orchestrator.review.editor import editor_command

    file = conv.resolved.config.memory.file
    path = conv.workspace / file
    before = _read(conv.workspace, file) or ""
    root = GatewayRoot(conv.workspace)
    try:
        if root.stat(file) is None:
            root.write(file, b"")
        located = root.locate(file)
    except ToolError as exc:
        conv.say(f"/memory edit: {exc.message}", "red")
        return True
    path = conv.workspace / located.real
    try:
        await trio.run_process([*editor_command(), str(path)], check=False, stdin=None, stdout=None, stderr=None)
    except OSError as exc:
        conv.say(f"/memory edit: the editor did not start ({exc.strerror or exc}); set $EDITOR", "red")
        return True
    after = _read(conv.workspace, file) or ""
    if after == before:
        conv.say(f"{file} unchanged")
        return True
    conv.memory_updates.add(file, "edited by the user; it now reads:\n" + after.strip()[:MAX_SHOWN_CHARS])
    conv.say(f"{file} saved; the model hears of it with your next message")
    return True
