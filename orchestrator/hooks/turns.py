"""A user turn with hooks around it: ``session_start`` before a session's first message, ``user_prompt`` before each
message (it may add context or block the message), ``stop`` when the turn ends (it may ask the session to go on).

What the hooks add rides in a ``<hook-context>`` tail block in front of the message (DESIGN §3.3): the prefix never
moves. A ``stop`` hook that blocks sends its reason as the next user message, at most
:data:`MAX_STOP_CONTINUATIONS` times a turn (its JSON says ``stop_hook_active`` from the second time on, as in
Claude Code). ``pre_compact`` hooks are told before the session folds its older messages (their answer changes
nothing: compaction is the session's own rewrite). Without hooks, :func:`hooked_send` is exactly ``session.send``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from orchestrator.hooks.hooks import Hooks
from sessions import Session, TurnResult
from sessions.prompt import TailBlock

MAX_STOP_CONTINUATIONS = 3
HOOK_TAG = "hook-context"


@dataclass(frozen=True)
class PromptBlocked:
    """A ``user_prompt`` hook refused the message: it was not sent."""

    reason: str


async def hooked_send(
    session: Session,
    text: str,
    *,
    hooks: Hooks | None,
    tail: Sequence[TailBlock] = (),
    first: bool = False,
    model: str | None = None,
    max_requests: int | None = None,
) -> TurnResult | PromptBlocked:
    """Send ``text`` as ``session.send`` does, with the hooks around it; ``first``: the session's first message."""
    if not hooks:
        return await session.send(text, tail=tail, model=model, max_requests=max_requests)
    if hooks.has("pre_compact") and session.before_compact is None:
        session.before_compact = _pre_compact(hooks)
    contexts: list[str] = []
    if first:
        started = await hooks.fire("session_start", {"source": "startup"})
        contexts.append(started.context)
    prompt = await hooks.fire("user_prompt", {"prompt": text})
    if prompt.blocks:
        return PromptBlocked(prompt.reason or "a user_prompt hook blocked the message")
    contexts.append(prompt.context)
    blocks = [*tail, *_context_block(contexts)]
    result = await session.send(text, tail=blocks, model=model, max_requests=max_requests)
    for round_ in range(MAX_STOP_CONTINUATIONS):
        if result.status != "done" or not hooks.has("stop"):
            break
        said = {"stop_hook_active": round_ > 0, "last_message": result.text, "last_assistant_message": result.text}
        stop = await hooks.fire("stop", said)
        if not stop.blocks or stop.halt:  # continue: false lets the turn end, whatever else the answer says
            break
        reason = stop.reason or "a stop hook asks you to go on"
        result = await session.send(reason, tail=_context_block([stop.context]), model=model, max_requests=max_requests)
    return result


def _pre_compact(hooks: Hooks) -> Callable[[str], Awaitable[None]]:
    async def before(reason: str) -> None:
        await hooks.fire("pre_compact", {"trigger": "auto" if "passed" in reason else "manual", "reason": reason})

    return before


def _context_block(contexts: Sequence[str]) -> list[TailBlock]:
    said = "\n".join(c for c in contexts if c)
    return [TailBlock(tag=HOOK_TAG, body=said)] if said else []
