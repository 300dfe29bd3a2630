"""The goal loop: the runner that drives a planner and an executor session through planning, review, execution,
verification and re-planning (the state machine of docs/DESIGN.md §5), the protocol tools through which the models
hand plans, verdicts and step reports to the supervisor, the run store (``.reasonix/runs/<run_id>/``) that makes a
goal resumable, and the constant system prompts and user turns the supervisor writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.goal.runner import GoalOptions, GoalOutcome, GoalRunner
    from orchestrator.goal.store import GoalRecord, RunNotFoundError, RunStore
    from orchestrator.goal.tools import executor_tools, planner_tools

__all__ = [
    "GoalOptions",
    "GoalOutcome",
    "GoalRecord",
    "GoalRunner",
    "RunNotFoundError",
    "RunStore",
    "executor_tools",
    "planner_tools",
]

_HOME = {
    "GoalOptions": "runner",
    "GoalOutcome": "runner",
    "GoalRunner": "runner",
    "GoalRecord": "store",
    "RunNotFoundError": "store",
    "RunStore": "store",
    "executor_tools": "tools",
    "planner_tools": "tools",
}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
