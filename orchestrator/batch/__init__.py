"""Many goals at once (``reasonix batch``): each goal in its own copy of its workspace, on this machine or on a Ray
cluster, under one budget for the whole batch.

- :mod:`~orchestrator.batch.spec`: the goals file (:class:`GoalSpec`, :func:`load_goals`, :class:`BatchError`);
- :mod:`~orchestrator.batch.goal_run`: :func:`run_one_goal`, one goal in a fresh copy to a typed :class:`GoalResult`
  (:mod:`~orchestrator.batch.result`), the function every engine runs;
- :mod:`~orchestrator.batch.ledger`: the batch's one budget (:class:`BatchLedger`), asked before every request;
- :mod:`~orchestrator.batch.driver`: a batch run (:class:`BatchRun`: its directory, results, ``--resume``);
- :mod:`~orchestrator.batch.local`: :func:`run_local`, ``--jobs`` goals at once as trio tasks;
- :mod:`~orchestrator.batch.ray_engine`: :func:`run_on_ray`, each goal a Ray task (imported only for ``--ray``);
- :mod:`~orchestrator.batch.workspace`: copies (git clones of a URL, or of a bundle of a local directory) and diffs;
- :mod:`~orchestrator.batch.display`: the live progress and the summary table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.batch.driver import BatchRun
    from orchestrator.batch.goal_run import run_one_goal
    from orchestrator.batch.ledger import BatchLedger
    from orchestrator.batch.local import run_local
    from orchestrator.batch.progress_event import Progress
    from orchestrator.batch.ray_engine import run_on_ray
    from orchestrator.batch.result import GoalResult
    from orchestrator.batch.spec import BatchError, GoalSpec, load_goals

__all__ = [
    "BatchError",
    "BatchLedger",
    "BatchRun",
    "GoalResult",
    "GoalSpec",
    "Progress",
    "load_goals",
    "run_local",
    "run_on_ray",
    "run_one_goal",
]

_HOME = {
    "BatchError": "spec",
    "BatchLedger": "ledger",
    "BatchRun": "driver",
    "GoalResult": "result",
    "GoalSpec": "spec",
    "Progress": "progress_event",
    "load_goals": "spec",
    "run_local": "local",
    "run_on_ray": "ray_engine",
    "run_one_goal": "goal_run",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
