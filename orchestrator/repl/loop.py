"""The read–send loop of ``reasonix code``: a line from the input (in a worker thread), a slash command or a turn."""

from __future__ import annotations

from collections.abc import Mapping

import trio

from orchestrator.extensions.custom_commands import find_custom_commands
from orchestrator.repl.commands import BUILT_IN, COMMANDS, SlashCommand, dispatch
from orchestrator.repl.conversation import Conversation
from orchestrator.repl.prompt import InputLine


async def run_loop(conv: Conversation, commands: Mapping[str, SlashCommand] = COMMANDS) -> None:
    """Until /exit, Ctrl-D on an empty line, or Ctrl-C twice on an empty line. ``commands``: the slash commands
    offered (``reasonix chat`` offers fewer)."""
    line = InputLine(
        conv.workspace,
        _completions(conv, commands),
        on_shift_tab=conv.cycle_mode,
        status=conv.status,
        prompt_text=conv.prompt_text,
    )
    armed = False
    async with conv.client, trio.open_nursery() as nursery:
        nursery.start_soon(conv.watch_sigint)
        while True:
            if conv.queued:  # typed while the last turn ran
                text = conv.queued.pop(0)
                conv.say(f"❯ {text}", "bold")
                if text.startswith("/"):
                    if not await dispatch(conv, text, commands):
                        break
                    continue
                await conv.turn(text)
                continue
            default, conv.pending = conv.pending, ""
            try:
                text = await trio.to_thread.run_sync(line.read, default, abandon_on_cancel=True)
            except KeyboardInterrupt:
                if armed:
                    break
                armed = True
                conv.say("(Ctrl-C again or Ctrl-D to exit)")
                continue
            except EOFError:
                break
            armed = False
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not await dispatch(conv, text, commands):
                    break
                continue
            await conv.turn(text)
        nursery.cancel_scope.cancel()


def _completions(conv: Conversation, commands: Mapping[str, SlashCommand]) -> list[str]:
    """The names Tab completes: the commands offered, and the workspace's custom commands where all are offered."""
    if commands is not COMMANDS:
        return list(commands)
    return [*COMMANDS, *(f"/{name}" for name in find_custom_commands(conv.workspace, taken=BUILT_IN))]
