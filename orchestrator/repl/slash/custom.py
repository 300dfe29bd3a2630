"""Running a custom slash command in ``reasonix code``: its message is sent as the user's (``model: pro`` sends the
turn to pro), and the conversation says which file it came from."""

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
    await conv.turn(text)
    return True
