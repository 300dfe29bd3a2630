"""The history of runs: what ``reasonix runs``, ``reasonix serve`` and the conversation list, read from each run's
directory under ``.reasonix/runs/`` (nothing else is kept); and what a plan is expected to cost, from that history.

- :mod:`~orchestrator.runs.history`: past runs summarized (requests, cache, cost per session), found by id or prefix;
- :mod:`~orchestrator.runs.estimate`: a plan's expected requests and dollars, shown at review beside the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.runs.estimate import estimate_plan
    from orchestrator.runs.history import RunSummary, latest_resumable, list_runs, resolve_run

__all__ = ["RunSummary", "estimate_plan", "latest_resumable", "list_runs", "resolve_run"]

_HOME = {
    "RunSummary": "history",
    "estimate_plan": "estimate",
    "latest_resumable": "history",
    "list_runs": "history",
    "resolve_run": "history",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
