"""Hooks at a goal's own events: ``step_start`` (what it says joins the step's turn, in a ``<hook-context>`` block in
front of it), ``step_verified`` and ``goal_end`` (told, for notifications and logs; their answers change nothing).

The goal's sessions carry the invocation's gate; when it is a :class:`~orchestrator.hooks.gate.HookGate`, its hooks
are the ones that run. Without hooks nothing here runs and the step's text is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.hooks.hooks import Hooks
from sessions import Session
from sessions.prompt import TailBlock, compose_user_turn


def hooks_of(session: Session | None) -> Hooks | None:
    gate = session.tool_context.gate if session is not None else None
    found = getattr(gate, "hooks", None)
    return found if isinstance(found, Hooks) and found else None


async def goal_hook(session: Session | None, event: str, fields: Mapping[str, Any]) -> str:
    """Run the hooks of ``event``; the context they added ("" when none ran or none said anything)."""
    hooks = hooks_of(session)
    if hooks is None or not hooks.has(event):
        return ""
    return (await hooks.fire(event, fields)).context


def with_context(text: str, context: str) -> str:
    """``text`` with a hook's context in front of it, as a tail block; ``text`` itself when there is none."""
    return compose_user_turn(text, [TailBlock(tag="hook-context", body=context)]) if context else text
