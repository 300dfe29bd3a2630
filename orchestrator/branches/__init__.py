"""Branches: each step of a parallel wave works in its own copy of the workspace (a worktree of the checkpoints'
shadow store, never the user's ``.git``), and is merged back at the join with a three-way merge, all or nothing.

- :mod:`~orchestrator.branches.workspace`: :class:`BranchWorkspace` (open a copy, merge it back, discard it);
- :mod:`~orchestrator.branches.merge`: the three-way merge of trees and its application to the live files;
- :mod:`~orchestrator.branches.gitrun`: git on the shadow store with a chosen work tree and index;
- :mod:`~orchestrator.branches.outcome`: :class:`MergeOutcome` and :class:`BranchError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.branches.outcome import BranchError, MergeOutcome
    from orchestrator.branches.workspace import BranchWorkspace

__all__ = ["BranchError", "BranchWorkspace", "MergeOutcome"]

_HOME = {"BranchError": "outcome", "BranchWorkspace": "workspace", "MergeOutcome": "outcome"}
"""The module that defines each public name, relative to this package."""

if not TYPE_CHECKING:
    __getattr__ = lazy_names(__name__, _HOME)
