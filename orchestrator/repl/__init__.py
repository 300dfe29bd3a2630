"""The interactive conversation of ``reasonix code`` (and bare ``reasonix`` in a terminal): one executor session on
the workspace, a prompt_toolkit input line read in a worker thread, modes that never touch the prefix, slash
commands, ``@path`` mentions, and the goal machinery inline (``/plan``, ``/goal``). The subcommand itself is
:mod:`orchestrator.cli.commands.code`. Names are imported on first use, so ``reasonix --help`` loads nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.repl.conversation import Conversation, NothingToContinueError, ReplOptions, last_run_id
    from orchestrator.repl.loop import run_loop
    from orchestrator.repl.modes import CYCLE, Mode, apply_mode, mode_block, next_mode

__all__ = [
    "CYCLE",
    "Conversation",
    "Mode",
    "NothingToContinueError",
    "ReplOptions",
    "apply_mode",
    "last_run_id",
    "mode_block",
    "next_mode",
    "run_loop",
]

_HOME = {
    "Conversation": "conversation",
    "NothingToContinueError": "conversation",
    "ReplOptions": "conversation",
    "last_run_id": "conversation",
    "run_loop": "loop",
    "CYCLE": "modes",
    "Mode": "modes",
    "apply_mode": "modes",
    "mode_block": "modes",
    "next_mode": "modes",
}

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
