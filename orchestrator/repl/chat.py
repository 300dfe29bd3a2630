"""``reasonix chat``: a conversation with no tools, for questions. Its prefix is its own (:data:`CHAT_SYSTEM`, no tool
schemas, the workspace's standing memory), fixed for the session, so every question re-sends the earlier ones
unchanged and hits the cache on all of them.

In a terminal it is the REPL of ``reasonix code`` (:class:`ChatConversation` is a :class:`Conversation` whose session
has no tools, and whose journal is ``chat.jsonl``: ``reasonix code --continue`` is never pointed at it); with standard
input piped, :func:`answer_once` answers the text read and returns.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.formatted_text import FormattedText

from orchestrator.conversation.chat import CHAT_SESSION, build_chat
from orchestrator.repl.commands import SlashCommand
from orchestrator.repl.conversation import Conversation
from orchestrator.repl.preferences.price import price_parts
from orchestrator.text.wording import counted
from sessions import Session, SessionEvent

__all__ = ["CHAT_COMMANDS", "CHAT_SESSION", "ChatConversation", "answer_once", "build_chat", "chat_commands"]
CHAT_COMMANDS = (
    "/help", "/model", "/pro", "/cost", "/context", "/compact", "/language", "/style", "/clear", "/exit"
)  # fmt: skip
"""The slash commands of a chat (no /plan, /goal, /undo: a chat changes nothing)."""


def chat_commands() -> dict[str, SlashCommand]:
    from orchestrator.repl.commands import COMMANDS

    return {name: COMMANDS[name] for name in CHAT_COMMANDS}


class ChatConversation(Conversation):
    """The REPL of ``reasonix code`` on a session without tools. There are no modes (nothing to approve)."""

    offered = CHAT_COMMANDS

    chat = True

    def _opened(self, session: Session) -> Session:
        self.sent_mode = self.mode  # no mode block is ever sent: a chat has no tools to govern
        return session

    has_modes = False
    """No modes and no rewind in a chat: /help lists neither Shift+Tab nor Esc Esc."""

    def cycle_mode(self) -> None:
        """Shift+Tab does nothing here."""

    def prompt_text(self) -> FormattedText:
        return FormattedText([("bold ansimagenta", "chat ❯ ")])

    def status(self) -> FormattedText:
        model = self.resolved.config.models.pro if self.pro_next else self.model
        return FormattedText(
            [
                ("", f" {model}{' (next turn)' if self.pro_next else ''} · "),
                ("bold ansimagenta", "chat, no tools"),
                *price_parts(self.turn_cost_usd, self.total_cost_usd, self.resolved.config.conversation),
                ("", f" · cache {self.hit_ratio() * 100:.1f}% · {counted(self.session.requests, 'request')} · /help"),
                ("", f" · balance {self.balance}" if self.balance else ""),
            ]
        )


async def answer_once(session: Session, question: str, write: Callable[[str], None]) -> str:
    """Send ``question``, writing the reply's text as it streams (``write``); the turn's status."""
    from sessions import StreamUpdate
    from sessions.wire import ContentDelta, StreamRestarted

    shown: list[str] = []
    outer = session.on_event

    def on_event(event: SessionEvent) -> None:
        if outer is not None:
            outer(event)
        if isinstance(event, StreamUpdate):
            if isinstance(event.event, ContentDelta):
                shown.append(event.event.text)
                write(event.event.text)
            elif isinstance(event.event, StreamRestarted) and shown:
                write("\n[the reply broke off and is asked for again]\n")
                shown.clear()

    session.on_event = on_event
    try:
        result = await session.send(question)
    finally:
        session.on_event = outer
    if not shown and result.text:
        write(result.text)
    write("\n")
    return result.status
