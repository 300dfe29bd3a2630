"""Compaction: the only rewrite of a session's log (DESIGN §3.6).

When the context passes a share of the window, the older part of the log is replaced by one user message that holds
every older user turn verbatim and a digest of everything else written by flash; the recent tail stays verbatim. The
frozen prefix is untouched. The next request misses the cache once, and the diagnostics name the compaction as why.

Also here: bounding a very large tool result once, when it enters the log, in a stable head + tail form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sessions.wire import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage

DIGEST_SYSTEM_PROMPT = (
    "You compress the history of a coding session so that the same agent can continue it. Write a dense digest: "
    "what was asked, what was learned about the code (files, functions, facts), every change made (file and what "
    "changed), commands run and their outcomes, what failed and why, and what remains to do. Keep exact file paths, "
    "identifiers and error messages. No preamble."
)
COMPACTED_ACK = "Understood: I continue from the compacted history above."
_RESULT_PREVIEW_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    older: tuple[Message, ...]
    tail: tuple[Message, ...]


def choose_cut(messages: Sequence[Message], token_counts: Sequence[int], keep_tokens: int) -> int | None:
    """Index where the verbatim tail starts, or None when nothing can be compacted.

    The tail holds at most ``keep_tokens`` (at least one message) and starts at a user message or at an assistant
    message, never at a tool result (a tool result must follow the call that asked for it).
    """
    total = 0
    cut: int | None = None
    for i in range(len(messages) - 1, 0, -1):
        total += token_counts[i]
        if total > keep_tokens and cut is not None:
            break
        if not isinstance(messages[i], ToolMessage):
            cut = i
    return cut


def _render_for_digest(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            parts.append(f"[user]\n{m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                parts.append(f"[assistant]\n{m.content}")
            for call in m.tool_calls:
                parts.append(f"[tool call {call.function.name}] {call.function.arguments}")
        elif isinstance(m, ToolMessage):
            body = m.content
            if len(body) > _RESULT_PREVIEW_CHARS:
                body = body[: _RESULT_PREVIEW_CHARS // 2] + "\n[…]\n" + body[-_RESULT_PREVIEW_CHARS // 2 :]
            parts.append(f"[tool result]\n{body}")
    return "\n\n".join(parts)


def digest_request_messages(older: Sequence[Message]) -> tuple[Message, ...]:
    """The messages of the one-off flash request that writes the digest."""
    return (
        SystemMessage(content=DIGEST_SYSTEM_PROMPT),
        UserMessage(content="Compress this session history:\n\n" + _render_for_digest(older)),
    )


def compacted_messages(older: Sequence[Message], tail: Sequence[Message], digest: str) -> list[Message]:
    """The new log: one user message (older user turns verbatim + the digest), an acknowledgement, the tail."""
    user_turns = [m.content for m in older if isinstance(m, UserMessage)]
    turns = "\n".join(f"<user-turn>\n{t}\n</user-turn>" for t in user_turns)
    block = (
        "<compacted-history>\n"
        "The earlier part of this session was compacted. The user's turns, verbatim:\n"
        f"{turns}\n"
        f"<digest>\n{digest.strip()}\n</digest>\n"
        "</compacted-history>"
    )
    out: list[Message] = [UserMessage(content=block)]
    if not tail or isinstance(tail[0], UserMessage):
        out.append(AssistantMessage(content=COMPACTED_ACK, reasoning_content=""))
    out.extend(tail)
    return out


def bound_text(text: str, max_chars: int) -> tuple[str, bool]:
    """A stable head + tail form of ``text`` when it is longer than ``max_chars``; the marker says what was cut."""
    if len(text) <= max_chars:
        return text, False
    half = max_chars // 2
    head, tail = text[:half], text[-half:]
    cut = len(text) - len(head) - len(tail)
    cut_lines = text.count("\n", half, len(text) - half)
    marker = (
        f"\n[… {cut} characters ({cut_lines} lines) cut here to keep the context small. "
        "Narrow the request (a line range, a tighter pattern) to see the middle …]\n"
    )
    return head + marker + tail, True
