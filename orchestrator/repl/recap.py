"""What ``--continue`` shows of the conversation it reopens: the last few turns, each as what the user said (without
the tail blocks in front of it and the ``@path`` files after it) and the reply's last words, shortened."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.text import Text

from orchestrator.text.safe_text import neutralise
from orchestrator.text.wording import counted, shorten
from sessions.wire import AssistantMessage, Message, UserMessage

TURNS = 3
USER_CHARS = 200
REPLY_CHARS = 300
_TAIL_BLOCKS = re.compile(r"\A(?:<([a-z][a-z0-9-]*)>\n.*?\n</\1>\n\n)+", re.DOTALL)
_ATTACHED = re.compile(r"\n\n<file path=\"[^\"]*\">\n.*\Z", re.DOTALL)


def said(content: str) -> str:
    """A user message as the user typed it: without tail blocks and attached files."""
    return _ATTACHED.sub("", _TAIL_BLOCKS.sub("", content))


def turns(messages: Iterable[Message]) -> list[tuple[str, str]]:
    """(what the user said, the turn's last reply text) for every turn, oldest first."""
    out: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append((said(message.content), ""))
        elif isinstance(message, AssistantMessage) and message.content and out:
            out[-1] = (out[-1][0], message.content)
    return out


def recap(messages: Iterable[Message], last: int = TURNS) -> list[Text]:
    """Lines for the last ``last`` turns: ``❯ what the user said`` and the reply under it, dim."""
    every = turns(messages)
    lines: list[Text] = []
    if len(every) > last:
        lines.append(Text(f"… {counted(len(every) - last, 'earlier turn')}", style="dim"))
    for user, reply in every[-last:]:
        line = Text("❯ ", style="bold")
        line.append(shorten(neutralise(user), USER_CHARS))
        lines.append(line)
        if reply:
            lines.append(Text("  " + shorten(neutralise(reply), REPLY_CHARS), style="dim"))
    return lines
