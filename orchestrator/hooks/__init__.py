"""Hooks: programs the user configures (``[[hooks]]``) that run at the session's lifecycle events, get one JSON
object on stdin and answer with their exit code or a JSON object (Claude Code's shape). :class:`Hooks` runs the ones
an event matches; :class:`HookGate` asks ``pre_tool`` hooks before the permission rules and adds what ``post_tool``
hooks say to a tool's result; :func:`hooked_send` runs ``session_start``, ``user_prompt`` and ``stop`` around a turn.
What a hook adds reaches the model in the tail or in a tool result, never in the prefix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.hooks.answer import HookAnswer
    from orchestrator.hooks.gate import HookGate
    from orchestrator.hooks.hooks import Hooks
    from orchestrator.hooks.turns import hooked_send

__all__ = ["HookAnswer", "HookGate", "Hooks", "hooked_send"]

_HOME = {"HookAnswer": "answer", "HookGate": "gate", "Hooks": "hooks", "hooked_send": "turns"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
