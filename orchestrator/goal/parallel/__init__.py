"""Parallel branches of the goal loop (issue 14 item 2, DESIGN §5 "Parallel branches"): a wave of ready steps with
disjoint declared writes, each run by a fork of the executor in its own copy of the workspace and merged back at the
join (:mod:`~orchestrator.goal.parallel.wave`), and the forks themselves (:mod:`~orchestrator.goal.parallel.forks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.goal.parallel.forks import open_fork
    from orchestrator.goal.parallel.wave import run_wave

__all__ = ["open_fork", "run_wave"]

_HOME = {"open_fork": "forks", "run_wave": "wave"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
