"""Checkpoints: the workspace snapshotted into a shadow git store of Reasonix's own, outside the workspace (DESIGN §5,
Safety), never the user's ``.git``; undo and restore from them. (The history of runs is :mod:`orchestrator.runs`.)

- :mod:`~orchestrator.checkpoints.git`: the shadow repository and the one way ``git`` is called;
- :mod:`~orchestrator.checkpoints.ledger`: what each checkpoint records (run, step, what changed);
- :mod:`~orchestrator.checkpoints.snapshot`: taking one;
- :mod:`~orchestrator.checkpoints.undo`: planning and applying an undo, with hand edits detected;
- :mod:`~orchestrator.checkpoints.hook`: what the goal loop calls (before each step, on a retry);
- :mod:`~orchestrator.checkpoints.turns`, :mod:`~orchestrator.checkpoints.turn_calls`: conversation turns, stored
  by what each did; :mod:`~orchestrator.checkpoints.objects`: the store's objects written in process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.checkpoints.git import CheckpointError, GitUnavailableError, ShadowRepo
    from orchestrator.checkpoints.hook import StepCheckpoints
    from orchestrator.checkpoints.ledger import Checkpoint, Ledger
    from orchestrator.checkpoints.snapshot import take_checkpoint
    from orchestrator.checkpoints.undo import NothingToUndoError, apply_undo, plan_undo

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "GitUnavailableError",
    "Ledger",
    "NothingToUndoError",
    "ShadowRepo",
    "StepCheckpoints",
    "apply_undo",
    "plan_undo",
    "take_checkpoint",
]

_HOME = {
    "Checkpoint": "ledger",
    "CheckpointError": "git",
    "GitUnavailableError": "git",
    "Ledger": "ledger",
    "NothingToUndoError": "undo",
    "ShadowRepo": "git",
    "StepCheckpoints": "hook",
    "apply_undo": "undo",
    "plan_undo": "undo",
    "take_checkpoint": "snapshot",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
