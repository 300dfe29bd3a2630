"""Compaction: a rewrite of a session's log (DESIGN §3.6); the one tier, and with tiers on the middle one.

When the context passes a share of the window, the older part of the log is replaced by one user message that holds
every older user turn verbatim and a digest of everything else written by flash; the recent tail stays verbatim. The
frozen prefix is untouched. The next request misses the cache once, and the diagnostics name the compaction as why.

Here: where to cut (:func:`plan_compaction`), the digest request flash answers (:func:`digest_request`), the new log
(:func:`compacted_messages`); the session sends the request and applies the rewrite
(:meth:`Session.compact <sessions.session.Session.compact>`). Also bounding a very large tool result once, when it
enters the log, in a stable head + tail form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sessions.accounting import tokens
from sessions.events import Compacted, RequestStarted, SessionEvent
from sessions.in_flight import InFlight
from sessions.journal.jsonl import Journal
from sessions.log import LogEntry, MessageLog
from sessions.request_bytes import RequestBytes
from sessions.wire.messages import (
    AssistantMessage,
    ChatRequest,
    Message,
    SystemMessage,
    Thinking,
    ToolMessage,
    Usage,
    UserMessage,
    encode_request,
)
from sessions.wire.reply import ChatClient

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
    older_tokens: int = 0
    """The tokens of ``older``, by our own count: about what the digest request sends."""


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


def render_transcript(messages: Sequence[Message], *, whole: bool = False) -> str:
    """The messages as plain text: what a digest request shows (long results cut to a preview, calls by name) or,
    ``whole``, what an archive keeps (every result whole, calls and results by their ids)."""
    parts: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage):
            parts.append(f"[user]\n{m.content}")
        elif isinstance(m, AssistantMessage):
            if m.content:
                parts.append(f"[assistant]\n{m.content}")
            for call in m.tool_calls:
                named = f"{call.id}] {call.function.name}" if whole else f"{call.function.name}]"
                parts.append(f"[tool call {named} {call.function.arguments}")
        elif isinstance(m, ToolMessage):
            body = m.content
            if whole:
                parts.append(f"[tool result {m.tool_call_id}]\n{body}")
                continue
            if len(body) > _RESULT_PREVIEW_CHARS:
                body = body[: _RESULT_PREVIEW_CHARS // 2] + "\n[…]\n" + body[-_RESULT_PREVIEW_CHARS // 2 :]
            parts.append(f"[tool result]\n{body}")
    return "\n\n".join(parts)


def digest_request_messages(older: Sequence[Message]) -> tuple[Message, ...]:
    """The messages of the one-off flash request that writes the digest."""
    return (
        SystemMessage(content=DIGEST_SYSTEM_PROMPT),
        UserMessage(content="Compress this session history:\n\n" + render_transcript(older)),
    )


def compacted_messages(
    older: Sequence[Message], tail: Sequence[Message], digest: str, task: str = "", index: str = ""
) -> list[Message]:
    """The new log: one user message (the task as the harness holds it, when it gave one; older user turns
    verbatim; the digest; with tiers on, the ``index`` of what was archived), an acknowledgement, the tail."""
    user_turns = [m.content for m in older if isinstance(m, UserMessage)]
    turns = "\n".join(f"<user-turn>\n{t}\n</user-turn>" for t in user_turns)
    restated = f"<task>\n{task.strip()}\n</task>\n" if task.strip() else ""
    block = (
        "<compacted-history>\n"
        f"{restated}"
        "The earlier part of this session was compacted. The user's turns, verbatim:\n"
        f"{turns}\n"
        f"<digest>\n{digest.strip()}\n</digest>\n"
        f"{index}"
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


class Ratio(Protocol):
    @property
    def context_window(self) -> int: ...
    @property
    def compaction_ratio(self) -> float: ...


def due(context_tokens: int, messages: int, settings: Ratio) -> str | None:
    """Why the one-tier compaction is due before the next request (the context passed ``compaction_ratio`` of the
    window), or None when it is not."""
    if context_tokens <= settings.context_window * settings.compaction_ratio or messages < 4:
        return None
    return f"context at {context_tokens} tokens passed {settings.compaction_ratio:.0%} of the window"


def plan_compaction(log: MessageLog, keep_tokens: int) -> CompactionPlan | None:
    """Which older messages to fold and which recent ones to keep verbatim (at most ``keep_tokens``); None when no
    cut leaves anything to fold."""
    messages = log.messages
    counts = tokens.count_many([entry.data.decode("utf-8") for entry in log])
    cut = choose_cut(messages, counts, keep_tokens)
    if cut is None or cut <= 1:
        return None
    return CompactionPlan(older=tuple(messages[:cut]), tail=tuple(messages[cut:]), older_tokens=sum(counts[:cut]))


def digest_request(
    older: Sequence[Message], model: str, *, max_tokens: int | None = None, thinking: bool = True
) -> tuple[ChatRequest, bytes]:
    """The one-off request (outside the conversation's prefix, thinking off) whose reply is the digest, and its
    bytes. ``thinking``: whether the provider takes the field at all (an OpenAI-compatible server does not, and is
    sent none); ``max_tokens``: the model's ``max_output``, when it has one."""
    request = ChatRequest(
        model=model,
        messages=digest_request_messages(older),
        stream=True,
        thinking=Thinking(type="disabled") if thinking else None,
        max_tokens=max_tokens,
    )
    return request, encode_request(request)


def digest_started(session: str, request_index: int, request: ChatRequest, body: bytes) -> RequestStarted:
    """The event of a digest request: a request of the session, outside its conversation's prefix."""
    return RequestStarted(
        session=session,
        request_index=request_index,
        model=request.model,
        body_bytes=len(body),
        prefix_fingerprint=DIGEST_FINGERPRINT,
        messages=len(request.messages),
    )


class Compactable(Protocol):
    """What compaction needs of a session: its log, journal and client, and its public operations."""

    name: str
    log: MessageLog
    journal: Journal | None

    client: ChatClient
    in_flight: InFlight
    bytes: RequestBytes

    @property
    def requests(self) -> int: ...
    def emit(self, event: SessionEvent) -> None: ...
    def account(self, usage: Usage | None, model: str, *, estimated: bool = False, diagnose: bool = True) -> float: ...
    def rewrite(self, messages: Sequence[Message | LogEntry], reason: str) -> None: ...
    def context_tokens(self) -> int: ...


async def compact(
    session: Compactable,
    *,
    reason: str,
    keep_tokens: int,
    model: str,
    task: str = "",
    index: Callable[[Sequence[Message]], str] | None = None,
) -> bool:
    """Replace the older part of ``session``'s log by a digest that flash writes, keeping the recent tail verbatim;
    journal the rewrite and emit :class:`~sessions.events.Compacted`. False when no cut leaves anything to fold.
    The digest is written by ``model`` (the session's own); the tail keeps at most ``keep_tokens``; ``task`` (what
    the harness knows of the task, not what the model summarised) opens the new log; ``index`` (tiers on) archives
    the folded messages and returns the block that names them."""
    plan = plan_compaction(session.log, keep_tokens)
    if plan is None:
        return False
    heads = session.bytes  # the digest asks what a request to ``model`` may carry: thinking, its max_output
    takes = heads.provider_for(model).takes_thinking
    request, body = digest_request(plan.older, model, max_tokens=heads.max_tokens(model), thinking=takes)
    # a request like any other: counted (by its usage), priced, journaled; not the conversation: no diagnostics
    with session.in_flight.side_request(model, plan.older_tokens):  # the budget's gate is asked first
        session.emit(digest_started(session.name, session.requests + 1, request, body))
        reply = await session.client.complete(request, body=body)
        session.account(reply.usage, model, diagnose=False)
    digest = reply.message.content or ""
    tokens_before, messages_before = session.context_tokens(), len(session.log)
    listed = index(plan.older) if index is not None else ""
    session.rewrite(compacted_messages(plan.older, plan.tail, digest, task, listed), reason)
    if session.journal is not None:
        await session.journal.sync()
    session.emit(
        Compacted(
            session=session.name,
            reason=reason,
            tokens_before=tokens_before,
            messages_before=messages_before,
            messages_after=len(session.log),
            digest_chars=len(digest),
        )
    )
    return True
