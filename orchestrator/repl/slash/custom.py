"""Running a custom slash command in ``reasonix code``: its message is sent as the user's (``model: pro`` sends the
turn to pro), its ``allowed-tools`` hold for that turn only, and the conversation says which file it came from."""

from __future__ import annotations

from orchestrator.extensions.custom_commands import CustomCommand
from orchestrator.repl.conversation import Conversation


async def run_custom(conv: Conversation, command: CustomCommand, arguments: str) -> bool:
    text = command.message(arguments)
    if not text:
        conv.say(f"/{command.name}: {command.source} has no text to send", "yellow")
        return True
    conv.say(f"/{command.name} from {command.source}")
    if command.model == "pro":
        conv.pro_next = True
    conv.command_tools.limit = command.allowed  # refused at dispatch; the tool list sent stays the same
    try:
        await conv.turn(text)
    finally:
        conv.command_tools.limit = None
    return True
