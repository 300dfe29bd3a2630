"""Checkpoints: the workspace snapshotted into a shadow git store of Reasonix's own, outside the workspace (DESIGN §5,
Safety), never the user's ``.git``; undo and restore from them; and the history of runs.

- :mod:`~orchestrator.checkpoints.git`: the shadow repository and the one way ``git`` is called;
- :mod:`~orchestrator.checkpoints.ledger`: what each checkpoint records (run, step, what changed);
- :mod:`~orchestrator.checkpoints.snapshot`: taking one;
- :mod:`~orchestrator.checkpoints.undo`: planning and applying an undo, with hand edits detected;
- :mod:`~orchestrator.checkpoints.hook`: what the goal loop calls (before each step, on a retry);
- :mod:`~orchestrator.checkpoints.history`: past runs, read from their run directories;
- :mod:`~orchestrator.checkpoints.estimate`: what a plan is expected to cost, from this workspace's history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.checkpoints.estimate import estimate_plan
    from orchestrator.checkpoints.git import CheckpointError, GitUnavailableError, ShadowRepo
    from orchestrator.checkpoints.history import RunSummary, latest_resumable, list_runs, resolve_run
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
    "RunSummary",
    "ShadowRepo",
    "StepCheckpoints",
    "apply_undo",
    "estimate_plan",
    "latest_resumable",
    "list_runs",
    "plan_undo",
    "resolve_run",
    "take_checkpoint",
]

_HOME = {
    "Checkpoint": "ledger",
    "CheckpointError": "git",
    "GitUnavailableError": "git",
    "Ledger": "ledger",
    "NothingToUndoError": "undo",
    "RunSummary": "history",
    "ShadowRepo": "git",
    "StepCheckpoints": "hook",
    "apply_undo": "undo",
    "estimate_plan": "estimate",
    "latest_resumable": "history",
    "list_runs": "history",
    "plan_undo": "undo",
    "resolve_run": "history",
    "take_checkpoint": "snapshot",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
