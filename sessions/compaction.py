"""Compaction: the only rewrite of a session's log (DESIGN §3.6).

When the context passes a share of the window, the older part of the log is replaced by one user message that holds
every older user turn verbatim and a digest of everything else written by flash; the recent tail stays verbatim. The
frozen prefix is untouched. The next request misses the cache once, and the diagnostics name the compaction as why.

Also here: :func:`compact`, which does it to a session (a digest request, then the rewrite); and bounding a
very large tool result once, when it enters the log, in a stable head + tail form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sessions import ledger, tokens
from sessions.events import Compacted, RequestStarted
from sessions.wire import (
    AssistantMessage,
    ChatRequest,
    Message,
    SystemMessage,
    Thinking,
    ToolMessage,
    UserMessage,
    encode_request,
)

if TYPE_CHECKING:
    from sessions.session import Session

DIGEST_SYSTEM_PROMPT = (
    "You compress the history of a coding session so that the same agent can continue it. Write a dense digest: "
    "what was asked, what was learned about the code (files, functions, facts), every change made (file and what "
    "changed), commands run and their outcomes, what failed and why, and what remains to do. Keep exact file paths, "
    "identifiers and error messages. No preamble."
)
COMPACTED_ACK = "Understood: I continue from the compacted history above."
_RESULT_PREVIEW_CHARS = 2_000
DIGEST_FINGERPRINT = "compaction-digest"
"""The ``prefix_fingerprint`` of a compaction's digest request: a side request outside the conversation's prefix."""


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


async def compact(session: Session, *, reason: str) -> bool:
    """Replace the older part of ``session``'s log by a digest that flash writes, keeping the recent tail verbatim;
    journal the rewrite and emit :class:`~sessions.events.Compacted`. False when no cut leaves anything to fold."""
    messages = session.log.messages
    counts = tokens.count_many([entry.data.decode("utf-8") for entry in session.log])
    keep = int(session.settings.context_window * session.settings.compaction_keep_ratio)
    cut = choose_cut(messages, counts, keep)
    if cut is None or cut <= 1:
        return False
    older, tail = messages[:cut], messages[cut:]
    digest_request = ChatRequest(
        model=session.settings.model,
        messages=digest_request_messages(older),
        stream=True,
        thinking=Thinking(type="disabled"),
    )
    digest_body = encode_request(digest_request)
    gate = session.request_gate
    release = gate.admit(ledger.estimate(session, session.settings.model, sum(counts[:cut]), None)) if gate else None
    # a request like any other: counted (by its usage), priced, journaled
    session.emit(
        RequestStarted(
            session=session.name,
            request_index=session.requests + 1,
            model=session.settings.model,
            body_bytes=len(digest_body),
            prefix_fingerprint=DIGEST_FINGERPRINT,
            messages=len(digest_request.messages),
        )
    )
    try:
        reply = await session.client.complete(digest_request, body=digest_body)
        session.account(reply.usage, session.settings.model, diagnose=False)  # not the conversation: no diagnostics
    finally:
        if release is not None:
            release()
    digest = reply.message.content or ""
    new = compacted_messages(older, tail, digest)
    tokens_before = session.context_tokens()
    session.log.rewrite(new, reason)
    if session.journal is not None:
        session.journal.write_rewrite(reason, list(session.log.encoded))
        await session.journal.sync()
    session._last_prompt_tokens = 0
    session._unsent_tokens = sum(tokens.count_many([d.decode("utf-8") for d in session.log.encoded]))
    session.emit(
        Compacted(
            session=session.name,
            reason=reason,
            tokens_before=tokens_before,
            messages_before=len(messages),
            messages_after=len(new),
            digest_chars=len(digest),
        )
    )
    return True
