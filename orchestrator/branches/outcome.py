"""What merging a branch back says, and the error a branch raises when its copy cannot be made or read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from orchestrator.errors import ReasonixError


class BranchError(ReasonixError):
    """A branch's copy could not be made, read or merged because git or the file system failed (the message says
    which and what to do); a conflict is not an error but a :class:`MergeOutcome` with ``merged=False``."""


class MergeOutcome(BaseModel):
    """The result of :meth:`~orchestrator.branches.workspace.BranchWorkspace.merge_back`. All or nothing: when
    ``merged`` is false, no file of the live workspace was touched, and ``reason`` says which files and why."""

    model_config = ConfigDict(frozen=True)

    merged: bool
    changed: tuple[str, ...] = ()
    """The paths the branch changed (added, modified, deleted), relative to the workspace, sorted."""
    conflicts: tuple[str, ...] = ()
    """Paths changed both in the branch and in the live workspace since the branch began, in ways that do not merge."""
    undeclared: tuple[str, ...] = ()
    """Paths the branch changed outside the step's declared ``writes``."""
    reason: str = ""
